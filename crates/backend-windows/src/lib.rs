//! The Windows backend of deskhand: GDI capture, `SendInput` with every
//! event tagged as deskhand's own, low-level hooks that tell the person's
//! input from deskhand's (hand-back, Continue, the kill switch), windows in
//! z-order, apps launched with `CreateProcessW` (never a shell), and the
//! overlay process as the red frame. The decisions (key codes, pointer
//! coordinates, which hook event is whose, what a launch runs) are plain
//! functions in the modules compiled on every OS, so Linux runs their
//! tests; the calls into Win32 are in `win/`, compiled on Windows only.

pub mod clipboard;
pub mod cursor;
pub mod elevation;
pub mod frame;
pub mod hooks;
pub mod keys;
pub mod launch;
pub mod listing;
pub mod msaa;
pub mod pixels;
pub mod pointer;
pub mod policy;
pub mod uia;
#[cfg(windows)]
mod win;

use deskhand_backend::{Backend, KillSwitchHotkey};
use thiserror::Error;

pub use policy::WINDOWS;

/// Why the Windows backend could not start.
#[derive(Debug, Error)]
pub enum WindowsError {
    /// A Win32 call failed.
    #[error("{call} failed: {message}")]
    Call {
        /// The function.
        call: &'static str,
        /// What Windows said.
        message: String,
    },
    /// An option is not valid.
    #[error("invalid option: {0}")]
    Option(String),
    /// Windows does not exist on this OS.
    #[error("the Windows backend is only available on Windows")]
    NotWindows,
}

/// Options of the Windows backend.
#[derive(Debug, Clone, Default)]
pub struct WindowsOptions {
    /// The kill-switch hotkey (default: `ctrl+alt+Escape`); the host keeps
    /// a clone to change it while the backend runs.
    pub kill_switch: Option<KillSwitchHotkey>,
}

/// Opens the backend on this session's interactive desktop.
pub fn open(options: &WindowsOptions) -> Result<Backend, WindowsError> {
    #[cfg(windows)]
    {
        win::open(options)
    }
    #[cfg(not(windows))]
    {
        let _ = options;
        Err(WindowsError::NotWindows)
    }
}

#[cfg(windows)]
pub use win::doctor::windows_findings;

/// Whether the kill-switch chord can be registered now (for the doctor,
/// while no deskhand holds it): `Err` says why not, another program
/// registered it first.
pub fn chord_is_free(chord: &deskhand_backend::Chord) -> Result<(), String> {
    #[cfg(windows)]
    {
        win::chord_is_free(chord)
    }
    #[cfg(not(windows))]
    {
        let _ = chord;
        Err("not Windows".into())
    }
}

/// The program process `pid` runs (its full path), when it can be read.
pub fn program_of_process(pid: u32) -> Option<String> {
    #[cfg(windows)]
    {
        win::image_of(pid)
    }
    #[cfg(not(windows))]
    {
        let _ = pid;
        None
    }
}
