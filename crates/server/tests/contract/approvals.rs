//! The person's approval of computer-endpoint calls (modes `write`,
//! `prompt`, `deny`; provider safety checks), asked through the engine's
//! events as the host's control pipe does, and the refusal policy for
//! terminals over every protocol.

#![allow(missing_docs)]

use std::sync::Arc;
use std::time::Duration;

use deskhand_backend_mock::{Event, MockDesktop, window};
use deskhand_engine::approval::ApprovalMode;
use deskhand_engine::refusal::{RefusalPolicy, RefusedClass};
use deskhand_engine::{Consent, Engine, Rect, TakeoverEvent};
use serde_json::{Value, json};

use crate::common::{Server, error_code};
use crate::http::post;

async fn server(consent: Consent) -> Server {
    let desktop = MockDesktop::new();
    {
        let mut s = desktop.state();
        let mut term = window(11, 100, "XTerm", "term", Rect::new(0, 0, 800, 600));
        term.focused = true;
        s.windows.push(term);
        s.windows.push(window(
            12,
            200,
            "Gedit",
            "notes",
            Rect::new(900, 0, 800, 600),
        ));
    }
    let backend = desktop.backend();
    Server::start(desktop, backend, consent).await
}

fn with_mode(mode: ApprovalMode) -> Consent {
    Consent {
        approval: mode,
        ..Consent::sandbox()
    }
}

/// Answers the next approval question with `approve`, returning what it
/// asked.
fn answer_next(engine: &Arc<Engine>, approve: bool) -> tokio::task::JoinHandle<Value> {
    let mut events = engine.takeover_events();
    let engine = engine.clone();
    tokio::spawn(async move {
        loop {
            if let Ok(TakeoverEvent::ApprovalRequested(ask)) = events.recv().await {
                assert!(engine.answer_approval(&ask.id, approve));
                return json!({"needs": ask.needs, "actions": ask.actions,
                              "checks": ask.safety_checks.len()});
            }
        }
    })
}

async fn batch(s: &Server, session: Option<&str>, actions: Value) -> (Value, String) {
    let a = post(s.port, "/v1/actions", session, &actions).await;
    (a.json(), a.session())
}

#[tokio::test]
async fn under_write_reads_run_and_input_waits_for_the_person() {
    let s = server(with_mode(ApprovalMode::Write)).await;
    s.engine.set_person_present(true);
    let (r, session) = batch(&s, None, json!([{"action_type": "screenshot"}])).await;
    assert_eq!(
        r["status"], "success",
        "a read is not asked about: {}",
        r["error"]
    );
    let asked = answer_next(&s.engine, true);
    let (r, _) = batch(
        &s,
        Some(&session),
        json!([{"action_type": "type", "text": "ok"}]),
    )
    .await;
    assert_eq!(r["status"], "success", "{}", r["error"]);
    let asked = asked.await.expect("asked");
    assert_eq!(
        asked,
        json!({"needs": "input", "actions": ["type"], "checks": 0})
    );
    assert_eq!(s.desktop.state().typed(), "ok");

    let asked = answer_next(&s.engine, false);
    let (r, _) = batch(
        &s,
        Some(&session),
        json!([{"action_type": "type", "text": "no"}]),
    )
    .await;
    asked.await.expect("asked");
    assert_eq!(r["error"]["code"], "approval_denied", "{}", r["error"]);
    assert_eq!(r["error"]["failed_action_index"], 0);
    assert!(
        r["action_result"]["screenshot"].is_string(),
        "reads still run"
    );
    assert_eq!(s.desktop.state().typed(), "ok", "nothing more was typed");
}

#[tokio::test]
async fn no_person_to_ask_fails_closed_and_deny_shows_nothing() {
    let s = server(with_mode(ApprovalMode::Write)).await;
    let (_, session) = batch(&s, None, json!([{"action_type": "screenshot"}])).await;
    let (r, _) = batch(
        &s,
        Some(&session),
        json!([{"action_type": "type", "text": "x"}]),
    )
    .await;
    assert_eq!(r["error"]["code"], "approval_denied", "{}", r["error"]);
    assert_eq!(s.desktop.state().typed(), "");

    let s = server(with_mode(ApprovalMode::Deny)).await;
    let (r, _) = batch(&s, None, json!([{"action_type": "screenshot"}])).await;
    assert_eq!(r["error"]["code"], "approval_denied", "{}", r["error"]);
    assert!(r["action_result"]["screenshot"].is_null(), "{}", r["error"]);

    // Prompt asks about a screenshot too; denied, it shows nothing.
    let s = server(with_mode(ApprovalMode::Prompt)).await;
    s.engine.set_person_present(true);
    let asked = answer_next(&s.engine, false);
    let (r, _) = batch(&s, None, json!([{"action_type": "screenshot"}])).await;
    assert_eq!(asked.await.expect("asked")["needs"], "read");
    assert_eq!(r["error"]["code"], "approval_denied");
    assert!(r["action_result"]["screenshot"].is_null(), "{}", r["error"]);
}

