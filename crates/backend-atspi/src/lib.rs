//! The accessibility backend of deskhand on Linux: AT-SPI over D-Bus
//! (the `atspi` crate's types and proxies, zbus 5 on tokio). It implements
//! the engine's [`Accessibility`] trait: reads a window's tree with
//! concurrent, time-bounded calls, and acts on its elements through their
//! AT-SPI actions and EditableText, never through the pointer.
//!
//! AT-SPI is the same under X11 and Wayland, so this is a backend of its
//! own. On other systems [`open`] returns [`BackendError::Unsupported`] and
//! the crate still compiles.

#[cfg(target_os = "linux")]
mod atspi;
pub mod findings;

use deskhand_backend::BackendError;
use deskhand_backend::accessibility::Accessibility;

/// Where the backend finds the accessibility bus.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AtspiOptions {
    /// The D-Bus session bus address that advertises the accessibility bus
    /// (`org.a11y.Bus`); `$DBUS_SESSION_BUS_ADDRESS` when `None`.
    pub session_bus: Option<String>,
    /// The accessibility bus address itself, when known (skips asking the
    /// session bus); `$AT_SPI_BUS_ADDRESS` when `None` and that is set.
    pub a11y_bus: Option<String>,
    /// Route every call through the accessibility bus, never straight to
    /// an app's own socket (slower: for comparison and diagnosis).
    pub bus_only: bool,
}

/// Opens the AT-SPI backend. The bus is connected on first use (and again
/// after it is lost), so this succeeds without one: see
/// [`Accessibility::bus_status`].
pub fn open(options: &AtspiOptions) -> Result<Box<dyn Accessibility>, BackendError> {
    #[cfg(target_os = "linux")]
    {
        Ok(Box::new(atspi::AtspiBackend::new(options.clone())?))
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = options;
        Err(BackendError::Unsupported(
            "AT-SPI accessibility is only available on Linux".into(),
        ))
    }
}
