//! The Linux X11 implementation.

mod capture;
mod clients;
mod clipboard;
mod devices;
mod displays;
pub mod doctor;
pub mod engine_claim;
mod exclusion;
mod frame_check;
mod input;
mod permissions;
pub mod person;
pub mod probe;
pub mod tray;
mod typing;
pub mod virtual_desktop;
pub mod watcher;
mod windows;

use std::sync::Arc;

use deskhand_backend::Backend;
use deskhand_backend::overlay_process::{OverlayIndicator, find_overlay};
use x11rb::connection::Connection;
use x11rb::protocol::xproto::{ConnectionExt as _, ImageOrder, Window};
use x11rb::rust_connection::RustConnection;

use crate::X11Error;

/// The capture-and-query connection shared by capture and displays.
pub(crate) struct Shared {
    pub conn: RustConnection,
    pub root: Window,
}

/// How long a round trip on the input path is awaited without sleeping.
const SPIN_FOR_REPLY: std::time::Duration = std::time::Duration::from_micros(300);

impl Shared {
    /// Sends what is buffered and waits, without sleeping, up to
    /// [`SPIN_FOR_REPLY`] for the server to answer; the reply is then read
    /// as usual (blocking, if it has not come by then). The input path's
    /// round trips (the pointer check, a move's warp) take tens of
    /// microseconds: sleeping in poll(2) lets this CPU halt, and on a
    /// virtual machine waking it again costs about as much as the round
    /// trip (`docs/performance.md`). Between two looks the CPU is yielded, not
    /// held: the scheduler often wakes the X server on this very CPU, and
    /// a spin would keep it from answering until the spin gives up.
    pub fn spin_for_reply(&self) {
        spin_for_reply(&self.conn);
    }
}

/// [`Shared::spin_for_reply`] on any connection.
pub(crate) fn spin_for_reply(conn: &RustConnection) {
    use std::os::fd::{AsFd, AsRawFd};
    if conn.flush().is_err() {
        return; // the reply's read reports the broken connection
    }
    let mut fd = libc::pollfd {
        fd: conn.stream().as_fd().as_raw_fd(),
        events: libc::POLLIN,
        revents: 0,
    };
    let started = std::time::Instant::now();
    // SAFETY: one valid pollfd, no timeout.
    while unsafe { libc::poll(&mut fd, 1, 0) } == 0 && started.elapsed() < SPIN_FOR_REPLY {
        // SAFETY: no arguments.
        unsafe { libc::sched_yield() };
    }
}

/// Maps x11rb's errors: a broken connection means the display is gone; an
/// X error reply means this one request failed.
pub(crate) trait X11ResultExt<T> {
    fn backend(self) -> Result<T, deskhand_backend::BackendError>;
}

impl<T> X11ResultExt<T> for Result<T, x11rb::errors::ConnectionError> {
    fn backend(self) -> Result<T, deskhand_backend::BackendError> {
        self.map_err(|e| deskhand_backend::BackendError::DisplayUnavailable(e.to_string()))
    }
}

impl<T> X11ResultExt<T> for Result<T, x11rb::errors::ReplyError> {
    fn backend(self) -> Result<T, deskhand_backend::BackendError> {
        use x11rb::errors::ReplyError;
        self.map_err(|e| match e {
            ReplyError::ConnectionError(c) => {
                deskhand_backend::BackendError::DisplayUnavailable(c.to_string())
            }
            ReplyError::X11Error(x) => {
                deskhand_backend::BackendError::Failed(format!("X11 error {:?}", x.error_kind))
            }
        })
    }
}

impl<T> X11ResultExt<T> for Result<T, x11rb::errors::ReplyOrIdError> {
    fn backend(self) -> Result<T, deskhand_backend::BackendError> {
        use x11rb::errors::ReplyOrIdError;
        self.map_err(|e| match e {
            ReplyOrIdError::ConnectionError(c) => {
                deskhand_backend::BackendError::DisplayUnavailable(c.to_string())
            }
            other => deskhand_backend::BackendError::Failed(other.to_string()),
        })
    }
}

