//! What the Wayland backend tells the doctor: the portals' grants as this
//! process's backend holds them (the daemon's own answer to MCP's
//! `health_report`; a separate `deskhand doctor` has asked for none), the
//! extension or else the compositor's layer shell, and the hand-back
//! detector with its limit.

use std::time::Duration;

use deskhand_backend::BackendFindings;
use deskhand_protocol::doctor::{
    Availability, BackendEntry, CapabilityEntry, CapabilityName as C, ConsentKind as K, Probe,
    ReasonCode as R, SessionType, Verdict,
};

use deskhand_backend::overlay_process::find_overlay;

use crate::compositor::{IDLE_NOTIFIER, LAYER_SHELL, Offers};
use crate::idle_notify::IDLE_MS;
use crate::open::LIVE;
use crate::portal::Grant;
use crate::rt::Rt;
use crate::shell::ShellExt;
use crate::shortcuts::KillChord;

/// The verdict a grant gives, `denied` naming which portal.
pub(crate) fn verdict(grant: &Grant, denied: R) -> Verdict {
    match grant {
        Grant::Granted => Verdict::AVAILABLE,
        Grant::Pending => Verdict::because(Availability::Unavailable, R::PortalPending),
        Grant::Denied => Verdict::unavailable(denied),
        Grant::Unavailable(_) | Grant::Failed(_) => Verdict::unavailable(R::PortalUnavailable),
    }
}

fn describe(grant: &Grant) -> String {
    match grant {
        Grant::Unavailable(why) | Grant::Failed(why) => format!("{}: {why}", grant.name()),
        g => g.name().to_owned(),
    }
}

/// How this deskhand's input reaches the desktop, once granted: libei
/// where the portal connected the session to EIS, else its calls.
fn input_path() -> String {
    use crate::portal::EisInput;
    match LIVE
        .get()
        .and_then(|p| p.input())
        .as_deref()
        .map(|s| &s.eis)
    {
        Some(EisInput::Connected(_)) => ", input through libei (ConnectToEIS)".into(),
        Some(EisInput::Failed(why)) => format!(", but libei failed, so input is refused: {why}"),
        Some(EisInput::NotOffered) => ", input through the portal's Notify calls".into(),
        None => String::new(),
    }
}

/// Whether KWin is on the session bus (its scripting lists windows).
fn kwin_on_bus() -> bool {
    let Ok(rt) = Rt::new() else {
        return false;
    };
    rt.run(Duration::from_secs(3), "KWin", async {
        let failed = |e: zbus::Error| deskhand_backend::BackendError::Failed(e.to_string());
        let conn = zbus::Connection::session().await.map_err(failed)?;
        let dbus = zbus::fdo::DBusProxy::new(&conn).await.map_err(failed)?;
        let name = zbus::names::BusName::try_from("org.kde.KWin").map_err(|e| failed(e.into()))?;
        dbus.name_has_owner(name)
            .await
            .map_err(|e| failed(e.into()))
    })
    .unwrap_or(false)
}

/// Where the window list comes from, or why there is none.
fn windows_probe(extension: bool) -> Probe {
    let (ok, says) = if extension {
        (
            true,
            "the extension's list: each window's desktop bounds, app and pid; focus and raise",
        )
    } else if kwin_on_bus() {
        (
            true,
            "KWin's scripting: each window's bounds, app and pid, focus and stacking",
        )
    } else if crate::sway_windows::SwayWindows::from_env().is_some() {
        (
            true,
            "sway's IPC: each window's bounds, app and pid, and focus",
        )
    } else {
        (
            false,
            "unavailable: Wayland gives clients no window list and deskhand reads its GNOME Shell extension's, KWin's and sway's, none of which is here (not wlroots' foreign-toplevel); window ops are refused, and acts go only under whole-desktop consent with no window named",
        )
    };
    Probe::new("windows", ok, says)
}

