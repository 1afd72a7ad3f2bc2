//! Sessions over HTTP: a client names its session with the
//! `X-Deskhand-Session` header. Without the header a request goes to its
//! token's default session of that endpoint (made at the first such
//! request, made again once it was closed), so a client written from a
//! vendor's docs works unchanged; each endpoint has its own, since each
//! scales its screenshots its own way. `new` starts a fresh session. Every answer names its session
//! in the same header. A session answers only the token that made it
//! (another token's id is unknown to it), and a token that opened its
//! share of sessions makes room among its own, never another's. A session keeps the last screenshot
//! it was sent, and its takeover, which its first input action starts and
//! which ends after an idle time counted from its start and from every
//! input; a session not used for longer is closed.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::time::{Duration, Instant};

use deskhand_engine::shot::{ShotPlan, VendorCap};
use deskhand_engine::{Engine, Session};

use crate::AppState;

/// The request and response header naming the session.
pub(crate) const HEADER: &str = "x-deskhand-session";

/// Most HTTP sessions of one token at once.
const MAX_PER_TOKEN: usize = 64;

/// Most HTTP sessions at once, all tokens together.
const MAX_SESSIONS: usize = 256;

/// Longest session id accepted in the header.
const MAX_ID_LEN: usize = 80;

/// The header value that asks for a fresh session.
pub(crate) const NEW: &str = "new";

/// Which session a request names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Wanted<'a> {
    /// No header: the token's default session of the endpoint whose
    /// screenshots follow this vendor's caps.
    Default(VendorCap),
    /// `new`: a fresh session.
    Fresh,
    /// An id a response gave.
    Id(&'a str),
}

impl<'a> Wanted<'a> {
    /// What the header's value (if any) asks for, on the endpoint of
    /// `vendor`.
    pub fn of(header: Option<&'a str>, vendor: VendorCap) -> Self {
        match header {
            None => Self::Default(vendor),
            Some(v) if v.eq_ignore_ascii_case(NEW) => Self::Fresh,
            Some(id) => Self::Id(id),
        }
    }
}

/// One HTTP session.
pub(crate) struct HttpSession {
    /// The engine's session.
    pub session: Session,
    /// The token (its index in the server's list) that made it.
    token: usize,
    /// How long its takeover lasts without input.
    takeover_idle: Duration,
    /// The last screenshot this session was sent; the lock also runs one
    /// request of the session at a time.
    pub last_plan: tokio::sync::Mutex<Option<Arc<ShotPlan>>>,
    /// When it last sent input while its takeover is on.
    last_input: Mutex<Option<Instant>>,
    /// When it was last used.
    last_seen: Mutex<Instant>,
}

