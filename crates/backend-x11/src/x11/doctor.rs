//! What the X11 backend can do on a display, as the doctor reports it:
//! the backend's entry and its capabilities, each with its reason when not
//! available, and the probe lines for people. Decided from a
//! [`DisplayProbe`] only; nothing is changed. The accessibility permission
//! is not decided here: the AT-SPI backend's bus check is its one source
//! (the platform crate merges the two).

use deskhand_backend::BackendFindings;
use deskhand_backend::overlay_process::find_overlay;
use deskhand_protocol::doctor::{
    Availability, BackendEntry, CapabilityEntry, CapabilityName, ConsentKind, GrantStatus,
    PermissionEntry, Probe, ReasonCode, SessionType, Verdict,
};

use super::probe::{DisplayProbe, probe};

/// Looks at `display` (none: no display found); `wayland` when the
/// session is a Wayland one.
pub fn x11_findings(display: Option<&str>, wayland: bool) -> BackendFindings {
    let probed = display.map(|d| probe(d).map_err(|e| e.to_string()));
    let x = probed.as_ref().and_then(|p| p.as_ref().ok());
    let session_type = match (wayland, x) {
        (true, _) => SessionType::Wayland,
        (false, Some(_)) => SessionType::X11,
        (false, None) => SessionType::None,
    };
    let backend = match (wayland, x) {
        (true, _) => Verdict::unavailable(ReasonCode::WaylandSessionUnsupported),
        (false, Some(_)) => Verdict::AVAILABLE,
        (false, None) => Verdict::unavailable(ReasonCode::DisplayUnreachable),
    };
    let mut probes = vec![match &probed {
        Some(Ok(p)) => Probe::new(
            "display server",
            true,
            format!("X11 {} ({})", p.display, p.vendor),
        ),
        Some(Err(e)) => Probe::failed("display server", e.clone()),
        None => Probe::failed("display server", "no DISPLAY"),
    }];
    probes.push(Probe::new(
        "session type",
        session_type == SessionType::X11,
        format!("{session_type:?}").to_lowercase(),
    ));
    let usable = x.filter(|_| backend.is_available());
    if let Some(p) = x {
        probes.extend(display_probes(p));
    }
    BackendFindings {
        session_type: Some(session_type),
        backends: vec![BackendEntry::new("x11", true, backend)],
        capabilities: capabilities(usable, backend),
        permissions: vec![PermissionEntry::new(
            "screen_capture",
            GrantStatus::NotApplicable,
            None,
        )],
        probes,
    }
}

/// The verdicts of the capabilities, from what the display has (`None`:
/// the backend is not usable, for the reason `backend` gives).
fn capabilities(x: Option<&DisplayProbe>, backend: Verdict) -> Vec<CapabilityEntry> {
    let or_backend = |v: Verdict| if x.is_some() { v } else { backend };
    let ext = x.map(|p| p.extensions.clone()).unwrap_or_default();
    // Hand-back works, with X11's limit: XTEST sent through a real device
    // carries that device's id (see `handback_limit_probe`).
    let handback = or_backend(if ext.xinput.is_none_or(|v| v < (2, 1)) {
        Verdict::unavailable(ReasonCode::Xinput2Missing)
    } else {
        Verdict::because(
            Availability::Available,
            ReasonCode::XtestDeviceEventsLookReal,
        )
    });
    let indicator = or_backend(if !ext.composite {
        Verdict::unavailable(ReasonCode::CompositeMissing)
    } else if !find_overlay().is_some_and(|p| p.is_file()) {
        Verdict::unavailable(ReasonCode::IndicatorNotFound)
    } else {
        Verdict::AVAILABLE
    });
    // Synthetic input only within a takeover: XTEST, the indicator and
    // hand-back are all needed.
    let input = or_backend(if !ext.xtest {
        Verdict::unavailable(ReasonCode::XtestMissing)
    } else if !indicator.is_available() {
        indicator
    } else if handback.is_available() {
        Verdict::AVAILABLE
    } else {
        handback
    });
    // The CLIPBOARD selection exists on every X server; whether agents may
    // use it is the person's opt-in (`serve --enable-clipboard`).
    let present = or_backend(Verdict::AVAILABLE);
    use CapabilityName as C;
    use ConsentKind as K;
    vec![
        CapabilityEntry::new(C::CaptureWindow, present, K::Session),
        CapabilityEntry::new(C::InputTakeover, input, K::Takeover),
        CapabilityEntry::new(C::TakeoverIndicator, indicator, K::Takeover),
        CapabilityEntry::new(C::TakeoverHandback, handback, K::Takeover),
        CapabilityEntry::new(C::ClipboardRead, present, K::Separate),
        CapabilityEntry::new(C::ClipboardWrite, present, K::Session),
    ]
}

