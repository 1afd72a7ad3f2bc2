//! Plays the person for the benchmark: input through XTEST on a connection
//! of its own, which deskhand did not send and so must take as the
//! person's.

use x11rb::connection::Connection;
use x11rb::protocol::xproto::{ConnectionExt as _, KEY_PRESS_EVENT, KEY_RELEASE_EVENT};
use x11rb::protocol::xtest::ConnectionExt as _;
use x11rb::rust_connection::RustConnection;

use crate::X11Error;

/// A stand-in for the person's keyboard.
pub struct FakePerson {
    conn: RustConnection,
    root: u32,
    keycode: u8,
}

fn request(e: impl std::fmt::Display) -> X11Error {
    X11Error::Request(e.to_string())
}

impl FakePerson {
    /// Connects to `display`; the key tapped is Shift (changes nothing).
    pub fn connect(display: &str) -> Result<Self, X11Error> {
        let (conn, screen) =
            RustConnection::connect(Some(display)).map_err(|e| X11Error::Connect {
                display: display.to_owned(),
                message: e.to_string(),
            })?;
        let root = conn.setup().roots[screen].root;
        let (min, max) = (conn.setup().min_keycode, conn.setup().max_keycode);
        let map = conn
            .get_keyboard_mapping(min, max - min + 1)
            .map_err(request)?
            .reply()
            .map_err(request)?;
        let per = usize::from(map.keysyms_per_keycode.max(1));
        let keycode = map
            .keysyms
            .chunks(per)
            .position(|syms| syms.first() == Some(&0xffe1)) // Shift_L
            .map(|i| min + i as u8)
            .ok_or_else(|| X11Error::Request("no Shift_L key".into()))?;
        Ok(Self {
            conn,
            root,
            keycode,
        })
    }

    /// Presses and releases the key; returns once the server has both.
    pub fn tap_key(&self) -> Result<(), X11Error> {
        for kind in [KEY_PRESS_EVENT, KEY_RELEASE_EVENT] {
            self.conn
                .xtest_fake_input(kind, self.keycode, 0, self.root, 0, 0, 0)
                .map_err(request)?;
        }
        self.conn
            .get_input_focus()
            .map_err(request)?
            .reply()
            .map_err(request)?;
        Ok(())
    }
}
