//! The driver sessions of MCP clients: each one's grants (apps, takeover,
//! clipboard reading), its lease and the client (token) it belongs to.
//! A session is bound to the connection that started it (stdio, or an
//! HTTP `Mcp-Session-Id`); stateless HTTP requests name it with
//! `session_id`, or fall back to the last session their token started.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use deskhand_engine::{AppScope, Engine, Session};
use deskhand_protocol::mcp::InputMode;

/// Who is calling: which token (or stdio) the request came with.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Caller {
    /// The process's own stdio: whoever started `deskhand mcp`.
    Stdio,
    /// An HTTP request with the token at this index of the server's list.
    Token(usize),
}

/// One driver session.
#[derive(Debug, Clone)]
pub struct DriverSession {
    /// The engine's session (its id is the MCP `session_id`).
    pub engine: Session,
    /// Whose it is.
    pub caller: Caller,
    /// The apps granted.
    pub apps: AppScope,
    /// The input mode granted.
    pub input: InputMode,
    /// Whether clipboard reading was granted.
    pub clipboard_read: bool,
    /// When the consent ends.
    pub expires: Option<Instant>,
    /// Why the takeover was not granted, when asked for and refused.
    pub takeover_refused: Option<String>,
    /// Last call that used it.
    pub last_used: Instant,
    /// The last frame the `computer` tool sent it (shared by the copies
    /// of this session); the lock runs one `computer` call at a time.
    pub frame: Arc<tokio::sync::Mutex<Option<Arc<deskhand_engine::frame::FramePlan>>>>,
}

impl DriverSession {
    /// Whether the lease has ended.
    pub fn expired(&self) -> bool {
        self.expires.is_some_and(|t| Instant::now() >= t)
    }

    /// How long since the last call; stdio sessions end with their
    /// process, so they never count as idle.
    pub fn idle_for(&self) -> Duration {
        match self.caller {
            Caller::Stdio => Duration::ZERO,
            Caller::Token(_) => self.last_used.elapsed(),
        }
    }

    /// Seconds of lease left.
    pub fn lease_remaining_s(&self) -> Option<u64> {
        self.expires
            .map(|t| t.saturating_duration_since(Instant::now()).as_secs())
    }
}

/// Every live driver session of this daemon.
#[derive(Default)]
pub struct Sessions {
    map: Mutex<HashMap<String, DriverSession>>,
    /// The last session each caller started, for requests that name none
    /// and come on no connection of their own (stateless HTTP).
    latest: Mutex<HashMap<Caller, String>>,
}

/// Sessions idle this long are ended (stateless clients that went away
/// without `end_session`).
pub const IDLE_END: Duration = Duration::from_secs(30 * 60);
/// An HTTP session's takeover ends after this long without a call: the
/// red frame does not stay up for a client that vanished.
pub const TAKEOVER_IDLE: Duration = Duration::from_secs(5 * 60);

impl Sessions {
    fn lock(&self) -> MutexGuard<'_, HashMap<String, DriverSession>> {
        self.map.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The session `id`, when it exists and belongs to `caller`; touched.
    pub fn get(&self, id: &str, caller: Caller) -> Option<DriverSession> {
        let mut map = self.lock();
        let s = map.get_mut(id).filter(|s| s.caller == caller)?;
        s.last_used = Instant::now();
        Some(s.clone())
    }

    /// The last session `caller` started, if it still lives.
    pub fn latest(&self, caller: Caller) -> Option<DriverSession> {
        let id = self
            .latest
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(&caller)
            .cloned()?;
        self.get(&id, caller)
    }

    /// Stores `session` (new or changed) as `caller`'s latest.
    pub fn put(&self, session: DriverSession) {
        self.latest
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(session.caller, session.engine.id.clone());
        self.lock().insert(session.engine.id.clone(), session);
    }

    /// Removes `id`; returns it when it existed.
    pub fn remove(&self, id: &str) -> Option<DriverSession> {
        self.lock().remove(id)
    }

    /// Sessions whose lease ended or that sat idle past [`IDLE_END`].
    fn stale(&self) -> Vec<DriverSession> {
        self.lock()
            .values()
            .filter(|s| s.expired() || s.idle_for() >= TAKEOVER_IDLE)
            .cloned()
            .collect()
    }
}

/// Ends the takeover of every session whose lease ran out and closes those
/// idle too long, every second, for as long as the daemon runs.
pub fn start_reaper(sessions: Arc<Sessions>, engine: Arc<Engine>) {
    tokio::spawn(async move {
        let mut ticks = tokio::time::interval(Duration::from_secs(1));
        loop {
            ticks.tick().await;
            for s in sessions.stale() {
                // A session lasts at least as long as its lease.
                if s.idle_for() >= IDLE_END && s.expires.is_none_or(|_| s.expired()) {
                    sessions.remove(&s.engine.id);
                    engine.close_session(&s.engine).await;
                    tracing::info!(session = %s.engine.id, "closed an idle MCP session");
                } else if engine.takeover_state(&s.engine).on {
                    let why = if s.expired() {
                        "the lease ended"
                    } else {
                        "idle"
                    };
                    let _ = engine.takeover(&s.engine, false).await;
                    tracing::info!(session = %s.engine.id, why, "takeover off");
                }
            }
        }
    });
}
