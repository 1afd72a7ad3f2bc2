//! Sessions and who they belong to (issues 30 and 31): a refused first act
//! leaves no takeover, an unused takeover ends by the idle rule, `BUSY`
//! names the holder and until when on every protocol, HTTP computer
//! sessions answer only their token, stateless MCP requests inherit no
//! other client's session, and MCP HTTP sessions are bounded and expire.

#![allow(missing_docs)]

use std::time::Duration;

use deskhand_backend_mock::{Event, MockDesktop, window};
use deskhand_engine::{Consent, Rect};
use deskhand_server::Token;
use serde_json::{Value, json};

use crate::common::{Server, TOKEN, error_code};
use crate::http::{Answer, post, raw};
use crate::mcp_client::{self, Mcp};

/// A second client token the person set up.
const OTHER: &str = "fedcba9876543210fedcba9876543210fedcba9876543210fedcba9876543210";

async fn tuned(tune: impl FnOnce(&mut deskhand_server::ServerConfig)) -> Server {
    let desktop = MockDesktop::new();
    desktop
        .state()
        .windows
        .push(window(11, 100, "XTerm", "term", Rect::new(0, 0, 800, 600)));
    desktop.state().windows[0].focused = true;
    let backend = desktop.backend();
    Server::start_tuned(desktop, backend, Consent::sandbox(), |c| {
        c.client_tokens = vec![Token::new(OTHER.into())];
        tune(c);
    })
    .await
}

/// POSTs `body` to `/v1/actions` with `token`, in `session` when given.
async fn actions_as(s: &Server, token: &str, session: Option<&str>, body: &Value) -> Answer {
    post_as(s, token, "/v1/actions", session, body).await
}

/// POSTs `body` to `path` with `token`, in `session` when given (no
/// header: the token's default session).
async fn post_as(
    s: &Server,
    token: &str,
    path: &str,
    session: Option<&str>,
    body: &Value,
) -> Answer {
    let mut head = format!(
        "POST {path} HTTP/1.1\r\nHost: 127.0.0.1:{}\r\nAuthorization: Bearer {token}\r\nContent-Type: application/json",
        s.port
    );
    if let Some(id) = session {
        head.push_str(&format!("\r\nX-Deskhand-Session: {id}"));
    }
    raw(s.port, &head, body.to_string().as_bytes()).await
}

async fn delete_as(s: &Server, token: &str, session: &str) -> u16 {
    let head = format!(
        "DELETE /v1/computer/session HTTP/1.1\r\nHost: 127.0.0.1:{}\r\nAuthorization: Bearer {token}\r\nX-Deskhand-Session: {session}",
        s.port
    );
    raw(s.port, &head, b"").await.status
}

/// A screenshot batch: a fresh session of `token` with a screenshot.
async fn with_screenshot(s: &Server, token: &str) -> String {
    let a = actions_as(
        s,
        token,
        Some("new"),
        &json!([{"action_type": "screenshot"}]),
    )
    .await;
    assert_eq!(a.status, 200, "{}", String::from_utf8_lossy(&a.body));
    a.session()
}

async fn typed(s: &Server, session: &str, text: &str) -> Value {
    let a = post(
        s.port,
        "/v1/actions",
        Some(session),
        &json!([{"action_type": "type", "text": text}]),
    )
    .await;
    assert_eq!(a.status, 200, "{}", String::from_utf8_lossy(&a.body));
    a.json()
}

fn shown(s: &Server) -> bool {
    s.desktop.state().indicator.shown
}

#[tokio::test]
async fn a_refused_first_click_leaves_no_takeover() {
    let s = tuned(|_| {}).await;
    // No frame yet: the click is refused, after its takeover came up.
    let a = post(
        s.port,
        "/v1/actions",
        None,
        &json!([{"action_type": "left_click", "x": 10, "y": 10}]),
    )
    .await;
    assert_eq!(
        a.json()["error"]["code"],
        "invalid_arguments",
        "{}",
        a.json()
    );
    assert!(!shown(&s), "no red frame stays for a refused first click");
    // A click off the frame, in a session with one: refused, no takeover.
    let session = with_screenshot(&s, TOKEN).await;
    let a = post(
        s.port,
        "/v1/actions",
        Some(&session),
        &json!([{"action_type": "left_click", "x": 1920, "y": 10}]),
    )
    .await;
    assert_eq!(
        a.json()["error"]["code"],
        "desktop_coordinate_out_of_bounds"
    );
    assert!(!shown(&s));
    assert!(s.desktop.state().events.is_empty(), "nothing was sent");
    // Another client takes over at once: nobody holds the desktop.
    let mut other = s.handshaken_client().await;
    let r = other.request("TAKEOVER_REQUEST", json!({"on": true})).await;
    assert_eq!(r["payload"]["on"], true, "{r}");
}

