//! What the person can do about each reason, worded for who reads the
//! report: the app's Doctor window or the command line.

use super::ReasonCode;

/// Who reads a report: its advice is worded for them. The one place the
/// doctor tells the app's Doctor window from the command line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Reader {
    /// The person, in the app's Doctor window, which has its own "Run
    /// again" and "Retry the backend" buttons and a Settings window.
    Window,
    /// Whoever runs `deskhand doctor`, or asks MCP's `health_report`.
    #[default]
    Command,
}

impl ReasonCode {
    /// What the person can do about it, in plain words, as `deskhand
    /// doctor` says it.
    pub fn action(self) -> Option<&'static str> {
        self.advice(Reader::Command)
    }

    /// Whether the reason is the person's own choice, not a fault: it
    /// gets no next step.
    pub fn is_choice(self) -> bool {
        self == Self::ClipboardOff
    }

    /// What `reader` can do about it: the Doctor window points at its own
    /// buttons and the Settings window, and names no command of deskhand's.
    pub fn advice(self, reader: Reader) -> Option<&'static str> {
        match reader {
            Reader::Window => self.window_advice().or_else(|| self.command_advice()),
            Reader::Command => self.command_advice(),
        }
    }

    /// The Doctor window's words, where they differ from the command's.
    fn window_advice(self) -> Option<&'static str> {
        Some(match self {
            Self::DisplayUnreachable => {
                "deskhand could not reach your desktop: start deskhand from inside your desktop session, then press Retry the backend."
            }
            Self::IndicatorNotFound => {
                "Reinstall deskhand: its package puts the red-frame program (deskhand-overlay) beside deskhand. Without it no agent can take over. Then press Retry the backend."
            }
            Self::AtspiBusUnreachable => {
                "The accessibility service is on but does not answer: sign out and in again, then press Run again."
            }
            Self::PortalUnavailable => {
                "Install xdg-desktop-portal and your desktop's portal (xdg-desktop-portal-gnome or -kde), sign out and in again, then press Retry the backend."
            }
            Self::PortalScreencastDenied => {
                "Press Retry the backend and choose Share in the desktop's screen-sharing dialog."
            }
            Self::PortalRemoteDesktopDenied => {
                "Press Retry the backend and allow remote interaction in the desktop's dialog (the switch is off by default)."
            }
            Self::ShellExtensionMissing => {
                "Enable deskhand's GNOME Shell extension with `gnome-extensions enable deskhand@deskhand.dev`, then sign out and in again: it draws the red frame, without which no agent can take over."
            }
            Self::ClipboardOff => {
                "Agents may not use the clipboard: turn it on in Settings if they should copy and paste."
            }
            _ => return None,
        })
    }

    /// The command's words (and the Doctor window's where they agree).
    fn command_advice(self) -> Option<&'static str> {
        Some(match self {
            Self::DisplayUnreachable => {
                "Run deskhand inside your desktop session, or start it with `deskhand serve --virtual` to get a virtual desktop."
            }
            Self::WaylandSessionUnsupported => {
                "deskhand drives this Wayland session's X11 apps only, through XWayland: its Wayland backend takes over GNOME sessions so far. Log in to GNOME, or to an X11 session (\"Ubuntu on Xorg\" or similar at the login screen)."
            }
            Self::XtestMissing => {
                "Enable the XTEST extension of your X server (it is on by default; check xorg.conf for Option \"XTEST\" \"off\")."
            }
            Self::Xinput2Missing => {
                "Use an X server with XInput 2.1 or newer (any current Xorg or Xvfb)."
            }
            Self::CompositeMissing => {
                "Enable the Composite extension of your X server (it is on by default)."
            }
            Self::IndicatorNotFound => {
                "Reinstall deskhand: its package puts the red-frame program (deskhand-overlay) beside deskhand. Without it no agent can take over. If you keep it elsewhere, set DESKHAND_OVERLAY to its path."
            }
            Self::AtspiBusNotAdvertised => {
                "Turn on assistive technologies in your desktop's accessibility settings (or start at-spi-bus-launcher), then sign out and in again."
            }
            Self::AtspiBusUnreachable => {
                "The accessibility bus is advertised but does not answer: sign out and in again (or restart at-spi-bus-launcher), then run `deskhand doctor` again."
            }
            Self::NotBuilt => "This part of deskhand is not built yet; a later version adds it.",
            Self::WaylandPortalNotBuilt => {
                "The Wayland portals backend is planned; use an X11 session for now."
            }
            Self::XtestDeviceEventsLookReal => {
                "X11 cannot tell a program that clicks through your real mouse with XTEST from your hand: run programs you do not trust as untrusted X clients (ssh -X, `xauth generate ... untrusted`: no XTEST), or in another X session; deskhand's own launches and XTEST pointers of every master are told apart."
            }
            Self::PortalUnavailable => {
                "Install xdg-desktop-portal and your desktop's portal (xdg-desktop-portal-gnome or -kde), then sign out and in again."
            }
            Self::PortalPending => {
                "Answer the desktop's dialog that asks to share the screen or to allow remote interaction."
            }
            Self::PortalScreencastDenied => {
                "Restart deskhand and choose Share in the desktop's screen-sharing dialog."
            }
            Self::PortalRemoteDesktopDenied => {
                "Restart deskhand and allow remote interaction in the desktop's dialog (the switch is off by default)."
            }
            Self::PortalScreenshotDenied => {
                "Allow deskhand to take screenshots in the desktop's privacy settings, then try again."
            }
            Self::CompositorUnsupported => {
                "This Wayland desktop offers deskhand no way to do this; log in to an X11 session for it."
            }
            Self::ShellExtensionMissing => {
                "Enable deskhand's GNOME Shell extension with `gnome-extensions enable deskhand@deskhand.dev` and sign out and in again (GNOME 43 to 49; deskhand's packages install it, from source run `installers/linux/gnome-shell/make-extension OUT` and copy `OUT/45/deskhand@deskhand.dev`, or `OUT/43/…` for GNOME 43 and 44, into ~/.local/share/gnome-shell/extensions): it draws the red frame, without which no agent can take over."
            }
            Self::ClipboardOff => {
                "The clipboard is off in deskhand's settings (`clipboard.enabled`, or `deskhand serve --enable-clipboard`): turn it on if agents should copy and paste."
            }
            Self::NoPlatformApi => return None,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::super::*;

    /// Every reason code, as the schema lists them.
    fn every_reason() -> Vec<ReasonCode> {
        let schema = json_schema();
        let defs = schema
            .get("$defs")
            .or_else(|| schema.get("definitions"))
            .expect("definitions");
        let codes: Vec<ReasonCode> = defs["ReasonCode"]["oneOf"]
            .as_array()
            .expect("one of")
            .iter()
            .filter_map(|v| {
                v.get("const")
                    .or_else(|| v.get("enum").and_then(|e| e.get(0)))
            })
            .map(|c| serde_json::from_value(c.clone()).expect("a reason code"))
            .collect();
        assert!(codes.contains(&ReasonCode::ClipboardOff), "{codes:?}");
        codes
    }

    #[test]
    fn the_window_points_at_its_own_buttons_and_names_no_command_of_deskhands() {
        for reason in every_reason() {
            let Some(words) = reason.advice(Reader::Window) else {
                continue;
            };
            for developer in [
                "deskhand serve",
                "deskhand doctor",
                "health_report",
                "estart deskhand",
                "DESKHAND_",
                "installers/",
            ] {
                assert!(!words.contains(developer), "{reason:?}: {words}");
            }
        }
        for denied in [
            ReasonCode::PortalScreencastDenied,
            ReasonCode::PortalRemoteDesktopDenied,
        ] {
            let window = denied.advice(Reader::Window).expect("advice");
            assert!(window.starts_with("Press Retry the backend"), "{window}");
            let command = denied.action().expect("advice");
            assert!(command.starts_with("Restart deskhand"), "{command}");
        }
        let again = ReasonCode::AtspiBusUnreachable.advice(Reader::Window);
        assert!(again.is_some_and(|w| w.ends_with("press Run again.")));
    }

    fn clipboard(verdict: Verdict) -> Findings {
        Findings {
            platform: Platform::Linux,
            session_type: SessionType::X11,
            backends: vec![BackendEntry::new("x11", true, Verdict::AVAILABLE)],
            capabilities: [
                CapabilityName::ClipboardRead,
                CapabilityName::ClipboardWrite,
            ]
            .into_iter()
            .map(|name| CapabilityEntry::new(name, verdict, ConsentKind::Session))
            .collect(),
            permissions: Vec::new(),
            probes: Vec::new(),
        }
    }

    fn clipboard_says(r: &DoctorReport) -> Vec<(Availability, Option<ReasonCode>)> {
        r.capabilities
            .iter()
            .map(|c| (c.status, c.reason_code))
            .collect()
    }

    #[test]
    fn the_clipboard_says_one_thing_per_state_and_the_persons_choice_is_no_step() {
        let offered = DoctorReport::assemble(clipboard(Verdict::AVAILABLE), "1");
        let off = offered.clone().for_window(false);
        let off_said = (Availability::Unavailable, Some(ReasonCode::ClipboardOff));
        assert_eq!(clipboard_says(&off), [off_said, off_said]);
        assert!(
            off.ready && off.next_steps.is_empty(),
            "{:?}",
            off.next_steps
        );
        assert!(
            off.capabilities[0]
                .action
                .as_deref()
                .is_some_and(|a| a.contains("turn it on in Settings")),
            "{:?}",
            off.capabilities[0]
        );
        let on = offered.for_window(true);
        assert_eq!(
            clipboard_says(&on),
            [
                (Availability::Available, None),
                (Availability::Available, None)
            ]
        );
        // A desktop that offers none says so whatever the settings: turning
        // it on would not help.
        let none = Verdict::unavailable(ReasonCode::CompositorUnsupported);
        let r = DoctorReport::assemble(clipboard(none), "1").for_window(false);
        let said = (
            Availability::Unavailable,
            Some(ReasonCode::CompositorUnsupported),
        );
        assert_eq!(clipboard_says(&r), [said, said]);
        assert_eq!(r.next_steps.len(), 1);
    }

    #[test]
    fn the_windows_report_rewords_every_advice_and_its_steps() {
        let denied = Verdict::unavailable(ReasonCode::PortalScreencastDenied);
        let found = Findings {
            platform: Platform::Linux,
            session_type: SessionType::Wayland,
            backends: vec![BackendEntry::new("wayland-portal", true, denied)],
            capabilities: vec![CapabilityEntry::new(
                CapabilityName::CaptureWindow,
                denied,
                ConsentKind::Session,
            )],
            permissions: Vec::new(),
            probes: Vec::new(),
        };
        let command = DoctorReport::assemble(found, "1");
        assert!(command.next_steps[0].action.starts_with("Restart deskhand"));
        let window = command.for_window(true);
        let retry = ReasonCode::PortalScreencastDenied.advice(Reader::Window);
        assert_eq!(window.backends[0].action.as_deref(), retry);
        assert_eq!(window.capabilities[0].action.as_deref(), retry);
        assert_eq!(window.next_steps.len(), 1);
        assert_eq!(Some(window.next_steps[0].action.as_str()), retry);
    }
}
