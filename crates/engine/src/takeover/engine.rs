//! The engine's takeover calls: what adapters and hosts ask of the
//! takeover core.

use std::time::Instant;

use serde_json::json;
use tokio::sync::broadcast;

use super::{ResumedBy, TakeoverEvent, TakeoverState};
use crate::error::EngineError;
use crate::{Engine, Session};

impl Engine {
    /// Turns `session`'s takeover on or off; the answer is its state.
    /// Turning it on needs the input consent and a visible indicator.
    pub async fn takeover(
        &self,
        session: &Session,
        on: bool,
    ) -> Result<TakeoverState, EngineError> {
        let started = Instant::now();
        let result = if on {
            match self.takeover_granted(session).await {
                Ok(()) => {
                    let core = self.takeovers.clone();
                    let (id, protocol) = (session.id.clone(), session.protocol);
                    tokio::task::spawn_blocking(move || core.begin(&id, protocol))
                        .await
                        .map_err(|_| EngineError::ShuttingDown)
                        .and_then(|r| r)
                        .map_err(|e| self.named_holder(e))
                }
                Err(e) => Err(e),
            }
        } else {
            let core = self.takeovers.clone();
            let id = session.id.clone();
            tokio::task::spawn_blocking(move || core.end(&id, "ended"))
                .await
                .map_err(|_| EngineError::ShuttingDown)
        };
        self.record(
            session,
            "takeover.request",
            json!({"on": on}),
            result.as_ref().map(|_| ()),
            started,
        );
        result
    }

    /// Whether `session` may take over: by the consent in force or an
    /// earlier answer, else by asking the person now (once per session).
    async fn takeover_granted(&self, session: &Session) -> Result<(), EngineError> {
        self.not_revoked(session)?;
        let wants = crate::consent_ask::ConsentWants {
            takeover: true,
            ..Default::default()
        };
        match self.input_granted(session) {
            Err(_) if self.may_ask_consent(session, &wants) => {
                match self.ask_consent(session, wants.clone()).await {
                    Ok(g) if g.short_of(&wants).is_none() => Ok(()),
                    Ok(g) => Err(self.consent_short(session, &g, &wants)),
                    Err(e) => Err(e),
                }
            }
            Err(refused) => Err(match self.grant(session) {
                Some(g) => self.consent_short(session, &g, &wants),
                None => refused,
            }),
            granted => granted,
        }
    }

    /// Whether a click the host's own UI got just now (the consent
    /// dialog's boxes and Allow) is the person's: made by a real device,
    /// not synthetic (XTEST on X11), and not right after deskhand pressed a button.
    pub async fn person_clicked(&self) -> bool {
        let at = Instant::now();
        let core = self.takeovers.clone();
        tokio::task::spawn_blocking(move || core.real_click(at))
            .await
            .unwrap_or(false)
    }

    /// `session`'s takeover state.
    pub fn takeover_state(&self, session: &Session) -> TakeoverState {
        self.takeovers.state(&session.id)
    }

    /// Takeover changes, for adapters (pushed state) and hosts (events).
    pub fn takeover_events(&self) -> broadcast::Receiver<TakeoverEvent> {
        self.takeovers.subscribe()
    }

    /// The host's `takeover.resume` (after a click in its own UI): resumes
    /// `session`, or every paused session; returns those resumed.
    pub async fn resume_takeover(&self, session: Option<String>) -> Vec<String> {
        let core = self.takeovers.clone();
        tokio::task::spawn_blocking(move || core.resume(session.as_deref(), ResumedBy::Host))
            .await
            .unwrap_or_default()
    }

    /// "Pause agents" (the host's UI): holds the desktop for the person
    /// until they click Continue, as their own input would.
    pub async fn pause_agents(&self) {
        let core = self.takeovers.clone();
        let _ = tokio::task::spawn_blocking(move || core.pause()).await;
    }

    /// The kill switch: ends every takeover and releases everything held.
    pub async fn kill_switch(&self) {
        let core = self.takeovers.clone();
        let _ = tokio::task::spawn_blocking(move || core.kill()).await;
    }
}
