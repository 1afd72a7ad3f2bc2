//! Contract tests of takeover and hand-back over the mock desktop:
//! TAKEOVER_REQUEST / TAKEOVER_STATE, input only during a takeover, the
//! person's input pausing it, Continue, the kill switch, a lost or
//! unavailable indicator, and the audit records.

use std::time::Duration;

use crate::common::{Server, error_code};
use deskhand_backend_mock::{Event, MockDesktop};
use deskhand_engine::{AuditLog, Button, Consent, Point, WatchedInput};
use serde_json::{Value, json};

fn state(reply: &Value) -> &Value {
    assert_eq!(reply["type"], "TAKEOVER_STATE", "{reply}");
    &reply["payload"]
}

async fn take_over(c: &mut crate::common::Client, on: bool) -> Value {
    let reply = c.request("TAKEOVER_REQUEST", json!({ "on": on })).await;
    state(&reply).clone()
}

#[tokio::test]
async fn input_needs_a_takeover_and_the_takeover_needs_the_indicator() {
    let server = Server::sandbox().await;
    let mut c = server.handshaken_client().await;
    let refused = c
        .act(json!({"action": "left_click", "coordinate": [5, 5]}))
        .await;
    assert_eq!(error_code(&refused), "CAPABILITY_NOT_GRANTED");
    assert_eq!(refused["payload"]["details"]["needed"], "takeover");
    assert!(server.desktop.state().events.is_empty(), "nothing sent");

    let on = take_over(&mut c, true).await;
    assert_eq!(on, json!({"on": true, "indicator": true, "paused": false}));
    assert!(server.desktop.state().indicator.shown);
    assert!(server.desktop.watcher_armed());
    let r = c
        .act(json!({"action": "left_click", "coordinate": [5, 5]}))
        .await;
    assert_eq!(r["type"], "ACK", "{r}");

    let off = take_over(&mut c, false).await;
    assert_eq!(off["on"], false);
    assert_eq!(off["reason"], "ended");
    assert!(!server.desktop.state().indicator.shown, "indicator gone");
    assert!(!server.desktop.watcher_armed());
    let again = c
        .act(json!({"action": "left_click", "coordinate": [5, 5]}))
        .await;
    assert_eq!(error_code(&again), "CAPABILITY_NOT_GRANTED");
}

#[tokio::test]
async fn hello_says_whether_takeover_is_possible() {
    let server = Server::sandbox().await;
    let c = server.handshaken_client().await;
    let caps = c.hello["payload"]["capabilities"]
        .as_array()
        .expect("caps")
        .clone();
    assert!(caps.contains(&json!("takeover_handback")), "{caps:?}");

    let desktop = MockDesktop::new();
    let mut backend = desktop.backend();
    backend.watcher = None;
    let without = Server::start(desktop, backend, Consent::sandbox()).await;
    let mut c = without.handshaken_client().await;
    let caps = c.hello["payload"]["capabilities"]
        .as_array()
        .expect("caps")
        .clone();
    assert!(!caps.contains(&json!("takeover_handback")), "{caps:?}");
    let r = c.request("TAKEOVER_REQUEST", json!({"on": true})).await;
    assert_eq!(error_code(&r), "FEATURE_NOT_SUPPORTED", "{r}");
}

#[tokio::test]
async fn no_indicator_no_takeover_and_one_takeover_at_a_time() {
    let server = Server::sandbox().await;
    server.desktop.state().indicator.fail_show = true;
    let mut a = server.handshaken_client().await;
    let refused = take_over(&mut a, true).await;
    assert_eq!(refused["on"], false);
    assert_eq!(refused["reason"], "indicator_unavailable");
    let r = a.act(json!({"action": "key", "key": "a"})).await;
    assert_eq!(error_code(&r), "CAPABILITY_NOT_GRANTED");

    assert_eq!(take_over(&mut a, true).await["on"], true);
    let mut b = server.handshaken_client().await;
    let busy = b.request("TAKEOVER_REQUEST", json!({"on": true})).await;
    assert_eq!(error_code(&busy), "BUSY", "{busy}");
    let bad = b.request("TAKEOVER_REQUEST", json!({})).await;
    assert_eq!(error_code(&bad), "INVALID_ARGUMENTS");
}

