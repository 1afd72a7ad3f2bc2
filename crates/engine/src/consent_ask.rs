//! Consent asked of the person: a session that wants what the consent in
//! force does not grant (a takeover, apps, clipboard reading) waits while
//! the host shows the person a dialog; their answer is that session's
//! grant, never wider than what was asked. No answer in time is a denial.
//! A session asks once, or twice when the first Allow gave less than it
//! asked (a box left unticked); then it needs a new session to ask again
//! (no dialog storms). The host decides that a person answered (the
//! tray app takes only a real mouse click, [`Engine::person_clicked`]).

use std::collections::HashMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use serde_json::json;
use tokio::sync::oneshot;

use crate::consent::{AppScope, MAX_LEASE_S};
use crate::error::EngineError;
use crate::takeover::TakeoverEvent;
use crate::{Engine, Session};

/// How long a consent question waits for the person unless the settings
/// say otherwise.
pub const CONSENT_TIMEOUT: Duration = Duration::from_secs(60);
/// The longest client name kept (it is the agent's own word, shown to the
/// person as such).
const MAX_CLIENT_CHARS: usize = 64;
/// Most apps listed in a question.
const MAX_LISTED_APPS: usize = 32;
/// How many times one session may ask when the person allowed less than
/// it asked.
const MAX_ASKS: u8 = 2;

/// What a session asks the person for.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ConsentWants {
    /// The apps by name; `None` is the whole desktop.
    pub apps: Option<Vec<String>>,
    /// Visible takeover (synthetic input while the red frame shows).
    pub takeover: bool,
    /// Reading what other apps copied (each read is still approved).
    pub clipboard_read: bool,
    /// The lease the session asks for, in seconds; `None`: until it ends.
    pub lease_s: Option<u64>,
}

/// A consent question, as the host shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConsentAsk {
    /// Its id, for the answer.
    pub id: String,
    /// The session asking.
    pub session: String,
    /// The session's protocol.
    pub protocol: &'static str,
    /// The name the client gave itself (its own word, unverified).
    pub client: String,
    /// What it asks for.
    pub wants: ConsentWants,
    /// Seconds the question waits.
    pub timeout_s: u64,
}

/// The person's answer: Allow or Deny, and what they ticked.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ConsentAnswer {
    /// Allow (true) or Deny.
    pub allow: bool,
    /// "Also allow visible takeover" was ticked.
    pub takeover: bool,
    /// "Allow clipboard reading" was ticked.
    pub clipboard_read: bool,
    /// The lease the person chose, in seconds; `None`: until the session
    /// ends.
    pub lease_s: Option<u64>,
}

/// What the person granted a session in the dialog.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Grant {
    /// Visible takeover, and with it synthetic input.
    pub takeover: bool,
    /// Asking to read the clipboard.
    pub clipboard_read: bool,
    /// The apps it may work with.
    pub apps: AppScope,
    /// When the grant ends.
    pub until: Option<Instant>,
}

impl Grant {
    /// The grant `answer` gives to a session that asked for `wants`: what
    /// was asked and ticked, for the shorter of the two leases.
    pub fn of(wants: &ConsentWants, answer: &ConsentAnswer, now: Instant) -> Option<Self> {
        if !answer.allow {
            return None;
        }
        let lease = match (answer.lease_s, wants.lease_s) {
            (Some(a), Some(w)) => Some(a.min(w)),
            (a, w) => a.or(w),
        }
        .map(|s| s.clamp(1, MAX_LEASE_S));
        Some(Self {
            takeover: wants.takeover && answer.takeover,
            clipboard_read: wants.clipboard_read && answer.clipboard_read,
            apps: match &wants.apps {
                None => AppScope::All,
                Some(apps) => AppScope::Named(apps.clone()),
            },
            until: lease.map(|s| now + Duration::from_secs(s)),
        })
    }

    fn live(&self, now: Instant) -> bool {
        self.until.is_none_or(|t| now < t)
    }

