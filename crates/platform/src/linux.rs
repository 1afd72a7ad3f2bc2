//! Linux: X11 (also XWayland), chosen at run time, with AT-SPI for
//! accessibility. A Wayland session without an X display is refused
//! until the Wayland backend exists.

use deskhand_backend::Backend;
use deskhand_backend::accessibility::Accessibility;
use deskhand_backend_atspi::AtspiOptions;
use deskhand_backend_x11::{EngineClaim, VirtualDesktop, X11Options};

use crate::{BackendKind, DesktopId, OpenOptions, PlatformError, SiteOptions};

/// Deskhand's own copy of the desktop's X11 backend and test helpers, for
/// `deskhand bench` (it starts virtual desktops and plays the person).
pub mod bench {
    pub use deskhand_backend_atspi::{AtspiOptions, open as open_accessibility};
    pub use deskhand_backend_x11::{FakePerson, VirtualDesktop, X11Error, open as open_x11};
}

/// The virtual desktop deskhand started, if it did, and this engine's
/// hold on the display once the backend is open.
pub(crate) struct Site {
    virtual_desktop: Option<VirtualDesktop>,
    engine_claim: Option<EngineClaim>,
}

impl Site {
    pub(crate) fn is_virtual(&self) -> bool {
        self.virtual_desktop.is_some()
    }

    pub(crate) fn open(
        &mut self,
        id: &DesktopId,
        o: &OpenOptions,
    ) -> Result<Backend, PlatformError> {
        // Before anything of the backend runs (it releases what its input
        // devices hold at start): a second engine touches nothing.
        if self.engine_claim.is_none() {
            let claim = deskhand_backend_x11::claim_engine(id.name())
                .map_err(|e| PlatformError::Backend(e.to_string()))?;
            self.engine_claim = Some(claim);
        }
        let options = X11Options {
            kill_switch: Some(o.kill_switch.clone()),
            remap_file: Some(crate::state_file(&o.state_dir, "remapped-keys", id)),
        };
        let mut backend = deskhand_backend_x11::open_with(Some(id.name()), &options)
            .map_err(|e| PlatformError::Backend(e.to_string()))?;
        backend.accessibility = accessibility();
        Ok(backend)
    }

    pub(crate) fn stop(&mut self) {
        if let Some(vd) = self.virtual_desktop.as_mut() {
            vd.stop();
        }
    }
}

/// Whether `pid` is a live (not zombie) process running the deskhand
/// binary or the tray app. A process whose executable cannot be read (another user's) is
/// not ours.
pub(crate) fn runs_deskhand(pid: u32) -> bool {
    let proc_dir = std::path::Path::new("/proc").join(pid.to_string());
    let zombie = std::fs::read_to_string(proc_dir.join("stat"))
        .ok()
        .and_then(|stat| {
            let state = stat.rsplit_once(')')?.1.split_whitespace().next()?;
            Some(state == "Z" || state == "X")
        });
    if zombie != Some(false) {
        return false;
    }
    std::fs::read_link(proc_dir.join("exe"))
        .ok()
        .and_then(|exe| exe.file_name().map(|n| n.to_string_lossy().into_owned()))
        .is_some_and(|name| {
            let name = name.strip_suffix(" (deleted)").unwrap_or(&name);
            name == "deskhand" || name == "deskhand-app"
        })
}

/// Whether the session is a Wayland one.
fn wayland_session() -> bool {
    std::env::var_os("WAYLAND_DISPLAY").is_some()
        || std::env::var("XDG_SESSION_TYPE").is_ok_and(|t| t == "wayland")
}

/// `$DISPLAY`, when set.
fn env_display() -> Option<String> {
    std::env::var("DISPLAY").ok().filter(|d| !d.is_empty())
}

pub(crate) fn wants_virtual(o: &SiteOptions) -> bool {
    o.virtual_size.is_some()
        || (o.desktop.is_none() && env_display().is_none() && !wayland_session())
}

pub(crate) fn session_desktop(named: Option<&str>) -> Option<DesktopId> {
    named
        .map(str::to_owned)
        .or_else(env_display)
        .map(|d| DesktopId::x11(&d))
}

/// The backend for a session: the one asked for, else X11 (on XWayland
/// in a Wayland session, said in the log).
pub(crate) fn choose(
    asked: Option<BackendKind>,
    wayland: bool,
    x_display: Option<&str>,
) -> Result<BackendKind, PlatformError> {
    let no_wayland = PlatformError::NotBuilt {
        backend: "wayland",
        why: "log in to an X11 session, or run `deskhand serve --virtual` for a desktop of its own",
    };
    match asked {
        Some(BackendKind::X11) => Ok(BackendKind::X11),
        Some(BackendKind::Wayland) => Err(no_wayland),
        Some(other) => Err(PlatformError::Option(format!(
            "the {} backend does not run on Linux",
            other.name()
        ))),
        None if wayland && x_display.is_none() => Err(no_wayland),
        None if wayland => {
            tracing::warn!(
                x_display = x_display.unwrap_or_default(),
                "a Wayland session: the Wayland backend is not built yet, so deskhand drives \
                 XWayland (X11 apps only); `deskhand doctor` says more"
            );
            Ok(BackendKind::X11)
        }
        None => Ok(BackendKind::X11),
    }
}

