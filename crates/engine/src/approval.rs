//! Approval of computer-tool calls (the computer-tool spec's "Approval and
//! safety"): the person's approval mode says whether a call's reads and
//! input run, are asked about, or are refused. A question goes to the
//! host (the control pipe of `deskhand serve`, later the tray app's
//! dialog) as an event and waits for its answer; with no person to ask it
//! fails closed. A provider's safety checks always need the person's
//! answer: no mode, flag or earlier approval stands in for it.

use std::collections::HashMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use serde_json::json;
use tokio::sync::oneshot;

use crate::error::EngineError;
use crate::takeover::TakeoverEvent;
use crate::{Engine, Session};

/// How long a question waits for the person before it counts as denied.
pub const ANSWER_TIMEOUT: Duration = Duration::from_secs(60);
/// Longest text of a safety check kept (provider text, shown to the person).
const MAX_CHECK_CHARS: usize = 512;
/// Most actions listed in a question.
const MAX_LISTED_ACTIONS: usize = 32;

/// How the computer endpoints' calls are approved.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum ApprovalMode {
    /// Reads and input run (consent still decides input).
    #[default]
    Allow,
    /// Reads run; input is asked about.
    Write,
    /// Every call is asked about, screenshots too.
    Prompt,
    /// The computer endpoints refuse every call.
    Deny,
}

impl ApprovalMode {
    /// Its name in flags and files.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Allow => "allow",
            Self::Write => "write",
            Self::Prompt => "prompt",
            Self::Deny => "deny",
        }
    }
}

impl std::str::FromStr for ApprovalMode {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        [Self::Allow, Self::Write, Self::Prompt, Self::Deny]
            .into_iter()
            .find(|m| m.as_str() == s)
            .ok_or_else(|| format!("approval {s:?} is not one of allow, write, prompt, deny"))
    }
}

/// What a call does, for its approval.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Needs {
    /// Only observes (screenshots, waits, the cursor, zoom).
    Read,
    /// Sends input.
    Input,
    /// Reads what another app copied (asked per read unless the host
    /// approved them all).
    ClipboardRead,
}

/// A provider's safety check (OpenAI's `pending_safety_checks`).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct SafetyCheck {
    /// The provider's id, returned when acknowledged.
    pub id: String,
    /// Its code, e.g. `malicious_instructions`.
    pub code: String,
    /// Its text for the person.
    pub message: String,
}

impl SafetyCheck {
    /// A check with its texts cut to a length the person can read.
    pub fn new(id: &str, code: &str, message: &str) -> Self {
        let cut = |s: &str| s.chars().take(MAX_CHECK_CHARS).collect::<String>();
        Self {
            id: cut(id),
            code: cut(code),
            message: cut(message),
        }
    }
}

/// A question to the person, as the host shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApprovalAsk {
    /// Its id, for the answer.
    pub id: String,
    /// The session asking.
    pub session: String,
    /// `read` or `input`.
    pub needs: &'static str,
    /// The call's actions by name (`left_click`, `type`, ...), never
    /// their text.
    pub actions: Vec<String>,
    /// The provider's checks to acknowledge, if any.
    pub safety_checks: Vec<SafetyCheck>,
    /// Seconds the question waits.
    pub timeout_s: u64,
}

/// The approval mode and the questions waiting for an answer.
pub(crate) struct Approvals {
    mode: Mutex<ApprovalMode>,
    person: AtomicBool,
    next: AtomicU64,
    pending: Mutex<HashMap<String, (String, oneshot::Sender<bool>)>>,
}

impl Approvals {
    pub(crate) fn new(mode: ApprovalMode) -> Self {
        Self {
            mode: Mutex::new(mode),
            person: AtomicBool::new(false),
            next: AtomicU64::new(1),
            pending: Mutex::new(HashMap::new()),
        }
    }

    fn pending(
        &self,
    ) -> std::sync::MutexGuard<'_, HashMap<String, (String, oneshot::Sender<bool>)>> {
        self.pending.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn mode(&self) -> ApprovalMode {
        *self.mode.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Drops `session`'s questions: they count as denied.
    pub(crate) fn drop_session(&self, session: &str) {
        self.pending().retain(|_, (s, _)| s != session);
    }
}

/// Whether a call needing `needs` under `mode` is asked about.
fn asks(mode: ApprovalMode, needs: Needs, checks: bool) -> bool {
    checks
        || match (mode, needs) {
            (ApprovalMode::Allow | ApprovalMode::Deny, _) => false,
            (ApprovalMode::Write, Needs::Read) => false,
            (ApprovalMode::Write, Needs::Input | Needs::ClipboardRead)
            | (ApprovalMode::Prompt, _) => true,
        }
}

fn denied(why: &'static str) -> EngineError {
    EngineError::ApprovalDenied { why }
}

impl Engine {
    /// The approval mode in force.
    pub fn approval_mode(&self) -> ApprovalMode {
        self.approvals.mode()
    }

