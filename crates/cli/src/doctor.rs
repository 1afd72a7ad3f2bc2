//! `deskhand doctor`: what works here and what to fix, for people (exit 0
//! when every requested capability is ready, 78 when one lacks what it
//! needs) and, with `--json`, the schema-v2 report of the driver contract
//! (exit 0 ready, 1 not ready). It never touches the network and never
//! prompts.

use clap::{Args, ValueEnum};
use deskhand_host::doctor::report;
use deskhand_protocol::doctor::{
    Availability, CapabilityName, DoctorReport, NextStep, ProbeStatus, ReasonCode, backends_ready,
    listed_available,
};

/// Exit status when a requested capability lacks what it needs (EX_CONFIG).
pub const EXIT_NOT_READY: i32 = 78;

/// Capabilities a caller can ask the doctor about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Wanted {
    /// Screenshots.
    Screenshot,
    /// Synthetic pointer and keyboard.
    Input,
    /// Listing and focusing windows.
    Windows,
    /// Reading windows' accessibility trees and acting on their elements
    /// (AT-SPI). Not in the default: screenshots and input work without
    /// an accessibility bus.
    Accessibility,
}

/// Arguments of `deskhand doctor`.
#[derive(Debug, Args)]
pub struct DoctorArgs {
    /// The schema-v2 JSON report instead of the human one.
    #[arg(long)]
    json: bool,
    /// Print the report's JSON schema and exit.
    #[arg(long)]
    schema: bool,
    /// Desktop to check: an X display, or a Wayland one such as
    /// `wayland-0` (default: this session's).
    #[arg(long)]
    display: Option<String>,
    /// Capabilities that must be ready for exit status 0.
    #[arg(long = "require", value_enum, default_values_t = [Wanted::Screenshot, Wanted::Input])]
    require: Vec<Wanted>,
}

/// Whether a wanted capability has what it needs, by the rule of the
/// JSON report's `ready` (the required backends available, and the
/// capabilities it needs that the report lists): the default wants
/// (screenshots and input) are ready exactly when the JSON says ready.
fn wanted_ready(r: &DoctorReport, want: Wanted) -> bool {
    use CapabilityName as C;
    match want {
        Wanted::Screenshot | Wanted::Windows => {
            backends_ready(&r.backends) && listed_available(&r.capabilities, &[C::CaptureWindow])
        }
        Wanted::Input => {
            r.capability(C::InputTakeover) == Some(Availability::Available)
                && listed_available(
                    &r.capabilities,
                    &[C::TakeoverIndicator, C::TakeoverHandback],
                )
        }
        Wanted::Accessibility => [C::ReadTree, C::ActSemantic]
            .into_iter()
            .all(|c| r.capability(c) == Some(Availability::Available)),
    }
}

/// Runs the doctor; returns the exit status.
pub fn run(args: DoctorArgs) -> anyhow::Result<i32> {
    if args.schema {
        let schema = deskhand_protocol::doctor::json_schema();
        println!("{}", serde_json::to_string_pretty(&schema)?);
        return Ok(0);
    }
    let r = report(args.display.as_deref());
    if args.json {
        println!("{}", serde_json::to_string_pretty(&r)?);
        return Ok(if r.ready { 0 } else { 1 });
    }
    print!("{}", human(&r, &args.require));
    let all = args.require.iter().all(|w| wanted_ready(&r, *w));
    Ok(if all { 0 } else { EXIT_NOT_READY })
}

/// A reason code as the report spells it.
fn code(reason: ReasonCode) -> String {
    serde_json::to_value(reason)
        .ok()
        .and_then(|v| v.as_str().map(str::to_owned))
        .unwrap_or_default()
}

/// What a next step is about: its backend, else its permission, else
/// the capabilities it explains.
fn subject(step: &NextStep) -> String {
    match (&step.backend, &step.permission) {
        (Some(b), _) => b.clone(),
        (None, Some(p)) => p.clone(),
        (None, None) => step
            .capabilities
            .iter()
            .map(|c| {
                serde_json::to_value(c)
                    .ok()
                    .and_then(|v| v.as_str().map(str::to_owned))
                    .unwrap_or_default()
            })
            .collect::<Vec<_>>()
            .join(", "),
    }
}