pub fn open(display: Option<&str>, options: &crate::X11Options) -> Result<Backend, X11Error> {
    let name = display
        .map(str::to_owned)
        .or_else(|| std::env::var("DISPLAY").ok())
        .unwrap_or_default();
    let (conn, screen_num) =
        RustConnection::connect(Some(&name)).map_err(|e| X11Error::Connect {
            display: name.clone(),
            message: e.to_string(),
        })?;
    let setup = conn.setup();
    let screen = &setup.roots[screen_num];
    let root = screen.root;
    let depth = screen.root_depth;
    let bpp = setup
        .pixmap_formats
        .iter()
        .find(|f| f.depth == depth)
        .map(|f| f.bits_per_pixel)
        .unwrap_or(0);
    if !(depth == 24 || depth == 32) || bpp != 32 || setup.image_byte_order != ImageOrder::LSB_FIRST
    {
        return Err(X11Error::PixelFormat(format!(
            "depth {depth}, {bpp} bits per pixel, byte order {:?}",
            setup.image_byte_order
        )));
    }
    // Make sure the server answers before going on.
    conn.get_input_focus()
        .map_err(|e| X11Error::Request(e.to_string()))?
        .reply()
        .map_err(|e| X11Error::Request(e.to_string()))?;
    let shared = Arc::new(Shared { conn, root });

    let capture = capture::X11Capture::new(shared.clone());
    let displays = displays::X11Displays::new(shared.clone());
    let windows = match windows::X11Windows::new(shared.clone()) {
        Ok(w) => Some(Box::new(w) as Box<dyn deskhand_backend::Windows>),
        Err(e) => {
            tracing::warn!(error = %e, "window listing unavailable");
            None
        }
    };
    let input = match input::X11Input::new(&name, shared.clone(), options.remap_file.clone()) {
        Ok(i) => {
            let spare = i.spare_keycodes();
            if spare == 0 {
                tracing::warn!(
                    "no spare keycode in the keymap: characters that no key produces cannot be typed"
                );
            }
            tracing::info!(spare_keycodes = spare, "keyboard ready (XTEST, XKB)");
            Some(Box::new(i) as Box<dyn deskhand_backend::Input>)
        }
        Err(e) => {
            tracing::error!(error = %e, "input is unavailable: deskhand can capture but not type or click");
            None
        }
    };
    let has_input = input.is_some();
    let kill = match &options.kill_switch {
        Some(hotkey) => hotkey.clone(),
        None => deskhand_backend::KillSwitchHotkey::new(deskhand_backend::DEFAULT_KILL_SWITCH)
            .map_err(|e| X11Error::Option(e.to_string()))?,
    };
    let watcher = match watcher::X11Watcher::new(&name, kill) {
        Ok(w) => Some(Box::new(w) as Box<dyn deskhand_backend::InputWatcher>),
        Err(e) => {
            tracing::warn!(error = %e, "no hand-back watcher: takeover is unavailable");
            None
        }
    };
    let indicator = match find_overlay() {
        Some(program) => Some(Box::new(OverlayIndicator::new(
            &program,
            vec![("DISPLAY".into(), name.clone())],
            Box::new(frame_check::X11FrameInspector::new(&name)),
        )) as Box<dyn deskhand_backend::Indicator>),
        None => {
            tracing::warn!(
                "deskhand-overlay not found (next to deskhand, on PATH, or $DESKHAND_OVERLAY): takeover is unavailable"
            );
            None
        }
    };
    let clipboard = match clipboard::X11Clipboard::start(&name) {
        Ok(c) => Some(Arc::new(c) as Arc<dyn deskhand_backend::Clipboard>),
        Err(e) => {
            tracing::warn!(error = %e, "clipboard unavailable");
            None
        }
    };
    tracing::info!(
        backend = "x11",
        display = %name,
        shm = capture.uses_shm(),
        cursor = capture.has_xfixes(),
        input = input.is_some(),
        clipboard = clipboard.is_some(),
        handback = watcher.is_some(),
        indicator = indicator.is_some(),
        "picked the X11 backend"
    );
    Ok(Backend {
        name: "x11",
        policy: &deskhand_backend_linux::LINUX,
        displays: Box::new(displays),
        capture: Some(Box::new(capture)),
        input,
        windows,
        apps: Some(Box::new(deskhand_backend_linux::LinuxApps::new(vec![(
            "DISPLAY".into(),
            name.clone().into(),
        )]))),
        permissions: Some(Box::new(permissions::X11Permissions {
            capture: true,
            input_injection: has_input,
        })),
        clipboard,
        indicator,
        watcher,
        // AT-SPI is a backend of its own: the host adds it.
        accessibility: None,
        status_place: None,
    })
}