    /// Changes the approval mode; the next call follows it.
    pub fn set_approval_mode(&self, mode: ApprovalMode) {
        *self
            .approvals
            .mode
            .lock()
            .unwrap_or_else(|e| e.into_inner()) = mode;
    }

    /// The host says whether a person can be asked (its control pipe or
    /// dialog is there). Without one every question is denied.
    pub fn set_person_present(&self, present: bool) {
        self.approvals.person.store(present, Ordering::SeqCst);
        if !present {
            self.approvals.pending().clear();
            self.consent_asks.clear_pending();
        }
    }

    /// Approves a call of `session` that needs `needs`, doing `actions`,
    /// with the provider's `checks`: at once, or after asking the person.
    /// `Ok` only when the call may run.
    pub async fn approve(
        &self,
        session: &Session,
        needs: Needs,
        actions: &[&str],
        checks: &[SafetyCheck],
    ) -> Result<(), EngineError> {
        let mode = self.approvals.mode();
        if mode == ApprovalMode::Deny {
            return Err(denied(
                "the person's approval mode denies the computer tool",
            ));
        }
        if !asks(mode, needs, !checks.is_empty()) {
            return Ok(());
        }
        let started = Instant::now();
        let result = self.ask(session, needs, actions, checks).await;
        self.record(
            session,
            "approval.ask",
            json!({"needs": needs_name(needs), "safety_checks": checks.len()}),
            result.as_ref().map(|_| ()),
            started,
        );
        result
    }

    /// Whether the host can ask a person now.
    pub(crate) fn person_present(&self) -> bool {
        self.approvals.person.load(Ordering::SeqCst)
    }

    /// Puts the question to the person and waits for the answer.
    pub(crate) async fn ask(
        &self,
        session: &Session,
        needs: Needs,
        actions: &[&str],
        checks: &[SafetyCheck],
    ) -> Result<(), EngineError> {
        if !self.person_present() {
            return Err(denied("no person can be asked: the host has no way to ask"));
        }
        let id = format!(
            "approval-{}",
            self.approvals.next.fetch_add(1, Ordering::Relaxed)
        );
        let (tx, rx) = oneshot::channel();
        self.approvals
            .pending()
            .insert(id.clone(), (session.id.clone(), tx));
        self.takeovers
            .publish(TakeoverEvent::ApprovalRequested(ApprovalAsk {
                id: id.clone(),
                session: session.id.clone(),
                needs: needs_name(needs),
                actions: actions
                    .iter()
                    .take(MAX_LISTED_ACTIONS)
                    .map(|a| (*a).to_owned())
                    .collect(),
                safety_checks: checks.to_vec(),
                timeout_s: ANSWER_TIMEOUT.as_secs(),
            }));
        let answer = tokio::time::timeout(ANSWER_TIMEOUT, rx).await;
        self.approvals.pending().remove(&id);
        match answer {
            Ok(Ok(true)) => Ok(()),
            Ok(Ok(false)) => Err(denied("the person denied it")),
            Ok(Err(_)) => Err(denied("the question was withdrawn (session ended)")),
            Err(_) => Err(denied("the person gave no answer in 60 s")),
        }
    }

    /// The host's answer to question `id`; whether it was still waiting.
    pub fn answer_approval(&self, id: &str, approve: bool) -> bool {
        match self.approvals.pending().remove(id) {
            Some((_, tx)) => tx.send(approve).is_ok(),
            None => false,
        }
    }
}

fn needs_name(needs: Needs) -> &'static str {
    match needs {
        Needs::Read => "read",
        Needs::Input => "input",
        Needs::ClipboardRead => "clipboard_read",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn modes_ask_as_the_spec_says() {
        use ApprovalMode::*;
        assert!(!asks(Allow, Needs::Input, false));
        assert!(!asks(Write, Needs::Read, false));
        assert!(asks(Write, Needs::Input, false));
        assert!(asks(Prompt, Needs::Read, false));
        // Safety checks are asked about whatever the mode.
        assert!(asks(Allow, Needs::Read, true));
        for m in [Allow, Write, Prompt, Deny] {
            assert_eq!(m.as_str().parse::<ApprovalMode>(), Ok(m));
        }
        assert!("yolo".parse::<ApprovalMode>().is_err());
    }

    #[test]
    fn safety_check_texts_are_cut() {
        let c = SafetyCheck::new("id", "code", &"x".repeat(2000));
        assert_eq!(c.message.chars().count(), MAX_CHECK_CHARS);
    }
}
