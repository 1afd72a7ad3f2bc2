//! Consent asked of the person over the mock desktop: a wire-ops takeover
//! and an MCP `start_session` beyond the consent in force wait for the
//! host's answer (as the tray app's dialog gives it); the grant is never
//! wider than asked and ticked; a session asks once; no host, no question;
//! and only a real device's click counts as the person's.

use std::sync::Arc;
use std::time::Duration;

use deskhand_backend_mock::{Event, MockDesktop};
use deskhand_engine::{AppScope, ConsentAnswer, ConsentAsk, Engine, TakeoverEvent, WatchedInput};
use serde_json::json;

use crate::common::{Server, error_code};
use crate::mcp_client::Mcp;

async fn nothing_granted() -> Server {
    let desktop = MockDesktop::new();
    let backend = desktop.backend();
    let server = Server::start(desktop, backend, deskhand_engine::Consent::none()).await;
    server.engine.set_person_present(true);
    server
}

/// Answers the next consent question with `answer`, returning it.
fn answer_next(engine: &Arc<Engine>, answer: ConsentAnswer) -> tokio::task::JoinHandle<ConsentAsk> {
    let mut events = engine.takeover_events();
    let engine = engine.clone();
    tokio::spawn(async move {
        loop {
            if let Ok(TakeoverEvent::ConsentRequested(ask)) = events.recv().await {
                assert!(engine.answer_consent(&ask.id, answer));
                return ask;
            }
        }
    })
}

const ALLOW_TAKEOVER: ConsentAnswer = ConsentAnswer {
    allow: true,
    takeover: true,
    clipboard_read: false,
    lease_s: None,
};

#[tokio::test]
async fn a_takeover_waits_for_the_persons_allow() {
    let server = nothing_granted().await;
    let mut c = server.client().await;
    c.send_raw(
        json!({"type": "HELLO_ACK", "id": "ack", "ts": 0, "payload": {"client": "agent\u{7} one"}})
            .to_string(),
    )
    .await;
    let asked = answer_next(&server.engine, ALLOW_TAKEOVER);
    let r = c.request("TAKEOVER_REQUEST", json!({"on": true})).await;
    assert_eq!(r["payload"]["on"], true, "{r}");
    let ask = asked.await.expect("asked");
    assert_eq!(ask.client, "agent one", "the client's name, printable");
    assert!(ask.wants.takeover && ask.wants.apps.is_none());
    let r = c
        .act(json!({"action": "left_click", "coordinate": [5, 5]}))
        .await;
    assert_eq!(r["type"], "ACK", "the grant is input too: {r}");
    assert!(!server.desktop.state().events.is_empty());
}

#[tokio::test]
async fn a_session_asks_the_person_once() {
    let server = nothing_granted().await;
    let mut c = server.handshaken_client().await;
    let denied = answer_next(&server.engine, ConsentAnswer::default());
    let r = c.request("TAKEOVER_REQUEST", json!({"on": true})).await;
    assert_eq!(error_code(&r), "CAPABILITY_NOT_GRANTED", "{r}");
    denied.await.expect("asked");
    let mut events = server.engine.takeover_events();
    let again = c.request("TAKEOVER_REQUEST", json!({"on": true})).await;
    assert_eq!(error_code(&again), "CAPABILITY_NOT_GRANTED", "{again}");
    while let Ok(e) = events.try_recv() {
        assert!(
            !matches!(e, TakeoverEvent::ConsentRequested(_)),
            "asked twice: {e:?}"
        );
    }
    let r = c
        .act(json!({"action": "left_click", "coordinate": [5, 5]}))
        .await;
    assert_eq!(error_code(&r), "CAPABILITY_NOT_GRANTED");
    assert!(
        server
            .desktop
            .state()
            .events
            .iter()
            .all(|e| !matches!(e, Event::Button(..)))
    );
}

#[tokio::test]
async fn allowed_without_the_takeover_box_is_no_takeover() {
    let server = nothing_granted().await;
    let mut c = server.handshaken_client().await;
    let unticked = ConsentAnswer {
        allow: true,
        ..ConsentAnswer::default()
    };
    let asked = answer_next(&server.engine, unticked);
    let r = c.request("TAKEOVER_REQUEST", json!({"on": true})).await;
    assert_eq!(error_code(&r), "CAPABILITY_NOT_GRANTED", "{r}");
    asked.await.expect("asked");
    assert!(!server.desktop.state().indicator.shown);
}

#[tokio::test]
async fn without_a_host_nobody_is_asked() {
    let server = nothing_granted().await;
    server.engine.set_person_present(false);
    let mut events = server.engine.takeover_events();
    let mut c = server.handshaken_client().await;
    let r = c.request("TAKEOVER_REQUEST", json!({"on": true})).await;
    assert_eq!(error_code(&r), "CAPABILITY_NOT_GRANTED", "{r}");
    while let Ok(e) = events.try_recv() {
        assert!(
            !matches!(e, TakeoverEvent::ConsentRequested(_)),
            "asked: {e:?}"
        );
    }
}