#[tokio::test]
async fn takeover_needs_consent() {
    let desktop = MockDesktop::new();
    let backend = desktop.backend();
    let server = Server::start(desktop, backend, Consent::none()).await;
    let mut c = server.handshaken_client().await;
    let r = c.request("TAKEOVER_REQUEST", json!({"on": true})).await;
    assert_eq!(error_code(&r), "CAPABILITY_NOT_GRANTED");
    assert_eq!(r["payload"]["details"]["needed"], "consent");
    assert!(!server.desktop.state().indicator.shown);
}

#[tokio::test]
async fn the_person_moving_the_pointer_pauses_until_continue() {
    let server = Server::sandbox().await;
    let mut c = server.ready_client().await;
    c.act(json!({"action": "mouse_move", "coordinate": [100, 100]}))
        .await;
    server.desktop.person_moves_pointer(400, 300);
    let paused = c.next_push().await;
    assert_eq!(
        state(&paused),
        &json!({"on": true, "indicator": true, "paused": true, "paused_reason": "pointer_moved"})
    );
    // The pause is pushed first (acts are refused from then on); the
    // indicator switches to Continue right after.
    server
        .eventually("Continue to be shown", |d| d.state().indicator.paused)
        .await;

    let before = server.desktop.state().events.len();
    let refused = c
        .act(json!({"action": "left_click", "coordinate": [5, 5]}))
        .await;
    assert_eq!(error_code(&refused), "USER_TOOK_OVER", "{refused}");
    assert_eq!(refused["payload"]["details"]["effect"], "refused");
    assert_eq!(
        refused["payload"]["details"]["paused_reason"],
        "pointer_moved"
    );
    assert_eq!(refused["payload"]["disposition"], "never");
    assert_eq!(server.desktop.state().events.len(), before, "nothing sent");
    let shot = c
        .request("SCREENSHOT_REQUEST", json!({"region": [0, 0, 8, 8]}))
        .await;
    assert_eq!(shot["type"], "SCREENSHOT_RESPONSE", "reads still work");

    // No agent message resumes: asking for the takeover again stays paused.
    assert_eq!(take_over(&mut c, true).await["paused"], true);

    server.desktop.click_continue();
    let resumed = c.next_push().await;
    assert_eq!(state(&resumed)["paused"], false);
    assert!(!server.desktop.state().indicator.paused);
    let r = c
        .act(json!({"action": "left_click", "coordinate": [5, 5]}))
        .await;
    assert_eq!(r["type"], "ACK", "acts again after Continue: {r}");
}

#[tokio::test]
async fn a_move_of_the_persons_not_yet_reported_refuses_the_next_move_and_stays() {
    let server = Server::sandbox().await;
    let mut c = server.ready_client().await;
    c.act(json!({"action": "mouse_move", "coordinate": [100, 100]}))
        .await;
    // Within 8 px of deskhand's target: a hand on the mouse, not the person
    // taking over.
    server.desktop.state().pointer = Point::new(106, 93);
    let r = c
        .act(json!({"action": "mouse_move", "coordinate": [200, 200]}))
        .await;
    assert_eq!(r["type"], "ACK", "{r}");
    assert_eq!(server.desktop.state().pointer, Point::new(200, 200));

    // The person moves; the watcher has not reported it yet.
    server.desktop.state().pointer = Point::new(400, 300);
    let before = server.desktop.state().events.len();
    let r = c
        .act(json!({"action": "left_click", "coordinate": [5, 5]}))
        .await;
    assert_eq!(error_code(&r), "USER_TOOK_OVER", "{r}");
    let d = &r["payload"]["details"];
    assert_eq!(
        (&d["effect"], &d["paused_reason"]),
        (&json!("refused"), &json!("pointer_moved"))
    );
    let (pointer, sent) = {
        let s = server.desktop.state();
        (s.pointer, s.events.len() - before)
    };
    assert_eq!(
        pointer,
        Point::new(400, 300),
        "the person's move was undone"
    );
    assert_eq!(sent, 0, "nothing sent");
    assert_eq!(state(&c.next_push().await)["paused"], true);
}