/// Who holds the engine's bus name: no one (deskhand takes it when it
/// starts), a deskhand, or a program that is not deskhand, named.
fn engine_name_probe() -> Probe {
    use crate::open::{ENGINE_NAME, held_by, is_deskhand};
    let held = Rt::new().ok().and_then(|rt| {
        rt.run(Duration::from_secs(3), "the engine's name", async {
            let conn = zbus::Connection::session()
                .await
                .map_err(|e| deskhand_backend::BackendError::Failed(format!("session bus: {e}")))?;
            crate::shell_owner::holder(&conn, ENGINE_NAME).await
        })
        .ok()
    });
    match held.flatten() {
        None => Probe::new(
            "engine's bus name",
            true,
            format!("{ENGINE_NAME} is free: deskhand takes it when it starts"),
        ),
        Some(h) if is_deskhand(h.pid) => Probe::new(
            "engine's bus name",
            true,
            format!("{ENGINE_NAME} is held by deskhand, {}", h.describe()),
        ),
        Some(h) => Probe::new("engine's bus name", false, held_by(Some(&h))),
    }
}

/// Whether deskhand's GNOME Shell extension answers, and what it said.
fn extension() -> Result<u32, String> {
    let rt = Rt::new().map_err(|e| e.to_string())?;
    rt.run(Duration::from_secs(3), "the extension", async {
        let conn = zbus::Connection::session()
            .await
            .map_err(|e| deskhand_backend::BackendError::Failed(format!("session bus: {e}")))?;
        ShellExt::find(conn).await.version().await
    })
    .map_err(|e| e.to_string())
}

/// Whether the desktop's portal has the Clipboard interface (None: the
/// portal does not answer, which the input grant says on its own).
fn portal_has_clipboard() -> Option<bool> {
    let rt = Rt::new().ok()?;
    rt.run(Duration::from_secs(3), "the portal's clipboard", async {
        let failed = |e: zbus::Error| deskhand_backend::BackendError::Failed(e.to_string());
        let conn = zbus::Connection::session().await.map_err(failed)?;
        let props = zbus::fdo::PropertiesProxy::builder(&conn)
            .destination("org.freedesktop.portal.Desktop")
            .and_then(|b| b.path("/org/freedesktop/portal/desktop"))
            .map_err(failed)?
            .build()
            .await
            .map_err(failed)?;
        let iface = zbus::names::InterfaceName::from_static_str_unchecked(
            "org.freedesktop.portal.Clipboard",
        );
        Ok(match props.get(iface, "version").await {
            Ok(_) => Some(true),
            Err(zbus::fdo::Error::ServiceUnknown(_) | zbus::fdo::Error::NameHasNoOwner(_)) => None,
            Err(_) => Some(false),
        })
    })
    .ok()
    .flatten()
}

/// The clipboard comes with the input session where the desktop's portal
/// has a Clipboard interface (not GNOME 43): `offered` when this
/// deskhand's session brought one, `portal_has` whether the portal has the
/// interface at all. A portal without it is said in every state of the
/// grant, waiting for the answer included, since the answer brings none.
pub(crate) fn clipboard_verdict(
    remote: &Grant,
    offered: bool,
    portal_has: Option<bool>,
) -> Verdict {
    match remote {
        _ if offered => Verdict::AVAILABLE,
        _ if portal_has == Some(false) => Verdict::unavailable(R::CompositorUnsupported),
        Grant::Granted => Verdict::unavailable(R::CompositorUnsupported),
        g => verdict(g, R::PortalRemoteDesktopDenied),
    }
}

/// What the kill switch's probe says of `state`, `live` when this process
/// runs the backend (else a separate `deskhand doctor` asks, which binds
/// no chord of its own).
pub(crate) fn kill_switch_says(state: &KillChord, live: bool) -> (bool, String) {
    let fallback = "stop agents with Stop all agents in deskhand's menu or the frame's Stop button";
    match state {
        KillChord::Bound(trigger) => (
            true,
            format!("{trigger}, through the desktop's global shortcuts"),
        ),
        KillChord::Pending if live => (
            false,
            format!(
                "not bound yet: deskhand asks the desktop's global shortcuts (GNOME 48 and KDE 5.27 on) for it once you have answered the desktop's dialogs; until then {fallback}"
            ),
        ),
        KillChord::Pending => (
            false,
            format!(
                "bound through the desktop's global shortcuts (GNOME 48 and KDE 5.27 on) by the running deskhand (the app, or `deskhand serve`); without them {fallback}"
            ),
        ),
        KillChord::Unavailable(why) => (false, format!("no chord: {why}; {fallback}")),
    }
}

