//! deskhand's engine: sessions, consent, the serial executor that owns the
//! desktop, the held-input ledger, screenshots and the audit log, over one
//! narrow trait per backend capability. No OS crate and no image codec
//! lives here (screenshots are encoded by `deskhand-encode`).

pub use deskhand_encode as encode;

pub mod accessibility;
pub mod action;
pub mod approval;
pub mod apps;
pub mod audit;
pub mod backend;
pub mod clipboard;
pub mod consent;
pub mod consent_ask;
mod credentials;
mod desk;
pub mod elements;
pub mod error;
mod executor;
pub mod geometry;
pub mod handback;
pub mod holder;
pub mod keys;
pub mod launch_policy;
pub mod ledger;
pub mod refusal;
pub mod scope_check;
pub mod screenshot;
pub mod settings;
pub mod shot;
mod shot_capture;
pub mod takeover;
pub mod thumbnails;
pub mod windows;

use std::sync::Arc;
use std::time::Instant;

use deskhand_protocol::{CoarseFeature, Feature};
use serde_json::Value;

pub use action::Action;
pub use apps::RunningApp;
pub use audit::{AuditLog, AuditRecord};
pub use backend::{
    AppEntry, Apps, Backend, BackendError, Button, Capture, Clipboard, ClipboardContent,
    ClipboardRead, Displays, EntryArgs, FileId, FrameCheck, Indicator, IndicatorEvent,
    IndicatorShown, Input, InputWatcher, LaunchPlan, LaunchTarget, NativeWindow, Permissions,
    ProcessInfo, RunningProgram, ScrollDirection, WatchedInput, Windows, typed_chars,
};
pub use clipboard::ClipboardPolicy;
pub use consent::{AppScope, Consent, ConsentSource};
pub use consent_ask::{ConsentAnswer, ConsentAsk, ConsentWants, Grant};
pub use deskhand_encode::{Mark, Paint};
pub use error::EngineError;
pub use geometry::{Layout, Monitor, Point, Rect};
pub use handback::{HandBack, PausedReason};
pub use holder::Holder;
pub use keys::{Key, Keypad};
pub use scope_check::ScopeCheck;
pub use screenshot::{Screenshot, ScreenshotSpec, ScreenshotTarget};
pub use shot_capture::{Shot, ShotSpec};
pub use takeover::{ResumedBy, TakeoverEvent, TakeoverState};

use desk::Desk;
use executor::Executor;

/// One connection's identity: a WebSocket connection, later an MCP session.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Session {
    /// Unique id, e.g. `wire-3f9a…`.
    pub id: String,
    /// The protocol it speaks, for the audit log.
    pub protocol: &'static str,
}

/// The features the live backend offers, probed once at start.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Features {
    /// Fine-grained features.
    pub fine: Vec<Feature>,
    /// Coarse buckets.
    pub coarse: Vec<CoarseFeature>,
}

impl Features {
    fn probe(backend: &Backend) -> Self {
        let mut f = Features::default();
        f.fine.extend([
            Feature::CursorPosition,
            Feature::DisplayInfo,
            Feature::InputWait,
        ]);
        if let Some(capture) = &backend.capture {
            f.coarse.push(CoarseFeature::Screenshot);
            f.fine.push(Feature::ScreenshotRegion);
            if capture.supports_cursor() {
                f.fine.push(Feature::ScreenshotCursor);
            }
        }
        if backend.windows.is_some() {
            f.coarse.push(CoarseFeature::Windows);
            f.fine.extend([Feature::WindowList, Feature::WindowFocus]);
            if backend.capture.is_some() {
                f.fine.push(Feature::ScreenshotWindow);
            }
        }
        if backend.apps.is_some() {
            f.coarse.push(CoarseFeature::Apps);
            f.fine.extend([Feature::AppList, Feature::AppLaunch]);
        }
        if backend.clipboard.is_some() {
            f.coarse.push(CoarseFeature::Clipboard);
            f.fine
                .extend([Feature::ClipboardRead, Feature::ClipboardWrite]);
        }
        if backend.permissions.is_some() {
            f.coarse.push(CoarseFeature::Permissions);
            f.fine.push(Feature::PermissionsCheck);
        }
        if let Some(input) = &backend.input {
            if input.types_any_character() {
                f.fine.push(Feature::InputTypeUnicode);
            } else {
                tracing::warn!(
                    "no keycode is free: characters that no key produces cannot be typed"
                );
            }
            f.coarse.push(CoarseFeature::Input);
            f.fine.extend([
                Feature::InputClickModifiers,
                Feature::InputClickButton,
                Feature::InputDragPath,
                Feature::InputKeyHold,
                Feature::InputMouseDownUp,
                Feature::InputScrollAmount,
            ]);
        }
        f.fine.sort();
        f.coarse.sort();
        f
    }