#[tokio::test]
async fn a_key_the_person_pressed_stops_typing_and_releases_everything() {
    let server = Server::sandbox().await;
    let mut c = server.ready_client().await;
    c.act(json!({"action": "mouse_down", "coordinate": [10, 10]}))
        .await;
    server.desktop.state().person_after_chars =
        Some((5, WatchedInput::KeyPress { synthetic: false }));
    let text = "x".repeat(2000);
    let r = c.act(json!({"action": "type", "text": text})).await;
    assert_eq!(error_code(&r), "USER_TOOK_OVER", "{r}");
    let d = &r["payload"]["details"];
    assert_eq!(d["effect"], "stopped");
    assert_eq!(d["paused_reason"], "key_pressed");
    assert_eq!(d["typed_characters"], 5);
    let s = server.desktop.state();
    assert_eq!(s.typed().len(), 5, "what the app got is what was reported");
    assert!(s.buttons.is_empty(), "the held button was released");
    assert!(s.keys.is_empty());
}

#[tokio::test]
async fn continue_right_after_a_deskhand_click_is_ignored() {
    let server = Server::sandbox().await;
    let mut c = server.ready_client().await;
    c.act(json!({"action": "left_click", "coordinate": [5, 5]}))
        .await;
    server
        .desktop
        .person(WatchedInput::ButtonPress { synthetic: false });
    assert_eq!(
        state(&c.next_push().await)["paused_reason"],
        "button_pressed"
    );
    server.desktop.click_continue();
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert_eq!(
        c.request("CURSOR_POSITION_REQUEST", json!({})).await["type"],
        "CURSOR_POSITION_RESPONSE"
    );
    assert!(
        c.pushes.is_empty(),
        "no resume within 1.5 s of deskhand's click"
    );
    assert!(server.desktop.state().indicator.paused);
    tokio::time::sleep(Duration::from_millis(1500)).await;
    server.desktop.click_continue();
    assert_eq!(state(&c.next_push().await)["paused"], false);
}

#[tokio::test]
async fn the_kill_switch_ends_the_takeover_and_releases_held_input() {
    let server = Server::sandbox().await;
    let mut c = server.ready_client().await;
    c.act(json!({"action": "mouse_down", "coordinate": [10, 10]}))
        .await;
    assert_eq!(server.desktop.state().buttons, vec![Button::Left]);
    server.desktop.person(WatchedInput::KillSwitch);
    let off = c.next_push().await;
    assert_eq!(state(&off)["on"], false);
    assert_eq!(state(&off)["reason"], "kill_switch");
    let s = server.desktop.state();
    assert!(s.buttons.is_empty());
    assert!(!s.indicator.shown);
    assert!(s.events.contains(&Event::Button(Button::Left, false)));
}

#[tokio::test]
async fn stop_on_the_paused_indicator_ends_the_takeover_and_keeps_the_persons_hold() {
    let server = Server::sandbox().await;
    let mut c = server.ready_client().await;
    c.act(json!({"action": "mouse_down", "coordinate": [10, 10]}))
        .await;
    server.desktop.person_moves_pointer(400, 300);
    assert_eq!(state(&c.next_push().await)["paused"], true);
    server
        .eventually("Continue to be shown", |d| d.state().indicator.paused)
        .await;
    server.desktop.click_stop();
    let off = c.next_push().await;
    assert_eq!(
        (&state(&off)["on"], &state(&off)["reason"]),
        (&json!(false), &json!("kill_switch"))
    );
    {
        let s = server.desktop.state();
        assert!(
            s.buttons.is_empty() && !s.indicator.shown,
            "released, frame gone"
        );
    }
    // Stopped agents stay stopped until the person's own Continue.
    drop(c);
    let mut again = server.handshaken_client().await;
    assert_eq!(take_over(&mut again, true).await["paused"], true);
}

#[tokio::test]
async fn a_lost_indicator_ends_the_takeover_and_a_disconnect_hides_it() {
    let server = Server::sandbox().await;
    let mut c = server.ready_client().await;
    server.desktop.lose_indicator();
    let off = c.next_push().await;
    assert_eq!(state(&off)["on"], false);
    assert_eq!(state(&off)["reason"], "indicator_lost");
    let r = c.act(json!({"action": "key", "key": "a"})).await;
    assert_eq!(error_code(&r), "CAPABILITY_NOT_GRANTED");

    assert_eq!(take_over(&mut c, true).await["on"], true);
    drop(c);
    server
        .eventually("the indicator to go with the connection", |d| {
            !d.state().indicator.shown
        })
        .await;
}