impl HttpSession {
    /// Notes input sent now, or the takeover started now: its idle time
    /// starts again (and `BUSY` tells others when it ends).
    pub fn touched_input(&self, engine: &Engine) {
        *lock(&self.last_input) = Some(Instant::now());
        let until = std::time::SystemTime::now() + self.takeover_idle;
        engine.set_takeover_until(&self.session, Some(until));
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// Why a session header was refused.
#[derive(Debug)]
pub(crate) enum SessionRefusal {
    /// The id names no session (never created, or closed).
    Unknown,
    /// Too many sessions are open.
    TooMany,
}

/// Every HTTP session.
pub(crate) struct Sessions {
    map: Mutex<HashMap<String, Arc<HttpSession>>>,
    /// The default session's id of each token and endpoint that has one.
    defaults: Mutex<HashMap<(usize, VendorCap), String>>,
    sweeping: AtomicBool,
}

impl Sessions {
    /// No sessions yet.
    pub fn new() -> Self {
        Self {
            map: Mutex::new(HashMap::new()),
            defaults: Mutex::new(HashMap::new()),
            sweeping: AtomicBool::new(false),
        }
    }

    /// The session `wanted` names, when `token` made it: its default
    /// session, a fresh one, or the one an id names.
    pub fn resolve(
        &self,
        state: &Arc<AppState>,
        token: usize,
        wanted: Wanted<'_>,
    ) -> Result<Arc<HttpSession>, SessionRefusal> {
        match wanted {
            Wanted::Id(id) => self.named(id, token).ok_or(SessionRefusal::Unknown),
            Wanted::Fresh => self.open(state, token),
            Wanted::Default(vendor) => {
                let mut defaults = lock(&self.defaults);
                let key = (token, vendor);
                if let Some(s) = defaults.get(&key).and_then(|id| self.named(id, token)) {
                    return Ok(s);
                }
                let s = self.open(state, token)?;
                defaults.insert(key, s.session.id.clone());
                Ok(s)
            }
        }
    }

    /// The session `id` names, when `token` made it; marked as used.
    fn named(&self, id: &str, token: usize) -> Option<Arc<HttpSession>> {
        if id.len() > MAX_ID_LEN {
            return None;
        }
        let s = lock(&self.map)
            .get(id)
            .filter(|s| s.token == token)
            .cloned()?;
        *lock(&s.last_seen) = Instant::now();
        Some(s)
    }

    /// A fresh session of `token`, making room among its own when it has
    /// its share.
    fn open(
        &self,
        state: &Arc<AppState>,
        token: usize,
    ) -> Result<Arc<HttpSession>, SessionRefusal> {
        let mut map = lock(&self.map);
        let own = map.values().filter(|s| s.token == token).count();
        if own >= MAX_PER_TOKEN {
            // A client that never sends the header back should not lock
            // itself out: its least recently used session without a
            // takeover makes room. Another token's sessions are not its
            // to end.
            let idle = map
                .iter()
                .filter(|(_, s)| s.token == token && !state.engine.takeover_state(&s.session).on)
                .min_by_key(|(_, s)| *lock(&s.last_seen))
                .map(|(id, _)| id.clone());
            let old = idle
                .and_then(|id| map.remove(&id))
                .ok_or(SessionRefusal::TooMany)?;
            let engine = state.engine.clone();
            tokio::spawn(async move { engine.close_session(&old.session).await });
        } else if map.len() >= MAX_SESSIONS {
            return Err(SessionRefusal::TooMany);
        }
        let session = state.engine.open_session("http");
        let s = Arc::new(HttpSession {
            session,
            token,
            takeover_idle: state.config.takeover_idle,
            last_plan: tokio::sync::Mutex::new(None),
            last_input: Mutex::new(None),
            last_seen: Mutex::new(Instant::now()),
        });
        map.insert(s.session.id.clone(), s.clone());
        drop(map);
        self.start_sweeper(state);
        Ok(s)
    }

    /// Removes the session `id` names, when `token` made it (it is then
    /// closed).
    pub fn remove(&self, id: &str, token: usize) -> Option<Arc<HttpSession>> {
        let mut map = lock(&self.map);
        if map.get(id)?.token != token {
            return None;
        }
        map.remove(id)
    }

    /// Starts the task that ends idle takeovers and closes idle sessions.
    fn start_sweeper(&self, state: &Arc<AppState>) {
        if self.sweeping.swap(true, Ordering::SeqCst) {
            return;
        }
        let weak = Arc::downgrade(state);
        let tick = (state.config.takeover_idle / 4)
            .clamp(Duration::from_millis(20), Duration::from_secs(1));
        tokio::spawn(sweep(weak, tick));
    }

    /// Sessions whose takeover went idle, and sessions gone idle (removed).
    fn idle(
        &self,
        takeover_idle: Duration,
        session_idle: Duration,
    ) -> (Vec<Arc<HttpSession>>, Vec<Arc<HttpSession>>) {
        let mut map = lock(&self.map);
        let now = Instant::now();
        let mut quiet = Vec::new();
        for s in map.values() {
            let mut last = lock(&s.last_input);
            if last.is_some_and(|t| now - t >= takeover_idle) {
                *last = None;
                quiet.push(s.clone());
            }
        }
        let gone: Vec<String> = map
            .iter()
            .filter(|(_, s)| now - *lock(&s.last_seen) >= session_idle)
            .map(|(id, _)| id.clone())
            .collect();
        let closed = gone.iter().filter_map(|id| map.remove(id)).collect();
        (quiet, closed)
    }
}

/// Ends takeovers idle for `takeover_idle` and closes sessions unused for
/// the server's idle timeout, until the server is gone.
async fn sweep(state: Weak<AppState>, tick: Duration) {
    loop {
        tokio::time::sleep(tick).await;
        let Some(state) = state.upgrade() else {
            return;
        };
        let (quiet, closed) = state
            .computer
            .idle(state.config.takeover_idle, state.config.idle_timeout);
        for s in quiet {
            end_takeover(&state.engine, &s.session).await;
        }
        for s in closed {
            tracing::debug!(session = %s.session.id, "idle HTTP session closed");
            state.engine.close_session(&s.session).await;
        }
    }
}

async fn end_takeover(engine: &Engine, session: &Session) {
    if engine.takeover_state(session).on {
        tracing::debug!(session = %session.id, "takeover idle: ended");
        let _ = engine.takeover(session, false).await;
    }
}
