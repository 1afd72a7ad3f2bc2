//! macOS: the login session's desktop, driven by the macOS backend. There
//! is one desktop per session and no virtual one. The backend is partial
//! and not yet run on a Mac; its doctor findings say what is missing.

use deskhand_backend::Backend;
use deskhand_backend_macos::MacOptions;

use crate::{BackendKind, DesktopId, OpenOptions, PermissionAsked, PlatformError, SiteOptions};

/// The name of the one desktop of this session.
const DESKTOP: &str = "macos";

/// The session's desktop (nothing to stop: deskhand started none).
pub(crate) struct Site;

impl Site {
    pub(crate) fn is_virtual(&self) -> bool {
        false
    }

    pub(crate) fn open(
        &mut self,
        _: &DesktopId,
        o: &OpenOptions,
    ) -> Result<Backend, PlatformError> {
        let options = MacOptions {
            kill_switch: Some(o.kill_switch.clone()),
        };
        deskhand_backend_macos::open(&options).map_err(|e| PlatformError::Backend(e.to_string()))
    }

    pub(crate) fn stop(&mut self) {}
}

/// Whether `pid` is a live process running `deskhand` or the tray app.
pub(crate) fn runs_deskhand(pid: u32) -> bool {
    deskhand_backend_macos::program_of_process(pid).is_some_and(|exe| {
        let name = exe.rsplit('/').next().unwrap_or(&exe);
        name == "deskhand" || name == "deskhand-app"
    })
}

pub(crate) fn session_desktop(named: Option<&str>) -> Option<DesktopId> {
    Some(DesktopId::named(named.unwrap_or(DESKTOP)))
}

pub(crate) fn attach(o: &SiteOptions) -> Result<(DesktopId, BackendKind, Site), PlatformError> {
    if o.virtual_size.is_some() {
        return Err(PlatformError::Option(
            "macOS has no virtual desktop of deskhand's: run deskhand in the session it drives (a virtual machine for an agent's own desktop)".into(),
        ));
    }
    match o.backend {
        None | Some(BackendKind::MacOs) => {}
        Some(other) => {
            return Err(PlatformError::Option(format!(
                "the {} backend does not run on macOS",
                other.name()
            )));
        }
    }
    if let Some(named) = o.desktop.as_deref().filter(|d| *d != DESKTOP) {
        return Err(PlatformError::Option(format!(
            "no desktop {named:?} on macOS: deskhand drives this session's desktop ({DESKTOP:?})"
        )));
    }
    Ok((DesktopId::named(DESKTOP), BackendKind::MacOs, Site))
}

/// Asks macOS for permission `name` through the backend (its prompt, then
/// its System Settings pane).
pub(crate) fn ask_permission(name: &str) -> Result<PermissionAsked, PlatformError> {
    let asked = deskhand_backend_macos::ask_permission(name)
        .map_err(|e| PlatformError::Permission(e.to_string()))?;
    Ok(PermissionAsked {
        name: asked.permission.name.to_owned(),
        granted: asked.granted,
        pane_opened: asked.pane_opened,
        summary: asked.summary(),
    })
}

/// The macOS menu bar is always there.
pub fn tray_present(_: &DesktopId) -> Result<bool, PlatformError> {
    Ok(true)
}

pub(crate) mod doctor {
    use deskhand_backend::BackendFindings;
    use deskhand_protocol::doctor::Platform;

    pub(crate) fn findings(_: Option<&str>) -> (Platform, BackendFindings) {
        (Platform::Macos, deskhand_backend_macos::macos_findings())
    }
}
