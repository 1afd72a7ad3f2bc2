//! Top-level windows from EWMH (`_NET_CLIENT_LIST_STACKING`, `_NET_WM_NAME`
//! with a `WM_NAME` fallback, `WM_CLASS`, `_NET_WM_STATE`; the pid from the
//! server's own record of the client (X-Resource), `_NET_WM_PID`, which a
//! client sets as it likes, only where the server has none),
//! falling back to the root's mapped children without a window manager;
//! focus through `_NET_ACTIVE_WINDOW` (or SetInputFocus and a raise).

use std::sync::Arc;

use deskhand_backend::{BackendError, NativeWindow, Rect, Windows};
use x11rb::connection::Connection;
use x11rb::cookie::Cookie;
use x11rb::protocol::res::QueryClientIdsReply;
use x11rb::protocol::xproto::{
    Atom, AtomEnum, ClientMessageEvent, ConfigureWindowAux, ConnectionExt as _, EventMask,
    GetGeometryReply, GetPropertyReply, GetWindowAttributesReply, InputFocus, MapState, StackMode,
    TranslateCoordinatesReply, Window, WindowClass,
};
use x11rb::rust_connection::RustConnection;
use x11rb::{CURRENT_TIME, NONE};

use super::{Shared, X11ResultExt, clients};

x11rb::atom_manager! {
    Atoms: AtomsCookie {
        _NET_CLIENT_LIST_STACKING,
        _NET_CLIENT_LIST,
        _NET_ACTIVE_WINDOW,
        _NET_WM_NAME,
        _NET_WM_PID,
        _NET_WM_STATE,
        _NET_WM_STATE_HIDDEN,
        _NET_WM_STATE_FULLSCREEN,
        _NET_SUPPORTING_WM_CHECK,
        UTF8_STRING,
        WM_STATE,
    }
}

/// Longest wait for the window manager to focus a window.
const FOCUS_WAIT: std::time::Duration = std::time::Duration::from_secs(1);

/// ICCCM WM_STATE value of an iconic (minimized) window.
const ICONIC_STATE: u32 = 3;

pub struct X11Windows {
    shared: Arc<Shared>,
    atoms: Atoms,
    /// The server answers X-Resource 1.2's client ids (a client's pid).
    client_pids: bool,
}

impl X11Windows {
    pub fn new(shared: Arc<Shared>) -> Result<Self, BackendError> {
        let atoms = Atoms::new(&shared.conn).backend()?.reply().backend()?;
        let client_pids = clients::pids_offered(&shared.conn);
        if !client_pids {
            tracing::warn!(
                "the X server has no X-Resource 1.2: a window's pid is what the window says"
            );
        }
        Ok(Self {
            shared,
            atoms,
            client_pids,
        })
    }

    fn property(
        &self,
        w: Window,
        prop: Atom,
        kind: impl Into<Atom>,
    ) -> Result<Vec<u8>, BackendError> {
        let r = self
            .shared
            .conn
            .get_property(false, w, prop, kind, 0, 1 << 16)
            .backend()?
            .reply()
            .backend()?;
        Ok(r.value)
    }

    fn cardinals(
        &self,
        w: Window,
        prop: Atom,
        kind: impl Into<Atom>,
    ) -> Result<Vec<u32>, BackendError> {
        Ok(self
            .property(w, prop, kind)?
            .chunks_exact(4)
            .map(|c| u32::from_ne_bytes([c[0], c[1], c[2], c[3]]))
            .collect())
    }

    /// The managed windows, bottom first; the root's viewable children
    /// without a window manager.
    fn stacking(&self) -> Result<Vec<Window>, BackendError> {
        let root = self.shared.root;
        for list in [
            self.atoms._NET_CLIENT_LIST_STACKING,
            self.atoms._NET_CLIENT_LIST,
        ] {
            let ids = self.cardinals(root, list, AtomEnum::WINDOW)?;
            if !ids.is_empty() {
                return Ok(ids);
            }
        }
        let tree = self
            .shared
            .conn
            .query_tree(root)
            .backend()?
            .reply()
            .backend()?;
        let mut out = Vec::new();
        for child in tree.children {
            let attrs = self
                .shared
                .conn
                .get_window_attributes(child)
                .backend()?
                .reply();
            if let Ok(a) = attrs
                && a.map_state == MapState::VIEWABLE
                && a.class == WindowClass::INPUT_OUTPUT
                && !a.override_redirect
            {
                out.push(child);
            }
        }
        Ok(out)
    }