/// The lines for people about a display that answered.
fn display_probes(p: &DisplayProbe) -> Vec<Probe> {
    let ext = &p.extensions;
    let mut probes: Vec<Probe> = [
        ("XTEST", ext.xtest),
        ("MIT-SHM", ext.shm),
        ("Composite", ext.composite),
        ("RandR", ext.randr),
        ("XFIXES", ext.xfixes),
    ]
    .into_iter()
    .map(|(name, ok)| {
        Probe::new(
            &format!("extension {name}"),
            ok,
            if ok { "present" } else { "missing" },
        )
    })
    .collect();
    probes.push(Probe::new(
        "spare keycodes",
        p.spare_keycodes.is_some_and(|n| n > 0),
        match p.spare_keycodes {
            Some(0) => "none free: characters that no key produces cannot be typed (another program has mapped them all)".into(),
            Some(n) => format!("{n} free for characters that no key produces"),
            None => "the keymap could not be read".into(),
        },
    ));
    probes.push(Probe::new(
        "extension XInput",
        ext.xinput.is_some_and(|v| v >= (2, 1)),
        ext.xinput
            .map_or("missing".into(), |(a, b)| format!("{a}.{b}")),
    ));
    probes.push(Probe::new(
        "window manager",
        p.window_manager.is_some(),
        p.window_manager
            .clone()
            .unwrap_or_else(|| "none announced".into()),
    ));
    probes.push(Probe::new(
        "clipboard",
        true,
        "the X11 CLIPBOARD selection: agents use it only while the clipboard is on in deskhand's \
         settings (reading what other apps copied is a choice of its own)",
    ));
    probes.push(handback_limit_probe());
    let overlay = find_overlay();
    probes.push(Probe::new(
        "takeover indicator",
        overlay.is_some(),
        match &overlay {
            Some(path) => format!(
                "{} (kill switch: ctrl+alt+Escape by default)",
                path.display()
            ),
            None => "deskhand-overlay not found next to deskhand, on PATH or in $DESKHAND_OVERLAY"
                .into(),
        },
    ));
    probes
}

/// What X11 cannot tell: a warning for people, said plainly.
fn handback_limit_probe() -> Probe {
    Probe::new(
        "real-device clicks",
        false,
        "X11 cannot tell a program that sends XTEST through your real mouse or keyboard \
         (XTestFakeDeviceButtonEvent) from your hand: such a click on Continue or in the \
         consent dialog counts as yours. XTEST pointers of every master (xdotool, a master \
         another program adds) are told apart; macOS and Windows mark injected input",
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::x11::probe::Extensions;

    fn display(ext: Extensions) -> DisplayProbe {
        DisplayProbe {
            display: ":9".into(),
            vendor: "test".into(),
            extensions: ext,
            window_manager: None,
            spare_keycodes: Some(8),
        }
    }

    fn status(
        caps: &[CapabilityEntry],
        name: CapabilityName,
    ) -> (Availability, Option<ReasonCode>) {
        let c = caps.iter().find(|c| c.name == name).expect("listed");
        (c.status, c.reason_code)
    }

    #[test]
    fn input_needs_xtest_and_hand_back_needs_xinput_2_1() {
        let full = Extensions {
            xtest: true,
            xinput: Some((2, 3)),
            shm: true,
            composite: true,
            randr: true,
            xfixes: true,
        };
        let no_xtest = display(Extensions {
            xtest: false,
            ..full.clone()
        });
        let caps = capabilities(Some(&no_xtest), Verdict::AVAILABLE);
        assert_eq!(
            status(&caps, CapabilityName::InputTakeover),
            (Availability::Unavailable, Some(ReasonCode::XtestMissing))
        );
        let old_xi = display(Extensions {
            xinput: Some((2, 0)),
            ..full
        });
        let caps = capabilities(Some(&old_xi), Verdict::AVAILABLE);
        assert_eq!(
            status(&caps, CapabilityName::TakeoverHandback),
            (Availability::Unavailable, Some(ReasonCode::Xinput2Missing))
        );
    }

    #[test]
    fn hand_back_is_available_with_the_limit_x11_has() {
        let full = display(Extensions {
            xtest: true,
            xinput: Some((2, 3)),
            shm: true,
            composite: true,
            randr: true,
            xfixes: true,
        });
        let caps = capabilities(Some(&full), Verdict::AVAILABLE);
        assert_eq!(
            status(&caps, CapabilityName::TakeoverHandback),
            (
                Availability::Available,
                Some(ReasonCode::XtestDeviceEventsLookReal)
            )
        );
        let limit = handback_limit_probe();
        assert_ne!(limit.status, deskhand_protocol::doctor::ProbeStatus::Ok);
        assert!(limit.message.contains("cannot tell"));
    }

    #[test]
    fn without_a_display_everything_says_why() {
        let f = x11_findings(None, false);
        assert_eq!(f.session_type, Some(SessionType::None));
        assert_eq!(
            f.backends[0].reason_code,
            Some(ReasonCode::DisplayUnreachable)
        );
        assert!(
            f.capabilities
                .iter()
                .all(|c| c.reason_code == Some(ReasonCode::DisplayUnreachable))
        );
        let w = x11_findings(None, true);
        assert_eq!(
            w.backends[0].reason_code,
            Some(ReasonCode::WaylandSessionUnsupported)
        );
    }
}