    /// Whether `feature` is offered.
    pub fn has(&self, feature: Feature) -> bool {
        self.fine.contains(&feature)
    }
}

/// Which windows [`Engine::list_windows`] returns.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct WindowFilter {
    /// Only this app's windows (class, instance or pid as text).
    pub app: Option<String>,
    /// Include minimized windows.
    pub include_minimized: bool,
    /// Include windows outside every display.
    pub include_offscreen: bool,
}

/// A window with its handle.
#[derive(Debug, Clone, PartialEq)]
pub struct ListedWindow {
    /// `win_<uuid>`.
    pub handle: String,
    /// What the OS says of it.
    pub window: NativeWindow,
    /// The display holding most of it.
    pub monitor: Option<u32>,
}

/// The engine: every protocol adapter talks to the desktop through it.
pub struct Engine {
    exec: Arc<Executor>,
    clipboard: clipboard::ClipboardGate,
    takeovers: Arc<takeover::Takeovers>,
    consent: Consent,
    audit: Arc<AuditLog>,
    features: Features,
    backend_name: &'static str,
    /// Sessions the host revoked: no takeover for them again.
    revoked: std::sync::Mutex<std::collections::HashSet<String>>,
    /// The approval mode and the questions waiting for the person.
    approvals: approval::Approvals,
    /// Consent questions to the person, and their answers per session.
    consent_asks: consent_ask::ConsentAsks,
    /// Accessibility trees, when available.
    accessibility: Option<Arc<dyn accessibility::Accessibility>>,
    /// Every session's element snapshots.
    snapshots: elements::Snapshots,
    /// Whether the accessibility bus answers, checked in the background.
    bus: elements::BusWatch,
    /// Small copies of what agents were shown, when the host keeps them.
    thumbnails: Arc<thumbnails::Thumbnails>,
    /// The classes of apps no agent may send input to (the person's
    /// settings; at start the consent file's).
    refusal: std::sync::Mutex<refusal::RefusalPolicy>,
    /// The backend's tables for the rules (refused apps, launch rules,
    /// the paste chord).
    policy: &'static crate::backend::PolicyTables,
    /// The desktop's status place, where it has one (the host shows it
    /// where no tray runs).
    status_place: Option<Arc<dyn crate::backend::StatusPlace>>,
}

impl Engine {
    /// Starts the engine over `backend`.
    pub fn new(mut backend: Backend, consent: Consent, audit: AuditLog) -> Self {
        let features = Features::probe(&backend);
        let backend_name = backend.name;
        let policy = backend.policy;
        let clipboard = clipboard::ClipboardGate::new(backend.clipboard.take(), consent.clipboard);
        let indicator = backend.indicator.take();
        let watcher = backend.watcher.take();
        let accessibility = backend.accessibility.take();
        let status_place = backend.status_place.take();
        let handback = Arc::new(HandBack::new());
        // Takeover needs both halves: an indicator to show it and a watcher
        // to hand back. Without the watcher, no takeover is granted.
        let indicator = match (&watcher, indicator) {
            (Some(_), Some(i)) => Some(Arc::new(std::sync::Mutex::new(i))),
            (None, Some(_)) => {
                tracing::warn!("no input watcher: takeover is unavailable");
                None
            }
            (_, None) => None,
        };
        let mut desk = Desk::new(backend, handback.clone());
        // The desktop thread checks the frame before every act.
        desk.indicator = indicator.clone();
        let thumbnails = desk.thumbnails.clone();
        let exec = Arc::new(Executor::spawn(desk));
        let audit = Arc::new(audit);
        let takeovers =
            takeover::Takeovers::start(indicator, handback.clone(), exec.clone(), audit.clone());
        if let Some(watcher) = watcher {
            let hb = handback.clone();
            let core = takeovers.clone();
            let sink = Arc::new(move |input: WatchedInput| match input {
                WatchedInput::KillSwitch => core.signal_kill(),
                WatchedInput::WatcherLost => core.signal_watcher_lost(),
                other => hb.observe(other),
            });
            if let Err(e) = watcher.start(sink, handback.armed_flag()) {
                tracing::warn!(error = %e, "the hand-back watcher did not start");
            }
        }
        tracing::info!(backend = backend_name, ?consent, features = ?features.fine, takeover = takeovers.available(), "engine started");
        let refusal = std::sync::Mutex::new(consent.refuse.clone());
        Self {
            exec,
            clipboard,
            takeovers,
            approvals: approval::Approvals::new(consent.approval),
            consent_asks: consent_ask::ConsentAsks::new(),
            consent,
            audit,
            features,
            backend_name,
            revoked: Default::default(),
            bus: elements::BusWatch::start(accessibility.clone()),
            accessibility,
            snapshots: Default::default(),
            thumbnails,
            refusal,
            policy,
            status_place,
        }
    }