/// The report for people: the probes, the backends, whether each wanted
/// capability is ready, then what to do.
fn human(r: &DoctorReport, require: &[Wanted]) -> String {
    let mut out = String::new();
    for p in &r.probes {
        let mark = match p.status {
            ProbeStatus::Ok => "✓",
            ProbeStatus::Warn => "⚠",
            ProbeStatus::Fail => "✗",
        };
        out += &format!("{mark} {}: {}\n", p.label, p.message);
    }
    for b in r
        .backends
        .iter()
        .filter(|b| b.status != Availability::Planned)
    {
        let ok = b.status == Availability::Available;
        let mark = match (ok, b.required) {
            (true, _) => "✓",
            (false, true) => "✗",
            (false, false) => "⚠",
        };
        let why = b.reason_code.map(|c| format!(" ({})", code(c)));
        let need = if b.required { "required" } else { "optional" };
        let status = serde_json::to_value(b.status).unwrap_or_default();
        let status = status.as_str().unwrap_or_default();
        out += &format!(
            "{mark} backend {} ({need}): {status}{}\n",
            b.id,
            why.unwrap_or_default()
        );
    }
    for want in require {
        let ok = wanted_ready(r, *want);
        let (mark, state) = if ok {
            ("✓", "ready")
        } else {
            ("✗", "not ready")
        };
        out += &format!("{mark} {want:?}: {state}\n");
    }
    for step in &r.next_steps {
        out += &format!(
            "→ {} ({}): {}\n",
            subject(step),
            code(step.reason_code),
            step.action
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use deskhand_engine::accessibility::{BusProblem, BusStatus};
    use deskhand_host::doctor::assemble;
    use deskhand_platform::doctor::{
        BackendFindings, Platform, accessibility_findings, linux_findings,
    };
    use deskhand_protocol::doctor::{
        BackendEntry, CapabilityEntry, ConsentKind, DoctorReport, GrantStatus, Probe, SessionType,
        Verdict,
    };

    /// An X11 display with everything deskhand needs.
    fn x11_fine() -> BackendFindings {
        BackendFindings {
            session_type: Some(SessionType::X11),
            backends: vec![BackendEntry::new("x11", true, Verdict::AVAILABLE)],
            capabilities: vec![CapabilityEntry::new(
                CapabilityName::InputTakeover,
                Verdict::AVAILABLE,
                ConsentKind::Takeover,
            )],
            permissions: vec![],
            probes: vec![Probe::new("display server", true, "X11 :9 (test)")],
        }
    }

    /// X11 with no display to reach.
    fn nothing_found() -> BackendFindings {
        let unreachable = Verdict::unavailable(ReasonCode::DisplayUnreachable);
        BackendFindings {
            session_type: Some(SessionType::None),
            backends: vec![BackendEntry::new("x11", true, unreachable)],
            capabilities: vec![CapabilityEntry::new(
                CapabilityName::InputTakeover,
                unreachable,
                ConsentKind::Takeover,
            )],
            ..BackendFindings::default()
        }
    }

    fn down(problem: BusProblem) -> BackendFindings {
        accessibility_findings(&BusStatus::Unavailable {
            problem,
            detail: "session bus: no address".into(),
        })
    }

    /// The Linux report of these findings.
    fn linux(x11: BackendFindings, a11y: BackendFindings) -> DoctorReport {
        assemble(Platform::Linux, linux_findings(x11, a11y), vec![])
    }

    #[test]
    fn no_accessibility_bus_leaves_screenshots_and_input_ready() {
        let r = linux(x11_fine(), down(BusProblem::NotAdvertised));
        assert!(r.ready && r.ok, "atspi is not required");
        assert!(wanted_ready(&r, Wanted::Screenshot) && wanted_ready(&r, Wanted::Input));
        assert!(!wanted_ready(&r, Wanted::Accessibility));
        assert_eq!(r.next_steps.len(), 1, "{:?}", r.next_steps);
        let step = &r.next_steps[0];
        assert_eq!(step.reason_code, ReasonCode::AtspiBusNotAdvertised);
        assert_eq!(step.backend.as_deref(), Some("atspi"));
        assert_eq!(step.permission.as_deref(), Some("accessibility"));
        assert!(!step.required);
        assert!(step.action.starts_with("Turn on assistive technologies"));
        assert_eq!(
            r.capability(CapabilityName::ReadTree),
            Some(Availability::Unavailable)
        );
    }

    #[test]
    fn a_bus_that_answers_has_no_step_and_accessibility_is_ready() {
        let r = linux(x11_fine(), accessibility_findings(&BusStatus::Ok));
        assert!(r.ready && r.next_steps.is_empty(), "{:?}", r.next_steps);
        assert!(wanted_ready(&r, Wanted::Accessibility));
        let atspi = r.backends.iter().find(|b| b.id == "atspi").expect("listed");
        assert_eq!(atspi.status, Availability::Available);
        let perm = r
            .permissions
            .iter()
            .find(|p| p.name == "accessibility")
            .expect("listed");
        assert_eq!(
            (perm.name.as_str(), perm.status),
            ("accessibility", GrantStatus::Granted)
        );
    }

    #[test]
    fn one_step_per_distinct_reason() {
        let r = linux(nothing_found(), down(BusProblem::Unreachable));
        assert!(!r.ready);
        let steps: Vec<_> = r
            .next_steps
            .iter()
            .map(|s| (s.reason_code, s.backend.as_deref(), s.required))
            .collect();
        assert_eq!(
            steps,
            [
                (ReasonCode::DisplayUnreachable, Some("x11"), true),
                (ReasonCode::AtspiBusUnreachable, Some("atspi"), false),
            ]
        );
    }

    /// What the Windows backend finds under Wine: everything but UI
    /// Automation (`indicator` says whether the overlay was found).
    fn windows(indicator: bool) -> DoctorReport {
        let on = Verdict::AVAILABLE;
        let overlay = match indicator {
            true => on,
            false => Verdict::unavailable(ReasonCode::IndicatorNotFound),
        };
        let no_uia = Verdict::unavailable(ReasonCode::NoPlatformApi);
        let found = BackendFindings {
            session_type: None,
            backends: vec![BackendEntry::new("windows", true, on)],
            capabilities: vec![
                CapabilityEntry::new(CapabilityName::CaptureWindow, on, ConsentKind::Session),
                CapabilityEntry::new(CapabilityName::InputTakeover, on, ConsentKind::Takeover),
                CapabilityEntry::new(
                    CapabilityName::TakeoverIndicator,
                    overlay,
                    ConsentKind::Takeover,
                ),
                CapabilityEntry::new(CapabilityName::TakeoverHandback, on, ConsentKind::Takeover),
                CapabilityEntry::new(CapabilityName::ReadTree, no_uia, ConsentKind::Session),
            ],
            permissions: vec![],
            probes: vec![],
        };
        assemble(Platform::Windows, found, vec![])
    }

    #[test]
    fn the_human_doctor_is_ready_exactly_when_the_json_says_ready() {
        let defaults = [Wanted::Screenshot, Wanted::Input];
        for r in [
            windows(true),
            windows(false),
            linux(x11_fine(), down(BusProblem::NotAdvertised)),
            linux(nothing_found(), down(BusProblem::Unreachable)),
        ] {
            let human = defaults.iter().all(|w| wanted_ready(&r, *w));
            assert_eq!(human, r.ready, "{:?} {:?}", r.platform, r.capabilities);
        }
        // On Windows screenshots and input are ready (the attack run saw
        // "Screenshot: not ready" and exit 78 here).
        let text = human(&windows(true), &defaults);
        assert!(text.contains("✓ Screenshot: ready"), "{text}");
        assert!(text.contains("✓ Input: ready"), "{text}");
        assert!(!wanted_ready(&windows(false), Wanted::Input));
    }

    #[test]
    fn every_step_names_what_it_is_about() {
        let mut found = x11_fine();
        found.capabilities.push(CapabilityEntry::new(
            CapabilityName::ClipboardRead,
            Verdict::unavailable(ReasonCode::CompositorUnsupported),
            ConsentKind::Separate,
        ));
        let r = linux(found, accessibility_findings(&BusStatus::Ok));
        assert!(r.ready, "the clipboard is not needed for ready");
        let text = human(&r, &[Wanted::Screenshot]);
        assert!(
            text.contains("→ clipboard_read (compositor_unsupported): "),
            "{text}"
        );
        assert!(!text.contains("→ -"), "{text}");
    }

    #[test]
    fn the_human_report_shows_the_entry_and_what_to_do() {
        let r = linux(x11_fine(), down(BusProblem::NotAdvertised));
        let text = human(&r, &[Wanted::Screenshot, Wanted::Accessibility]);
        assert!(
            text.contains("⚠ accessibility bus: not advertised: session bus: no address"),
            "{text}"
        );
        assert!(
            text.contains("⚠ backend atspi (optional): unavailable (atspi_bus_not_advertised)"),
            "{text}"
        );
        assert!(text.contains("✓ Screenshot: ready"), "{text}");
        assert!(text.contains("✗ Accessibility: not ready"), "{text}");
        assert!(
            text.contains("→ atspi (atspi_bus_not_advertised): Turn on assistive technologies"),
            "{text}"
        );
        assert!(
            !text.contains("wayland-portal"),
            "planned backends are left out"
        );
    }
}
