//! The AT-SPI part of the doctor report: the `atspi` backend, the
//! `read_tree` and `act_semantic` capabilities, the `accessibility`
//! permission and a probe line, all decided from one bus check (the AT-SPI
//! backend's
//! [`bus_status`](deskhand_backend::accessibility::Accessibility::bus_status)),
//! so they never disagree.
//!
//! The backend is not required: screenshots and input work without an
//! accessibility bus (a headless virtual desktop often has none), so its
//! absence does not make the report not ready. `doctor --require
//! accessibility` asks for it explicitly.

use deskhand_backend::BackendFindings;
use deskhand_backend::accessibility::{BusProblem, BusStatus};
use deskhand_protocol::doctor::{
    BackendEntry, CapabilityEntry, CapabilityName, ConsentKind, GrantStatus, PermissionEntry,
    Probe, ReasonCode, Verdict,
};

/// The registry id of the backend.
pub const BACKEND_ID: &str = "atspi";

/// Whether `atspi` is a required backend (see the module's doc).
pub const REQUIRED: bool = false;

/// Asks the accessibility bus whether it answers, as the AT-SPI backend
/// would use it (bounded: at most about 8 s, at once without a session
/// bus). A backend that cannot even start counts as an unreachable bus.
pub fn bus_status() -> BusStatus {
    match crate::open(&crate::AtspiOptions::default()) {
        Ok(backend) => backend.bus_status(),
        Err(e) => BusStatus::Unavailable {
            problem: BusProblem::Unreachable,
            detail: e.to_string(),
        },
    }
}

/// The contract's reason code of a bus problem.
pub fn reason(problem: BusProblem) -> ReasonCode {
    match problem {
        BusProblem::NotAdvertised => ReasonCode::AtspiBusNotAdvertised,
        BusProblem::Unreachable => ReasonCode::AtspiBusUnreachable,
    }
}

/// What the report says for a bus in state `status`: the `atspi`
/// backend entry, `read_tree` and `act_semantic`, the `accessibility`
/// permission and a probe line with what failed.
pub fn findings(status: &BusStatus) -> BackendFindings {
    let (verdict, grant, why, probe) = match status {
        BusStatus::Ok => (
            Verdict::AVAILABLE,
            GrantStatus::Granted,
            None,
            Probe::new("accessibility bus", true, "AT-SPI answers"),
        ),
        BusStatus::Unavailable { problem, detail } => {
            let why = reason(*problem);
            let what = match problem {
                BusProblem::NotAdvertised => "not advertised",
                BusProblem::Unreachable => "advertised but not answering",
            };
            (
                Verdict::unavailable(why),
                GrantStatus::Missing,
                Some(why),
                Probe::new("accessibility bus", false, format!("{what}: {detail}")),
            )
        }
    };
    BackendFindings {
        session_type: None,
        backends: vec![BackendEntry::new(BACKEND_ID, REQUIRED, verdict)],
        capabilities: [CapabilityName::ReadTree, CapabilityName::ActSemantic]
            .into_iter()
            .map(|name| CapabilityEntry::new(name, verdict, ConsentKind::Session))
            .collect(),
        permissions: vec![PermissionEntry::new("accessibility", grant, why)],
        probes: vec![probe],
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use deskhand_protocol::doctor::{Availability, ProbeStatus};

    fn down(problem: BusProblem) -> BusStatus {
        BusStatus::Unavailable {
            problem,
            detail: "org.a11y.Bus.GetAddress: no such name".into(),
        }
    }

    #[test]
    fn a_bus_that_answers_makes_everything_available() {
        let f = findings(&BusStatus::Ok);
        assert_eq!(f.backends[0].id, "atspi");
        assert_eq!(f.backends[0].status, Availability::Available);
        assert_eq!(
            (f.backends[0].reason_code, &f.backends[0].action),
            (None, &None)
        );
        let names: Vec<_> = f.capabilities.iter().map(|c| c.name).collect();
        assert_eq!(
            names,
            [CapabilityName::ReadTree, CapabilityName::ActSemantic]
        );
        for c in &f.capabilities {
            assert_eq!((c.status, c.reason_code), (Availability::Available, None));
            assert_eq!(c.consent, ConsentKind::Session);
        }
        assert_eq!(f.permissions[0].status, GrantStatus::Granted);
        assert_eq!(f.probes[0].status, ProbeStatus::Ok);
    }

    #[test]
    fn each_bus_problem_gives_its_reason_and_advice_everywhere() {
        for (problem, code, advice) in [
            (
                BusProblem::NotAdvertised,
                "atspi_bus_not_advertised",
                "Turn on assistive technologies",
            ),
            (
                BusProblem::Unreachable,
                "atspi_bus_unreachable",
                "advertised but does not answer",
            ),
        ] {
            let f = findings(&down(problem));
            let why = Some(reason(problem));
            assert_eq!(serde_json::to_value(why).expect("json"), code);
            assert_eq!(problem.reason_code(), code, "the engine's code agrees");
            assert_eq!(f.backends[0].status, Availability::Unavailable);
            assert_eq!(f.backends[0].reason_code, why);
            let action = f.backends[0].action.as_deref().expect("an action");
            assert!(action.contains(advice), "{action}");
            for c in &f.capabilities {
                assert_eq!((c.status, c.reason_code), (Availability::Unavailable, why));
            }
            assert_eq!(f.permissions[0].status, GrantStatus::Missing);
            assert_eq!(f.permissions[0].reason_code, why);
            assert_eq!(f.probes[0].status, ProbeStatus::Warn);
            assert!(
                f.probes[0].message.contains("no such name"),
                "the detail is shown"
            );
        }
    }

    #[test]
    fn the_backend_is_not_required() {
        assert!(!findings(&down(BusProblem::NotAdvertised)).backends[0].required);
    }
}
