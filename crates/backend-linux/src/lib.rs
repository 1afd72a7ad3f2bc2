//! What deskhand's Linux backends (X11 now, Wayland next) share, none of
//! it tied to a display server: the freedesktop policy tables, and apps
//! (the person's processes from `/proc`, the installed applications'
//! `.desktop` entries, launching without a shell).

#[cfg(target_os = "linux")]
mod app_entries;
#[cfg(target_os = "linux")]
mod apps;
mod policy;

#[cfg(target_os = "linux")]
pub use apps::LinuxApps;
pub use policy::LINUX;
