//! Takeover (driver contract §4.2–4.3): synthetic input only while a
//! visible indicator shows it, one session at a time; the person's own
//! input pauses it at once; only the person (Continue, or the host after a
//! click in its own UI) resumes it.
//!
//! States per session: off → on → paused → on or off. The pause is the
//! person's hold on the desktop, not a session's: once they took over (or
//! pressed the kill switch), every takeover of every session and protocol
//! comes up paused until they click Continue (or the host resumes for
//! them), so reconnecting never undoes a hand-back.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime};

use serde_json::{Value, json};
use tokio::sync::broadcast;

use crate::audit::{self, AuditLog, AuditRecord};
use crate::backend::{BackendError, Indicator, IndicatorEvent, IndicatorShown};
use crate::error::EngineError;
use crate::executor::Executor;
use crate::handback::{HandBack, PausedReason};
use crate::holder::Holder;

mod engine;

/// Clicks on Continue this soon after deskhand pressed a button are not
/// the person's.
const CONTINUE_QUIET: Duration = Duration::from_millis(1500);
/// The press of a Continue click is the last one the watcher saw at most
/// this long before the click was reported (a press held a while).
const CONTINUE_PRESS_WITHIN: Duration = Duration::from_secs(3);
/// How long a Continue click waits for the watcher to report its press.
const CONTINUE_PRESS_WAIT: Duration = Duration::from_millis(300);

/// A session's takeover, as `TAKEOVER_STATE` reports it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TakeoverState {
    /// Synthetic input is granted.
    pub on: bool,
    /// The indicator is on screen.
    pub indicator: bool,
    /// The person took over; acts are refused until they continue.
    pub paused: bool,
    /// What the person did, while paused.
    pub paused_reason: Option<PausedReason>,
    /// Why the takeover is off (or was refused).
    pub reason: Option<String>,
}

impl TakeoverState {
    /// The state as the protocols report it.
    pub fn payload(&self) -> deskhand_protocol::messages::TakeoverStatePayload {
        deskhand_protocol::messages::TakeoverStatePayload {
            on: self.on,
            indicator: self.indicator,
            paused: self.paused,
            paused_reason: self.paused_reason.map(|r| r.as_str().to_owned()),
            reason: self.reason.clone(),
        }
    }
}

/// Who resumed a paused takeover.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ResumedBy {
    /// A real click on the indicator's Continue.
    Indicator,
    /// The host, after a click in its own UI.
    Host,
}

impl ResumedBy {
    /// The name in events and the audit log.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Indicator => "indicator",
            Self::Host => "host",
        }
    }
}

/// A change hosts and adapters hear about.
#[derive(Debug, Clone, PartialEq)]
pub enum TakeoverEvent {
    /// `session`'s state changed.
    State {
        /// The session.
        session: String,
        /// Its new state.
        state: TakeoverState,
    },
    /// The person took over `session`.
    Paused {
        /// The session.
        session: String,
        /// What they did.
        reason: PausedReason,
        /// Milliseconds since the engine started.
        at_ms: u64,
    },
    /// A call waits for the person's approval, for hosts to ask them.
    ApprovalRequested(crate::approval::ApprovalAsk),
    /// A session waits for the person's consent, for hosts to ask them.
    ConsentRequested(crate::consent_ask::ConsentAsk),
    /// A consent question is over (answered, timed out or withdrawn): a
    /// host takes its dialog down.
    ConsentEnded {
        /// The question.
        id: String,
        /// `allowed`, `denied`, `timed_out` or `withdrawn`.
        outcome: &'static str,
    },
    /// A session opened (any protocol), for hosts.
    SessionStarted {
        /// The session.
        session: String,
        /// Its protocol.
        protocol: &'static str,
        /// Milliseconds since the engine started.
        at_ms: u64,
    },
    /// A session closed.
    SessionEnded {
        /// The session.
        session: String,
        /// Milliseconds since the engine started.
        at_ms: u64,
    },
    /// `session` resumed.
    Resumed {
        /// The session.
        session: String,
        /// Who resumed it.
        by: ResumedBy,
        /// Milliseconds since the engine started.
        at_ms: u64,
    },
}

