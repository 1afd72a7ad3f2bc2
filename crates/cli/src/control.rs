//! The host's control pipe of `deskhand serve`: JSON lines on stdin
//! (`takeover.resume` after a click in the host's own UI,
//! `session.revoke`, `kill`, `approve`/`deny` of an approval question,
//! `consent.answer`), and events and acks as JSON lines on stdout
//! (`takeover.paused`, `takeover.resumed`, `session.started`,
//! `session.ended`, `approval.request`, `consent.request`,
//! `consent.ended`). No agent reaches this pipe. While stdin is open the
//! host counts as a person who can be asked; once it closes, every
//! question is denied. A terminal on stdin is no pipe: an agent driving
//! the desktop could type into it, so then nobody is asked.

use std::io::{IsTerminal, Write};
use std::sync::Arc;

use deskhand_engine::{ConsentAnswer, ConsentAsk, Engine, TakeoverEvent};
use serde_json::{Value, json};

use crate::lines::{self, Line};

/// Writes one JSON line to stdout.
pub fn emit(v: &Value) {
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "{v}");
    let _ = out.flush();
}

/// Prints takeover pauses and resumes as they happen.
pub async fn forward_events(engine: Arc<Engine>) {
    let mut events = engine.takeover_events();
    loop {
        match events.recv().await {
            Ok(TakeoverEvent::Paused {
                session,
                reason,
                at_ms,
            }) => emit(&json!({
                "event": "takeover.paused", "session": session,
                "reason": reason.as_str(), "at_ms": at_ms,
            })),
            Ok(TakeoverEvent::Resumed { session, by, at_ms }) => emit(&json!({
                "event": "takeover.resumed", "session": session,
                "by": by.as_str(), "at_ms": at_ms,
            })),
            Ok(TakeoverEvent::SessionStarted {
                session,
                protocol,
                at_ms,
            }) => emit(&json!({
                "event": "session.started", "session": session,
                "protocol": protocol, "at_ms": at_ms,
            })),
            Ok(TakeoverEvent::SessionEnded { session, at_ms }) => emit(&json!({
                "event": "session.ended", "session": session, "at_ms": at_ms,
            })),
            Ok(TakeoverEvent::ApprovalRequested(ask)) => emit(&json!({
                "event": "approval.request", "id": ask.id, "session": ask.session,
                "needs": ask.needs, "actions": ask.actions,
                "safety_checks": ask.safety_checks, "timeout_s": ask.timeout_s,
            })),
            Ok(TakeoverEvent::ConsentRequested(ask)) => emit(&consent_request(&ask)),
            Ok(TakeoverEvent::ConsentEnded { id, outcome }) => emit(&json!({
                "event": "consent.ended", "id": id, "outcome": outcome,
            })),
            Ok(TakeoverEvent::State { .. }) => {}
            Err(tokio::sync::broadcast::error::RecvError::Lagged(n)) => {
                tracing::warn!(missed = n, "control pipe fell behind on takeover events");
            }
            Err(tokio::sync::broadcast::error::RecvError::Closed) => return,
        }
    }
}

/// A consent question as the pipe's host sees it.
fn consent_request(ask: &ConsentAsk) -> Value {
    json!({
        "event": "consent.request", "id": ask.id, "session": ask.session,
        "protocol": ask.protocol, "client": ask.client,
        "apps": ask.wants.apps, "takeover": ask.wants.takeover,
        "clipboard_read": ask.wants.clipboard_read, "lease_s": ask.wants.lease_s,
        "timeout_s": ask.timeout_s,
    })
}

