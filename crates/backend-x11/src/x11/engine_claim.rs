//! One engine per X display, kept on the X server itself: the engine owns
//! the `DESKHAND_ENGINE` selection while it runs. The server lets a
//! selection go when its owner's connection closes (also when the process
//! is killed), and every client of the display sees it whatever its
//! runtime directory or environment, so a second engine is refused where
//! the runtime directory's lock file alone could be dodged. Another client
//! that takes the selection has it taken back.

use std::sync::Arc;

use x11rb::connection::Connection;
use x11rb::protocol::Event;
use x11rb::protocol::xproto::{
    Atom, ConnectionExt as _, CreateWindowAux, EventMask, Window, WindowClass,
};
use x11rb::rust_connection::RustConnection;
use x11rb::{COPY_FROM_PARENT, CURRENT_TIME, NONE};

use super::clients;
use crate::X11Error;

/// The selection an engine owns.
const SELECTION: &[u8] = b"DESKHAND_ENGINE";

/// This process's hold on the display; let go when dropped (its window
/// goes, and with it the selection and the keeping thread).
pub struct EngineClaim {
    conn: Arc<RustConnection>,
    window: Window,
}

impl Drop for EngineClaim {
    fn drop(&mut self) {
        let _ = self.conn.destroy_window(self.window);
        let _ = self.conn.flush();
    }
}

impl std::fmt::Debug for EngineClaim {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("EngineClaim")
    }
}

fn request(e: impl std::fmt::Display) -> X11Error {
    X11Error::Request(e.to_string())
}

/// Takes `display` for this process's engine, or says which process
/// already drives it.
pub fn claim(display: &str) -> Result<EngineClaim, X11Error> {
    let (conn, screen) = RustConnection::connect(Some(display)).map_err(|e| X11Error::Connect {
        display: display.to_owned(),
        message: e.to_string(),
    })?;
    let root = conn.setup().roots[screen].root;
    let selection = conn
        .intern_atom(false, SELECTION)
        .map_err(request)?
        .reply()
        .map_err(request)?
        .atom;
    let window = conn.generate_id().map_err(request)?;
    conn.create_window(
        COPY_FROM_PARENT as u8,
        window,
        root,
        -1,
        -1,
        1,
        1,
        0,
        WindowClass::INPUT_ONLY,
        COPY_FROM_PARENT,
        // Its DestroyNotify ends the keeping thread.
        &CreateWindowAux::new().event_mask(EventMask::STRUCTURE_NOTIFY),
    )
    .map_err(request)?;
    // Grabbed: no other engine can look and take between our look and take.
    conn.grab_server().map_err(request)?;
    let taken = take_if_free(&conn, selection, window);
    conn.ungrab_server().map_err(request)?;
    conn.flush().map_err(request)?;
    if let Some(owner) = taken? {
        let who = clients::pid_of(&conn, owner).map_or_else(
            || "another deskhand engine".to_owned(),
            |p| format!("deskhand (pid {p})"),
        );
        return Err(X11Error::Claimed(format!(
            "{who} already drives display {display} (it owns the X selection DESKHAND_ENGINE); \
             one display has one engine: relay to it (`deskhand mcp` with the same \
             XDG_RUNTIME_DIR) or stop it first"
        )));
    }
    let conn = Arc::new(conn);
    let kept = conn.clone();
    std::thread::Builder::new()
        .name("deskhand-engine-claim".into())
        .spawn(move || keep(&kept, selection, window))
        .map_err(request)?;
    Ok(EngineClaim { conn, window })
}

/// Takes the selection when nobody owns it; the owner when somebody does.
fn take_if_free(
    conn: &RustConnection,
    selection: Atom,
    window: Window,
) -> Result<Option<Window>, X11Error> {
    let owner = conn
        .get_selection_owner(selection)
        .map_err(request)?
        .reply()
        .map_err(request)?
        .owner;
    if owner != NONE {
        return Ok(Some(owner));
    }
    conn.set_selection_owner(window, selection, CURRENT_TIME)
        .map_err(request)?;
    Ok(None)
}

/// Takes the selection back whenever another client takes it, until the
/// claim's window goes.
fn keep(conn: &RustConnection, selection: Atom, window: Window) {
    while let Ok(event) = conn.wait_for_event() {
        if let Event::DestroyNotify(e) = &event
            && e.window == window
        {
            return;
        }
        if let Event::SelectionClear(e) = event
            && e.selection == selection
        {
            tracing::warn!(
                by = ?clients::pid_of(conn, e.owner),
                "another client took the DESKHAND_ENGINE selection: taken back"
            );
            let _ = conn.set_selection_owner(window, selection, CURRENT_TIME);
            let _ = conn.flush();
        }
    }
}
