//! The macOS privacy permissions (TCC) deskhand needs, as the
//! `PERMISSIONS_CHECK` names them, and the System Settings pane where the
//! person grants each. The probes never prompt: a prompt is asked only
//! from the app, never from an agent's call.

use deskhand_protocol::doctor::GrantStatus;
use deskhand_protocol::messages::PermissionStatus;

/// One permission: its name, what needs it, and its pane.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Tcc {
    /// The name in `PERMISSIONS_CHECK` and the doctor.
    pub name: &'static str,
    /// What deskhand needs it for.
    pub needed_for: &'static str,
    /// The System Settings pane, as a URL `open` takes.
    pub pane: &'static str,
}

/// Every permission, in the order the doctor lists them.
pub const PERMISSIONS: [Tcc; 4] = [
    Tcc {
        name: "screen_recording",
        needed_for: "screenshots and window titles",
        pane: "x-apple.systempreferences:com.apple.preference.security?Privacy_ScreenCapture",
    },
    Tcc {
        name: "accessibility",
        needed_for: "sending input and reading apps' accessibility trees",
        pane: "x-apple.systempreferences:com.apple.preference.security?Privacy_Accessibility",
    },
    Tcc {
        name: "input_monitoring",
        needed_for: "seeing the person's input to hand control back",
        pane: "x-apple.systempreferences:com.apple.preference.security?Privacy_ListenEvent",
    },
    Tcc {
        name: "automation",
        needed_for: "nothing yet (deskhand sends no Apple events)",
        pane: "x-apple.systempreferences:com.apple.preference.security?Privacy_Automation",
    },
];

/// The permission named `name`.
pub fn named(name: &str) -> Option<&'static Tcc> {
    PERMISSIONS.iter().find(|p| p.name == name)
}

/// A probe's answer as `PERMISSIONS_CHECK` reports it: `None` is a
/// permission that cannot be probed without asking.
pub fn status(probed: Option<bool>) -> PermissionStatus {
    match probed {
        Some(true) => PermissionStatus::Granted,
        Some(false) => PermissionStatus::Denied,
        None => PermissionStatus::Unknown,
    }
}

/// A probe's answer as the doctor reports it.
pub fn grant(probed: Option<bool>) -> GrantStatus {
    match probed {
        Some(true) => GrantStatus::Granted,
        Some(false) => GrantStatus::Missing,
        None => GrantStatus::Unknown,
    }
}

/// What the doctor tells the person to do for a missing permission.
pub fn advice(p: &Tcc) -> String {
    format!(
        "Allow deskhand in System Settings → Privacy & Security (open {}), for {}; then restart deskhand",
        p.pane, p.needed_for
    )
}

/// Why a call that needs permission `p` was not made: checked first so
/// that the call cannot make macOS prompt on an agent's behalf.
pub fn not_granted(p: &Tcc) -> String {
    format!("the {} permission is not granted: {}", p.name, advice(p))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_permission_has_its_own_pane() {
        let mut panes: Vec<_> = PERMISSIONS.iter().map(|p| p.pane).collect();
        panes.dedup();
        assert_eq!(panes.len(), PERMISSIONS.len());
        assert!(
            panes
                .iter()
                .all(|p| p.starts_with("x-apple.systempreferences:"))
        );
        assert_eq!(
            named("accessibility").map(|p| p.name),
            Some("accessibility")
        );
        assert_eq!(named("camera"), None);
    }

    #[test]
    fn probes_become_statuses_and_never_a_guess() {
        assert_eq!(status(Some(true)), PermissionStatus::Granted);
        assert_eq!(status(Some(false)), PermissionStatus::Denied);
        assert_eq!(status(None), PermissionStatus::Unknown);
        assert_eq!(grant(Some(false)), GrantStatus::Missing);
        assert!(advice(&PERMISSIONS[0]).contains("Privacy_ScreenCapture"));
    }

    #[test]
    fn a_refused_call_names_the_permission_and_its_pane() {
        let why = not_granted(&PERMISSIONS[2]);
        assert!(why.starts_with("the input_monitoring permission is not granted"));
        assert!(why.contains("Privacy_ListenEvent"), "{why}");
        assert!(why.contains("restart deskhand"), "{why}");
    }
}
