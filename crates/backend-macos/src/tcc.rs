//! The macOS privacy permissions (TCC) deskhand needs, as the
//! `PERMISSIONS_CHECK` names them, the System Settings pane where the
//! person grants each, and the call that makes macOS prompt for it. The
//! probes never prompt: a prompt is asked only from the app on the
//! person's click ([`to_ask`], [`Asked`]), never from an agent's call.

use deskhand_protocol::doctor::GrantStatus;
use deskhand_protocol::messages::PermissionStatus;

use crate::MacError;

/// The call that makes macOS show a permission's prompt (once; after the
/// person answered, only System Settings changes it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Prompt {
    /// `CGRequestScreenCaptureAccess`.
    ScreenCapture,
    /// `AXIsProcessTrustedWithOptions` with `kAXTrustedCheckOptionPrompt`
    /// true.
    Accessibility,
    /// `CGRequestListenEventAccess`.
    ListenEvent,
}

impl Prompt {
    /// The macOS function it calls, for the log.
    pub fn call(self) -> &'static str {
        match self {
            Self::ScreenCapture => "CGRequestScreenCaptureAccess",
            Self::Accessibility => "AXIsProcessTrustedWithOptions",
            Self::ListenEvent => "CGRequestListenEventAccess",
        }
    }
}

/// One permission: its name, what needs it, its pane and its prompt.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Tcc {
    /// The name in `PERMISSIONS_CHECK` and the doctor.
    pub name: &'static str,
    /// Its name in System Settings.
    pub label: &'static str,
    /// What deskhand needs it for.
    pub needed_for: &'static str,
    /// The System Settings pane, as a URL `open` takes.
    pub pane: &'static str,
    /// The call that prompts for it; `None` when only System Settings can
    /// grant it (Automation prompts per app, at an Apple event).
    pub prompt: Option<Prompt>,
}

/// Every permission, in the order the doctor lists them.
pub const PERMISSIONS: [Tcc; 4] = [
    Tcc {
        name: "screen_recording",
        label: "Screen Recording",
        needed_for: "screenshots and window titles",
        pane: "x-apple.systempreferences:com.apple.preference.security?Privacy_ScreenCapture",
        prompt: Some(Prompt::ScreenCapture),
    },
    Tcc {
        name: "accessibility",
        label: "Accessibility",
        needed_for: "sending input and reading apps' accessibility trees",
        pane: "x-apple.systempreferences:com.apple.preference.security?Privacy_Accessibility",
        prompt: Some(Prompt::Accessibility),
    },
    Tcc {
        name: "input_monitoring",
        label: "Input Monitoring",
        needed_for: "seeing the person's input to hand control back",
        pane: "x-apple.systempreferences:com.apple.preference.security?Privacy_ListenEvent",
        prompt: Some(Prompt::ListenEvent),
    },
    Tcc {
        name: "automation",
        label: "Automation",
        needed_for: "nothing yet (deskhand sends no Apple events)",
        pane: "x-apple.systempreferences:com.apple.preference.security?Privacy_Automation",
        prompt: None,
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

/// The permission the person asked for by `name` (its prompt and its
/// pane); an unknown name is refused, never guessed.
pub fn to_ask(name: &str) -> Result<&'static Tcc, MacError> {
    named(name).ok_or_else(|| MacError::UnknownPermission(name.to_owned()))
}

/// Whether System Settings is opened after the prompt: always, unless
/// the permission is granted already (nothing to do there then).
pub fn opens_pane(granted: Option<bool>) -> bool {
    granted != Some(true)
}

/// What asking macOS for a permission did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Asked {
    /// The permission asked for.
    pub permission: &'static Tcc,
    /// Whether it is granted now; `None` when macOS cannot tell without
    /// naming an app (Automation).
    pub granted: Option<bool>,
    /// Whether System Settings opened at the permission's pane.
    pub pane_opened: bool,
}

impl Asked {
    /// What happened and what the person does next, in their words.
    pub fn summary(&self) -> String {
        let p = self.permission;
        if self.granted == Some(true) {
            return format!("{} is granted to deskhand.", p.label);
        }
        let asked = match p.prompt {
            Some(_) => format!("macOS asked you for {}", p.label),
            None => format!("macOS has no prompt for {}", p.label),
        };
        if self.pane_opened {
            format!(
                "{asked}; System Settings is open at Privacy & Security → {}: turn deskhand on there, then Retry the backend.",
                p.label
            )
        } else {
            format!(
                "{asked}; System Settings did not open: open {} yourself, turn deskhand on, then Retry the backend.",
                p.pane
            )
        }
    }
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

    #[test]
    fn each_name_asks_its_own_prompt_and_pane() {
        let ask = |name| to_ask(name).map(|p| (p.prompt, p.pane.rsplit('?').next()));
        assert_eq!(
            ask("screen_recording").ok(),
            Some((Some(Prompt::ScreenCapture), Some("Privacy_ScreenCapture")))
        );
        assert_eq!(
            ask("accessibility").ok(),
            Some((Some(Prompt::Accessibility), Some("Privacy_Accessibility")))
        );
        assert_eq!(
            ask("input_monitoring").ok(),
            Some((Some(Prompt::ListenEvent), Some("Privacy_ListenEvent")))
        );
        assert_eq!(
            ask("automation").ok(),
            Some((None, Some("Privacy_Automation")))
        );
        assert_eq!(Prompt::ListenEvent.call(), "CGRequestListenEventAccess");
    }

    #[test]
    fn an_unknown_name_is_a_clear_error() {
        let why = to_ask("camera")
            .map(|p| p.name)
            .expect_err("no such permission")
            .to_string();
        assert!(why.contains("\"camera\""), "{why}");
        assert!(why.contains("screen_recording"), "{why}");
    }

    #[test]
    fn the_pane_opens_unless_granted_already() {
        assert!(!opens_pane(Some(true)));
        assert!(opens_pane(Some(false)));
        assert!(opens_pane(None));
    }

    #[test]
    fn the_summary_says_what_happened_and_what_to_do() {
        let asked = |name, granted, pane_opened| {
            let permission = named(name).expect("a known permission");
            Asked {
                permission,
                granted,
                pane_opened,
            }
            .summary()
        };
        assert_eq!(
            asked("accessibility", Some(true), false),
            "Accessibility is granted to deskhand."
        );
        let opened = asked("screen_recording", Some(false), true);
        assert!(
            opened.starts_with("macOS asked you for Screen Recording"),
            "{opened}"
        );
        assert!(opened.contains("→ Screen Recording"), "{opened}");
        let closed = asked("input_monitoring", Some(false), false);
        assert!(closed.contains("did not open"), "{closed}");
        assert!(closed.contains("Privacy_ListenEvent"), "{closed}");
        let automation = asked("automation", None, true);
        assert!(
            automation.starts_with("macOS has no prompt for Automation"),
            "{automation}"
        );
    }
}