    /// Sends every request about `w` at once; [`Asked::read`] reads the
    /// answers, so that a whole list costs one round trip, not one per
    /// property of each window.
    fn ask(&self, w: Window) -> Result<Asked<'_>, BackendError> {
        let conn = &self.shared.conn;
        let property = |prop: Atom, kind: Atom| {
            conn.get_property(false, w, prop, kind, 0, 1 << 16)
                .backend()
        };
        let a = &self.atoms;
        Ok(Asked {
            w,
            geometry: conn.get_geometry(w).backend()?,
            origin: conn
                .translate_coordinates(w, self.shared.root, 0, 0)
                .backend()?,
            class: property(AtomEnum::WM_CLASS.into(), AtomEnum::STRING.into())?,
            client_pid: match self.client_pids {
                true => Some(clients::ask_pid(conn, w).backend()?),
                false => None,
            },
            wm_pid: property(a._NET_WM_PID, AtomEnum::CARDINAL.into())?,
            states: property(a._NET_WM_STATE, AtomEnum::ATOM.into())?,
            wm_state: property(a.WM_STATE, a.WM_STATE)?,
            attrs: conn.get_window_attributes(w).backend()?,
            name: property(a._NET_WM_NAME, a.UTF8_STRING)?,
            legacy_name: property(AtomEnum::WM_NAME.into(), AtomEnum::ANY.into())?,
        })
    }

    fn has_window_manager(&self) -> Result<bool, BackendError> {
        let check = self.cardinals(
            self.shared.root,
            self.atoms._NET_SUPPORTING_WM_CHECK,
            AtomEnum::WINDOW,
        )?;
        Ok(!check.is_empty())
    }

    /// Waits (bounded) until `w` is the active window and holds the input
    /// focus (itself or a window inside it).
    fn wait_for_focus(&self, w: Window) -> Result<(), BackendError> {
        let deadline = std::time::Instant::now() + FOCUS_WAIT;
        loop {
            if self.focused_window()? == w && self.input_focus_within(w)? {
                return Ok(());
            }
            if std::time::Instant::now() >= deadline {
                return Err(BackendError::Failed(format!(
                    "the window manager did not give window {w} the focus within {FOCUS_WAIT:?}"
                )));
            }
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
    }

    /// Whether the X input focus is `w` or a window inside it.
    fn input_focus_within(&self, w: Window) -> Result<bool, BackendError> {
        let conn = &self.shared.conn;
        let mut at = conn.get_input_focus().backend()?.reply().backend()?.focus;
        for _ in 0..16 {
            if at == w {
                return Ok(true);
            }
            if at == NONE || at == self.shared.root || at == u32::from(InputFocus::POINTER_ROOT) {
                return Ok(false);
            }
            at = match conn.query_tree(at).backend()?.reply() {
                Ok(tree) => tree.parent,
                Err(_) => return Ok(false), // the focused window went away
            };
        }
        Ok(false)
    }

    fn focused_window(&self) -> Result<Window, BackendError> {
        let active = self.cardinals(
            self.shared.root,
            self.atoms._NET_ACTIVE_WINDOW,
            AtomEnum::WINDOW,
        )?;
        match active.first() {
            Some(&w) if w != NONE => Ok(w),
            _ => Ok(self
                .shared
                .conn
                .get_input_focus()
                .backend()?
                .reply()
                .backend()?
                .focus),
        }
    }
}

/// The requests about one window, in flight.
struct Asked<'c> {
    w: Window,
    geometry: Cookie<'c, RustConnection, GetGeometryReply>,
    origin: Cookie<'c, RustConnection, TranslateCoordinatesReply>,
    class: Cookie<'c, RustConnection, GetPropertyReply>,
    /// The server's record of the client's pid (X-Resource), when offered.
    client_pid: Option<Cookie<'c, RustConnection, QueryClientIdsReply>>,
    /// `_NET_WM_PID`, which the window sets itself: only where the server
    /// has no pid.
    wm_pid: Cookie<'c, RustConnection, GetPropertyReply>,
    states: Cookie<'c, RustConnection, GetPropertyReply>,
    wm_state: Cookie<'c, RustConnection, GetPropertyReply>,
    attrs: Cookie<'c, RustConnection, GetWindowAttributesReply>,
    name: Cookie<'c, RustConnection, GetPropertyReply>,
    legacy_name: Cookie<'c, RustConnection, GetPropertyReply>,
}

/// A property's value as 32-bit cardinals.
fn cardinals_of(r: &GetPropertyReply) -> Vec<u32> {
    r.value32().map(Iterator::collect).unwrap_or_default()
}