    /// The desktop's status place (GNOME's top bar), where it has one.
    pub fn status_place(&self) -> Option<Arc<dyn crate::backend::StatusPlace>> {
        self.status_place.clone()
    }

    /// Releases what a previous run on this desktop left held (a crash
    /// between press and release) and keeps this run's held input in
    /// `path` from now on. Returns how many were released.
    pub async fn keep_held_input_in(&self, path: std::path::PathBuf) -> Result<usize, EngineError> {
        let released = self
            .exec
            .run(move |desk| desk.adopt_ledger_file(path))
            .await?;
        if !released.is_empty() {
            tracing::warn!(
                count = released.len(),
                "released input a previous run left held"
            );
            self.audit.record(&AuditRecord {
                ts: audit::now_ts(),
                session: "startup",
                protocol: "engine",
                op: "held_input.released",
                target: serde_json::json!({"count": released.len()}),
                outcome: "ok",
                duration_ms: 0.0,
            });
        }
        Ok(released.len())
    }

    /// Whether takeover (and so synthetic input) can be granted here.
    pub fn takeover_available(&self) -> bool {
        self.takeovers.available()
    }

    /// The probed features, less the clipboard while the person has it off.
    pub fn features(&self) -> Features {
        let mut features = self.features.clone();
        if !self.clipboard.policy().enabled {
            features.coarse.retain(|c| *c != CoarseFeature::Clipboard);
            features
                .fine
                .retain(|f| !matches!(f, Feature::ClipboardRead | Feature::ClipboardWrite));
        }
        features
    }

    /// The fine features a connection opened now is offered: the probed
    /// ones, and `a11y.tree` while the accessibility bus answers (its last
    /// background check; this never waits for the bus).
    pub fn offered_features(&self) -> Vec<Feature> {
        let mut fine = self.features().fine;
        if self.accessibility_ready() {
            fine.push(Feature::A11yTree);
            fine.sort();
        }
        fine
    }