#[tokio::test]
async fn a_session_paused_when_its_takeover_ended_comes_back_paused() {
    let server = Server::sandbox().await;
    let mut c = server.ready_client().await;
    server
        .desktop
        .person(WatchedInput::KeyPress { synthetic: false });
    c.next_push().await;
    assert_eq!(take_over(&mut c, false).await["paused"], true);
    let back = take_over(&mut c, true).await;
    assert_eq!(back["on"], true);
    assert_eq!(back["paused"], true);
    assert!(
        server.desktop.state().indicator.paused,
        "comes up with Continue"
    );
    server.desktop.click_continue();
    assert_eq!(state(&c.next_push().await)["paused"], false);
}

#[tokio::test]
async fn takeover_audit_records_carry_no_keys_or_positions() {
    let dir = std::env::temp_dir().join(format!("dh-takeover-audit-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let path = dir.join("audit.jsonl");
    let desktop = MockDesktop::new();
    let backend = desktop.backend();
    let audit = AuditLog::open(&path).expect("audit");
    let server = Server::start_with_audit(desktop, backend, Consent::sandbox(), audit).await;
    let mut c = server.ready_client().await;
    server.desktop.person_moves_pointer(333, 444);
    c.next_push().await;
    server.desktop.click_continue();
    c.next_push().await;
    take_over(&mut c, false).await;
    let text = std::fs::read_to_string(&path).expect("audit");
    let records: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).expect("json"))
        .collect();
    let takeover: Vec<(&str, &Value)> = records
        .iter()
        .filter(|r| {
            r["op"]
                .as_str()
                .is_some_and(|o| o.starts_with("takeover.") && o != "takeover.request")
        })
        .map(|r| (r["op"].as_str().unwrap_or(""), &r["target"]))
        .collect();
    assert_eq!(
        takeover,
        vec![
            ("takeover.started", &json!({"paused": false})),
            (
                "takeover.paused",
                &json!({"paused_reason": "pointer_moved"})
            ),
            ("takeover.resumed", &json!({"by": "indicator"})),
            ("takeover.ended", &json!({"reason": "ended"})),
        ]
    );
    // (Timestamps and session ids may contain any digits: look at targets.)
    for r in &records {
        let target = r["target"].to_string();
        assert!(
            !target.contains("333") && !target.contains("444"),
            "a position in {r}"
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test]
async fn mouse_move_with_a_duration_glides_in_ten_millisecond_steps() {
    let server = Server::sandbox().await;
    let mut c = server.ready_client().await;
    c.act(json!({"action": "mouse_move", "coordinate": [0, 0]}))
        .await;
    let started = std::time::Instant::now();
    let r = c
        .act(json!({"action": "mouse_move", "coordinate": [100, 50], "duration_ms": 100}))
        .await;
    assert_eq!(r["type"], "ACK", "{r}");
    assert!(started.elapsed() >= Duration::from_millis(90));
    let moves: Vec<_> = server
        .desktop
        .state()
        .events
        .iter()
        .filter_map(|e| match e {
            Event::Move(p) => Some(*p),
            _ => None,
        })
        .collect();
    assert_eq!(moves.len(), 1 + 10, "one step per 10 ms: {moves:?}");
    assert_eq!(moves.last().map(|p| (p.x, p.y)), Some((100, 50)));
    assert_eq!((moves[5].x, moves[5].y), (50, 25), "evenly spaced");
}

/// Attack: the agent reconnects to undo the person's hand-back.
#[tokio::test]
async fn reconnecting_after_a_hand_back_gets_no_input_until_the_person_continues() {
    let server = Server::sandbox().await;
    let mut c = server.ready_client().await;
    server.desktop.person_moves_pointer(400, 300);
    assert_eq!(state(&c.next_push().await)["paused"], true);
    drop(c);
    server
        .eventually("the first session to close", |d| !d.state().indicator.shown)
        .await;

    let mut again = server.handshaken_client().await;
    let on = take_over(&mut again, true).await;
    assert_eq!(
        on,
        json!({"on": true, "indicator": true, "paused": true, "paused_reason": "pointer_moved"})
    );
    assert!(server.desktop.state().indicator.paused, "Continue shown");
    let before = server.desktop.state().events.len();
    let r = again
        .act(json!({"action": "left_click", "coordinate": [5, 5]}))
        .await;
    assert_eq!(error_code(&r), "USER_TOOK_OVER", "{r}");
    assert_eq!(server.desktop.state().events.len(), before, "nothing sent");

    server.desktop.click_continue();
    assert_eq!(state(&again.next_push().await)["paused"], false);
    let r = again
        .act(json!({"action": "left_click", "coordinate": [5, 5]}))
        .await;
    assert_eq!(r["type"], "ACK", "{r}");
}

/// Attack: the agent reconnects after the person pressed the kill switch.
#[tokio::test]
async fn after_the_kill_switch_a_new_takeover_comes_up_paused() {
    let server = Server::sandbox().await;
    let mut c = server.ready_client().await;
    server.desktop.person(WatchedInput::KillSwitch);
    assert_eq!(state(&c.next_push().await)["reason"], "kill_switch");
    drop(c);
    let mut again = server.handshaken_client().await;
    let on = take_over(&mut again, true).await;
    assert_eq!(
        (&on["paused"], &on["paused_reason"]),
        (&json!(true), &json!("kill_switch"))
    );
    let r = again.act(json!({"action": "key", "key": "a"})).await;
    assert_eq!(error_code(&r), "USER_TOOK_OVER", "{r}");
    server.desktop.click_continue();
    assert_eq!(state(&again.next_push().await)["paused"], false);
    let r = again.act(json!({"action": "key", "key": "a"})).await;
    assert_eq!(r["type"], "ACK", "{r}");
}

/// Attack: another program clicks Continue through XTEST.
#[tokio::test]
async fn a_synthetic_click_on_continue_does_not_resume() {
    let server = Server::sandbox().await;
    let mut c = server.ready_client().await;
    server
        .desktop
        .person(WatchedInput::KeyPress { synthetic: false });
    assert_eq!(state(&c.next_push().await)["paused"], true);
    server.desktop.click_continue_synthetic();
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(
        c.request("CURSOR_POSITION_REQUEST", json!({})).await["type"],
        "CURSOR_POSITION_RESPONSE"
    );
    assert!(c.pushes.is_empty(), "resumed by a synthetic click");
    assert!(server.desktop.state().indicator.paused);
    server.desktop.click_continue();
    assert_eq!(state(&c.next_push().await)["paused"], false);
}

/// Attack: the client dies while its action runs.
#[tokio::test]
async fn a_client_gone_mid_hold_stops_the_hold_and_releases() {
    let server = Server::sandbox().await;
    let mut c = server.ready_client().await;
    c.send_raw(
        json!({"type": "INPUT_ACTION", "id": "h", "ts": 0.0,
               "payload": {"action": "hold_key", "key": "shift", "duration_ms": 30000}})
        .to_string(),
    )
    .await;
    server
        .eventually("shift to be held", |d| !d.state().keys.is_empty())
        .await;
    drop(c);
    server
        .eventually("shift released long before the hold's end", |d| {
            d.state().keys.is_empty() && !d.state().indicator.shown
        })
        .await;
}

#[tokio::test]
async fn pause_agents_holds_the_desktop_until_continue() {
    let server = Server::sandbox().await;
    let mut c = server.ready_client().await;
    server.engine.pause_agents().await;
    let paused = c.next_push().await;
    assert_eq!(state(&paused)["paused_reason"], "paused_by_person");
    assert!(server.desktop.state().indicator.paused, "Continue shows");
    let r = c
        .act(json!({"action": "left_click", "coordinate": [5, 5]}))
        .await;
    assert_eq!(error_code(&r), "USER_TOOK_OVER", "{r}");
    server.desktop.click_continue();
    assert_eq!(state(&c.next_push().await)["paused"], false);
    let r = c
        .act(json!({"action": "left_click", "coordinate": [5, 5]}))
        .await;
    assert_eq!(r["type"], "ACK", "{r}");

    // With no takeover on, the next one comes up paused.
    take_over(&mut c, false).await;
    server.engine.pause_agents().await;
    let back = take_over(&mut c, true).await;
    assert_eq!(back["paused"], true, "{back}");
    assert_eq!(back["paused_reason"], "paused_by_person");
}