    /// What `wants` asks that this grant does not give, in words, if
    /// anything.
    pub fn short_of(&self, wants: &ConsentWants) -> Option<String> {
        let mut missing = Vec::new();
        if wants.takeover && !self.takeover {
            missing.push("the visible takeover (mouse and keyboard)".to_owned());
        }
        if wants.clipboard_read && !self.clipboard_read {
            missing.push("reading the clipboard".to_owned());
        }
        match (&wants.apps, &self.apps) {
            (_, AppScope::All) => {}
            (None, AppScope::Named(_)) => missing.push("the whole desktop".to_owned()),
            (Some(apps), scope) => missing.extend(
                apps.iter()
                    .filter(|a| !scope.allows(a))
                    .map(|a| format!("the app {a}")),
            ),
        }
        (!missing.is_empty()).then(|| missing.join(", "))
    }

    /// What it allows, in words ("to see the screen and work with xterm").
    pub fn words(&self) -> String {
        let apps = match &self.apps {
            AppScope::All => "the whole desktop".to_owned(),
            AppScope::Named(apps) => apps.join(", "),
        };
        let mut words = format!("to see the screen and work with {apps}");
        if self.takeover {
            words.push_str(", with mouse and keyboard");
        }
        if self.clipboard_read {
            words.push_str(", asking to read the clipboard");
        }
        words
    }
}

/// A session's answered consent: its grant (`None` once denied) and how
/// many times the session asked.
#[derive(Debug, Clone)]
struct Answered {
    grant: Option<Grant>,
    times: u8,
}

/// One pending question: its session, what was asked, where the answer goes.
type Pending = (String, ConsentWants, oneshot::Sender<ConsentAnswer>);

/// The consent questions waiting, and the answers given per session.
pub(crate) struct ConsentAsks {
    timeout: Mutex<Duration>,
    next: AtomicU64,
    pending: Mutex<HashMap<String, Pending>>,
    /// Per session: its answer.
    answered: Mutex<HashMap<String, Answered>>,
    /// Per session: the name its client gave.
    clients: Mutex<HashMap<String, String>>,
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl ConsentAsks {
    pub(crate) fn new() -> Self {
        Self {
            timeout: Mutex::new(CONSENT_TIMEOUT),
            next: AtomicU64::new(1),
            pending: Mutex::new(HashMap::new()),
            answered: Mutex::new(HashMap::new()),
            clients: Mutex::new(HashMap::new()),
        }
    }

    /// Forgets `session`: its questions count as denied, its grant ends.
    pub(crate) fn drop_session(&self, session: &str) {
        lock(&self.pending).retain(|_, (s, _, _)| s != session);
        lock(&self.answered).remove(session);
        lock(&self.clients).remove(session);
    }

    /// Drops every question (the person can no longer be asked).
    pub(crate) fn clear_pending(&self) {
        lock(&self.pending).clear();
    }

    /// `session`'s live grant.
    pub(crate) fn grant(&self, session: &str) -> Option<Grant> {
        let now = Instant::now();
        lock(&self.answered)
            .get(session)
            .and_then(|a| a.grant.clone())
            .filter(|g| g.live(now))
    }

    /// Whether `session` may ask for `wants`: not while it waits for an
    /// answer; after one, only when the person allowed it something that
    /// falls short of `wants` and it has asked fewer than [`MAX_ASKS`]
    /// times (a denial is not asked again).
    fn may_ask(&self, session: &str, wants: &ConsentWants) -> bool {
        if lock(&self.pending).values().any(|(s, _, _)| s == session) {
            return false;
        }
        lock(&self.answered).get(session).is_none_or(|a| {
            a.times < MAX_ASKS
                && a.grant
                    .as_ref()
                    .is_some_and(|g| g.short_of(wants).is_some())
        })
    }

    /// Keeps `session`'s answer to its latest question: a Deny the second
    /// time keeps what the first Allow gave.
    fn keep(&self, session: &str, grant: Option<Grant>) {
        let mut answered = lock(&self.answered);
        let before = answered.remove(session);
        let times = before.as_ref().map_or(0, |a| a.times).saturating_add(1);
        let grant = grant.or_else(|| before.and_then(|a| a.grant));
        answered.insert(session.to_owned(), Answered { grant, times });
    }
}

/// `name` as shown to the person: printable, cut short.
fn client_text(name: &str) -> String {
    let text: String = name
        .chars()
        .filter(|c| !c.is_control())
        .take(MAX_CLIENT_CHARS)
        .collect();
    if text.trim().is_empty() {
        "an unnamed client".to_owned()
    } else {
        text
    }
}

impl Engine {
    /// Names `session`'s client as it named itself (HELLO_ACK, MCP
    /// `clientInfo`), for the consent dialog and the audit log.
    pub fn set_client_name(&self, session: &Session, name: &str) {
        lock(&self.consent_asks.clients).insert(session.id.clone(), client_text(name));
    }

