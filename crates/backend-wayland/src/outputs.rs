//! The compositor's outputs (`wl_output`): where each monitor is and its
//! size in pixels, for the monitor list where no screencast stream gives
//! it (a desktop whose portal has only Screenshot). Read without taking a
//! screenshot, so listing the monitors never asks the person anything.

use deskhand_backend::Monitor;
use wayland_client::protocol::wl_output;
use wayland_client::{Connection, Dispatch, QueueHandle, WEnum};

use crate::compositor::Listing;
use crate::displays::monitor;

/// One output as the compositor describes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Output {
    /// Top-left in the compositor's (logical) space.
    pub(crate) position: (i32, i32),
    /// Its current mode, in pixels.
    pub(crate) pixels: (u32, u32),
    /// Its integer scale.
    pub(crate) scale: i32,
    pub(crate) name: Option<String>,
}

impl Default for Output {
    fn default() -> Self {
        Self {
            position: (0, 0),
            pixels: (0, 0),
            scale: 1,
            name: None,
        }
    }
}

impl Output {
    /// The monitor it is, `index` in the list.
    pub(crate) fn monitor(&self, index: u32) -> Monitor {
        let s = self.scale.max(1) as u32;
        let mut m = monitor(
            self.position,
            self.pixels,
            (self.pixels.0 / s, self.pixels.1 / s),
        );
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
            wl_output::Event::Geometry { x, y, .. } => o.position = (x, y),
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
        };
        let m = o.monitor(1);
        assert_eq!(m.rect, deskhand_backend::Rect::new(1280, 0, 2560, 1600));
        assert_eq!(m.scale, 2.0);
        assert_eq!((m.index, m.primary, m.name.as_str()), (1, false, "DP-1"));
        assert_eq!(Output::default().monitor(0).scale, 1.0);
    }
}
