//! What the macOS backend tells the doctor: the displays it read, each
//! TCC permission as probed (with the System Settings pane to open), and
//! the capabilities not written yet, said as such.

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

/// The macOS backend's findings.
pub fn macos_findings() -> BackendFindings {
    let not_built = Verdict::because(Availability::Unavailable, ReasonCode::NotBuilt);
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
            CapabilityEntry::new(C::InputTakeover, not_built, K::Takeover),
            CapabilityEntry::new(C::TakeoverIndicator, not_built, K::Takeover),
            CapabilityEntry::new(
                C::TakeoverHandback,
                granted("input_monitoring"),
                K::Takeover,
            ),
            CapabilityEntry::new(C::ReadTree, granted("accessibility"), K::Session),
            // Acts are written, but come with takeover, which needs the
            // red frame.
            CapabilityEntry::new(C::ActSemantic, not_built, K::Takeover),
            CapabilityEntry::new(C::ClipboardRead, not_built, K::Separate),
            CapabilityEntry::new(C::ClipboardWrite, not_built, K::Session),
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
                "partial and not yet run on a Mac: displays, capture (macOS 14 and later), input, the window list, apps, the hand-back event tap, accessibility (AX) and the permission probes are written; the clipboard and the red frame (so takeover) are not",
            ),
        ],
    }
}
