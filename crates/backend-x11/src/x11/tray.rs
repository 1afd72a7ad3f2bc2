//! Whether an XEmbed system tray runs on a display: the owner of the
//! `_NET_SYSTEM_TRAY_S<screen>` selection (freedesktop System Tray spec).

use x11rb::connection::Connection;
use x11rb::protocol::xproto::ConnectionExt as _;
use x11rb::rust_connection::RustConnection;

use crate::X11Error;

/// Whether a system tray owns its selection on `display`'s default screen.
pub fn system_tray_present(display: &str) -> Result<bool, X11Error> {
    let (conn, screen) = RustConnection::connect(Some(display)).map_err(|e| X11Error::Connect {
        display: display.to_owned(),
        message: e.to_string(),
    })?;
    let request = |e: &dyn std::fmt::Display| X11Error::Request(e.to_string());
    let name = format!("_NET_SYSTEM_TRAY_S{screen}");
    let atom = conn
        .intern_atom(false, name.as_bytes())
        .map_err(|e| request(&e))?
        .reply()
        .map_err(|e| request(&e))?
        .atom;
    let owner = conn
        .get_selection_owner(atom)
        .map_err(|e| request(&e))?
        .reply()
        .map_err(|e| request(&e))?
        .owner;
    conn.flush().map_err(|e| request(&e))?;
    Ok(owner != x11rb::NONE)
}