    /// The name `session`'s client gave, as the person is shown it.
    pub fn client_name(&self, session: &str) -> Option<String> {
        lock(&self.consent_asks.clients).get(session).cloned()
    }

    /// How long consent questions wait from now on.
    pub fn set_consent_timeout(&self, timeout: Duration) {
        *lock(&self.consent_asks.timeout) = timeout;
    }

    /// What the person granted `session` in the dialog, while it lasts.
    pub fn grant(&self, session: &Session) -> Option<Grant> {
        self.consent_asks.grant(&session.id)
    }

    /// What the person allowed the session `id` in the consent dialog,
    /// while it holds (for the host's list of what was allowed).
    pub fn granted(&self, id: &str) -> Option<Grant> {
        self.consent_asks.grant(id)
    }

    /// Whether `session` may ask the person for `wants` now (a host can
    /// ask, and it has not asked before, or got less than `wants`).
    pub fn may_ask_consent(&self, session: &Session, wants: &ConsentWants) -> bool {
        self.person_present()
            && self.consent_asks.may_ask(&session.id, wants)
            && !self.lock_revoked().contains(&session.id)
    }

    /// How `session` can ask the person for `wants` again, in words for
    /// the agent.
    pub fn ask_again_words(&self, session: &Session, wants: &ConsentWants) -> &'static str {
        if !self.person_present() {
            "no one is here to ask: the person grants it in deskhand's consent file"
        } else if self.may_ask_consent(session, wants) {
            "ask again in this session and the person sees the dialog once more"
        } else {
            "end this session and start a new one to ask the person again"
        }
    }

    /// The error for a session whose grant falls short of `wants`.
    pub fn consent_short(
        &self,
        session: &Session,
        grant: &Grant,
        wants: &ConsentWants,
    ) -> EngineError {
        EngineError::ConsentShort {
            granted: grant.words(),
            missing: grant
                .short_of(wants)
                .unwrap_or_else(|| "what it asked".to_owned()),
            again: self.ask_again_words(session, wants),
        }
    }

    /// Asks the person for `wants` and waits for the answer: the grant, or
    /// `NotGranted` when they deny, do not answer in time, or cannot be
    /// asked (no host to ask, or this session asked before).
    pub async fn ask_consent(
        &self,
        session: &Session,
        wants: ConsentWants,
    ) -> Result<Grant, EngineError> {
        let refused = EngineError::NotGranted {
            capability: "input",
            needed: "consent",
        };
        if !self.may_ask_consent(session, &wants) {
            return Err(refused);
        }
        let started = Instant::now();
        let asks = &self.consent_asks;
        let id = format!("consent-{}", asks.next.fetch_add(1, Ordering::Relaxed));
        let timeout = *lock(&asks.timeout);
        let mut wants = wants;
        if let Some(apps) = &mut wants.apps {
            apps.truncate(MAX_LISTED_APPS);
        }
        let (tx, rx) = oneshot::channel();
        lock(&asks.pending).insert(id.clone(), (session.id.clone(), wants.clone(), tx));
        let client = lock(&asks.clients)
            .get(&session.id)
            .cloned()
            .unwrap_or_else(|| client_text(""));
        self.takeovers
            .publish(TakeoverEvent::ConsentRequested(ConsentAsk {
                id: id.clone(),
                session: session.id.clone(),
                protocol: session.protocol,
                client,
                wants: wants.clone(),
                timeout_s: timeout.as_secs(),
            }));
        let answer = tokio::time::timeout(timeout, rx).await;
        lock(&asks.pending).remove(&id);
        let (grant, outcome) = match answer {
            Ok(Ok(a)) => match Grant::of(&wants, &a, Instant::now()) {
                Some(g) => (Some(g), "allowed"),
                None => (None, "denied"),
            },
            Ok(Err(_)) => (None, "withdrawn"),
            Err(_) => (None, "timed_out"),
        };
        if outcome != "withdrawn" {
            asks.keep(&session.id, grant.clone());
        }
        self.takeovers
            .publish(TakeoverEvent::ConsentEnded { id, outcome });
        let target = json!({
            "outcome": outcome,
            "takeover": grant.as_ref().is_some_and(|g| g.takeover),
            "clipboard_read": grant.as_ref().is_some_and(|g| g.clipboard_read),
        });
        let result = grant.ok_or(refused);
        self.record(
            session,
            "consent.ask",
            target,
            result.as_ref().map(|_| ()),
            started,
        );
        result
    }

