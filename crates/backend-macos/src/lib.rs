//! The macOS backend of deskhand, a first part: displays in global
//! display coordinates with each display's backing scale, capture with
//! ScreenCaptureKit (macOS 14 and later), input through `CGEvent` from a
//! private event source with every event tagged as deskhand's own, the
//! window list from `CGWindowListCopyWindowInfo`, apps through
//! `NSWorkspace`, the hand-back event tap, accessibility through AX and
//! the TCC permission probes, the clipboard through `NSPasteboard`
//! (without fetch counting: see `mac/clipboard.rs`), and the red frame
//! through the `deskhand-overlay` process (its macOS module places
//! borderless windows at screen-saver level on every Space, left out of
//! captures).
//!
//! The decisions (which event is whose, key codes, click counts, which
//! windows count, points and pixels, AX roles, the launch rules, the app
//! list's names, concealed pasteboard types, the permissions' panes) are
//! plain functions in the modules compiled on every OS, so Linux runs
//! their tests; the calls into macOS are in `mac/`, compiled on macOS
//! only. Nothing here has run on a Mac yet: it is type-checked for both
//! Apple targets.

pub mod ax;
pub mod clicks;
pub mod events;
pub mod keys;
pub mod launch;
pub mod layout;
pub mod overlay;
pub mod pasteboard;
pub mod pixels;
pub mod policy;
pub mod processes;
pub mod tcc;
pub mod window_list;

#[cfg(target_os = "macos")]
mod mac;

use deskhand_backend::{Backend, KillSwitchHotkey};
use thiserror::Error;

pub use policy::MACOS;

/// Why the macOS backend could not start.
#[derive(Debug, Error)]
pub enum MacError {
    /// A macOS call failed.
    #[error("{call} failed: {message}")]
    Call {
        /// The function.
        call: &'static str,
        /// What macOS said.
        message: String,
    },
    /// An option is not valid.
    #[error("invalid option: {0}")]
    Option(String),
    /// macOS does not exist on this OS.
    #[error("the macOS backend is only available on macOS")]
    NotMacOs,
    /// No permission has this name.
    #[error(
        "no macOS permission named {0:?} (screen_recording, accessibility, input_monitoring or automation)"
    )]
    UnknownPermission(String),
}

/// Options of the macOS backend.
#[derive(Debug, Clone, Default)]
pub struct MacOptions {
    /// The kill-switch hotkey (default: `ctrl+alt+Escape`), watched by
    /// the event tap; the host keeps a clone to change it.
    pub kill_switch: Option<KillSwitchHotkey>,
}

/// Opens the backend on this login session's desktop.
pub fn open(options: &MacOptions) -> Result<Backend, MacError> {
    #[cfg(target_os = "macos")]
    {
        mac::open(options)
    }
    #[cfg(not(target_os = "macos"))]
    {
        let _ = options;
        Err(MacError::NotMacOs)
    }
}

/// Asks macOS for permission `name` (see [`tcc::PERMISSIONS`]): its
/// prompt, then its System Settings pane unless it is granted already.
/// Only the app calls it, on the person's click, never an agent's call.
pub fn ask_permission(name: &str) -> Result<tcc::Asked, MacError> {
    #[cfg(target_os = "macos")]
    {
        mac::permissions::ask(name)
    }
    #[cfg(not(target_os = "macos"))]
    {
        tcc::to_ask(name)?;
        Err(MacError::NotMacOs)
    }
}

/// The program process `pid` runs (its full path), when it can be read.
pub fn program_of_process(pid: u32) -> Option<String> {
    #[cfg(target_os = "macos")]
    {
        mac::process::image_of(pid)
    }
    #[cfg(not(target_os = "macos"))]
    {
        let _ = pid;
        None
    }
}

/// What the doctor reports of this Mac: the permissions as probed and
/// what each capability needs.
#[cfg(target_os = "macos")]
pub use mac::doctor::macos_findings;
