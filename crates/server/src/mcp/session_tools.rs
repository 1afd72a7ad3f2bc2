//! `start_session`, `get_session_state`, `end_session`: what a session
//! asks for is narrowed to what the person granted (the consent source,
//! never the agent), and asking beyond it answers
//! `capability_not_consented` with the session left headless.

use std::time::{Duration, Instant};

use deskhand_engine::{AppScope, ConsentWants, EngineError, Grant, TakeoverState};
use deskhand_protocol::ErrorCode;
use deskhand_protocol::mcp::{
    InputMode, SessionArgs, SessionEnded, SessionState, StartSessionArgs, TakeoverInfo,
};
use rmcp::model::CallToolResult;

use super::Call;
use super::envelope::{Fail, structured};
use super::sessions::DriverSession;

/// The longest lease when the person set none: the session lasts until it
/// ends, but a lease asked for is kept.
const MAX_ASKED_LEASE_S: u64 = 7 * 24 * 3600;

/// The session's state as `start_session` and `get_session_state` give it.
pub fn state_of(s: &DriverSession, t: &TakeoverState) -> SessionState {
    let reason = t.reason.clone().or_else(|| s.takeover_refused.clone());
    SessionState {
        ok: true,
        session_id: s.engine.id.clone(),
        input: if t.on {
            InputMode::Takeover
        } else {
            InputMode::Headless
        },
        apps: s.apps.names(),
        clipboard_read: s.clipboard_read,
        lease_remaining_s: s.lease_remaining_s(),
        takeover: TakeoverInfo {
            reason: if t.on { None } else { reason },
            ..t.payload()
        },
    }
}

/// `start_session`.
pub async fn start(
    call: &Call<'_>,
    args: Result<StartSessionArgs, Fail>,
) -> Result<CallToolResult, Fail> {
    let args = args?;
    if args.lease_s == Some(0) || args.lease_s.is_some_and(|s| s > MAX_ASKED_LEASE_S) {
        return Err(Fail::invalid(format!(
            "lease_s must be between 1 and {MAX_ASKED_LEASE_S}"
        )));
    }
    if let Some(apps) = &args.apps
        && (apps.is_empty() || apps.iter().any(|a| a.trim().is_empty() || a.len() > 256))
    {
        return Err(Fail::invalid("apps must list app names, or \"*\""));
    }
    let mut s = call.session_to_keep(args.session_id.as_deref())?;
    let engine = call.engine();
    let consent = engine.consent();
    let wants = args.input.unwrap_or(InputMode::Headless);
    let wants_clipboard = args.clipboard_read.unwrap_or(false);
    let ask = ConsentWants {
        apps: args
            .apps
            .clone()
            .filter(|apps| !apps.iter().any(|a| a == "*")),
        takeover: wants == InputMode::Takeover,
        clipboard_read: wants_clipboard,
        lease_s: args.lease_s,
    };
    let grant = person_grant(call, &s, &args, &ask).await;
    let mut refused: Vec<String> = Vec::new();

    s.apps = match &grant {
        Some(g) => g.apps.narrow(args.apps.as_deref()),
        None => consent.apps.narrow(args.apps.as_deref()),
    };
    if let Some(asked) = &args.apps {
        let granted = s.apps.names();
        refused.extend(
            asked
                .iter()
                .filter(|a| *a != "*" && !granted.iter().any(|g| g.eq_ignore_ascii_case(a)))
                .map(|a| format!("app {}", deskhand_protocol::mcp::app_text(a, 64))),
        );
    }
    let clipboard_granted =
        consent.clipboard_read || grant.as_ref().is_some_and(|g| g.clipboard_read);
    s.clipboard_read = wants_clipboard && clipboard_granted;
    if wants_clipboard && !s.clipboard_read {
        refused.push("clipboard_read".into());
    }
    let lease = match (args.lease_s.map(Duration::from_secs), consent.lease) {
        (Some(asked), Some(max)) => Some(asked.min(max)),
        (asked, max) => asked.or(max),
    };
    let until = grant.as_ref().and_then(|g| g.until);
    s.expires = match (lease.map(|l| Instant::now() + l), until) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    };

    let input_granted = consent.input || grant.as_ref().is_some_and(|g| g.takeover);
    let mut busy = None;
    s.takeover_refused = None;
    s.input = InputMode::Headless;
    if wants == InputMode::Takeover && !input_granted {
        refused.push("takeover".into());
        s.takeover_refused = Some("not_consented".into());
        let _ = engine.takeover(&s.engine, false).await;
    } else if wants == InputMode::Takeover {
        match engine.takeover(&s.engine, true).await {
            Ok(t) if t.on => s.input = InputMode::Takeover,
            Ok(t) => s.takeover_refused = t.reason.or(Some("not_granted".into())),
            Err(EngineError::Busy(holder)) => {
                s.takeover_refused = Some("busy".into());
                busy = Some(EngineError::Busy(holder));
            }
            // Revoked by the host: the person's grant no longer holds.
            Err(EngineError::NotGranted { .. }) => {
                refused.push("takeover".into());
                s.takeover_refused = Some("not_consented".into());
            }
            Err(e) => return Err(e.into()),
        }
    } else {
        let _ = engine.takeover(&s.engine, false).await;
    }
    call.sessions().put(s.clone());
    call.note_takeover_end(&s);
    let state = state_of(&s, &engine.takeover_state(&s.engine));
    if let Some(e) = busy {
        // Which client holds the desktop and until when; the session is
        // kept, headless, for a later start_session to try again.
        let mut fail = Fail::from(e);
        fail.0.session_id = Some(state.session_id.clone());
        fail.0.reason = Some("busy".into());
        return Err(fail);
    }
    if !refused.is_empty() {
        let (refused, again) = (refused.join(", "), engine.ask_again_words(&s.engine, &ask));
        let message = match &grant {
            Some(g) => format!(
                "the person allowed this session {}, not: {refused}; {again}",
                g.words()
            ),
            None => format!("not granted: {refused}; {again}"),
        };
        let mut fail = Fail::new(ErrorCode::CapabilityNotConsented, message);
        fail.0.session_id = Some(state.session_id.clone());
        fail.0.reason = state.takeover.reason.clone();
        return Err(fail);
    }
    Ok(structured(&state))
}

