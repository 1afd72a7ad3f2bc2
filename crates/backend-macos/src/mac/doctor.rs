//! What the macOS backend tells the doctor: the displays it read, each
//! TCC permission as probed (with the System Settings pane to open), and
//! what each capability needs.

use deskhand_backend::BackendFindings;
use deskhand_protocol::doctor::{
    Availability, BackendEntry, CapabilityEntry, CapabilityName as C, ConsentKind as K,
    PermissionEntry, Probe, ReasonCode, Verdict,
};

use crate::tcc::{PERMISSIONS, advice, grant};

fn permissions() -> Vec<PermissionEntry> {
    PERMISSIONS
        .iter()
        .map(|p| {
            let probed = super::permissions::probe(p.name);
            let mut entry = PermissionEntry::new(p.name, grant(probed), None);
            if probed == Some(false) {
                entry.action = Some(advice(p));
            }
            entry
        })
        .collect()
}

/// Available when TCC granted `permission`; else unavailable, and the
/// permission's entry says what to do.
fn granted(permission: &str) -> Verdict {
    if super::permissions::probe(permission) == Some(true) {
        Verdict::AVAILABLE
    } else {
        Verdict {
            status: Availability::Unavailable,
            reason: None,
        }
    }
}

/// Capture needs macOS 14 (`SCScreenshotManager`) and Screen Recording.
fn capture() -> Verdict {
    if objc2::available!(macos = 14.0) {
        granted("screen_recording")
    } else {
        Verdict::because(Availability::Unsupported, ReasonCode::NoPlatformApi)
    }
}

/// The red frame needs the overlay program.
fn indicator() -> Verdict {
    if deskhand_backend::overlay_process::find_overlay().is_some() {
        Verdict::AVAILABLE
    } else {
        Verdict::because(Availability::Unavailable, ReasonCode::IndicatorNotFound)
    }
}

/// The macOS backend's findings.
pub fn macos_findings() -> BackendFindings {
    let no_api = Verdict::because(Availability::Unsupported, ReasonCode::NoPlatformApi);
    let read = super::displays::read_layout();
    let displays = match &read {
        Ok(layout) => Probe::new(
            "displays",
            true,
            format!("{} active display(s) read", layout.monitors().len()),
        ),
        Err(e) => Probe::new("displays", false, e.to_string()),
    };
    let backend = if read.is_ok() {
        Verdict::AVAILABLE
    } else {
        Verdict::because(Availability::Unavailable, ReasonCode::DisplayUnreachable)
    };
    BackendFindings {
        session_type: None,
        backends: vec![BackendEntry::new("macos", true, backend)],
        capabilities: vec![
            CapabilityEntry::new(C::CaptureWindow, capture(), K::Session),
            // Posting events to other apps needs Accessibility.
            CapabilityEntry::new(C::InputTakeover, granted("accessibility"), K::Takeover),
            CapabilityEntry::new(C::TakeoverIndicator, indicator(), K::Takeover),
            CapabilityEntry::new(
                C::TakeoverHandback,
                granted("input_monitoring"),
                K::Takeover,
            ),
            CapabilityEntry::new(C::ReadTree, granted("accessibility"), K::Session),
            CapabilityEntry::new(C::ActSemantic, granted("accessibility"), K::Takeover),
            CapabilityEntry::new(C::ClipboardRead, Verdict::AVAILABLE, K::Separate),
            CapabilityEntry::new(C::ClipboardWrite, Verdict::AVAILABLE, K::Session),
            CapabilityEntry::new(C::ListNotifications, no_api, K::Session),
            CapabilityEntry::new(C::DismissNotification, no_api, K::Session),
            CapabilityEntry::new(C::InvokeNotificationAction, no_api, K::Session),
        ],
        permissions: permissions(),
        probes: vec![
            displays,
            Probe::new(
                "macos backend",
                false,
                "written and type-checked, not yet run on a Mac (docs/macos.md has the first-run checklist); the clipboard does not count other apps' fetches, so a paste never restores the old clipboard",
            ),
            Probe::new(
                "capture exclusion",
                true,
                "the red frame's windows are left out of ScreenCaptureKit's captures by the content filter, and ask other apps' captures to leave them out (NSWindowSharingNone, which recent macOS versions may ignore)",
            ),
        ],
    }
}
