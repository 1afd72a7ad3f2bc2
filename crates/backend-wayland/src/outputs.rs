//! The compositor's outputs (`wl_output`): where each monitor is and its
//! size in pixels, for the monitor list where no screencast stream gives
//! it (a desktop whose portal has only Screenshot). Read without taking a
//! screenshot, so listing the monitors never asks the person anything.

use deskhand_backend::Monitor;
use wayland_client::protocol::wl_output;
use wayland_client::{Connection, Dispatch, QueueHandle, WEnum};
use wayland_protocols::xdg::xdg_output::zv1::client::zxdg_output_manager_v1::ZxdgOutputManagerV1;
use wayland_protocols::xdg::xdg_output::zv1::client::zxdg_output_v1::{self, ZxdgOutputV1};

use crate::compositor::Listing;
use crate::displays::monitor;

/// One output as the compositor describes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Output {
    /// Top-left in the compositor's (logical) space.
    pub(crate) position: (i32, i32),
    /// Its current mode, in pixels (before any rotation).
    pub(crate) pixels: (u32, u32),
    /// Its integer scale.
    pub(crate) scale: i32,
    /// Turned a quarter (90° or 270°): the mode's width is its height.
    pub(crate) quarter_turn: bool,
    /// Its place and size in the compositor's space, from xdg-output.
    pub(crate) logical: Option<((i32, i32), (u32, u32))>,
    pub(crate) name: Option<String>,
}

impl Default for Output {
    fn default() -> Self {
        Self {
            position: (0, 0),
            pixels: (0, 0),
            scale: 1,
            quarter_turn: false,
            logical: None,
            name: None,
        }
    }
}

impl Output {
    /// The monitor it is, `index` in the list.
    pub(crate) fn monitor(&self, index: u32) -> Monitor {
        let (w, h) = self.pixels;
        let pixels = if self.quarter_turn { (h, w) } else { (w, h) };
        let s = self.scale.max(1) as u32;
        let (position, logical) = self
            .logical
            .unwrap_or((self.position, (pixels.0 / s, pixels.1 / s)));
        let mut m = monitor(position, pixels, logical);
        m.index = index;
        m.primary = index == 0;
        if let Some(name) = &self.name {
            m.name.clone_from(name);
        }
        m
    }
}

impl Dispatch<wl_output::WlOutput, usize> for Listing {
    fn event(
        state: &mut Self,
        _: &wl_output::WlOutput,
        event: wl_output::Event,
        index: &usize,
        _: &Connection,
        _: &QueueHandle<Self>,
    ) {
        let Some(o) = state.0.get_mut(*index) else {
            return;
        };
        match event {
            wl_output::Event::Geometry {
                x, y, transform, ..
            } => {
                use wl_output::Transform as T;
                o.position = (x, y);
                o.quarter_turn = matches!(
                    transform,
                    WEnum::Value(T::_90 | T::_270 | T::Flipped90 | T::Flipped270)
                );
            }
            wl_output::Event::Mode {
                flags: WEnum::Value(flags),
                width,
                height,
                ..
            } if flags.contains(wl_output::Mode::Current) => {
                o.pixels = (width.max(0) as u32, height.max(0) as u32);
            }
            wl_output::Event::Scale { factor } => o.scale = factor,
            wl_output::Event::Name { name } => o.name = Some(name),
            _ => {}
        }
    }
}

impl Dispatch<ZxdgOutputV1, usize> for Listing {
    fn event(
        state: &mut Self,
        _: &ZxdgOutputV1,
        event: zxdg_output_v1::Event,
        index: &usize,
        _: &Connection,
        _: &QueueHandle<Self>,
    ) {
        let Some(o) = state.0.get_mut(*index) else {
            return;
        };
        let (mut place, mut size) = o.logical.unwrap_or((o.position, (0, 0)));
        match event {
            zxdg_output_v1::Event::LogicalPosition { x, y } => place = (x, y),
            zxdg_output_v1::Event::LogicalSize { width, height } => {
                size = (width.max(0) as u32, height.max(0) as u32);
            }
            _ => return,
        }
        o.logical = Some((place, size));
    }
}

impl Dispatch<ZxdgOutputManagerV1, ()> for Listing {
    fn event(
        _: &mut Self,
        _: &ZxdgOutputManagerV1,
        _: <ZxdgOutputManagerV1 as wayland_client::Proxy>::Event,
        _: &(),
        _: &Connection,
        _: &QueueHandle<Self>,
    ) {
    }
}

/// This session's outputs (`WAYLAND_DISPLAY`), by the order of their
/// globals.
pub(crate) fn read() -> Result<Vec<Output>, String> {
    crate::compositor::read(true).map(|(_, outputs)| outputs)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_output_is_a_monitor_at_its_place_with_its_scale() {
        let o = Output {
            position: (1280, 0),
            pixels: (2560, 1600),
            scale: 2,
            name: Some("DP-1".into()),
            ..Output::default()
        };
        let m = o.monitor(1);
        assert_eq!(m.rect, deskhand_backend::Rect::new(1280, 0, 2560, 1600));
        assert_eq!(m.scale, 2.0);
        assert_eq!((m.index, m.primary, m.name.as_str()), (1, false, "DP-1"));
        assert_eq!(Output::default().monitor(0).scale, 1.0);
        // 150% (wl_output says 2): xdg-output's logical size decides.
        let kde = Output {
            pixels: (1920, 1200),
            scale: 2,
            logical: Some(((0, 0), (1280, 800))),
            ..Output::default()
        };
        assert_eq!(kde.monitor(0).scale, 1.5);
        // Turned a quarter: 1200 wide, 1920 high.
        let turned = Output {
            pixels: (1920, 1200),
            quarter_turn: true,
            ..Output::default()
        };
        assert_eq!(
            turned.monitor(0).rect,
            deskhand_backend::Rect::new(0, 0, 1200, 1920)
        );
    }
}