/// The kill switch's chord, as this deskhand bound it (the doctor's own
/// process binds none).
fn kill_switch_probe() -> Probe {
    let live = LIVE.get();
    let state = live
        .and_then(|p| p.kill.lock().ok().map(|k| k.clone()))
        .unwrap_or_default();
    let (ok, says) = kill_switch_says(&state, live.is_some());
    Probe::new("kill switch", ok, says)
}

/// The frame: the extension's, else the overlay's on the layer shell.
pub(crate) fn frame_verdict(extension: bool, offers: Offers, overlay: bool) -> Verdict {
    match () {
        _ if extension => Verdict::AVAILABLE,
        _ if offers.layer_shell && overlay => Verdict::AVAILABLE,
        _ if offers.layer_shell => Verdict::unavailable(R::IndicatorNotFound),
        _ => Verdict::unavailable(R::ShellExtensionMissing),
    }
}

/// The layer shell's probe: fine where it is not needed (the extension
/// draws the frame) or offered.
fn layer_shell_probe(extension: bool, offers: Offers) -> Probe {
    Probe::new(
        "layer shell",
        extension || offers.layer_shell,
        layer_shell_says(extension, offers),
    )
}

fn layer_shell_says(extension: bool, offers: Offers) -> String {
    match () {
        _ if extension => "not needed: the GNOME Shell extension draws the frame".into(),
        _ if offers.layer_shell => format!(
            "{LAYER_SHELL}: deskhand-overlay draws the frame above every window (KDE Plasma, wlroots desktops)"
        ),
        _ => format!(
            "this compositor offers no {LAYER_SHELL} and no deskhand extension answers: no frame, so no takeover (on GNOME, enable the deskhand@deskhand.dev extension)"
        ),
    }
}

/// What tells the person's input from deskhand's here.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum HandBackDetector {
    /// mutter's `org.gnome.Mutter.IdleMonitor` (with the extension's pointer).
    Mutter,
    /// The compositor's ext-idle-notify.
    IdleNotify,
    /// Neither.
    None,
}

impl HandBackDetector {
    /// GNOME's monitor with its extension, else ext-idle-notify.
    pub(crate) fn of(extension: bool, offers: Offers) -> Self {
        match () {
            _ if extension => Self::Mutter,
            _ if offers.idle_notifier => Self::IdleNotify,
            _ => Self::None,
        }
    }

    fn says(self) -> String {
        match self {
            Self::Mutter => "GNOME's idle monitor, asked of the compositor's own connection: deskhand's events are paced so the person's input is seen however fast an agent acts (not an input within the same 10 ms as one of deskhand's); a click is not told from a key".into(),
            Self::IdleNotify => format!(
                "the compositor's {IDLE_NOTIFIER}: the person's input is seen when it comes {IDLE_MS} ms after any other and clearly after deskhand's own; every such input counts as a press (no pointer position)"
            ),
            Self::None => format!(
                "no detector: neither mutter's idle monitor nor {IDLE_NOTIFIER} (KDE Plasma 5.27 on, sway 1.8 on) is here, so no takeover"
            ),
        }
    }

    /// The limit of its word on who clicked Continue.
    fn real_clicks_say(self) -> &'static str {
        match self {
            Self::Mutter => {
                "GNOME cannot tell the person's click from one a program sends through mutter's RemoteDesktop API (open to every program of the session): such a click on Continue passes for the person's"
            }
            _ => {
                "idle notifications cannot tell the person's click from a program's virtual pointer or keyboard: such a click on Continue passes for the person's"
            }
        }
    }
}