#[tokio::test]
async fn no_answer_in_time_denies_and_the_host_hears_it_is_over() {
    let server = nothing_granted().await;
    server
        .engine
        .set_consent_timeout(Duration::from_millis(300));
    let mut events = server.engine.takeover_events();
    let mut c = server.handshaken_client().await;
    let r = c.request("TAKEOVER_REQUEST", json!({"on": true})).await;
    assert_eq!(error_code(&r), "CAPABILITY_NOT_GRANTED", "{r}");
    let mut ended = None;
    while let Ok(e) = events.try_recv() {
        if let TakeoverEvent::ConsentEnded { outcome, .. } = e {
            ended = Some(outcome);
        }
    }
    assert_eq!(ended, Some("timed_out"));
}

#[tokio::test]
async fn an_mcp_session_gets_what_was_asked_and_ticked() {
    let server = nothing_granted().await;
    let answer = ConsentAnswer {
        allow: true,
        takeover: false,
        clipboard_read: true,
        lease_s: Some(900),
    };
    let asked = answer_next(&server.engine, answer);
    let mut c = Mcp::connect(server.port).await;
    let e = c
        .err(
            "start_session",
            json!({"apps": ["XTerm"], "input": "takeover", "clipboard_read": true, "lease_s": 3600}),
        )
        .await;
    assert_eq!(e["code"], "capability_not_consented", "{e}");
    assert_eq!(
        e["message"],
        "the person allowed this session to see the screen and work with XTerm, asking to read the clipboard, not: takeover; ask again in this session and the person sees the dialog once more",
        "what it got, what not, and how to ask again"
    );
    let ask = asked.await.expect("asked");
    assert_eq!(ask.wants.apps, Some(vec!["XTerm".to_owned()]));
    assert!(ask.wants.takeover && ask.wants.clipboard_read);
    assert_eq!(ask.wants.lease_s, Some(3600));
    let state = c.ok("get_session_state", json!({})).await;
    assert_eq!(state["apps"], json!(["XTerm"]), "{state}");
    assert_eq!(state["clipboard_read"], true);
    assert_eq!(state["input"], "headless");
    let lease = state["lease_remaining_s"].as_u64().expect("a lease");
    assert!(
        (890..=900).contains(&lease),
        "the person's shorter lease: {lease}"
    );
    let session = deskhand_engine::Session {
        id: state["session_id"].as_str().expect("id").to_owned(),
        protocol: "mcp",
    };
    let grant = server.engine.grant(&session).expect("granted");
    assert_eq!(grant.apps, AppScope::Named(vec!["XTerm".into()]));
}

#[tokio::test]
async fn only_a_real_devices_click_is_the_persons() {
    let server = nothing_granted().await;
    server
        .desktop
        .person(WatchedInput::ButtonPress { synthetic: true });
    assert!(!server.engine.person_clicked().await, "an XTEST press");
    server
        .desktop
        .person(WatchedInput::ButtonPress { synthetic: false });
    assert!(server.engine.person_clicked().await, "the mouse's press");
}

#[tokio::test]
async fn a_session_that_got_less_than_it_asked_may_ask_once_more() {
    let server = nothing_granted().await;
    let first = ConsentAnswer {
        allow: true,
        takeover: false,
        clipboard_read: false,
        lease_s: None,
    };
    let asked = answer_next(&server.engine, first);
    let mut c = Mcp::connect(server.port).await;
    let args = json!({"apps": ["XTerm"], "input": "takeover"});
    let e = c.err("start_session", args.clone()).await;
    assert_eq!(e["code"], "capability_not_consented", "{e}");
    asked.await.expect("asked the first time");
    let again = answer_next(
        &server.engine,
        ConsentAnswer {
            takeover: true,
            ..first
        },
    );
    let state = c.ok("start_session", args.clone()).await;
    assert!(again.await.is_ok(), "the dialog opened once more");
    assert_eq!(state["input"], "takeover", "{state}");
    // Asked twice: no third dialog, even for more.
    let mut events = server.engine.takeover_events();
    let e = c
        .err(
            "start_session",
            json!({"apps": ["XTerm", "gedit"], "input": "takeover"}),
        )
        .await;
    assert!(
        e["message"]
            .as_str()
            .is_some_and(|m| m.contains("end this session")),
        "asked twice already: {e}"
    );
    while let Ok(ev) = events.try_recv() {
        assert!(
            !matches!(ev, TakeoverEvent::ConsentRequested(_)),
            "asked a third time: {ev:?}"
        );
    }
}

#[tokio::test]
async fn a_wire_session_allowed_without_the_takeover_box_is_told_and_may_ask_again() {
    let server = nothing_granted().await;
    let no_box = ConsentAnswer {
        allow: true,
        takeover: false,
        clipboard_read: false,
        lease_s: None,
    };
    let asked = answer_next(&server.engine, no_box);
    let mut c = server.handshaken_client().await;
    let r = c.request("TAKEOVER_REQUEST", json!({"on": true})).await;
    assert_eq!(error_code(&r), "CAPABILITY_NOT_GRANTED", "{r}");
    let said = r["payload"]["message"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    assert!(
        said.starts_with("the person allowed this session to see the screen and work with the whole desktop, not the visible takeover (mouse and keyboard); ask again"),
        "{r}"
    );
    asked.await.expect("asked");
    let again = answer_next(
        &server.engine,
        ConsentAnswer {
            takeover: true,
            ..no_box
        },
    );
    let r = c.request("TAKEOVER_REQUEST", json!({"on": true})).await;
    assert_eq!(r["type"], "TAKEOVER_STATE", "{r}");
    assert!(again.await.is_ok(), "the dialog opened once more");
}
