//! An OS deskhand has no backend for yet: every attach is refused with
//! the reason, and the doctor says the same.

use deskhand_backend::{Backend, BackendFindings};
use deskhand_protocol::doctor::{Availability, BackendEntry, Platform, ReasonCode, Verdict};

use crate::{BackendKind, DesktopId, OpenOptions, PlatformError, SiteOptions};

/// This OS's backend.
const KIND: BackendKind = BackendKind::MacOs;

/// Never made: no backend attaches here.
pub(crate) enum Site {}

impl Site {
    pub(crate) fn is_virtual(&self) -> bool {
        match *self {}
    }

    pub(crate) fn open(
        &mut self,
        _: &DesktopId,
        _: &OpenOptions,
    ) -> Result<Backend, PlatformError> {
        match *self {}
    }

    pub(crate) fn stop(&mut self) {
        match *self {}
    }
}

fn not_built() -> PlatformError {
    PlatformError::NotBuilt {
        backend: KIND.name(),
        why: "this version of deskhand drives X11 desktops on Linux and Windows desktops",
    }
}

/// No daemon can run in this build here, so no connection file names a
/// live one.
pub(crate) fn runs_deskhand(_: u32) -> bool {
    false
}

pub(crate) fn session_desktop(named: Option<&str>) -> Option<DesktopId> {
    Some(DesktopId::named(named.unwrap_or(KIND.name())))
}

pub(crate) fn attach(_: &SiteOptions) -> Result<(DesktopId, BackendKind, Site), PlatformError> {
    Err(not_built())
}

/// The macOS menu bar is always there.
pub fn tray_present(_: &DesktopId) -> Result<bool, PlatformError> {
    Ok(true)
}

pub(crate) mod doctor {
    use super::*;

    pub(crate) fn findings(_: Option<&str>) -> (Platform, BackendFindings) {
        let platform = Platform::Macos;
        let not_built = Verdict::because(Availability::Unavailable, ReasonCode::NotBuilt);
        let findings = BackendFindings {
            backends: vec![BackendEntry::new(KIND.name(), true, not_built)],
            ..BackendFindings::default()
        };
        (platform, findings)
    }
}
