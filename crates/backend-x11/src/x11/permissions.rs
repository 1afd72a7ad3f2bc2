//! Permissions on Linux/X11. X11 has no permission store like macOS's TCC:
//! those names are `not_applicable`. What deskhand can probe it reports as
//! granted or denied (the display, XTEST input injection, capture); any
//! other name is `unknown`, never a guess.

use deskhand_backend::Permissions;
use deskhand_protocol::messages::PermissionStatus;

/// macOS TCC permissions, which do not exist on X11.
const TCC: &[&str] = &[
    "screen_recording",
    "accessibility",
    "input_monitoring",
    "automation",
];

pub struct X11Permissions {
    /// Capture (GetImage / MIT-SHM) works.
    pub capture: bool,
    /// XTEST input injection works.
    pub input_injection: bool,
}

fn probed(ok: bool) -> PermissionStatus {
    if ok {
        PermissionStatus::Granted
    } else {
        PermissionStatus::Denied
    }
}

impl Permissions for X11Permissions {
    fn known(&self) -> Vec<&'static str> {
        let mut names = TCC.to_vec();
        names.extend(["display", "screen_capture", "input_injection"]);
        names
    }

    fn check(&mut self, name: &str) -> PermissionStatus {
        match name {
            n if TCC.contains(&n) => PermissionStatus::NotApplicable,
            // The backend is only built once the display answered.
            "display" => PermissionStatus::Granted,
            "screen_capture" => probed(self.capture),
            "input_injection" => probed(self.input_injection),
            _ => PermissionStatus::Unknown,
        }
    }
}
