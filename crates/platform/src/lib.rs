//! The one crate that names deskhand's backend crates. [`Site::attach`]
//! finds the desktop to drive on this machine (or starts a virtual one),
//! [`Site::open`] opens the backend for it, and [`doctor::findings`] says
//! what that backend can do here. Hosts (`deskhand`, the tray app) use only
//! this crate, so a new backend slots in here and nowhere else.
//!
//! The choice is made at run time on Linux (one binary for X11 and
//! Wayland; `--backend` overrides) and by target elsewhere (the macOS
//! backend is partial and not yet run on a Mac). A part a backend lacks
//! answers its `Unsupported` error with the reason, never a silent
//! fallback; the log says which backend was picked and why.

pub mod doctor;
mod id;
#[cfg(target_os = "linux")]
mod linux;
#[cfg(target_os = "macos")]
mod macos;
#[cfg(not(any(target_os = "linux", target_os = "macos", windows)))]
compile_error!("deskhand has backends for Linux, macOS and Windows only");
#[cfg(windows)]
mod windows;

use std::path::Path;

pub use deskhand_backend::kill_switch::{self, Chord, DEFAULT_KILL_SWITCH, KillSwitchHotkey};
pub use deskhand_backend::{Backend, Vault};
use thiserror::Error;

pub use id::DesktopId;
pub use imp::tray_present;
#[cfg(target_os = "linux")]
use linux as imp;
#[cfg(target_os = "linux")]
pub use linux::bench;
#[cfg(target_os = "macos")]
use macos as imp;
#[cfg(windows)]
use windows as imp;

/// Why no backend could be opened.
#[derive(Debug, Error)]
pub enum PlatformError {
    /// The options ask for something this platform cannot do.
    #[error("{0}")]
    Option(String),
    /// The backend failed to start.
    #[error("{0}")]
    Backend(String),
    /// The OS refused to ask for a permission (an unknown name).
    #[error("{0}")]
    Permission(String),
    /// This OS has no permission prompts for the app to ask.
    #[error(
        "{0} has no permission prompts deskhand can ask: follow the doctor's action for each permission instead"
    )]
    NoPermissionPrompts(&'static str),
}

/// The backends deskhand knows of.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BackendKind {
    /// X11 (also XWayland).
    X11,
    /// A Wayland session through the desktop portals.
    Wayland,
    /// Windows.
    Windows,
    /// macOS.
    MacOs,
}

impl BackendKind {
    /// Its name on the command line and in the log.
    pub fn name(self) -> &'static str {
        match self {
            Self::X11 => "x11",
            Self::Wayland => "wayland",
            Self::Windows => "windows",
            Self::MacOs => "macos",
        }
    }
}

impl std::str::FromStr for BackendKind {
    type Err = PlatformError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        [Self::X11, Self::Wayland, Self::Windows, Self::MacOs]
            .into_iter()
            .find(|k| k.name() == s)
            .ok_or_else(|| {
                PlatformError::Option(format!(
                    "unknown backend {s:?} (x11, wayland, windows or macos)"
                ))
            })
    }
}

/// What to attach to.
#[derive(Debug, Clone, Default)]
pub struct SiteOptions {
    /// The desktop to drive (an X display such as `:0`); this session's
    /// when `None`.
    pub desktop: Option<String>,
    /// Start a virtual desktop of this size instead.
    pub virtual_size: Option<(u32, u32)>,
    /// The backend asked for; picked for this session when `None`.
    pub backend: Option<BackendKind>,
}

/// What a backend is opened with.
#[derive(Debug, Clone)]
pub struct OpenOptions {
    /// The kill-switch hotkey; the host keeps a clone to change it.
    pub kill_switch: KillSwitchHotkey,
    /// A private directory for what must survive a crash (the keycodes an
    /// X11 backend remapped).
    pub state_dir: std::path::PathBuf,
    /// Where a backend keeps its secrets (a portal's restore token).
    pub vault: std::sync::Arc<dyn Vault>,
}

/// The desktop an engine drives: which one, through which backend, and
/// the virtual desktop when deskhand started it.
pub struct Site {
    id: DesktopId,
    kind: BackendKind,
    inner: imp::Site,
}