#[tokio::test]
async fn a_takeover_no_act_used_ends_after_the_idle_time() {
    let s = tuned(|c| c.takeover_idle = Duration::from_millis(800)).await;
    let session = with_screenshot(&s, TOKEN).await;
    // The person holds the desktop: the takeover comes up paused (Continue
    // shown) and the act is refused; nothing of the session ever acts.
    s.engine.pause_agents().await;
    let r = typed(&s, &session, "a").await;
    assert_eq!(r["error"]["code"], "user_took_over", "{r}");
    assert!(
        shown(&s),
        "Continue shows while the person holds the desktop"
    );
    s.eventually("the unused takeover ended", |d| !d.state().indicator.shown)
        .await;
    assert_eq!(s.desktop.state().typed(), "");
}

#[tokio::test]
async fn busy_names_the_holder_and_until_when_on_every_protocol() {
    let s = tuned(|c| c.takeover_idle = Duration::from_secs(60)).await;
    let holder = with_screenshot(&s, TOKEN).await;
    assert_eq!(typed(&s, &holder, "a").await["status"], "success");

    // The wire.
    let mut wire = s.handshaken_client().await;
    let r = wire.request("TAKEOVER_REQUEST", json!({"on": true})).await;
    assert_eq!(error_code(&r), "BUSY", "{r}");
    let details = &r["payload"]["details"];
    assert_eq!(details["holder"]["protocol"], "http", "{r}");
    let until = details["until"].as_str().expect("until");
    assert!(until.ends_with('Z') && until.len() == 20, "{until}");
    let left = details["until_s"].as_u64().expect("until_s");
    assert!((50..=60).contains(&left), "{left}");
    let message = r["payload"]["message"].as_str().unwrap_or("");
    assert!(
        message.contains("the http client") && message.contains(until),
        "{message}"
    );

    // The computer endpoints.
    let other = with_screenshot(&s, TOKEN).await;
    let r = typed(&s, &other, "b").await;
    assert_eq!(r["error"]["code"], "busy", "{r}");
    assert_eq!(r["error"]["details"]["holder"]["protocol"], "http");
    assert_eq!(r["error"]["details"]["until"], until);

    // MCP: the session stays headless, the error says who and until when.
    let mut c = Mcp::connect(s.port).await;
    let e = c.err("start_session", json!({"input": "takeover"})).await;
    assert_eq!(e["code"], "busy", "{e}");
    assert_eq!(e["reason"], "busy");
    let message = e["message"].as_str().unwrap_or("");
    assert!(
        message.contains("the http client") && message.contains(until),
        "{message}"
    );
    assert_eq!(s.desktop.state().typed(), "a");

    // A named wire holder: its name, and its idle end.
    assert_eq!(delete_as(&s, TOKEN, &holder).await, 204);
    s.eventually("the indicator hidden", |d| !d.state().indicator.shown)
        .await;
    let mut named = s.client().await;
    named
        .send_raw(
            json!({"type": "HELLO_ACK", "id": "ack", "ts": 0, "payload": {"client": "agent-a"}})
                .to_string(),
        )
        .await;
    let r = named.request("TAKEOVER_REQUEST", json!({"on": true})).await;
    assert_eq!(r["payload"]["on"], true, "{r}");
    let r = typed(&s, &other, "c").await;
    assert_eq!(r["error"]["details"]["holder"]["client"], "agent-a", "{r}");
    assert_eq!(r["error"]["details"]["holder"]["protocol"], "wire");
    assert!(r["error"]["details"]["until_s"].as_u64().is_some(), "{r}");
}

#[tokio::test]
async fn another_tokens_session_is_refused_and_its_delete_ends_nothing() {
    let s = tuned(|_| {}).await;
    let mine = with_screenshot(&s, TOKEN).await;
    assert_eq!(typed(&s, &mine, "a").await["status"], "success");
    let swapped = actions_as(
        &s,
        OTHER,
        Some(&mine),
        &json!([{"action_type": "type", "text": "x"}]),
    )
    .await;
    assert_eq!(swapped.status, 400, "another token's session is unknown");
    assert_eq!(swapped.json()["error"]["code"], "invalid_arguments");
    assert_eq!(delete_as(&s, OTHER, &mine).await, 400);
    assert!(shown(&s), "the owner's takeover is still on");
    assert_eq!(typed(&s, &mine, "b").await["status"], "success");
    assert_eq!(
        s.desktop.state().typed(),
        "ab",
        "the other token typed nothing"
    );
    assert_eq!(delete_as(&s, TOKEN, &mine).await, 204, "its owner ends it");
}