impl Asked<'_> {
    /// The window as its answers describe it; `None` when it went away.
    fn read(self, atoms: &Atoms, active: Window) -> Result<Option<NativeWindow>, BackendError> {
        let (Ok(geometry), Ok(origin)) = (self.geometry.reply(), self.origin.reply()) else {
            return Ok(None); // gone meanwhile
        };
        let class = self.class.reply().backend()?.value;
        let mut parts = class
            .split(|&b| b == 0)
            .map(|p| String::from_utf8_lossy(p).into_owned());
        let instance = parts.next().unwrap_or_default();
        let class = parts.next().unwrap_or_default();
        let server_pid = match self.client_pid {
            Some(c) => c.reply().ok().and_then(|r| clients::pid_in(&r)),
            None => None,
        };
        let wm_pid = cardinals_of(&self.wm_pid.reply().backend()?)
            .first()
            .copied();
        let states = cardinals_of(&self.states.reply().backend()?);
        let wm_state = cardinals_of(&self.wm_state.reply().backend()?);
        let attrs = self.attrs.reply().ok();
        let name = self.name.reply().backend()?.value;
        let legacy_name = self.legacy_name.reply().backend()?.value;
        let minimized = states.contains(&atoms._NET_WM_STATE_HIDDEN)
            || wm_state.first() == Some(&ICONIC_STATE)
            || attrs.is_some_and(|a| a.map_state != MapState::VIEWABLE);
        Ok(Some(NativeWindow {
            id: u64::from(self.w),
            pid: server_pid.or(wm_pid),
            class,
            instance,
            title: title_of(&name, &legacy_name),
            rect: Rect::new(
                i32::from(origin.dst_x),
                i32::from(origin.dst_y),
                u32::from(geometry.width),
                u32::from(geometry.height),
            ),
            focused: self.w == active,
            minimized,
            fullscreen: states.contains(&atoms._NET_WM_STATE_FULLSCREEN),
            surface_origin: None,
        }))
    }
}

/// A window's title: `_NET_WM_NAME` (UTF-8), else `WM_NAME` as STRING
/// (Latin-1) or COMPOUND_TEXT (read as Latin-1, which is right for its
/// ASCII and Latin-1 parts).
fn title_of(utf8: &[u8], legacy: &[u8]) -> String {
    if !utf8.is_empty() {
        return String::from_utf8_lossy(utf8).into_owned();
    }
    legacy.iter().map(|&b| char::from(b)).collect()
}

impl Windows for X11Windows {
    fn list(&mut self) -> Result<Vec<NativeWindow>, BackendError> {
        let active = self.focused_window()?;
        let asked = self
            .stacking()?
            .into_iter()
            .map(|w| self.ask(w))
            .collect::<Result<Vec<_>, _>>()?;
        let mut out = Vec::new();
        for a in asked {
            let w = a.w;
            match a.read(&self.atoms, active) {
                Ok(Some(native)) => out.push(native),
                Ok(None) => {}
                // An X error here means the window went away meanwhile.
                Err(BackendError::Failed(e)) => {
                    tracing::debug!(window = w, error = %e, "window vanished while listing")
                }
                Err(e) => return Err(e),
            }
        }
        Ok(out)
    }

    fn focus(&mut self, id: u64, raise: bool) -> Result<(), BackendError> {
        let w =
            Window::try_from(id).map_err(|_| BackendError::Failed(format!("bad window {id}")))?;
        let conn = &self.shared.conn;
        if raise && self.has_window_manager()? {
            // EWMH: source indication 2 (a pager, i.e. on the user's behalf).
            let event = ClientMessageEvent::new(
                32,
                w,
                self.atoms._NET_ACTIVE_WINDOW,
                [2, CURRENT_TIME, 0, 0, 0],
            );
            let mask = EventMask::SUBSTRUCTURE_REDIRECT | EventMask::SUBSTRUCTURE_NOTIFY;
            conn.send_event(false, self.shared.root, mask, event)
                .backend()?;
            conn.flush().backend()?;
            // The window manager acts on its own time: keys sent before it
            // did would go to the window that had the focus.
            return self.wait_for_focus(w);
        }
        if raise {
            let aux = ConfigureWindowAux::new().stack_mode(StackMode::ABOVE);
            conn.configure_window(w, &aux).backend()?;
        }
        conn.set_input_focus(InputFocus::PARENT, w, CURRENT_TIME)
            .backend()?
            .check()
            .backend()?;
        conn.flush().backend()?;
        Ok(())
    }
}