pub(crate) fn attach(o: &SiteOptions) -> Result<(DesktopId, BackendKind, Site), PlatformError> {
    if wants_virtual(o) {
        if o.backend.is_some_and(|k| k != BackendKind::X11) {
            return Err(PlatformError::Option(
                "a virtual desktop is an X11 desktop (--backend x11)".into(),
            ));
        }
        if o.virtual_size.is_none() {
            tracing::info!("no DISPLAY set: starting a virtual desktop");
        }
        let (w, h) = o.virtual_size.unwrap_or((1280, 800));
        let vd = VirtualDesktop::start(w, h).map_err(|e| PlatformError::Backend(e.to_string()))?;
        let id = DesktopId::x11(vd.display());
        let site = Site {
            virtual_desktop: Some(vd),
            engine_claim: None,
        };
        return Ok((id, BackendKind::X11, site));
    }
    let display = o.desktop.clone().or_else(env_display);
    let kind = choose(o.backend, wayland_session(), display.as_deref())?;
    let Some(display) = display else {
        return Err(PlatformError::Option(
            "no display: give --display or --virtual".into(),
        ));
    };
    let site = Site {
        virtual_desktop: None,
        engine_claim: None,
    };
    Ok((DesktopId::x11(&display), kind, site))
}

/// The AT-SPI backend (it connects to the bus on first use, so it opens
/// without one).
fn accessibility() -> Option<std::sync::Arc<dyn Accessibility>> {
    match deskhand_backend_atspi::open(&AtspiOptions::default()) {
        Ok(a11y) => {
            tracing::info!("accessibility backend: atspi");
            Some(std::sync::Arc::from(a11y))
        }
        Err(e) => {
            tracing::info!(error = %e, "no accessibility backend");
            None
        }
    }
}

/// Whether a system tray (an XEmbed tray manager) runs on `id`.
pub fn tray_present(id: &DesktopId) -> Result<bool, PlatformError> {
    deskhand_backend_x11::system_tray_present(id.name())
        .map_err(|e| PlatformError::Backend(e.to_string()))
}

pub(crate) mod doctor {
    use deskhand_backend::BackendFindings;
    use deskhand_backend_atspi::findings as atspi;
    use deskhand_protocol::doctor::{
        Availability, BackendEntry, CapabilityEntry, CapabilityName, ConsentKind, Platform,
        ReasonCode, Verdict,
    };

    pub(crate) fn findings(desktop: Option<&str>) -> (Platform, BackendFindings) {
        let display = super::session_desktop(desktop);
        let x11 = deskhand_backend_x11::x11_findings(
            display.as_ref().map(|d| d.name()),
            super::wayland_session(),
        );
        let a11y = atspi::findings(&atspi::bus_status());
        (Platform::Linux, linux_findings(x11, a11y))
    }

    /// The X11 and AT-SPI findings with what Linux has no backend for
    /// yet: the Wayland portals (planned) and notifications (no API).
    pub fn linux_findings(x11: BackendFindings, a11y: BackendFindings) -> BackendFindings {
        let planned = Verdict::because(Availability::Planned, ReasonCode::WaylandPortalNotBuilt);
        let no_api = Verdict::because(Availability::Unsupported, ReasonCode::NoPlatformApi);
        let rest = BackendFindings {
            backends: vec![BackendEntry::new("wayland-portal", false, planned)],
            capabilities: [
                CapabilityName::ListNotifications,
                CapabilityName::DismissNotification,
                CapabilityName::InvokeNotificationAction,
            ]
            .into_iter()
            .map(|name| CapabilityEntry::new(name, no_api, ConsentKind::Session))
            .collect(),
            ..BackendFindings::default()
        };
        x11.merge(a11y).merge(rest)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn x11_unless_asked_and_wayland_is_refused_until_it_is_built() {
        assert_eq!(choose(None, false, Some(":0")).ok(), Some(BackendKind::X11));
        assert_eq!(
            choose(None, true, Some(":0")).ok(),
            Some(BackendKind::X11),
            "XWayland"
        );
        let refused = choose(None, true, None).expect_err("no X display in Wayland");
        assert!(matches!(
            refused,
            PlatformError::NotBuilt {
                backend: "wayland",
                ..
            }
        ));
        assert!(choose(Some(BackendKind::Wayland), false, Some(":0")).is_err());
        let windows = choose(Some(BackendKind::Windows), false, Some(":0")).expect_err("not here");
        assert!(
            windows.to_string().contains("does not run on Linux"),
            "{windows}"
        );
        assert_eq!(
            choose(Some(BackendKind::X11), true, Some(":0")).ok(),
            Some(BackendKind::X11)
        );
    }
}