    /// The backend's name.
    pub fn backend_name(&self) -> &'static str {
        self.backend_name
    }

    /// The consent in force.
    pub fn consent(&self) -> &Consent {
        &self.consent
    }

    /// Opens a session for a new connection.
    pub fn open_session(&self, protocol: &'static str) -> Session {
        let session = Session {
            id: format!("{protocol}-{}", uuid::Uuid::new_v4()),
            protocol,
        };
        self.record(
            &session,
            "session.open",
            Value::Null,
            Ok(()),
            Instant::now(),
        );
        self.takeovers.publish(TakeoverEvent::SessionStarted {
            session: session.id.clone(),
            protocol,
            at_ms: self.takeovers.at_ms(),
        });
        session
    }

    /// The host's `session.revoke`: ends `session`'s takeover at once and
    /// grants it none again (a new session needs a new consent).
    pub async fn revoke_session(&self, session: &str) {
        self.lock_revoked().insert(session.to_owned());
        self.approvals.drop_session(session);
        self.consent_asks.drop_session(session);
        let core = self.takeovers.clone();
        let id = session.to_owned();
        let _ = tokio::task::spawn_blocking(move || core.end(&id, "revoked")).await;
    }

    fn lock_revoked(&self) -> std::sync::MutexGuard<'_, std::collections::HashSet<String>> {
        self.revoked.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Refuses a takeover to a session the host revoked.
    fn not_revoked(&self, session: &Session) -> Result<(), EngineError> {
        if self.lock_revoked().contains(&session.id) {
            Err(EngineError::NotGranted {
                capability: "input",
                needed: "consent",
            })
        } else {
            Ok(())
        }
    }

    /// The primary display's size, for greetings (not an op of its own).
    pub async fn primary_size(&self) -> Result<[u32; 2], EngineError> {
        let layout = self.exec.run(|desk| desk.layout()).await??;
        Ok(layout
            .primary()
            .map_or([0, 0], |m| [m.rect.width, m.rect.height]))
    }

    /// Closes a session: everything it holds is released.
    pub async fn close_session(&self, session: &Session) {
        self.approvals.drop_session(&session.id);
        self.consent_asks.drop_session(&session.id);
        self.snapshots.drop_session(&session.id);
        let core = self.takeovers.clone();
        let id = session.id.clone();
        let _ = tokio::task::spawn_blocking(move || core.forget(&id)).await;
        let id = session.id.clone();
        let _ = self.exec.run(move |desk| desk.release_session(&id)).await;
        self.record(
            session,
            "session.close",
            Value::Null,
            Ok(()),
            Instant::now(),
        );
        self.lock_revoked().remove(&session.id);
        self.takeovers.publish(TakeoverEvent::SessionEnded {
            session: session.id.clone(),
            at_ms: self.takeovers.at_ms(),
        });
    }

    /// The session's client went away while an act of its ran: its
    /// takeover ends now, so that the act stops at its next step and what
    /// it holds is released (the session itself closes once the act is
    /// done, with [`Engine::close_session`]).
    pub async fn abandon_session(&self, session: &Session) {
        let core = self.takeovers.clone();
        let id = session.id.clone();
        let _ = tokio::task::spawn_blocking(move || core.end(&id, "disconnected")).await;
    }

    /// The current monitor layout.
    pub async fn layout(&self, session: &Session) -> Result<Layout, EngineError> {
        self.audited(
            session,
            "display_info",
            true,
            |desk| desk.layout(),
            |_| Value::Null,
        )
        .await
    }

    /// Where the pointer is, and the display under it.
    pub async fn cursor(&self, session: &Session) -> Result<(Point, Option<u32>), EngineError> {
        let job = |desk: &mut Desk| {
            let p = desk.backend.displays.cursor_position()?;
            let layout = desk.layout()?;
            Ok((p, layout.monitor_at(p).map(|m| m.index)))
        };
        self.audited(session, "cursor_position", true, job, |_| Value::Null)
            .await
    }

    /// Takes a screenshot.
    pub async fn screenshot(
        &self,
        session: &Session,
        spec: ScreenshotSpec,
    ) -> Result<Screenshot, EngineError> {
        let mut shot = self
            .audited(
                session,
                "screenshot",
                false,
                move |desk| screenshot::take(desk, spec),
                |s| serde_json::json!({"rect": s.rect.corners(), "format": s.format}),
            )
            .await?;
        self.thumbnails.keep(&session.id, shot.thumbnail.take());
        Ok(shot)
    }

    /// Every top-level window, topmost first, with its handle and the
    /// display holding most of it.
    pub async fn list_windows(
        &self,
        session: &Session,
        filter: WindowFilter,
    ) -> Result<Vec<ListedWindow>, EngineError> {
        let job = move |desk: &mut Desk| {
            let layout = desk.layout()?;
            let bounds = layout.bounds();
            Ok(desk
                .list_windows()?
                .into_iter()
                .filter(|(_, w)| filter.include_minimized || !w.minimized)
                .filter(|(_, w)| {
                    filter.include_offscreen || bounds.is_some_and(|b| b.overlap_area(&w.rect) > 0)
                })
                .filter(|(_, w)| filter.app.as_deref().is_none_or(|app| w.belongs_to(app)))
                .map(|(handle, window)| ListedWindow {
                    monitor: layout.best_for(&window.rect).map(|m| m.index),
                    handle,
                    window,
                })
                .collect::<Vec<_>>())
        };
        self.audited(
            session,
            "window.list",
            false,
            job,
            |list| serde_json::json!({"windows": list.len()}),
        )
        .await
    }

    /// The live window `handle` (a `win_…` id of a window list) names, as
    /// a list would give it: `WindowStale` when it is gone or unknown.
    /// Not audited: the op that uses it is.
    pub async fn listed_window(&self, handle: String) -> Result<ListedWindow, EngineError> {
        windows::check_handle(&handle)?;
        self.exec
            .run(move |desk: &mut Desk| {
                let layout = desk.layout()?;
                let (window, _) = desk.resolve_window(&handle)?;
                Ok(ListedWindow {
                    monitor: layout.best_for(&window.rect).map(|m| m.index),
                    handle,
                    window,
                })
            })
            .await?
    }

    /// Focuses the window `handle` names (raising it when `raise`). It
    /// changes what the person sees, so it needs the session's takeover,
    /// as input does.
    pub async fn focus_window(
        &self,
        session: &Session,
        handle: String,
        raise: bool,
    ) -> Result<(), EngineError> {
        let started = Instant::now();
        let target = serde_json::json!({"window_id": handle, "raise": raise});
        let result = match windows::check_handle(&handle)
            .and_then(|()| self.input_granted(session))
            .and_then(|()| self.takeovers.require_input(&session.id))
        {
            Ok(()) => self
                .exec
                .run(move |desk| desk.focus_window(&handle, raise))
                .await
                .and_then(|r| r),
            Err(e) => Err(e),
        };
        self.record(
            session,
            "window.focus",
            target,
            result.as_ref().map(|_| ()),
            started,
        );
        result
    }

    /// Performs an input action: consent first, then the bounds of every
    /// coordinate; nothing is sent unless both pass.
    pub async fn act(
        &self,
        session: &Session,
        op: &str,
        action: Action,
    ) -> Result<(), EngineError> {
        self.act_scoped(session, op, action, None).await
    }

    /// Performs an input action like [`Engine::act`], after checking on
    /// the desktop thread, right before sending, that it touches only what
    /// `scope` allows (the driver contract's target checks).
    pub async fn act_scoped(
        &self,
        session: &Session,
        op: &str,
        action: Action,
        scope: Option<ScopeCheck>,
    ) -> Result<(), EngineError> {
        let started = Instant::now();
        let target = audit::action_target(&action);
        let result = self.act_inner(session, action, scope, None).await;
        self.record(session, op, target, result.as_ref().map(|_| ()), started);
        result
    }

    /// Performs `action` after the checks made on the desktop thread just
    /// before anything is sent: the target checks of `scope`, and, when
    /// its coordinates came from `plan` (a screenshot), that the display layout is still
    /// the screenshot's.
    async fn act_inner(
        &self,
        session: &Session,
        action: Action,
        scope: Option<ScopeCheck>,
        plan: Option<Arc<shot::ShotPlan>>,
    ) -> Result<(), EngineError> {
        if let Action::Wait { duration } = action {
            // Waiting needs no desktop: it never holds up the queue.
            tokio::time::sleep(duration).await;
            return Ok(());
        }
        if action.sends_input() {
            if !self.features.coarse.contains(&CoarseFeature::Input) {
                return Err(EngineError::NotSupported { feature: "input" });
            }
            self.input_granted(session)?;
            self.takeovers.require_input(&session.id)?;
        }
        let refuse = self.refusal_policy();
        let action = match action {
            Action::Paste {
                text,
                preserve_clipboard,
            } if scope.is_none()
                && !refuse.is_on()
                && text.chars().count() >= clipboard::PASTE_MIN_CHARS =>
            {
                return self
                    .paste(session, text, preserve_clipboard)
                    .await
                    .map(|_| ());
            }
            other => other,
        };
        let action_is_brief = action.is_brief();
        let id = session.id.clone();
        let job = move |desk: &mut Desk| {
            if let Some(plan) = plan {
                plan.check_layout(&desk.layout()?)?;
            }
            desk.check_bounds(&action)?;
            if let Some(scope) = &scope {
                scope.check(desk, &action)?;
            }
            if refuse.is_on() && action.sends_input() {
                let windows = desk.windows_for_refusal()?;
                let pointer = desk.pointer().ok();
                let mut program_of = |pid| desk.backend.apps.as_mut()?.program_of(pid);
                let tables = &desk.backend.policy.refusal;
                refuse.check(tables, &windows, &action, pointer, &mut program_of)?;
            }
            desk.perform(&id, &action)
        };
        self.exec
            .run_maybe_brief(action_is_brief, job)
            .await
            .and_then(|r| r)
    }

    /// Records an op that an adapter refused before it reached the engine
    /// (malformed message, invalid arguments).
    pub fn record_refused(&self, session: &Session, op: &str, error: &EngineError) {
        self.record(session, op, Value::Null, Err(error), Instant::now());
    }

    /// Records an op an adapter handled on its own (a handshake, or a
    /// message refused with a protocol-level code such as
    /// `unknown_message_type`); `outcome` is `ok` or the canonical code.
    pub fn record_adapter_op(&self, session: &Session, op: &str, outcome: &str) {
        self.audit.record(&AuditRecord {
            ts: audit::now_ts(),
            session: &session.id,
            protocol: session.protocol,
            op,
            target: Value::Null,
            outcome,
            duration_ms: 0.0,
        });
    }

    /// Runs `job` on the desktop thread (or, when `brief` and the desktop
    /// is idle, at once: see [`Executor::run_brief`]) as op `op` of
    /// `session` and audits it, with the target `describe` gives on success.
    async fn audited<R, F>(
        &self,
        session: &Session,
        op: &str,
        brief: bool,
        job: F,
        describe: impl FnOnce(&R) -> Value,
    ) -> Result<R, EngineError>
    where
        R: Send + 'static,
        F: FnOnce(&mut Desk) -> Result<R, EngineError> + Send + 'static,
    {
        let started = Instant::now();
        let result = self.exec.run_maybe_brief(brief, job).await.and_then(|r| r);
        let target = result.as_ref().map_or(Value::Null, describe);
        self.record(session, op, target, result.as_ref().map(|_| ()), started);
        result
    }

    fn record(
        &self,
        session: &Session,
        op: &str,
        target: Value,
        result: Result<(), &EngineError>,
        started: Instant,
    ) {
        let outcome = match result {
            Ok(()) => "ok",
            Err(e) => e.code().canonical(),
        };
        self.audit.record(&AuditRecord {
            ts: audit::now_ts(),
            session: &session.id,
            protocol: session.protocol,
            op,
            target,
            outcome,
            duration_ms: started.elapsed().as_secs_f64() * 1000.0,
        });
    }

    /// Stops the executor: queued work finishes, everything held is
    /// released. Idempotent.
    pub fn shutdown(&self) {
        self.takeovers.shutdown();
        self.exec.shutdown();
    }
}

