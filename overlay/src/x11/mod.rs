//! The overlay on X11, what winit does not do there: SHAPE regions (the
//! frame and label are the only visible parts, the Continue button the
//! only one that takes input), override-redirect windows kept on top, and
//! noticing when another client unmaps or destroys one.

pub mod quiet;

use std::sync::Arc;

use x11rb::connection::{Connection, RequestConnection};
use x11rb::protocol::Event;
use x11rb::protocol::shape::{self, ConnectionExt as _};
use x11rb::protocol::xproto::{
    ChangeWindowAttributesAux, ClipOrdering, ConfigureWindowAux, ConnectionExt as _, EventMask,
    Rectangle, StackMode, Visibility,
};
use x11rb::rust_connection::RustConnection;

use deskhand_overlay::desktop::{Desktop, WindowNews};
use deskhand_protocol::geometry::Rect;
use winit::platform::x11::WindowAttributesExtX11;
use winit::raw_window_handle::{HasWindowHandle, RawWindowHandle};
use winit::window::{Window, WindowAttributes};

/// A second connection to the display, for SHAPE and stacking.
#[derive(Clone)]
pub struct X11Side {
    conn: Arc<RustConnection>,
    root: u32,
}

fn rectangles(rects: &[Rect]) -> Vec<Rectangle> {
    rects
        .iter()
        .map(|r| {
            let (x, y, width, height) = r.clamped_16();
            Rectangle {
                x,
                y,
                width,
                height,
            }
        })
        .collect()
}

impl X11Side {
    /// Connects to `$DISPLAY` and checks for the SHAPE extension.
    pub fn connect() -> anyhow::Result<Self> {
        let (conn, screen) = RustConnection::connect(None)?;
        let root = conn.setup().roots[screen].root;
        if conn
            .extension_information(shape::X11_EXTENSION_NAME)?
            .is_none()
        {
            anyhow::bail!("the X server has no SHAPE extension");
        }
        // Every map and restack of the root's children, to stay on top
        // (with Composite on, covered windows get no VisibilityNotify).
        conn.change_window_attributes(
            root,
            &ChangeWindowAttributesAux::new().event_mask(EventMask::SUBSTRUCTURE_NOTIFY),
        )?
        .check()?;
        Ok(Self {
            conn: Arc::new(conn),
            root,
        })
    }

    /// Starts watching `window` for map, unmap, destroy and visibility.
    fn watch(&self, window: u32) -> anyhow::Result<()> {
        let mask = EventMask::STRUCTURE_NOTIFY | EventMask::VISIBILITY_CHANGE | EventMask::EXPOSURE;
        self.conn
            .change_window_attributes(window, &ChangeWindowAttributesAux::new().event_mask(mask))?;
        self.conn.flush()?;
        Ok(())
    }
}

impl Desktop for X11Side {
    fn attributes(&self, attrs: WindowAttributes) -> WindowAttributes {
        // No window manager frames, moves or stacks it.
        attrs
            .with_name("deskhand-overlay", "deskhand-overlay")
            .with_override_redirect(true)
    }

    fn adopt(&self, window: &Window) -> anyhow::Result<u32> {
        let xid = match window.window_handle()?.as_raw() {
            RawWindowHandle::Xlib(h) => h.window as u32,
            RawWindowHandle::Xcb(h) => h.window.get(),
            other => anyhow::bail!("not an X11 window: {other:?}"),
        };
        self.watch(xid)?;
        Ok(xid)
    }

    fn shape(
        &self,
        _window: &Window,
        window: u32,
        visible: &[Rect],
        input: &[Rect],
    ) -> anyhow::Result<()> {
        for (kind, rects) in [(shape::SK::BOUNDING, visible), (shape::SK::INPUT, input)] {
            // Checked: an input shape that did not take is not click-through.
            self.conn
                .shape_rectangles(
                    shape::SO::SET,
                    kind,
                    ClipOrdering::UNSORTED,
                    window,
                    0,
                    0,
                    &rectangles(rects),
                )?
                .check()?;
        }
        self.conn.flush()?;
        Ok(())
    }

    fn raise(&self, window: u32) -> anyhow::Result<()> {
        self.conn.configure_window(
            window,
            &ConfigureWindowAux::new().stack_mode(StackMode::ABOVE),
        )?;
        self.conn.flush()?;
        Ok(())
    }

    fn next(&self) -> WindowNews {
        loop {
            match self.conn.wait_for_event() {
                Ok(Event::MapNotify(e)) if e.event == self.root => {
                    return WindowNews::Restacked(e.window);
                }
                Ok(Event::ConfigureNotify(e)) if e.event == self.root => {
                    return WindowNews::Restacked(e.window);
                }
                Ok(Event::MapNotify(e)) => return WindowNews::Mapped(e.window),
                Ok(Event::UnmapNotify(e)) if e.event != self.root => {
                    return WindowNews::Unmapped(e.window);
                }
                Ok(Event::DestroyNotify(e)) if e.event != self.root => {
                    return WindowNews::Destroyed(e.window);
                }
                Ok(Event::VisibilityNotify(e)) if e.state != Visibility::UNOBSCURED => {
                    return WindowNews::Covered(e.window);
                }
                Ok(_) => {}
                Err(_) => return WindowNews::Closed,
            }
        }
    }
}