/// What the person granted this session in the consent dialog: asked now
/// when the session wants more than the consent in force gives (and may
/// still ask), else an earlier answer.
async fn person_grant(
    call: &Call<'_>,
    s: &DriverSession,
    args: &StartSessionArgs,
    ask: &ConsentWants,
) -> Option<Grant> {
    let engine = call.engine();
    let consent = engine.consent();
    let apps_beyond = args.apps.as_ref().is_some_and(|asked| {
        let granted = consent.apps.narrow(Some(asked));
        asked.iter().any(|a| {
            if a == "*" {
                consent.apps != AppScope::All
            } else {
                !granted.allows(a)
            }
        })
    });
    let beyond = apps_beyond
        || (ask.clipboard_read && !consent.clipboard_read)
        || (ask.takeover && !consent.input);
    if !beyond || !engine.may_ask_consent(&s.engine, ask) {
        return engine.grant(&s.engine);
    }
    if let Some(name) = call.client_name() {
        engine.set_client_name(&s.engine, &name);
    }
    call.while_waiting(engine.ask_consent(&s.engine, ask.clone()))
        .await
        .ok()
}

/// `get_session_state`.
pub async fn state(
    call: &Call<'_>,
    args: Result<SessionArgs, Fail>,
) -> Result<CallToolResult, Fail> {
    let s = call.session(args?.session_id.as_deref()).await?;
    let t = call.engine().takeover_state(&s.engine);
    Ok(structured(&state_of(&s, &t)))
}

/// `end_session`.
pub async fn end(call: &Call<'_>, args: Result<SessionArgs, Fail>) -> Result<CallToolResult, Fail> {
    let s = call.session(args?.session_id.as_deref()).await?;
    call.sessions().remove(&s.engine.id);
    call.engine().close_session(&s.engine).await;
    Ok(structured(&SessionEnded {
        ok: true,
        session_id: s.engine.id,
    }))
}