#[tokio::test]
async fn one_tokens_many_sessions_evict_none_of_anothers() {
    let s = tuned(|_| {}).await;
    let mine = with_screenshot(&s, TOKEN).await;
    for _ in 0..70 {
        let a = actions_as(
            &s,
            OTHER,
            Some("new"),
            &json!([{"action_type": "cursor_position"}]),
        )
        .await;
        assert_eq!(a.status, 200, "the other token makes room among its own");
    }
    let a = actions_as(
        &s,
        TOKEN,
        Some(&mine),
        &json!([{"action_type": "cursor_position"}]),
    )
    .await;
    assert_eq!(a.status, 200, "the idle session of the first token is kept");
}

/// A stateless (2026-07-28) tool call with the person's token, no
/// `Mcp-Session-Id`.
async fn stateless(s: &Server, tool: &str, args: Value) -> Value {
    let meta = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
    });
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"name": tool, "arguments": args, "_meta": meta}});
    let auth = format!("Bearer {TOKEN}");
    let headers = [
        ("Authorization", auth.as_str()),
        ("MCP-Protocol-Version", "2026-07-28"),
        ("Mcp-Method", "tools/call"),
        ("Mcp-Name", tool),
    ];
    let a = mcp_client::post(s.port, &headers, &body.to_string()).await;
    assert_eq!(a.status, 200, "{}", a.body);
    let m = a.messages().into_iter().next().expect("an answer");
    m["result"]["structuredContent"].clone()
}

#[tokio::test]
async fn a_stateless_request_gets_no_other_clients_grant() {
    let s = tuned(|_| {}).await;
    let mut granted = Mcp::connect(s.port).await;
    let state = granted
        .ok("start_session", json!({"input": "takeover"}))
        .await;
    let sid = state["session_id"].as_str().expect("session_id").to_owned();
    assert!(shown(&s));

    // No session_id: a session of its own, headless; nothing is clicked.
    let r = stateless(&s, "click", json!({"app": "term", "x": 50, "y": 50})).await;
    assert_eq!(r["error"]["code"], "requires_takeover", "{r}");
    let r = stateless(&s, "get_session_state", json!({})).await;
    assert_ne!(r["session_id"], sid.as_str(), "{r}");
    assert_eq!(r["input"], "headless");
    // The granted client's session_id answers only that client.
    let r = stateless(&s, "click", json!({"session_id": sid, "x": 50, "y": 50})).await;
    assert_eq!(r["error"]["code"], "session_not_found", "{r}");
    let mut relay = Mcp::connect(s.port).await;
    let e = relay
        .err("click", json!({"session_id": sid, "x": 50, "y": 50}))
        .await;
    assert_eq!(e["code"], "session_not_found");
    let clicked = s
        .desktop
        .state()
        .events
        .iter()
        .any(|e| matches!(e, Event::Button(..)));
    assert!(!clicked, "no click under another client's grant");
    // Its own client still acts under it.
    granted
        .ok("click", json!({"app": "term", "x": 50, "y": 50}))
        .await;
    // A stateless session is named by its id, by stateless requests.
    let mine = stateless(&s, "start_session", json!({})).await;
    let id = mine["session_id"].as_str().expect("session_id");
    let again = stateless(&s, "get_session_state", json!({"session_id": id})).await;
    assert_eq!(again["session_id"], id, "{again}");
}

