//! What deskhand's Linux backends (X11 and Wayland) share, none of
//! it tied to a display server: the freedesktop policy tables; apps (the
//! person's processes from `/proc`, the installed applications' `.desktop`
//! entries, launching without a shell); the XKB keymap model that picks
//! the keys for a character, and the file of keycodes remapped for typing.

#[cfg(target_os = "linux")]
mod app_entries;
#[cfg(target_os = "linux")]
mod apps;
pub mod keymap;
mod policy;
pub mod remap_file;

#[cfg(target_os = "linux")]
pub use apps::LinuxApps;
pub use policy::LINUX;

/// The MIME type KDE's clipboard (and the password managers following it)
/// set on a secret copy: deskhand reads no copy that carries it.
pub const CONCEALED_MIME: &str = "x-kde-passwordManagerHint";