enum Signal {
    PersonInput(PausedReason),
    Indicator(IndicatorEvent),
    Kill,
    WatcherLost,
}

#[derive(Default)]
struct Inner {
    /// The session holding the takeover, and its protocol.
    holder: Option<(String, &'static str)>,
    /// A session whose takeover is being started (its indicator is coming
    /// up), and its protocol; cleared if it disconnects meanwhile.
    starting: Option<(String, &'static str)>,
    /// When the holder's takeover ends unless it acts again, as its
    /// adapter said (for `BUSY`).
    until: Option<SystemTime>,
    indicator_up: bool,
    /// The person's hold on the desktop: set when they took over or
    /// pressed the kill switch, cleared only by Continue or the host.
    hold: Option<PausedReason>,
    /// Why each session's last takeover ended or was refused.
    reasons: HashMap<String, String>,
}

impl Inner {
    fn state(&self, session: &str) -> TakeoverState {
        let on = self.holder.as_ref().is_some_and(|(s, _)| s == session);
        let paused_reason = self.hold;
        TakeoverState {
            on,
            indicator: on && self.indicator_up,
            paused: paused_reason.is_some(),
            paused_reason,
            reason: if on {
                None
            } else {
                self.reasons.get(session).cloned()
            },
        }
    }
}

/// The indicator, shared by the takeover thread and the desktop thread.
pub(crate) type SharedIndicator = Arc<Mutex<Box<dyn Indicator>>>;

/// The takeover state machine, shared with its background thread. The
/// `inner` lock is only ever held for bookkeeping, never across a call to
/// the indicator or the desktop.
pub(crate) struct Takeovers {
    indicator: Option<SharedIndicator>,
    /// False once the hand-back watcher is gone.
    watching: AtomicBool,
    inner: Mutex<Inner>,
    events: broadcast::Sender<TakeoverEvent>,
    signals: Mutex<mpsc::Sender<Signal>>,
    handback: Arc<HandBack>,
    exec: Arc<Executor>,
    audit: Arc<AuditLog>,
    started: Instant,
    /// How many times the person's hold was lifted: element tokens read
    /// before a resume are stale after it.
    resumes: std::sync::atomic::AtomicU64,
}

impl Takeovers {
    /// Wires the indicator and the hand-back detector to a background
    /// thread that handles what they report.
    pub(crate) fn start(
        indicator: Option<SharedIndicator>,
        handback: Arc<HandBack>,
        exec: Arc<Executor>,
        audit: Arc<AuditLog>,
    ) -> Arc<Self> {
        let (tx, rx) = mpsc::channel::<Signal>();
        if let Some(mut i) = indicator.as_ref().and_then(|i| i.lock().ok()) {
            let tx = Mutex::new(tx.clone());
            i.set_events(Arc::new(move |e| {
                if let Ok(tx) = tx.lock() {
                    let _ = tx.send(Signal::Indicator(e));
                }
            }));
        }
        let trip_tx = Mutex::new(tx.clone());
        handback.set_on_trip(Box::new(move |reason| {
            if let Ok(tx) = trip_tx.lock() {
                let _ = tx.send(Signal::PersonInput(reason));
            }
        }));
        let core = Arc::new(Self {
            indicator,
            watching: AtomicBool::new(true),
            inner: Mutex::new(Inner::default()),
            events: broadcast::channel(64).0,
            signals: Mutex::new(tx),
            handback,
            exec,
            audit,
            started: Instant::now(),
            resumes: std::sync::atomic::AtomicU64::new(0),
        });
        let weak = Arc::downgrade(&core);
        let spawned = std::thread::Builder::new()
            .name("deskhand-takeover".into())
            .spawn(move || {
                while let Ok(signal) = rx.recv() {
                    let Some(core) = weak.upgrade() else { return };
                    match signal {
                        Signal::PersonInput(reason) => core.person_took_over(reason),
                        Signal::Indicator(IndicatorEvent::ContinueClicked(at)) => {
                            core.continue_clicked(at);
                        }
                        Signal::Indicator(IndicatorEvent::Lost(why)) => {
                            tracing::warn!(why, "the takeover indicator went away");
                            core.end_holder("indicator_lost");
                        }
                        Signal::Kill | Signal::Indicator(IndicatorEvent::StopClicked) => {
                            core.kill()
                        }
                        Signal::WatcherLost => {
                            tracing::error!(
                                "the hand-back watcher stopped: no takeover from now on"
                            );
                            core.watching.store(false, Ordering::SeqCst);
                            core.end_holder("handback_lost");
                        }
                    }
                }
            });
        if let Err(e) = spawned {
            tracing::error!(error = %e, "no takeover thread: hand-back cannot pause");
        }
        core
    }

    /// Whether takeover can be granted at all here.
    pub(crate) fn available(&self) -> bool {
        self.indicator.is_some() && self.watching.load(Ordering::SeqCst)
    }

    pub(crate) fn at_ms(&self) -> u64 {
        self.started.elapsed().as_millis() as u64
    }

    pub(crate) fn publish(&self, event: TakeoverEvent) {
        let _ = self.events.send(event);
    }

    fn publish_state(&self, session: &str) {
        let state = self.state(session);
        self.publish(TakeoverEvent::State {
            session: session.to_owned(),
            state,
        });
    }

    fn record(&self, session: &str, protocol: &'static str, op: &str, target: Value) {
        self.audit.record(&AuditRecord {
            ts: audit::now_ts(),
            session,
            protocol,
            op,
            target,
            outcome: "ok",
            duration_ms: 0.0,
        });
    }

    pub(crate) fn subscribe(&self) -> broadcast::Receiver<TakeoverEvent> {
        self.events.subscribe()
    }

    pub(crate) fn state(&self, session: &str) -> TakeoverState {
        self.inner
            .lock()
            .map(|i| i.state(session))
            .unwrap_or_default()
    }

    /// How many times the person's hold was lifted so far.
    pub(crate) fn resumes(&self) -> u64 {
        self.resumes.load(Ordering::SeqCst)
    }

    /// Synthetic input for `session` needs its takeover on and not paused.
    pub(crate) fn require_input(&self, session: &str) -> Result<(), EngineError> {
        self.refuse_while_held()?;
        let inner = self.inner.lock().map_err(|_| EngineError::ShuttingDown)?;
        match &inner.holder {
            Some((s, _)) if s == session => Ok(()),
            _ => Err(EngineError::NotGranted {
                capability: "input",
                needed: "takeover",
            }),
        }
    }

    /// Refuses every act while the person holds the desktop.
    pub(crate) fn refuse_while_held(&self) -> Result<(), EngineError> {
        let inner = self.inner.lock().map_err(|_| EngineError::ShuttingDown)?;
        match &inner.hold {
            Some(reason) => Err(EngineError::UserTookOver {
                effect: "refused",
                reason: *reason,
                typed_characters: None,
            }),
            None => Ok(()),
        }
    }

    /// Calls the indicator inside a desktop job and updates what captures
    /// leave out in the same job, so that no screenshot falls between.
    fn indicator_job(
        &self,
        f: impl FnOnce(&mut dyn Indicator) -> Result<IndicatorShown, BackendError> + Send + 'static,
    ) -> Result<IndicatorShown, EngineError> {
        let Some(indicator) = self.indicator.clone() else {
            return Err(EngineError::NotSupported {
                feature: "takeover",
            });
        };
        self.exec.run_blocking(move |desk| {
            let shown = {
                let mut i = indicator.lock().map_err(|_| EngineError::ShuttingDown)?;
                f(i.as_mut())?
            };
            if let Some(capture) = desk.backend.capture.as_mut() {
                capture.exclude(&shown.windows, &shown.covered);
            }
            Ok(shown)
        })?
    }

    /// Takes the indicator down (and ends leaving it out of captures).
    fn hide_indicator(&self) -> Result<IndicatorShown, EngineError> {
        self.indicator_job(|i| i.hide().map(|()| IndicatorShown::default()))
    }

    /// Starts `session`'s takeover: the indicator first; without it, no
    /// takeover.
    pub(crate) fn begin(
        &self,
        session: &str,
        protocol: &'static str,
    ) -> Result<TakeoverState, EngineError> {
        if !self.available() {
            return Err(EngineError::NotSupported {
                feature: "takeover",
            });
        }
        let paused = {
            let mut inner = self.inner.lock().map_err(|_| EngineError::ShuttingDown)?;
            match (&inner.holder, &inner.starting) {
                (Some((s, _)), _) if s == session => return Ok(inner.state(session)),
                (Some((_, protocol)), _) | (None, Some((_, protocol))) => {
                    return Err(EngineError::Busy(Box::new(Holder {
                        protocol,
                        client: None,
                        until: inner.until.filter(|_| inner.holder.is_some()),
                    })));
                }
                (None, None) => {}
            }
            inner.starting = Some((session.to_owned(), protocol));
            inner.hold.is_some()
        };
        let shown = self
            .exec
            .run_blocking(|desk| {
                // Captures must be able to leave the indicator out before it
                // is first shown.
                if let Some(capture) = desk.backend.capture.as_mut() {
                    capture.prepare_exclusion();
                }
                let layout = desk.full_layout()?;
                let pointer = desk.backend.displays.cursor_position()?;
                Ok::<_, EngineError>((layout, pointer))
            })
            .and_then(|r| r)
            .and_then(|(layout, pointer)| {
                let rects: Vec<_> = layout.monitors.iter().map(|m| m.rect).collect();
                self.indicator_job(move |i| i.show(&rects, paused))
                    .map(|_| pointer)
            });
        let mut inner = self.inner.lock().map_err(|_| EngineError::ShuttingDown)?;
        let still_wanted = inner.starting.as_ref().is_some_and(|(s, _)| s == session);
        inner.starting = None;
        let pointer = match shown {
            Ok(pointer) if still_wanted => pointer,
            Ok(_) => {
                // The session went away while its indicator came up.
                drop(inner);
                let _ = self.hide_indicator();
                return Ok(TakeoverState::default());
            }
            Err(e) => {
                tracing::warn!(error = %e, "the takeover indicator cannot be shown: no takeover");
                inner
                    .reasons
                    .insert(session.to_owned(), "indicator_unavailable".into());
                return Ok(inner.state(session));
            }
        };
        inner.holder = Some((session.to_owned(), protocol));
        inner.until = None;
        inner.indicator_up = true;
        inner.reasons.remove(session);
        if !paused {
            self.handback.arm(pointer);
        }
        let state = inner.state(session);
        drop(inner);
        self.record(
            session,
            protocol,
            "takeover.started",
            json!({"paused": paused}),
        );
        self.publish_state(session);
        Ok(state)
    }

    /// Ends `session`'s takeover (if it holds it): an act under way stops,
    /// the indicator goes, what the session holds is released.
    pub(crate) fn end(&self, session: &str, reason: &str) -> TakeoverState {
        let protocol = {
            let Ok(mut inner) = self.inner.lock() else {
                return TakeoverState::default();
            };
            match inner.holder.clone() {
                Some((holder, protocol)) if holder == session => {
                    self.handback.revoke();
                    inner.holder = None;
                    inner.until = None;
                    inner.indicator_up = false;
                    inner.reasons.insert(session.to_owned(), reason.to_owned());
                    protocol
                }
                _ => return inner.state(session),
            }
        };
        if let Err(e) = self.hide_indicator() {
            tracing::warn!(error = %e, "hiding the takeover indicator failed");
        }
        let id = session.to_owned();
        let _ = self
            .exec
            .run_blocking(move |desk| desk.release_session(&id));
        self.record(
            session,
            protocol,
            "takeover.ended",
            json!({"reason": reason}),
        );
        self.publish_state(session);
        self.state(session)
    }

    /// Notes when `session`'s takeover ends unless it acts again (only
    /// while it holds it).
    pub(crate) fn set_until(&self, session: &str, until: Option<SystemTime>) {
        if let Ok(mut inner) = self.inner.lock()
            && inner.holder.as_ref().is_some_and(|(s, _)| s == session)
        {
            inner.until = until;
        }
    }

    /// The session holding the takeover.
    pub(crate) fn holder(&self) -> Option<String> {
        self.inner
            .lock()
            .ok()
            .and_then(|i| i.holder.as_ref().map(|(s, _)| s.clone()))
    }

    fn end_holder(&self, reason: &str) {
        let holder = self.holder();
        if let Some(session) = holder {
            self.end(&session, reason);
        }
    }

    /// Forgets a closed session (its takeover ends first).
    pub(crate) fn forget(&self, session: &str) {
        self.end(session, "disconnected");
        if let Ok(mut inner) = self.inner.lock() {
            if inner.starting.as_ref().is_some_and(|(s, _)| s == session) {
                inner.starting = None;
            }
            inner.reasons.remove(session);
        }
    }

    fn person_took_over(&self, reason: PausedReason) {
        let (session, protocol) = {
            let Ok(mut inner) = self.inner.lock() else {
                return;
            };
            let Some((session, protocol)) = inner.holder.clone() else {
                return;
            };
            if inner.hold.is_some() {
                return;
            }
            inner.hold = Some(reason);
            (session, protocol)
        };
        // Acts are refused from here on; tell the host and the agent first,
        // then release and switch the indicator to Continue.
        self.publish(TakeoverEvent::Paused {
            session: session.clone(),
            reason,
            at_ms: self.at_ms(),
        });
        self.publish_state(&session);
        self.record(
            &session,
            protocol,
            "takeover.paused",
            json!({"paused_reason": reason.as_str()}),
        );
        let id = session.clone();
        let _ = self
            .exec
            .run_blocking(move |desk| desk.release_session(&id));
        if let Err(e) = self.indicator_job(|i| i.set_paused(true)) {
            tracing::warn!(error = %e, "the indicator did not show Continue");
        }
    }

    /// A real click on Continue resumes the session holding the takeover,
    /// unless deskhand itself pressed a button just before.
    fn continue_clicked(&self, at: Instant) {
        if self.real_click(at) {
            let holder = self.holder();
            if let Some(session) = holder {
                self.resume(Some(&session), ResumedBy::Indicator);
            }
        }
    }

    /// Whether a click reported at `at` by deskhand's own UI (Continue,
    /// the consent dialog) is the person's: a real device (not synthetic input)
    /// made its press, and deskhand pressed no button just before.
    pub(crate) fn real_click(&self, at: Instant) -> bool {
        if self.handback.pressed_button_before(at, CONTINUE_QUIET) {
            tracing::warn!("ignoring a click right after deskhand pressed a button");
            return false;
        }
        if !self.device_pressed_near(at) {
            tracing::warn!("ignoring a click no input device made (synthetic input, e.g. XTEST)");
            return false;
        }
        true
    }

    /// Whether the press of the click reported at `at` came from a real
    /// device (not synthetic input), waiting a little for the watcher's report: a
    /// synthetic press seen last may be an earlier one, the click's own
    /// not reported yet, so only the deadline makes it the answer.
    fn device_pressed_near(&self, at: Instant) -> bool {
        let deadline = Instant::now() + CONTINUE_PRESS_WAIT;
        loop {
            let last = self
                .handback
                .last_press_by_device(at, CONTINUE_PRESS_WITHIN);
            if last == Some(true) {
                return true;
            }
            if Instant::now() >= deadline {
                return false;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    /// Lifts the person's hold: `session` names the session resumed (the
    /// holder, or any when `None`); returns the sessions resumed.
    pub(crate) fn resume(&self, session: Option<&str>, by: ResumedBy) -> Vec<String> {
        let (resumed, holder) = {
            let Ok(mut inner) = self.inner.lock() else {
                return Vec::new();
            };
            let holder = inner.holder.clone();
            let asked_other = match (&holder, session) {
                (Some((h, _)), Some(want)) => h != want,
                _ => false,
            };
            if inner.hold.is_none() || asked_other {
                return Vec::new();
            }
            inner.hold = None;
            self.resumes.fetch_add(1, Ordering::SeqCst);
            let resumed: Vec<String> = match (&holder, session) {
                (Some((h, _)), _) => vec![h.clone()],
                (None, Some(s)) => vec![s.to_owned()],
                (None, None) => Vec::new(),
            };
            (resumed, holder)
        };
        if resumed.is_empty() {
            self.record(
                "desktop",
                "engine",
                "takeover.resumed",
                json!({"by": by.as_str()}),
            );
        }
        for s in &resumed {
            let holds = holder.as_ref().filter(|(h, _)| h == s);
            if holds.is_some() {
                self.rearm();
            }
            let protocol = holds.map_or("host", |(_, p)| *p);
            self.record(s, protocol, "takeover.resumed", json!({"by": by.as_str()}));
            self.publish(TakeoverEvent::Resumed {
                session: s.clone(),
                by,
                at_ms: self.at_ms(),
            });
            self.publish_state(s);
        }
        resumed
    }

    /// Back to the active look, watching from where the pointer is now.
    fn rearm(&self) {
        if let Err(e) = self.indicator_job(|i| i.set_paused(false)) {
            tracing::warn!(error = %e, "the indicator did not leave the paused look");
        }
        if let Ok(Ok(p)) = self
            .exec
            .run_blocking(|desk| desk.backend.displays.cursor_position())
        {
            self.handback.arm(p);
        }
    }

    /// The kill switch: every takeover ends, everything held is released,
    /// and the person holds the desktop until they continue.
    pub(crate) fn kill(&self) {
        tracing::warn!("kill switch: ending every takeover");
        if let Ok(mut inner) = self.inner.lock() {
            inner.hold = Some(PausedReason::KillSwitch);
        }
        self.handback.revoke();
        self.end_holder("kill_switch");
        let _ = self.exec.run_blocking(|desk| desk.release_all());
    }

    /// "Pause agents": the person holds the desktop as after a hand-back;
    /// a takeover on pauses (released, Continue shown), and every takeover
    /// from now on comes up paused, until the person clicks Continue.
    pub(crate) fn pause(&self) {
        tracing::warn!("the person paused the agents");
        let held_without_takeover = match self.inner.lock() {
            Ok(mut inner) if inner.holder.is_none() => {
                inner.hold.get_or_insert(PausedReason::PausedByPerson);
                true
            }
            _ => false,
        };
        if !held_without_takeover {
            self.handback.disarm();
            self.person_took_over(PausedReason::PausedByPerson);
        }
    }

    /// Shutdown: the takeover ends, everything held is released.
    pub(crate) fn shutdown(&self) {
        self.end_holder("shutdown");
        let _ = self.exec.run_blocking(|desk| desk.release_all());
    }

    /// Passes a signal to the background thread (from any thread).
    fn signal(&self, signal: Signal) {
        if let Ok(tx) = self.signals.lock() {
            let _ = tx.send(signal);
        }
    }

    /// The kill-switch hotkey.
    pub(crate) fn signal_kill(&self) {
        self.signal(Signal::Kill);
    }

    /// The watcher stopped.
    pub(crate) fn signal_watcher_lost(&self) {
        self.signal(Signal::WatcherLost);
    }
}