async fn initialize(port: u16, token: &str) -> mcp_client::Answer {
    let body = json!({"jsonrpc": "2.0", "id": 7, "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                   "clientInfo": {"name": "many", "version": "1"}}});
    let auth = format!("Bearer {token}");
    mcp_client::post(port, &[("Authorization", auth.as_str())], &body.to_string()).await
}

#[tokio::test]
async fn mcp_sessions_are_capped_per_token_and_in_all_and_expire() {
    let s = tuned(|c| {
        c.mcp_sessions_per_token = 3;
        c.mcp_sessions_max = 5;
        c.mcp_session_idle = Duration::from_millis(1500);
    })
    .await;
    let mut ids = Vec::new();
    for _ in 0..3 {
        let opened = initialize(s.port, TOKEN).await;
        assert_eq!(opened.status, 200);
        ids.push(opened.header("mcp-session-id").expect("an id").to_owned());
    }
    // A DELETE rmcp refuses (an unknown protocol version) ends nothing, so
    // the session still counts.
    let auth = format!("Bearer {TOKEN}");
    let bogus = mcp_client::send(
        s.port,
        "DELETE",
        &[
            ("Authorization", auth.as_str()),
            ("Mcp-Session-Id", ids[0].as_str()),
            ("MCP-Protocol-Version", "1999-01-01"),
        ],
        "",
    )
    .await;
    assert!(bogus.status >= 400, "{}", bogus.status);
    let refused = initialize(s.port, TOKEN).await;
    assert_eq!(refused.status, 503, "{}", refused.body);
    let e: Value = serde_json::from_str(&refused.body).expect("JSON-RPC");
    assert_eq!(e["id"], 7);
    let message = e["error"]["message"].as_str().unwrap_or("");
    assert!(message.contains("too many MCP sessions"), "{message}");
    assert!(refused.header("mcp-session-id").is_none());
    // The other token has its own share, until all are taken.
    for _ in 0..2 {
        assert_eq!(initialize(s.port, OTHER).await.status, 200);
    }
    assert_eq!(initialize(s.port, OTHER).await.status, 503, "5 in all");
    // Idle sessions are closed and stop counting.
    tokio::time::sleep(Duration::from_millis(2500)).await;
    let again = initialize(s.port, TOKEN).await;
    assert_eq!(again.status, 200, "{}", again.body);
    assert!(again.header("mcp-session-id").is_some());
}

/// One Anthropic `tool_use` call of `token` without the session header,
/// as a loop written from the vendor's docs sends it.
async fn tool_use(s: &Server, token: &str, input: Value) -> (Value, String) {
    let block = json!({"type": "tool_use", "id": "toolu_1", "name": "computer", "input": input});
    let a = post_as(s, token, "/v1/computer/anthropic", None, &block).await;
    assert_eq!(a.status, 200, "{}", String::from_utf8_lossy(&a.body));
    let id = a.session();
    (a.json(), id)
}

fn text_of(result: &Value) -> &str {
    result["content"]
        .as_array()
        .and_then(|c| c.iter().find(|p| p["type"] == "text"))
        .and_then(|p| p["text"].as_str())
        .unwrap_or("")
}

#[tokio::test]
async fn a_loop_without_the_session_header_stays_in_its_tokens_default_session() {
    let s = tuned(|c| c.takeover_idle = Duration::from_secs(60)).await;
    let (shot, session) = tool_use(&s, TOKEN, json!({"action": "screenshot"})).await;
    assert!(shot.get("is_error").is_none(), "{shot}");
    // The click is in the screenshot's pixels: the same session took it.
    let (click, again) = tool_use(
        &s,
        TOKEN,
        json!({"action": "left_click", "coordinate": [100, 100]}),
    )
    .await;
    assert!(click.get("is_error").is_none(), "{click}");
    assert_eq!(again, session, "every answer names the one default session");
    assert!(
        s.desktop
            .state()
            .events
            .contains(&deskhand_backend_mock::Event::Button(
                deskhand_engine::Button::Left,
                true
            )),
        "the click reached the desktop"
    );
    let (typed, _) = tool_use(&s, TOKEN, json!({"action": "type", "text": "hi"})).await;
    assert!(typed.get("is_error").is_none(), "{typed}");
    assert_eq!(s.desktop.state().typed(), "hi");

    // `new` is a fresh session, not the default one.
    let a = actions_as(
        &s,
        TOKEN,
        Some("new"),
        &json!([{"action_type": "screenshot"}]),
    )
    .await;
    assert_ne!(a.session(), session);
    // Another endpoint scales its screenshots its own way: its header-less
    // requests have a default session of their own.
    let a = actions_as(
        &s,
        TOKEN,
        None,
        &json!([{"action_type": "cursor_position"}]),
    )
    .await;
    assert_eq!(a.status, 200, "{}", String::from_utf8_lossy(&a.body));
    assert_ne!(
        a.session(),
        session,
        "/v1/actions has its own default session"
    );

    // Another token's loop has a default session of its own: no
    // screenshot there yet, and the error says where it looked and how
    // sessions are named. (The first loop's session is ended first: its
    // takeover would make the click BUSY.)
    assert_eq!(delete_as(&s, TOKEN, &session).await, 204);
    let (r, theirs) = tool_use(
        &s,
        OTHER,
        json!({"action": "left_click", "coordinate": [100, 100]}),
    )
    .await;
    assert_ne!(theirs, session, "another token, another session");
    assert_eq!(r["is_error"], true, "{r}");
    let text = text_of(&r);
    assert!(
        text.contains(&format!("no screenshot yet in session {theirs}"))
            && text.contains("X-Deskhand-Session")
            && text.contains("`X-Deskhand-Session: new`"),
        "{text}"
    );
}
