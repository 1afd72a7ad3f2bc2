//! The X11 backend of deskhand: MIT-SHM capture (GetImage fallback), RandR
//! monitors, XFixes cursor images, XTEST input on a keyboard connection that
//! follows the keymap as it is now, and the virtual desktop (Xvfb + a window manager) that
//! `deskhand serve --virtual` runs.

#[cfg(target_os = "linux")]
mod x11;

use deskhand_backend::{Backend, KillSwitchHotkey};
use thiserror::Error;

/// Why the X11 backend or the virtual desktop could not start.
#[derive(Debug, Error)]
pub enum X11Error {
    /// The X server cannot be reached.
    #[error("cannot connect to X display {display}: {message}")]
    Connect {
        /// The display name tried.
        display: String,
        /// Why.
        message: String,
    },
    /// A request to the X server failed.
    #[error("X11 request failed: {0}")]
    Request(String),
    /// The server's pixel format is not one deskhand reads.
    #[error("unsupported X11 pixel format: {0}")]
    PixelFormat(String),
    /// The virtual desktop could not be started.
    #[error("virtual desktop: {0}")]
    Virtual(String),
    /// An option is not valid.
    #[error("invalid option: {0}")]
    Option(String),
    /// Another engine already drives the display.
    #[error("{0}")]
    Claimed(String),
    /// X11 does not exist on this OS.
    #[error("the X11 backend is only available on Linux")]
    NotLinux,
}

/// Options of the X11 backend.
#[derive(Debug, Clone, Default)]
pub struct X11Options {
    /// The kill-switch hotkey (default: `ctrl+alt+Escape`); the host
    /// keeps a clone to change it while the backend runs.
    pub kill_switch: Option<KillSwitchHotkey>,
    /// Where to list the keycodes deskhand has remapped while it has them,
    /// so that the next start restores them after a crash.
    pub remap_file: Option<std::path::PathBuf>,
}

/// Opens the X11 backend on `display` (e.g. `:1`; `$DISPLAY` when `None`).
pub fn open(display: Option<&str>) -> Result<Backend, X11Error> {
    open_with(display, &X11Options::default())
}

/// Opens the X11 backend on `display` with `options`.
pub fn open_with(display: Option<&str>, options: &X11Options) -> Result<Backend, X11Error> {
    #[cfg(target_os = "linux")]
    {
        x11::open(display, options)
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = (display, options);
        Err(X11Error::NotLinux)
    }
}

#[cfg(target_os = "linux")]
pub use x11::doctor::x11_findings;
#[cfg(target_os = "linux")]
pub use x11::engine_claim::{EngineClaim, claim as claim_engine};
#[cfg(target_os = "linux")]
pub use x11::person::FakePerson;
#[cfg(target_os = "linux")]
pub use x11::probe::{DisplayProbe, Extensions, probe};
#[cfg(target_os = "linux")]
pub use x11::tray::system_tray_present;
#[cfg(target_os = "linux")]
pub use x11::virtual_desktop::VirtualDesktop;
