//! Monitors from RandR (several monitors on one screen included), the
//! scale from `Xft.dpi`, and the pointer through QueryPointer.
//!
//! The bounds check of every input action reads the layout, so for it the
//! layout is cached until the server says it changed: RandR screen, CRTC
//! and output notifications; a ConfigureNotify of the root, which is all
//! that `xrandr --setmonitor` and `--delmonitor` send; a change of the
//! root's RESOURCE_MANAGER, where `Xft.dpi` lives. DISPLAY_INFO and
//! screenshots always read it fresh.

use std::collections::HashMap;
use std::sync::Arc;

use deskhand_backend::{BackendError, Displays, Monitor, Point, Rect};
use x11rb::connection::{Connection, RequestConnection};
use x11rb::cookie::Cookie;
use x11rb::protocol::Event;
use x11rb::protocol::randr::{self, ConnectionExt as _, NotifyMask};
use x11rb::protocol::xproto::{
    AtomEnum, ChangeWindowAttributesAux, ConnectionExt as _, EventMask, GetPropertyReply,
};
use x11rb::rust_connection::RustConnection;

use super::{Shared, X11ResultExt};

pub struct X11Displays {
    shared: Arc<Shared>,
    randr_ok: bool,
    atom_names: HashMap<u32, String>,
    /// The layout as last read; `None` once the server reported a change.
    cached: Option<Vec<Monitor>>,
}

impl X11Displays {
    pub fn new(shared: Arc<Shared>) -> Self {
        let randr_ok = shared
            .conn
            .extension_information(randr::X11_EXTENSION_NAME)
            .ok()
            .flatten()
            .is_some()
            && shared
                .conn
                .randr_query_version(1, 5)
                .ok()
                .and_then(|c| c.reply().ok())
                .is_some_and(|v| v.major_version > 1 || v.minor_version >= 5);
        let root = shared.root;
        if randr_ok {
            let mask =
                NotifyMask::SCREEN_CHANGE | NotifyMask::CRTC_CHANGE | NotifyMask::OUTPUT_CHANGE;
            let _ = shared.conn.randr_select_input(root, mask);
        }
        let attrs = ChangeWindowAttributesAux::new()
            .event_mask(EventMask::PROPERTY_CHANGE | EventMask::STRUCTURE_NOTIFY);
        let _ = shared.conn.change_window_attributes(root, &attrs);
        let _ = shared.conn.flush();
        Self {
            shared,
            randr_ok,
            atom_names: HashMap::new(),
            cached: None,
        }
    }

    /// Reads the events that arrived; forgets the layout if one says it
    /// changed.
    fn drain_events(&mut self) -> Result<(), BackendError> {
        while let Some(event) = self.shared.conn.poll_for_event().backend()? {
            let changed = match event {
                Event::RandrScreenChangeNotify(_) | Event::RandrNotify(_) => true,
                Event::ConfigureNotify(c) => c.window == self.shared.root,
                Event::PropertyNotify(p) => p.atom == u32::from(AtomEnum::RESOURCE_MANAGER),
                _ => false,
            };
            if changed {
                tracing::debug!(?event, "display layout changed");
                self.cached = None;
            }
        }
        Ok(())
    }

    fn atom_name(&mut self, atom: u32) -> String {
        if let Some(n) = self.atom_names.get(&atom) {
            return n.clone();
        }
        let name = self
            .shared
            .conn
            .get_atom_name(atom)
            .ok()
            .and_then(|c| c.reply().ok())
            .map(|r| String::from_utf8_lossy(&r.name).into_owned())
            .unwrap_or_else(|| format!("monitor-{atom}"));
        self.atom_names.insert(atom, name.clone());
        name
    }

    fn root_monitor(&self, scale: f64) -> Result<Vec<Monitor>, BackendError> {
        let g = self
            .shared
            .conn
            .get_geometry(self.shared.root)
            .backend()?
            .reply()
            .backend()?;
        Ok(vec![Monitor {
            index: 0,
            name: "screen".into(),
            primary: true,
            rect: Rect::new(0, 0, u32::from(g.width), u32::from(g.height)),
            scale,
        }])
    }
}

/// Asks for the root's RESOURCE_MANAGER, where `Xft.dpi` lives.
fn request_resources(shared: &Shared) -> Option<Cookie<'_, RustConnection, GetPropertyReply>> {
    shared
        .conn
        .get_property(
            false,
            shared.root,
            AtomEnum::RESOURCE_MANAGER,
            AtomEnum::STRING,
            0,
            1 << 16,
        )
        .ok()
}

/// `Xft.dpi / 96` from the root's RESOURCE_MANAGER, else 1.0.
fn scale_of(resources: Option<GetPropertyReply>) -> f64 {
    resources
        .and_then(|p| parse_xft_dpi(&String::from_utf8_lossy(&p.value)))
        .map(|dpi| (dpi / 96.0 * 100.0).round() / 100.0)
        .filter(|s| *s > 0.0)
        .unwrap_or(1.0)
}

fn parse_xft_dpi(resources: &str) -> Option<f64> {
    resources.lines().find_map(|line| {
        let (k, v) = line.split_once(':')?;
        (k.trim() == "Xft.dpi").then(|| v.trim().parse().ok())?
    })
}

impl Displays for X11Displays {
    fn monitors(&mut self) -> Result<Vec<Monitor>, BackendError> {
        self.drain_events()?;
        let monitors = self.read_monitors()?;
        self.cached = Some(monitors.clone());
        Ok(monitors)
    }

    fn monitors_for_input(&mut self) -> Result<Vec<Monitor>, BackendError> {
        self.drain_events()?;
        match &self.cached {
            Some(monitors) => Ok(monitors.clone()),
            None => self.monitors(),
        }
    }

    fn cursor_position(&mut self) -> Result<Point, BackendError> {
        let r = self.shared.conn.query_pointer(self.shared.root).backend()?;
        self.shared.spin_for_reply();
        let r = r.reply().backend()?;
        Ok(Point::new(i32::from(r.root_x), i32::from(r.root_y)))
    }
}

impl X11Displays {
    fn read_monitors(&mut self) -> Result<Vec<Monitor>, BackendError> {
        // Both questions go out before either answer is awaited: one round
        // trip.
        let shared = self.shared.clone();
        let resources = request_resources(&shared);
        let monitors = if self.randr_ok {
            Some(
                shared
                    .conn
                    .randr_get_monitors(shared.root, true)
                    .backend()?,
            )
        } else {
            None
        };
        let scale = scale_of(resources.and_then(|c| c.reply().ok()));
        let Some(monitors) = monitors else {
            return self.root_monitor(scale);
        };
        let reply = monitors.reply().backend()?;
        if reply.monitors.is_empty() {
            return self.root_monitor(scale);
        }
        let mut out = Vec::with_capacity(reply.monitors.len());
        for (i, m) in reply.monitors.iter().enumerate() {
            out.push(Monitor {
                index: i as u32,
                name: self.atom_name(m.name),
                primary: m.primary,
                rect: Rect::new(
                    i32::from(m.x),
                    i32::from(m.y),
                    u32::from(m.width),
                    u32::from(m.height),
                ),
                scale,
            });
        }
        if !out.iter().any(|m| m.primary) {
            out[0].primary = true;
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::parse_xft_dpi;

    #[test]
    fn reads_xft_dpi() {
        assert_eq!(
            parse_xft_dpi("Xft.antialias:\t1\nXft.dpi:\t192\n"),
            Some(192.0)
        );
        assert_eq!(parse_xft_dpi("Xcursor.size: 24"), None);
    }
}
