//! What a backend tells the doctor: its registry entries, the
//! capabilities it provides with their verdicts, the permissions it needs
//! and probe lines for people. Each backend fills one from its own checks;
//! the platform crate merges those of the backends it opens, and the host
//! adds its own probes and makes the report.

use deskhand_protocol::doctor::{
    BackendEntry, CapabilityEntry, PermissionEntry, Probe, SessionType,
};

/// One backend's (or several merged backends') part of a doctor report.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct BackendFindings {
    /// The session found, when this backend can tell.
    pub session_type: Option<SessionType>,
    /// The registry entries (the backend's own, and planned ones).
    pub backends: Vec<BackendEntry>,
    /// The capabilities, each with its verdict.
    pub capabilities: Vec<CapabilityEntry>,
    /// The OS permissions it needs.
    pub permissions: Vec<PermissionEntry>,
    /// Lines for people.
    pub probes: Vec<Probe>,
}

impl BackendFindings {
    /// These findings followed by `other`'s (the first session type found
    /// stands).
    #[must_use]
    pub fn merge(mut self, other: Self) -> Self {
        self.session_type = self.session_type.or(other.session_type);
        self.backends.extend(other.backends);
        self.capabilities.extend(other.capabilities);
        self.permissions.extend(other.permissions);
        self.probes.extend(other.probes);
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use deskhand_protocol::doctor::Verdict;

    #[test]
    fn a_merge_keeps_both_in_order_and_the_first_session() {
        let a = BackendFindings {
            session_type: Some(SessionType::X11),
            backends: vec![BackendEntry::new("a", true, Verdict::AVAILABLE)],
            probes: vec![Probe::new("one", true, "ok")],
            ..BackendFindings::default()
        };
        let b = BackendFindings {
            session_type: Some(SessionType::Wayland),
            backends: vec![BackendEntry::new("b", false, Verdict::AVAILABLE)],
            probes: vec![Probe::new("two", true, "ok")],
            ..BackendFindings::default()
        };
        let m = a.merge(b);
        assert_eq!(m.session_type, Some(SessionType::X11));
        let ids: Vec<_> = m.backends.iter().map(|e| e.id.as_str()).collect();
        assert_eq!(ids, ["a", "b"]);
        let names: Vec<_> = m.probes.iter().map(|p| p.label.as_str()).collect();
        assert_eq!(names, ["one", "two"]);
    }
}
