//! The driver sessions of MCP clients: each one's grants (apps, takeover,
//! clipboard reading), its lease and the client it belongs to. Each MCP
//! HTTP session (`Mcp-Session-Id`) is a client of its own, so every
//! `deskhand mcp` relay is one even though they share the person's token.
//! A session is bound to the connection that started it (stdio, or an
//! HTTP `Mcp-Session-Id`) and answers only its client; stateless HTTP
//! requests name theirs with `session_id` and never inherit another
//! client's session (or the person's grant to it). How many a token and
//! the daemon keep is bounded.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant, SystemTime};

use deskhand_engine::{AppScope, Engine, Session};
use deskhand_protocol::mcp::InputMode;

/// Who is calling: stdio, or which token and MCP HTTP session the
/// request came with.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Caller {
    /// The process's own stdio: whoever started `deskhand mcp`.
    Stdio,
    /// A stateless HTTP request with the token at this index of the
    /// server's list: its sessions are named by their `session_id` alone.
    Token(usize),
    /// An HTTP request in an MCP session (`Mcp-Session-Id`, the second
    /// field) with the token at this index: a client of its own.
    Connection(usize, Arc<str>),
}

impl Caller {
    /// The token's index, for HTTP callers.
    pub fn token(&self) -> Option<usize> {
        match self {
            Self::Stdio => None,
            Self::Token(t) | Self::Connection(t, _) => Some(*t),
        }
    }
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
    /// The last screenshot the `computer` tool sent it (shared by the copies
    /// of this session); the lock runs one `computer` call at a time.
    pub last_plan: Arc<tokio::sync::Mutex<Option<Arc<deskhand_engine::shot::ShotPlan>>>>,
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
            Caller::Token(_) | Caller::Connection(..) => self.last_used.elapsed(),
        }
    }

    /// When its takeover ends unless it calls again: the lease's end, or
    /// [`TAKEOVER_IDLE`] after its last call over HTTP.
    pub fn takeover_until(&self) -> Option<SystemTime> {
        let wall = |t: Instant| SystemTime::now() + t.saturating_duration_since(Instant::now());
        let idle = match self.caller {
            Caller::Stdio => None,
            _ => Some(wall(self.last_used + TAKEOVER_IDLE)),
        };
        match (self.expires.map(wall), idle) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
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
}

/// Most driver sessions one token keeps at once (stateless clients' and
/// those of its MCP HTTP sessions together).
pub const MAX_PER_TOKEN: usize = 256;
/// Most driver sessions at once.
pub const MAX_SESSIONS: usize = 1024;

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
    pub fn get(&self, id: &str, caller: &Caller) -> Option<DriverSession> {
        let mut map = self.lock();
        let s = map.get_mut(id).filter(|s| s.caller == *caller)?;
        s.last_used = Instant::now();
        Some(s.clone())
    }

    /// Stores a changed session (one that is still there).
    pub fn put(&self, session: DriverSession) {
        let mut map = self.lock();
        if let Some(s) = map.get_mut(&session.engine.id) {
            *s = session;
        }
    }

    /// Stores a new session, unless its token or the daemon keeps as many
    /// as they may (false then).
    pub fn insert_new(&self, session: DriverSession) -> bool {
        let mut map = self.lock();
        let token = session.caller.token();
        let own = map
            .values()
            .filter(|s| token.is_some() && s.caller.token() == token)
            .count();
        if map.len() >= MAX_SESSIONS || own >= MAX_PER_TOKEN {
            return false;
        }
        map.insert(session.engine.id.clone(), session);
        true
    }

    /// Removes `id`; returns it when it existed. The map gives its room
    /// back once it is mostly empty.
    pub fn remove(&self, id: &str) -> Option<DriverSession> {
        let mut map = self.lock();
        let removed = map.remove(id);
        if map.capacity() > 4 * map.len() + 64 {
            map.shrink_to_fit();
        }
        removed
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

#[cfg(test)]
mod tests {
    use super::*;

    fn session(id: &str, caller: Caller) -> DriverSession {
        DriverSession {
            engine: Session {
                id: id.to_owned(),
                protocol: "mcp",
            },
            caller,
            apps: AppScope::All,
            input: InputMode::Headless,
            clipboard_read: false,
            expires: None,
            takeover_refused: None,
            last_used: Instant::now(),
            last_plan: Default::default(),
        }
    }

    #[test]
    fn a_session_answers_only_its_client_and_a_token_has_a_cap() {
        let sessions = Sessions::default();
        let relay_a = Caller::Connection(0, Arc::from("a"));
        let relay_b = Caller::Connection(0, Arc::from("b"));
        assert!(sessions.insert_new(session("mcp-1", relay_a.clone())));
        assert!(sessions.get("mcp-1", &relay_a).is_some());
        assert!(
            sessions.get("mcp-1", &relay_b).is_none(),
            "same token, other client"
        );
        assert!(
            sessions.get("mcp-1", &Caller::Token(0)).is_none(),
            "stateless"
        );
        for i in 1..MAX_PER_TOKEN {
            assert!(sessions.insert_new(session(&format!("mcp-t{i}"), Caller::Token(0))));
        }
        assert!(!sessions.insert_new(session("mcp-over", Caller::Token(0))));
        assert!(sessions.insert_new(session("mcp-other", Caller::Token(1))));
        assert!(sessions.remove("mcp-1").is_some());
        assert!(sessions.insert_new(session("mcp-again", relay_b)));
    }
}