impl Site {
    /// Finds the desktop `options` name (or starts a virtual one) and
    /// picks its backend.
    pub fn attach(options: &SiteOptions) -> Result<Self, PlatformError> {
        let (id, kind, inner) = imp::attach(options)?;
        tracing::info!(desktop = %id, backend = kind.name(), is_virtual = inner.is_virtual(), "desktop attached");
        Ok(Self { id, kind, inner })
    }

    /// Which desktop: the key of its lock, its state files and the MCP
    /// relay.
    pub fn id(&self) -> &DesktopId {
        &self.id
    }

    /// The backend this desktop is driven with.
    pub fn kind(&self) -> BackendKind {
        self.kind
    }

    /// The desktop in words for people: `X display :1`.
    pub fn describe(&self) -> String {
        match self.kind {
            BackendKind::X11 => format!("X display {}", self.id),
            _ => format!("desktop {}", self.id),
        }
    }

    /// Whether deskhand started this desktop (seen by no person).
    pub fn is_virtual(&self) -> bool {
        self.inner.is_virtual()
    }

    /// Opens the backend, with accessibility where the platform has it,
    /// once this engine holds the desktop (where the desktop keeps such a
    /// hold: an X display's `DESKHAND_ENGINE` selection); a desktop another
    /// engine holds is refused.
    pub fn open(&mut self, options: &OpenOptions) -> Result<Backend, PlatformError> {
        self.inner.open(&self.id, options)
    }

    /// Stops the virtual desktop, if deskhand started one.
    pub fn stop(&mut self) {
        self.inner.stop();
    }
}

/// What asking the OS for a permission did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PermissionAsked {
    /// The permission, as the doctor names it.
    pub name: String,
    /// Whether it is granted now; `None` when the OS cannot tell.
    pub granted: Option<bool>,
    /// Whether the OS's settings opened at the permission's page.
    pub pane_opened: bool,
    /// What happened and what the person does next, in their words.
    pub summary: String,
}

/// Asks the OS for permission `name` with its own prompt and opens its
/// settings page (macOS only). For the app, on the person's click only:
/// never from an agent's call, which would prompt on the agent's behalf.
pub fn ask_permission(name: &str) -> Result<PermissionAsked, PlatformError> {
    #[cfg(target_os = "macos")]
    {
        macos::ask_permission(name)
    }
    #[cfg(not(target_os = "macos"))]
    {
        tracing::info!(permission = name, "no permission prompt on this OS");
        Err(PlatformError::NoPermissionPrompts(std::env::consts::OS))
    }
}

/// Whether `pid` is a live process running deskhand or the tray app (a
/// connection file whose daemon is gone, or whose pid now belongs to
/// another program, is stale).
pub fn runs_deskhand(pid: u32) -> bool {
    imp::runs_deskhand(pid)
}

/// The desktop a client on this machine means when it names none: its
/// session's, when it has one.
pub fn session_desktop(named: Option<&str>) -> Option<DesktopId> {
    imp::session_desktop(named)
}

/// Whether the kill-switch `chord` can be grabbed now, where the OS lets
/// another program take it first and deskhand can ask (Windows'
/// `RegisterHotKey`); `None` elsewhere. For the doctor while no deskhand
/// holds it.
pub fn kill_switch_free(chord: &Chord) -> Option<Result<(), String>> {
    #[cfg(windows)]
    {
        Some(deskhand_backend_windows::chord_is_free(chord))
    }
    #[cfg(not(windows))]
    {
        let _ = chord;
        None
    }
}

/// Where the state of `id` goes in `dir`, as `<stem>-<tag>.json`.
pub fn state_file(dir: &Path, stem: &str, id: &DesktopId) -> std::path::PathBuf {
    dir.join(format!("{stem}-{}.json", id.tag()))
}

#[cfg(test)]
mod tests {
    #[cfg(not(target_os = "macos"))]
    #[test]
    fn only_macos_has_permission_prompts_to_ask() {
        let why = super::ask_permission("screen_recording")
            .map(|asked| asked.summary)
            .expect_err("no prompt off macOS");
        assert!(
            matches!(why, super::PlatformError::NoPermissionPrompts(os) if os == std::env::consts::OS)
        );
        assert!(
            why.to_string().contains("has no permission prompts"),
            "{why}"
        );
    }
}
