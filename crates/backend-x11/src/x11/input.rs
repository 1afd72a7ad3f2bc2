//! Input through ONE long-lived enigo instance (XTEST via x11rb).
//! Characters outside the keymap are typed by remapping a spare keycode,
//! which only works reliably when the same instance lives on.
//!
//! Pointer motion is a `WarpPointer` on the backend's shared connection,
//! as `xdotool mousemove` does it: applications get the same motion,
//! enter and leave events as from a device (no raw event: the hand-back
//! watcher is not woken by deskhand's own moves). enigo would list the
//! input devices before every event, one more round trip per move. A warp
//! can also be made conditional: the server moves the pointer only if it
//! is still inside a rectangle, which makes the hand-back check and the
//! move one step. The `QueryPointer` after it is answered once the warp is
//! done and says where the pointer is. On the shared connection the move
//! is also ordered before the next capture or pointer query. Button and key
//! events (enigo's connection) wait for the server as motion does, so a
//! drag's press, moves and release arrive in order.

use std::sync::Arc;

use deskhand_engine::{BackendError, Button, Input, Key, Point, Rect, ScrollDirection};
use enigo::{Axis, Direction, Enigo, Keyboard, Mouse, Settings};
use x11rb::NONE;
use x11rb::protocol::xproto::ConnectionExt as _;

use super::{Shared, X11ResultExt};

pub struct X11Input {
    enigo: Enigo,
    shared: Arc<Shared>,
}

impl X11Input {
    pub fn new(display: &str, shared: Arc<Shared>) -> Result<Self, BackendError> {
        let settings = Settings {
            x11_display: Some(display.to_owned()),
            // No server-side delay between events: deskhand paces itself.
            linux_delay: 0,
            release_keys_when_dropped: true,
            ..Settings::default()
        };
        let enigo = Enigo::new(&settings).map_err(|e| BackendError::Unsupported(e.to_string()))?;
        Ok(Self { enigo, shared })
    }
}

fn failed(e: impl std::fmt::Display) -> BackendError {
    BackendError::Failed(e.to_string())
}

fn direction(press: bool) -> Direction {
    if press {
        Direction::Press
    } else {
        Direction::Release
    }
}

fn map_key(key: Key) -> enigo::Key {
    use enigo::Key as E;
    match key {
        Key::Shift => E::Shift,
        Key::Control => E::Control,
        Key::Alt => E::Alt,
        Key::Super => E::Meta,
        Key::Return => E::Return,
        Key::Tab => E::Tab,
        Key::Escape => E::Escape,
        Key::Space => E::Space,
        Key::Backspace => E::Backspace,
        Key::Delete => E::Delete,
        Key::Insert => E::Insert,
        Key::Up => E::UpArrow,
        Key::Down => E::DownArrow,
        Key::Left => E::LeftArrow,
        Key::Right => E::RightArrow,
        Key::PageUp => E::PageUp,
        Key::PageDown => E::PageDown,
        Key::Home => E::Home,
        Key::End => E::End,
        Key::CapsLock => E::CapsLock,
        Key::Menu => E::LMenu,
        Key::PrintScreen => E::PrintScr,
        Key::F(n) => function_key(n),
        Key::Char(c) => E::Unicode(c),
    }
}

fn function_key(n: u8) -> enigo::Key {
    use enigo::Key as E;
    const KEYS: [enigo::Key; 24] = [
        E::F1,
        E::F2,
        E::F3,
        E::F4,
        E::F5,
        E::F6,
        E::F7,
        E::F8,
        E::F9,
        E::F10,
        E::F11,
        E::F12,
        E::F13,
        E::F14,
        E::F15,
        E::F16,
        E::F17,
        E::F18,
        E::F19,
        E::F20,
        E::F21,
        E::F22,
        E::F23,
        E::F24,
    ];
    KEYS[usize::from(n.clamp(1, 24)) - 1]
}

impl X11Input {
    /// Warps the pointer to `to` (only while it is inside `source`, a
    /// rectangle of the root, when given) and returns where it is once
    /// the server has done it.
    fn warp(&self, source: Option<(i16, i16, u16, u16)>, to: Point) -> Result<Point, BackendError> {
        let (Ok(x), Ok(y)) = (i16::try_from(to.x), i16::try_from(to.y)) else {
            return Err(BackendError::Failed(format!(
                "({}, {}) is outside the X11 coordinate range",
                to.x, to.y
            )));
        };
        let root = self.shared.root;
        let (src_window, (sx, sy, sw, sh)) = match source {
            Some(rect) => (root, rect),
            None => (NONE, (0, 0, 0, 0)),
        };
        let conn = &self.shared.conn;
        conn.warp_pointer(src_window, root, sx, sy, sw, sh, x, y)
            .backend()?;
        let at = conn.query_pointer(root).backend()?;
        self.shared.spin_for_reply();
        let at = at.reply().backend()?;
        Ok(Point::new(i32::from(at.root_x), i32::from(at.root_y)))
    }
}

impl Input for X11Input {
    fn move_pointer(&mut self, to: Point) -> Result<(), BackendError> {
        self.warp(None, to).map(|_| ())
    }

    fn move_pointer_if_within(
        &mut self,
        within: Rect,
        to: Point,
    ) -> Option<Result<Point, BackendError>> {
        // X counts the far edge in and reads a width of 0 as "to the
        // window's edge": a 1-pixel rectangle cannot be said.
        let source = (
            i16::try_from(within.x).ok()?,
            i16::try_from(within.y).ok()?,
            u16::try_from(within.width.saturating_sub(1))
                .ok()
                .filter(|w| *w > 0)?,
            u16::try_from(within.height.saturating_sub(1))
                .ok()
                .filter(|h| *h > 0)?,
        );
        Some(self.warp(Some(source), to))
    }

    fn button(&mut self, button: Button, press: bool) -> Result<(), BackendError> {
        let b = match button {
            Button::Left => enigo::Button::Left,
            Button::Middle => enigo::Button::Middle,
            Button::Right => enigo::Button::Right,
        };
        self.enigo.button(b, direction(press)).map_err(failed)
    }

    fn key(&mut self, key: Key, press: bool) -> Result<(), BackendError> {
        self.enigo
            .key(map_key(key), direction(press))
            .map_err(failed)
    }

    fn text(&mut self, text: &str) -> Result<(), BackendError> {
        for c in text.chars() {
            let key = match c {
                '\n' | '\r' => enigo::Key::Return,
                '\t' => enigo::Key::Tab,
                c => enigo::Key::Unicode(c),
            };
            self.enigo.key(key, Direction::Click).map_err(failed)?;
        }
        Ok(())
    }

    fn scroll(&mut self, direction: ScrollDirection, steps: u32) -> Result<(), BackendError> {
        let steps = i32::try_from(steps).map_err(failed)?;
        let (length, axis) = match direction {
            ScrollDirection::Up => (-steps, Axis::Vertical),
            ScrollDirection::Down => (steps, Axis::Vertical),
            ScrollDirection::Left => (-steps, Axis::Horizontal),
            ScrollDirection::Right => (steps, Axis::Horizontal),
        };
        self.enigo.scroll(length, axis).map_err(failed)
    }
}
