//! What the tray and the Activity window show: the open sessions and
//! one of four states, folded from the engine's session and takeover
//! events.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::{SystemTime, UNIX_EPOCH};

use deskhand_engine::{Engine, TakeoverEvent};
use serde::Serialize;

/// The tray's state, most pressing first.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    /// The person took over; an agent waits for Continue.
    Paused,
    /// An agent drives the desktop (the red frame shows).
    Takeover,
    /// An agent is connected.
    Connected,
    /// No agent is connected.
    Idle,
}

impl Status {
    /// The state's name for the top bar (its dot's colour).
    pub fn id(self) -> &'static str {
        match self {
            Self::Paused => "paused",
            Self::Takeover => "takeover",
            Self::Connected => "connected",
            Self::Idle => "idle",
        }
    }

    /// The status line of the menu.
    pub fn line(self, sessions: usize) -> String {
        match self {
            Self::Paused => "Paused: you have control".into(),
            Self::Takeover => "An agent is using the desktop".into(),
            Self::Connected if sessions == 1 => "1 agent connected".into(),
            Self::Connected => format!("{sessions} agents connected"),
            Self::Idle => "No agent connected".into(),
        }
    }
}

/// An open session as the Activity window lists it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Opened {
    /// Its protocol.
    pub protocol: &'static str,
    /// When it opened, in seconds since the Unix epoch.
    pub since: f64,
}

/// The sessions open and their takeovers.
#[derive(Debug, Default)]
pub struct Tracker {
    sessions: BTreeMap<String, Opened>,
    /// (on, paused) per session that reported a takeover state.
    takeovers: BTreeMap<String, (bool, bool)>,
}

impl Tracker {
    /// Takes one event in; says whether what the tray shows may change.
    pub fn take(&mut self, event: &TakeoverEvent) -> bool {
        match event {
            TakeoverEvent::SessionStarted {
                session, protocol, ..
            } => {
                let since = SystemTime::now()
                    .duration_since(UNIX_EPOCH)
                    .map_or(0.0, |d| d.as_secs_f64());
                self.sessions
                    .insert(session.clone(), Opened { protocol, since });
            }
            TakeoverEvent::SessionEnded { session, .. } => {
                self.sessions.remove(session);
                self.takeovers.remove(session);
            }
            TakeoverEvent::State { session, state } => {
                self.takeovers
                    .insert(session.clone(), (state.on, state.paused));
            }
            _ => return false,
        }
        true
    }

    /// How many sessions are open.
    pub fn sessions(&self) -> usize {
        self.sessions.len()
    }

    /// The open sessions, with their takeover's (on, paused).
    pub fn open(&self) -> Vec<(String, Opened, (bool, bool))> {
        self.sessions
            .iter()
            .map(|(id, opened)| {
                let takeover = self.takeovers.get(id).copied().unwrap_or_default();
                (id.clone(), opened.clone(), takeover)
            })
            .collect()
    }

    /// What the tray shows now.
    pub fn status(&self) -> Status {
        let live = |s: &String| self.sessions.contains_key(s);
        let mut takeovers = self.takeovers.iter().filter(|(s, _)| live(s));
        // A takeover that ended (Stop all agents) may still read paused:
        // only one that is on waits for Continue.
        if takeovers.clone().any(|(_, (on, paused))| *on && *paused) {
            Status::Paused
        } else if takeovers.any(|(_, (on, _))| *on) {
            Status::Takeover
        } else if self.sessions.is_empty() {
            Status::Idle
        } else {
            Status::Connected
        }
    }
}

/// The tracker the tray and the Activity window share.
pub type Shared = Arc<Mutex<Tracker>>;

/// Follows the engine's events into `tracker`, calling `changed` after
/// each event that may change what the tray shows.
pub async fn follow(engine: Arc<Engine>, tracker: Shared, mut changed: impl FnMut(&Tracker)) {
    let mut events = engine.takeover_events();
    loop {
        match events.recv().await {
            Ok(event) => {
                let Ok(mut t) = tracker.lock() else { return };
                if t.take(&event) {
                    changed(&t);
                }
            }
            Err(tokio::sync::broadcast::error::RecvError::Lagged(n)) => {
                tracing::warn!(missed = n, "the app fell behind on events");
            }
            Err(tokio::sync::broadcast::error::RecvError::Closed) => return,
        }
    }
}

#[cfg(test)]
mod tests {
    use deskhand_engine::takeover::TakeoverState;

    use super::*;

    fn started(s: &str) -> TakeoverEvent {
        TakeoverEvent::SessionStarted {
            session: s.into(),
            protocol: "wire",
            at_ms: 0,
        }
    }

    fn state(s: &str, on: bool, paused: bool) -> TakeoverEvent {
        TakeoverEvent::State {
            session: s.into(),
            state: TakeoverState {
                on,
                paused,
                ..TakeoverState::default()
            },
        }
    }

    #[test]
    fn the_tray_follows_sessions_and_takeovers() {
        let mut t = Tracker::default();
        assert_eq!(t.status(), Status::Idle);
        assert!(t.take(&started("a")));
        assert_eq!(t.status(), Status::Connected);
        t.take(&state("a", true, false));
        assert_eq!(t.status(), Status::Takeover);
        t.take(&started("b"));
        t.take(&state("a", true, true));
        assert_eq!(t.status(), Status::Paused, "a pause wins over the rest");
        t.take(&state("b", false, true));
        assert_eq!(t.status(), Status::Paused, "an ended takeover is no pause");
        t.take(&state("a", false, true));
        assert_eq!(t.status(), Status::Connected, "Stop all agents ended both");
        t.take(&state("a", true, true));
        assert_eq!(t.status().line(t.sessions()), Status::Paused.line(2));
        t.take(&TakeoverEvent::SessionEnded {
            session: "a".into(),
            at_ms: 1,
        });
        assert_eq!(t.status(), Status::Connected);
        assert_eq!(t.status().line(t.sessions()), "1 agent connected");
        let open = t.open();
        assert_eq!(open.len(), 1);
        assert_eq!((open[0].0.as_str(), open[0].1.protocol), ("b", "wire"));
    }
}