/// What the engine's unit tests share.
#[cfg(test)]
mod test_support {
    use crate::backend::{Displays, Input};

    /// The tables of the unit tests' desktop.
    static POLICY: crate::backend::PolicyTables = crate::backend::PolicyTables {
        refusal: crate::backend::RefusalTables {
            terminals: crate::backend::AppNames {
                names: &["xterm"],
                categories: &["TerminalEmulator"],
            },
            system_settings: crate::backend::AppNames {
                names: &[],
                categories: &[],
            },
            package_managers: crate::backend::AppNames {
                names: &[],
                categories: &[],
            },
            devtools_titles: &[],
        },
        launch: crate::backend::LaunchTables {
            command_runners: &["sh"],
            terminals: &["xterm"],
            terminal_options_with_value: &[],
            terminal_flags: &[],
            arguments: crate::backend::ArgumentStyle::Unix,
        },
        paste: &[crate::Key::Control, crate::Key::Char('v')],
    };

    /// A backend of only `displays` and `input`, for the engine's unit
    /// tests.
    pub(crate) fn input_only_backend(
        displays: Box<dyn Displays>,
        input: Box<dyn Input>,
    ) -> crate::backend::Backend {
        crate::backend::Backend {
            name: "test",
            policy: &POLICY,
            displays,
            capture: None,
            input: Some(input),
            windows: None,
            apps: None,
            permissions: None,
            clipboard: None,
            indicator: None,
            watcher: None,
            accessibility: None,
            status_place: None,
        }
    }
}