#[tokio::test]
async fn openai_safety_checks_need_the_person_whatever_the_mode() {
    let s = server(Consent::sandbox()).await;
    let call = |checks: Value| {
        json!({"type": "computer_call", "call_id": "c1",
               "action": {"type": "type", "text": "hi"},
               "pending_safety_checks": checks})
    };
    let check = json!([{"id": "sc1", "code": "malicious_instructions",
                        "message": "The page asks to type a password."}]);
    let first = post(s.port, "/v1/computer/openai", None, &call(json!([]))).await;
    let session = first.session();
    assert_eq!(first.status, 200);
    let a = post(
        s.port,
        "/v1/computer/openai",
        Some(&session),
        &call(check.clone()),
    )
    .await;
    assert_eq!(a.status, 422, "no person: refused");
    assert_eq!(a.json()["error"]["code"], "approval_denied");
    assert_eq!(s.desktop.state().typed(), "hi", "only the first call typed");

    s.engine.set_person_present(true);
    let asked = answer_next(&s.engine, true);
    let a = post(
        s.port,
        "/v1/computer/openai",
        Some(&session),
        &call(check.clone()),
    )
    .await;
    assert_eq!(asked.await.expect("asked")["checks"], 1);
    assert_eq!(a.status, 200);
    let out = a.json();
    assert_eq!(out["acknowledged_safety_checks"], check, "{out}");
    assert_eq!(s.desktop.state().typed(), "hihi");
    let bad = post(
        s.port,
        "/v1/computer/openai",
        Some(&session),
        &call(json!([{"code": "x"}])),
    )
    .await;
    assert_eq!(bad.json()["error"]["code"], "invalid_arguments");
}

#[tokio::test]
async fn refused_terminals_get_nothing_over_any_protocol() {
    let consent = Consent {
        refuse: RefusalPolicy {
            classes: vec![RefusedClass::Terminals],
        },
        ..Consent::sandbox()
    };
    let s = server(consent.clone()).await;
    let (_, session) = batch(&s, None, json!([{"action_type": "screenshot"}])).await;
    let (r, _) = batch(
        &s,
        Some(&session),
        json!([{"action_type": "left_click", "x": 100, "y": 100}]),
    )
    .await;
    assert_eq!(r["error"]["code"], "permission_denied", "{}", r["error"]);
    let (r, _) = batch(
        &s,
        Some(&session),
        json!([{"action_type": "type", "text": "rm -rf ~"}]),
    )
    .await;
    assert_eq!(
        r["error"]["code"], "permission_denied",
        "keys to the focused xterm: {}",
        r["error"]
    );
    let (r, _) = batch(
        &s,
        Some(&session),
        json!([{"action_type": "left_click", "x": 1000, "y": 100}]),
    )
    .await;
    assert_eq!(r["status"], "success", "the editor is fine: {}", r["error"]);

    // The wire ops: a session of their own on a desktop of their own.
    let s = server(consent).await;
    let mut c = s.ready_client().await;
    let reply = c
        .act(json!({"action": "left_click", "coordinate": [50, 50]}))
        .await;
    assert_eq!(error_code(&reply), "PERMISSION_DENIED", "{reply}");
    let reply = c.act(json!({"action": "type", "text": "ls"})).await;
    assert_eq!(error_code(&reply), "PERMISSION_DENIED", "{reply}");
    tokio::time::sleep(Duration::from_millis(50)).await;
    let st = s.desktop.state();
    assert_eq!(st.typed(), "");
    assert!(
        !st.events.iter().any(|e| matches!(e, Event::Button(..))),
        "nothing reached the xterm: {:?}",
        st.events
    );
}
