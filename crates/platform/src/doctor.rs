//! What the backends of this machine can do, for the doctor's report.

pub use deskhand_backend::BackendFindings;
pub use deskhand_protocol::doctor::Platform;

#[cfg(target_os = "linux")]
pub use crate::linux::doctor::linux_findings;
#[cfg(target_os = "linux")]
pub use deskhand_backend_atspi::findings::{bus_status, findings as accessibility_findings};

/// This machine's platform and what its backends found, `desktop` being
/// the desktop asked about (this session's when `None`). Bounded in time
/// (the accessibility bus check takes at most about 8 s).
pub fn findings(desktop: Option<&str>) -> (Platform, BackendFindings) {
    crate::imp::doctor::findings(desktop)
}