/// A `consent.answer`'s params: `allow`, and what was ticked.
fn consent_answer(params: &Value) -> Result<(&str, ConsentAnswer), &'static str> {
    let id = params["id"]
        .as_str()
        .ok_or("consent.answer needs params.id")?;
    let flag = |name: &str| match &params[name] {
        Value::Null => Ok(false),
        Value::Bool(b) => Ok(*b),
        _ => Err("consent.answer's allow, takeover and clipboard_read are true or false"),
    };
    let lease_s = match &params["lease_s"] {
        Value::Null => None,
        v => Some(
            v.as_u64()
                .filter(|s| *s > 0)
                .ok_or("consent.answer's lease_s is a number of seconds")?,
        ),
    };
    let answer = ConsentAnswer {
        allow: flag("allow")?,
        takeover: flag("takeover")?,
        clipboard_read: flag("clipboard_read")?,
        lease_s,
    };
    Ok((id, answer))
}

/// Answers one control line.
async fn handle(engine: &Engine, line: &str) -> Value {
    let Ok(msg) = serde_json::from_str::<Value>(line) else {
        tracing::warn!(bytes = line.len(), "a control line is not JSON: skipped it");
        return json!({"event": "error", "message": "not JSON"});
    };
    match msg["method"].as_str() {
        Some("takeover.resume") => {
            let session = msg["params"]["session"].as_str().map(str::to_owned);
            let resumed = engine.resume_takeover(session).await;
            json!({"event": "ack", "method": "takeover.resume", "resumed": resumed})
        }
        Some("session.revoke") => match msg["params"]["session"].as_str() {
            Some(session) => {
                engine.revoke_session(session).await;
                json!({"event": "ack", "method": "session.revoke", "session": session})
            }
            None => json!({"event": "error", "message": "session.revoke needs params.session"}),
        },
        Some(method @ ("approve" | "deny")) => match msg["params"]["id"].as_str() {
            Some(id) => {
                let waiting = engine.answer_approval(id, method == "approve");
                json!({"event": "ack", "method": method, "id": id, "waiting": waiting})
            }
            None => json!({"event": "error", "message": format!("{method} needs params.id")}),
        },
        Some("consent.answer") => match consent_answer(&msg["params"]) {
            Ok((id, answer)) => {
                let waiting = engine.answer_consent(id, answer);
                json!({"event": "ack", "method": "consent.answer", "id": id, "waiting": waiting})
            }
            Err(message) => json!({"event": "error", "message": message}),
        },
        Some("kill") => {
            engine.kill_switch().await;
            json!({"event": "ack", "method": "kill"})
        }
        _ => json!({"event": "error", "message": "unknown method", "method": msg["method"]}),
    }
}

/// The longest control line: answers and ids are short.
const MAX_CONTROL_LINE: usize = 64 << 10;

/// Answers one line read from the pipe; a line that is not text (or too
/// long) is skipped and logged by its length, never its content.
async fn answer_line(engine: &Engine, line: Line) -> Option<Value> {
    match line {
        Line::Text(text) if text.trim().is_empty() => None,
        Line::Text(text) => Some(handle(engine, &text).await),
        Line::NotUtf8(bytes) => {
            tracing::warn!(bytes, "a control line is not UTF-8: skipped it");
            Some(json!({"event": "error", "message": "not UTF-8"}))
        }
        Line::TooLong => {
            tracing::warn!(
                max = MAX_CONTROL_LINE,
                "a control line is too long: skipped it"
            );
            Some(json!({"event": "error", "message": "line too long"}))
        }
    }
}

/// Reads control lines from stdin until it closes.
pub async fn read_commands(engine: Arc<Engine>) {
    if std::io::stdin().is_terminal() {
        tracing::info!(
            "stdin is a terminal, not a host's pipe: nobody is asked for approval or consent"
        );
        return;
    }
    engine.set_person_present(true);
    let mut stdin = tokio::io::BufReader::new(tokio::io::stdin());
    loop {
        let line = match lines::next(&mut stdin, MAX_CONTROL_LINE).await {
            Ok(Some(line)) => line,
            Ok(None) => break,
            Err(e) => {
                tracing::warn!(error = %e, "reading the control pipe failed");
                break;
            }
        };
        if let Some(answer) = answer_line(&engine, line).await {
            emit(&answer);
        }
    }
    engine.set_person_present(false);
    tracing::info!("the control pipe closed: approval questions are denied from now on");
}
