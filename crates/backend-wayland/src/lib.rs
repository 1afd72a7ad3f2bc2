//! deskhand's Wayland backend. Screenshots come from a ScreenCast portal
//! session (frames read from PipeWire), input goes through a RemoteDesktop
//! portal session, and the person's own input is told from deskhand's by
//! GNOME's idle monitor. The red frame, the window list and the pointer
//! come from deskhand's GNOME Shell extension, since Wayland gives clients
//! none of them. Elsewhere (KDE Plasma, the wlroots desktops) the frame
//! is drawn on the wlr layer shell and input is watched through
//! ext-idle-notify, where the compositor offers them; without a frame
//! there is no takeover. The portals' dialogs are the person's grant,
//! said in the doctor.

#[cfg(target_os = "linux")]
mod capture;
#[cfg(target_os = "linux")]
mod clipboard;
#[cfg(target_os = "linux")]
mod compositor;
#[cfg(target_os = "linux")]
mod displays;
#[cfg(target_os = "linux")]
mod doctor;
#[cfg(target_os = "linux")]
mod eis;
#[cfg(target_os = "linux")]
mod frames;
#[cfg(target_os = "linux")]
mod idle_notify;
#[cfg(target_os = "linux")]
mod indicator;
#[cfg(target_os = "linux")]
mod input;
#[cfg(target_os = "linux")]
mod kwin_windows;
#[cfg(target_os = "linux")]
mod layer_frame;
#[cfg(target_os = "linux")]
mod open;
#[cfg(target_os = "linux")]
mod outputs;
#[cfg(target_os = "linux")]
mod portal;
#[cfg(target_os = "linux")]
mod rt;
#[cfg(target_os = "linux")]
mod screenshot;
#[cfg(target_os = "linux")]
mod shell;
#[cfg(target_os = "linux")]
mod shell_owner;
#[cfg(target_os = "linux")]
mod shortcuts;
#[cfg(target_os = "linux")]
mod sway_windows;
#[cfg(target_os = "linux")]
mod top_bar;
#[cfg(target_os = "linux")]
mod under_frame;
#[cfg(target_os = "linux")]
mod watcher;
#[cfg(target_os = "linux")]
mod windows;

use thiserror::Error;

/// Why the Wayland backend could not start.
#[derive(Debug, Error)]
pub enum WaylandError {
    /// The session bus or the compositor cannot be reached.
    #[error("cannot reach the Wayland session: {0}")]
    Connect(String),
    /// Another engine already drives this session.
    #[error("{0}")]
    Claimed(String),
    /// Wayland does not exist on this OS.
    #[error("the Wayland backend is only available on Linux")]
    NotLinux,
}

/// Options of the Wayland backend.
#[derive(Debug, Clone, Default)]
pub struct WaylandOptions {
    /// Where the portals' restore tokens are kept (the vault, and the
    /// desktop's tag that names them there), so the person is asked once
    /// rather than at every start.
    pub grants: Option<(std::sync::Arc<dyn deskhand_backend::Vault>, String)>,
    /// The kill switch, bound through the GlobalShortcuts portal where the
    /// desktop has one.
    pub kill_switch: Option<deskhand_backend::KillSwitchHotkey>,
}

#[cfg(target_os = "linux")]
pub use doctor::wayland_findings;
#[cfg(target_os = "linux")]
pub use open::{EngineClaim, claim_engine, open};
#[cfg(target_os = "linux")]
pub use portal::Grant;