/// The Wayland backend's findings.
pub fn wayland_findings() -> BackendFindings {
    let (screencast, remote) = match LIVE.get() {
        Some(p) => (p.screencast_grant(), p.remote_grant()),
        // Each process is granted its own sessions: the doctor has none.
        None => (Grant::Pending, Grant::Pending),
    };
    // Without ScreenCast, screenshots come from the Screenshot portal.
    let shots = LIVE
        .get()
        .filter(|p| p.shots_instead())
        .map(|p| p.shots_grant());
    let capture = match &shots {
        Some(g) => verdict(g, R::PortalScreenshotDenied),
        None => verdict(&screencast, R::PortalScreencastDenied),
    };
    let input = verdict(&remote, R::PortalRemoteDesktopDenied);
    let ext = extension();
    let offered = LIVE
        .get()
        .and_then(|p| p.input())
        .is_some_and(|rs| rs.clipboard.is_some());
    let clipboard = clipboard_verdict(
        &remote,
        offered,
        (!offered).then(portal_has_clipboard).flatten(),
    );
    // Without the extension, what the compositor itself offers.
    let offers = match &ext {
        Ok(_) => Offers::default(),
        Err(_) => crate::compositor::probe().unwrap_or_default(),
    };
    let frame = frame_verdict(ext.is_ok(), offers, find_overlay().is_some());
    let detector = HandBackDetector::of(ext.is_ok(), offers);
    // No frame or no hand-back, no takeover: input is refused without them.
    let takeover = match detector {
        _ if !frame.is_available() => frame,
        HandBackDetector::None => Verdict::unavailable(R::CompositorUnsupported),
        _ => input,
    };
    let no_api = Verdict::because(Availability::Unsupported, R::NoPlatformApi);
    let own = if LIVE.get().is_some() {
        "as this deskhand holds them"
    } else {
        "asked for when deskhand starts (the app, or `deskhand serve`); its MCP health_report says how they stand"
    };
    let mut probes = vec![
        Probe::new(
            "screencast portal",
            screencast == Grant::Granted,
            format!("{} ({own})", describe(&screencast)),
        ),
        Probe::new(
            "remote desktop portal",
            remote == Grant::Granted,
            format!("{}{} ({own})", describe(&remote), input_path()),
        ),
        Probe::new(
            "GNOME Shell extension",
            ext.is_ok(),
            match &ext {
                Ok(v) => format!("deskhand@deskhand.dev version {v}: the frame, the window list"),
                Err(e) => e.clone(),
            },
        ),
        engine_name_probe(),
        windows_probe(ext.is_ok()),
        layer_shell_probe(ext.is_ok(), offers),
        Probe::new(
            "hand-back",
            detector != HandBackDetector::None,
            detector.says(),
        ),
        Probe::new("real-device clicks", false, detector.real_clicks_say()),
        kill_switch_probe(),
    ];
    if let Some(g) = &shots {
        probes.insert(
            1,
            Probe::new(
                "screenshot portal",
                *g == Grant::Granted,
                format!(
                    "{}: each screenshot is a shot of the Screenshot portal (a few hundred milliseconds); the desktop asks once, and keeps the answer for every program outside a sandbox, not for deskhand alone",
                    describe(g)
                ),
            ),
        );
    }
    BackendFindings {
        session_type: Some(SessionType::Wayland),
        backends: vec![BackendEntry::new("wayland-portal", true, capture)],
        capabilities: vec![
            CapabilityEntry::new(C::CaptureWindow, capture, K::Session),
            CapabilityEntry::new(C::InputTakeover, takeover, K::Takeover),
            CapabilityEntry::new(C::TakeoverIndicator, frame, K::Takeover),
            CapabilityEntry::new(C::TakeoverHandback, takeover, K::Takeover),
            CapabilityEntry::new(C::ClipboardRead, clipboard, K::Separate),
            CapabilityEntry::new(C::ClipboardWrite, clipboard, K::Session),
            CapabilityEntry::new(C::ListNotifications, no_api, K::Session),
            CapabilityEntry::new(C::DismissNotification, no_api, K::Session),
            CapabilityEntry::new(C::InvokeNotificationAction, no_api, K::Session),
        ],
        permissions: Vec::new(),
        probes,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_frame_and_the_detector_come_from_the_extension_else_the_compositor() {
        let kde = Offers {
            layer_shell: true,
            idle_notifier: true,
        };
        assert!(frame_verdict(true, Offers::default(), false).is_available());
        assert!(frame_verdict(false, kde, true).is_available());
        assert_eq!(
            frame_verdict(false, kde, false).reason,
            Some(R::IndicatorNotFound)
        );
        assert_eq!(
            frame_verdict(false, Offers::default(), true).reason,
            Some(R::ShellExtensionMissing)
        );
        assert_eq!(HandBackDetector::of(true, kde), HandBackDetector::Mutter);
        assert_eq!(
            HandBackDetector::of(false, kde),
            HandBackDetector::IdleNotify
        );
        let sway_1_7 = Offers {
            layer_shell: true,
            idle_notifier: false,
        };
        assert_eq!(
            HandBackDetector::of(false, sway_1_7),
            HandBackDetector::None
        );
    }

    #[test]
    fn each_grant_gives_its_verdict_and_a_denial_names_its_portal() {
        assert!(verdict(&Grant::Granted, R::PortalScreencastDenied).is_available());
        assert_eq!(
            verdict(&Grant::Denied, R::PortalRemoteDesktopDenied).reason,
            Some(R::PortalRemoteDesktopDenied)
        );
        assert_eq!(
            verdict(&Grant::Pending, R::PortalScreencastDenied).reason,
            Some(R::PortalPending)
        );
        assert_eq!(
            verdict(&Grant::Unavailable("x".into()), R::PortalScreencastDenied).reason,
            Some(R::PortalUnavailable)
        );
    }

    #[test]
    fn the_clipboard_says_the_same_before_and_after_the_answer_where_the_portal_has_none() {
        use deskhand_protocol::doctor::ReasonCode;
        let said = |remote: &Grant, offered, has| clipboard_verdict(remote, offered, has).reason;
        // GNOME 43: no Clipboard portal, so the answer brings none.
        for remote in [Grant::Pending, Grant::Granted] {
            assert_eq!(
                said(&remote, false, Some(false)),
                Some(ReasonCode::CompositorUnsupported),
                "{remote:?}"
            );
        }
        // A portal with one: waiting is said as waiting, then it works.
        assert_eq!(
            said(&Grant::Pending, false, Some(true)),
            Some(ReasonCode::PortalPending)
        );
        assert!(clipboard_verdict(&Grant::Granted, true, None).is_available());
        assert_eq!(
            said(&Grant::Denied, false, Some(true)),
            Some(ReasonCode::PortalRemoteDesktopDenied)
        );
        // Granted, yet the desktop gave the session no clipboard.
        assert_eq!(
            said(&Grant::Granted, false, Some(true)),
            Some(ReasonCode::CompositorUnsupported)
        );
    }

    #[test]
    fn the_running_deskhand_names_no_command_and_an_unneeded_layer_shell_is_no_problem() {
        use deskhand_protocol::doctor::ProbeStatus;
        let (ok, live) = kill_switch_says(&KillChord::Pending, true);
        assert!(!ok);
        assert!(!live.contains("deskhand serve"), "{live}");
        assert!(
            live.contains("once you have answered the desktop's dialogs"),
            "{live}"
        );
        let (_, separate) = kill_switch_says(&KillChord::Pending, false);
        assert!(separate.contains("the running deskhand"), "{separate}");
        let gnome = layer_shell_probe(true, Offers::default());
        assert_eq!(gnome.status, ProbeStatus::Ok, "{gnome:?}");
        assert!(gnome.message.starts_with("not needed"), "{gnome:?}");
        let bare = layer_shell_probe(false, Offers::default());
        assert_eq!(bare.status, ProbeStatus::Warn, "{bare:?}");
    }
}