    /// The host's answer to consent question `id`; whether it was still
    /// waiting.
    pub fn answer_consent(&self, id: &str, answer: ConsentAnswer) -> bool {
        match lock(&self.consent_asks.pending).remove(id) {
            Some((_, _, tx)) => tx.send(answer).is_ok(),
            None => false,
        }
    }

    /// Whether synthetic input is granted to `session`: by the consent in
    /// force, or by the person's takeover grant in the dialog.
    pub(crate) fn input_granted(&self, session: &Session) -> Result<(), EngineError> {
        if self.consent.input || self.grant(session).is_some_and(|g| g.takeover) {
            Ok(())
        } else {
            Err(EngineError::NotGranted {
                capability: "input",
                needed: "consent",
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn wants(takeover: bool, lease_s: Option<u64>) -> ConsentWants {
        ConsentWants {
            apps: Some(vec!["xterm".into()]),
            takeover,
            clipboard_read: true,
            lease_s,
        }
    }

    #[test]
    fn a_grant_is_never_wider_than_what_was_asked() {
        let now = Instant::now();
        let all = ConsentAnswer {
            allow: true,
            takeover: true,
            clipboard_read: true,
            lease_s: Some(600),
        };
        let g = Grant::of(&wants(false, Some(60)), &all, now).expect("allowed");
        assert!(!g.takeover, "takeover ticked but not asked for");
        assert!(g.clipboard_read);
        assert_eq!(g.apps, AppScope::Named(vec!["xterm".into()]));
        assert_eq!(
            g.until,
            Some(now + Duration::from_secs(60)),
            "the shorter lease"
        );
        let unticked = ConsentAnswer {
            allow: true,
            ..ConsentAnswer::default()
        };
        let g = Grant::of(&wants(true, None), &unticked, now).expect("allowed");
        assert!(
            !g.takeover && !g.clipboard_read,
            "unticked boxes grant nothing"
        );
        assert_eq!(g.until, None);
        assert!(Grant::of(&wants(true, None), &ConsentAnswer::default(), now).is_none());
    }

    #[test]
    fn a_grant_ends_with_its_lease() {
        let now = Instant::now();
        let answer = ConsentAnswer {
            allow: true,
            takeover: true,
            clipboard_read: false,
            lease_s: Some(5),
        };
        let g = Grant::of(&wants(true, None), &answer, now).expect("allowed");
        assert!(g.live(now + Duration::from_secs(4)));
        assert!(!g.live(now + Duration::from_secs(5)));
    }

    #[test]
    fn client_names_are_printable_and_short() {
        assert_eq!(client_text("a\u{7}b\nc"), "abc");
        assert_eq!(
            client_text(&"x".repeat(200)).chars().count(),
            MAX_CLIENT_CHARS
        );
        assert_eq!(client_text(" \t"), "an unnamed client");
    }

    #[test]
    fn a_grant_says_what_it_gives_and_what_it_lacks() {
        let now = Instant::now();
        let asked = wants(true, None);
        let no_box = ConsentAnswer {
            allow: true,
            takeover: false,
            clipboard_read: true,
            lease_s: None,
        };
        let g = Grant::of(&asked, &no_box, now).expect("allowed");
        assert_eq!(
            g.words(),
            "to see the screen and work with xterm, asking to read the clipboard"
        );
        assert_eq!(
            g.short_of(&asked).as_deref(),
            Some("the visible takeover (mouse and keyboard)")
        );
        let more_apps = ConsentWants {
            apps: Some(vec!["xterm".into(), "gedit".into()]),
            ..ConsentWants::default()
        };
        assert_eq!(g.short_of(&more_apps).as_deref(), Some("the app gedit"));
        assert_eq!(g.short_of(&wants(false, None)), None, "all it asked");
    }
}
