//! Linux: X11, or Wayland through the desktop portals, chosen at run time
//! (a Wayland session gets the Wayland backend even where XWayland gives
//! it an X display: that root holds no pixels of Wayland apps), with
//! AT-SPI for accessibility on both.

use deskhand_backend::Backend;
use deskhand_backend::accessibility::Accessibility;
use deskhand_backend_atspi::AtspiOptions;
use deskhand_backend_wayland::WaylandOptions;
use deskhand_backend_x11::{VirtualDesktop, X11Options};

use crate::{BackendKind, DesktopId, OpenOptions, PlatformError, SiteOptions};

/// Deskhand's own copy of the desktop's X11 backend and test helpers, for
/// `deskhand bench` (it starts virtual desktops and plays the person).
pub mod bench {
    pub use deskhand_backend_atspi::{AtspiOptions, open as open_accessibility};
    pub use deskhand_backend_x11::{FakePerson, VirtualDesktop, X11Error, open as open_x11};
}

/// This engine's hold on the desktop: an X display's `DESKHAND_ENGINE`
/// selection, a Wayland session's bus name.
enum EngineClaim {
    X11(#[allow(dead_code)] deskhand_backend_x11::EngineClaim),
    Wayland(deskhand_backend_wayland::EngineClaim),
}

/// The virtual desktop deskhand started, if it did, the backend picked,
/// and this engine's hold on the desktop once the backend is open.
pub(crate) struct Site {
    virtual_desktop: Option<VirtualDesktop>,
    kind: BackendKind,
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
        if self.kind == BackendKind::Wayland {
            return self.open_wayland(id, o);
        }
        // Before anything of the backend runs (it releases what its input
        // devices hold at start): a second engine touches nothing.
        if self.engine_claim.is_none() {
            let claim = deskhand_backend_x11::claim_engine(id.name())
                .map_err(|e| PlatformError::Backend(e.to_string()))?;
            self.engine_claim = Some(EngineClaim::X11(claim));
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

    fn open_wayland(&mut self, id: &DesktopId, o: &OpenOptions) -> Result<Backend, PlatformError> {
        let failed =
            |e: deskhand_backend_wayland::WaylandError| PlatformError::Backend(e.to_string());
        if !matches!(self.engine_claim, Some(EngineClaim::Wayland(_))) {
            let claim = deskhand_backend_wayland::claim_engine().map_err(failed)?;
            self.engine_claim = Some(EngineClaim::Wayland(claim));
        }
        let Some(EngineClaim::Wayland(claim)) = &self.engine_claim else {
            return Err(PlatformError::Backend(
                "the Wayland session is not held".into(),
            ));
        };
        let options = WaylandOptions {
            grants: Some((o.vault.clone(), id.tag())),
            kill_switch: Some(o.kill_switch.clone()),
        };
        let mut backend = deskhand_backend_wayland::open(&options, claim).map_err(failed)?;
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

/// Whether the session is a Wayland one: as the login manager says it
/// (`XDG_SESSION_TYPE`), else whether a compositor is named. An X11
/// session with a `WAYLAND_DISPLAY` left over (a nested compositor's) is
/// an X11 session.
fn wayland_session() -> bool {
    match std::env::var("XDG_SESSION_TYPE").as_deref() {
        Ok("x11") => false,
        Ok("wayland") => true,
        _ => std::env::var_os("WAYLAND_DISPLAY").is_some(),
    }
}

/// `$DISPLAY`, when set.
fn env_display() -> Option<String> {
    std::env::var("DISPLAY").ok().filter(|d| !d.is_empty())
}

pub(crate) fn wants_virtual(o: &SiteOptions) -> bool {
    o.virtual_size.is_some()
        || (o.desktop.is_none() && env_display().is_none() && !wayland_session())
}

/// `$WAYLAND_DISPLAY`, when set.
fn env_wayland() -> Option<String> {
    std::env::var("WAYLAND_DISPLAY")
        .ok()
        .filter(|d| !d.is_empty())
}

pub(crate) fn session_desktop(named: Option<&str>) -> Option<DesktopId> {
    match named {
        Some(n) if n.starts_with("wayland") => Some(DesktopId::named(n)),
        Some(n) => Some(DesktopId::x11(n)),
        None => env_wayland()
            .filter(|_| wayland_session())
            .map(|w| DesktopId::named(&w))
            .or_else(|| env_display().map(|d| DesktopId::x11(&d))),
    }
}

/// What the session offers deskhand to pick from.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Session<'a> {
    /// A Wayland session (`WAYLAND_DISPLAY` or `XDG_SESSION_TYPE`).
    pub(crate) wayland: bool,
    /// The X display: `--display`, else `$DISPLAY` (XWayland's in a
    /// Wayland session).
    pub(crate) x_display: Option<&'a str>,
    /// The X display was named with `--display`.
    pub(crate) named: bool,
}

/// The backend for a session: the one asked for; else X11 for an X
/// display named on the command line or an X11 session (as
/// `XDG_SESSION_TYPE` says it); else Wayland,
/// XWayland's display or not: XWayland shows no Wayland app's pixels and
/// sees none of the person's input on Wayland windows, so driving it
/// would leave most of the desktop unseen and hand-back blind (said in
/// the log). Outside GNOME the Wayland backend's frame is on the layer
/// shell, and `doctor` says what the compositor lacks.
pub(crate) fn choose(
    asked: Option<BackendKind>,
    s: Session<'_>,
) -> Result<BackendKind, PlatformError> {
    match asked {
        Some(k @ (BackendKind::X11 | BackendKind::Wayland)) => Ok(k),
        Some(other) => Err(PlatformError::Option(format!(
            "the {} backend does not run on Linux",
            other.name()
        ))),
        None if s.named || !s.wayland => Ok(BackendKind::X11),
        None => {
            if let Some(x) = s.x_display {
                tracing::info!(
                    x_display = x,
                    "a Wayland session: its X display is XWayland's (no pixels of Wayland apps, none of the person's input on them), so deskhand uses the Wayland backend"
                );
            }
            Ok(BackendKind::Wayland)
        }
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
            kind: BackendKind::X11,
            engine_claim: None,
        };
        return Ok((id, BackendKind::X11, site));
    }
    let named_wayland = o.desktop.as_deref().filter(|d| d.starts_with("wayland"));
    if let Some(name) = named_wayland
        && env_wayland().as_deref() != Some(name)
    {
        return Err(PlatformError::Option(format!(
            "deskhand drives the Wayland session it runs in ({}), not {name:?}",
            env_wayland().unwrap_or_else(|| "none".into())
        )));
    }
    let named_x = o.desktop.clone().filter(|_| named_wayland.is_none());
    let display = named_x.clone().or_else(env_display);
    let session = Session {
        wayland: wayland_session() || named_wayland.is_some(),
        x_display: display.as_deref(),
        named: named_x.is_some(),
    };
    let kind = choose(o.backend, session)?;
    let site = Site {
        virtual_desktop: None,
        kind,
        engine_claim: None,
    };
    if kind == BackendKind::Wayland {
        let Some(name) = env_wayland() else {
            return Err(PlatformError::Option(
                "no Wayland display: WAYLAND_DISPLAY is not set".into(),
            ));
        };
        return Ok((DesktopId::named(&name), kind, site));
    }
    let Some(display) = display else {
        return Err(PlatformError::Option(
            "no display: give --display or --virtual".into(),
        ));
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

/// Whether a system tray (an XEmbed tray manager) runs on `id`; a
/// Wayland session has none (only a StatusNotifierItem host, on the bus).
pub fn tray_present(id: &DesktopId) -> Result<bool, PlatformError> {
    if id.name().starts_with("wayland") {
        return Ok(false);
    }
    deskhand_backend_x11::system_tray_present(id.name())
        .map_err(|e| PlatformError::Backend(e.to_string()))
}

pub(crate) mod doctor {
    use deskhand_backend::BackendFindings;
    use deskhand_backend_atspi::findings as atspi;
    use deskhand_protocol::doctor::{
        Availability, CapabilityEntry, CapabilityName, ConsentKind, Platform, ReasonCode, Verdict,
    };

    pub(crate) fn findings(desktop: Option<&str>) -> (Platform, BackendFindings) {
        let display = super::session_desktop(desktop);
        let wayland = display
            .as_ref()
            .is_some_and(|d| d.name().starts_with("wayland"));
        if wayland {
            let a11y = atspi::findings(&atspi::bus_status());
            let found = deskhand_backend_wayland::wayland_findings().merge(a11y);
            return (Platform::Linux, found);
        }
        let x11 = deskhand_backend_x11::x11_findings(
            display.as_ref().map(|d| d.name()),
            super::wayland_session(),
        );
        let a11y = atspi::findings(&atspi::bus_status());
        (Platform::Linux, linux_findings(x11, a11y))
    }

    /// The X11 and AT-SPI findings with what Linux has no API for:
    /// notifications.
    pub fn linux_findings(x11: BackendFindings, a11y: BackendFindings) -> BackendFindings {
        let no_api = Verdict::because(Availability::Unsupported, ReasonCode::NoPlatformApi);
        let rest = BackendFindings {
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
    fn wayland_in_gnome_and_without_xwayland_x11_for_a_named_display_or_when_asked() {
        let x = Some(":0");
        let gnome = Session {
            wayland: true,
            x_display: x,
            named: false,
        };
        // KDE's session looks the same to the choice.
        let kde = gnome;
        let x11 = Session {
            wayland: false,
            x_display: x,
            named: false,
        };
        assert_eq!(choose(None, x11).ok(), Some(BackendKind::X11));
        assert_eq!(
            choose(None, gnome).ok(),
            Some(BackendKind::Wayland),
            "XWayland's display is not the desktop"
        );
        assert_eq!(
            choose(None, kde).ok(),
            Some(BackendKind::Wayland),
            "XWayland's display is not KDE's desktop either"
        );
        assert_eq!(
            choose(
                None,
                Session {
                    x_display: None,
                    ..kde
                }
            )
            .ok(),
            Some(BackendKind::Wayland)
        );
        assert_eq!(
            choose(
                None,
                Session {
                    named: true,
                    ..gnome
                }
            )
            .ok(),
            Some(BackendKind::X11),
            "--display :0"
        );
        assert_eq!(
            choose(Some(BackendKind::X11), gnome).ok(),
            Some(BackendKind::X11),
            "asked for"
        );
        assert_eq!(
            choose(Some(BackendKind::Wayland), kde).ok(),
            Some(BackendKind::Wayland)
        );
        let windows = choose(Some(BackendKind::Windows), x11).expect_err("not here");
        assert!(
            windows.to_string().contains("does not run on Linux"),
            "{windows}"
        );
    }
}
