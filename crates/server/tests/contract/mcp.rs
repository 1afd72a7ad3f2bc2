//! MCP contract tests: every tool through Streamable HTTP to the real
//! server over the mock desktop, each argument and result validated
//! against the tool's schemas, and every MCP error code reached.

use std::time::Duration;

use deskhand_backend_mock::{Event, MockDesktop, window};
use deskhand_engine::{AppScope, ClipboardPolicy, Consent, Rect};
use deskhand_protocol::{ErrorCode, mcp};
use serde_json::{Value, json};

use crate::common::{Server, decode_png};
use crate::mcp_client::{Mcp, post};

/// A sandbox server with two windows: an xterm (focused, left) and an
/// editor (right).
async fn desk(consent: Consent) -> Server {
    let desktop = MockDesktop::new();
    {
        let mut s = desktop.state();
        s.windows
            .push(window(11, 100, "XTerm", "term", Rect::new(0, 0, 800, 600)));
        let mut editor = window(12, 200, "Gedit", "notes", Rect::new(900, 0, 800, 600));
        editor.focused = false;
        s.windows.push(editor);
        s.windows[0].focused = true;
    }
    let backend = desktop.backend();
    Server::start(desktop, backend, consent).await
}

fn clipboard_consent() -> Consent {
    Consent::sandbox().with_clipboard(ClipboardPolicy {
        enabled: true,
        read_foreign: true,
        foreign_reads_approved: true,
    })
}

fn code(e: &Value) -> &str {
    e["code"].as_str().unwrap_or("")
}

#[tokio::test]
async fn tools_list_gives_every_tool_with_its_generated_schema() {
    let server = desk(Consent::sandbox()).await;
    let mut c = Mcp::connect(server.port).await;
    let a = c.rpc("tools/list", json!({})).await;
    let list = a.messages().remove(0)["result"]["tools"].clone();
    let tools = list.as_array().expect("tools");
    assert_eq!(tools.len(), mcp::TOOLS.len());
    for (listed, spec) in tools.iter().zip(mcp::TOOLS) {
        assert_eq!(listed["name"], spec.name);
        assert_eq!(listed["inputSchema"], (spec.input)());
        assert_eq!(listed["annotations"]["readOnlyHint"], spec.read_only);
        assert!(
            listed.get("outputSchema").is_none(),
            "output schemas are not advertised"
        );
    }
}

#[tokio::test]
async fn every_act_reaches_the_desktop_in_a_takeover_session() {
    let server = desk(Consent::sandbox()).await;
    let mut c = Mcp::connect(server.port).await;
    let s = c
        .ok(
            "start_session",
            json!({"input": "takeover", "lease_s": 600}),
        )
        .await;
    assert_eq!(s["takeover"]["on"], true);
    assert!(s["lease_remaining_s"].as_u64().is_some_and(|l| l > 590));
    let windows = c.ok("list_windows", json!({})).await["windows"].clone();
    let term = windows
        .as_array()
        .and_then(|w| w.iter().find(|w| w["app"] == "XTerm"))
        .and_then(|w| w["window_id"].as_str())
        .expect("the xterm")
        .to_owned();

    let r = c
        .call(
            "click",
            json!({"window_id": term, "x": 100, "y": 100,
                                    "observe": {"screenshot": true}}),
        )
        .await;
    assert_eq!(
        r["structuredContent"]["observe"]["screenshot"]["width"],
        800
    );
    assert_eq!(r["content"][1]["type"], "image");
    let data = r["content"][1]["data"].as_str().expect("image data");
    assert_eq!(decode_png(data).0, 800, "the PNG itself is in the answer");
    for (tool, args) in [
        ("double_click", json!({"x": 120, "y": 100})),
        (
            "right_click",
            json!({"x": 120, "y": 100, "modifiers": ["shift"]}),
        ),
        ("type_text", json!({"text": "héllo ✓"})),
        ("press_key", json!({"key": "ctrl+s"})),
        ("hotkey", json!({"keys": ["ctrl", "c"]})),
        (
            "scroll",
            json!({"x": 50, "y": 50, "direction": "up", "amount": 2}),
        ),
        (
            "drag",
            json!({"from": {"x": 10, "y": 10}, "to": {"x": 300, "y": 200}}),
        ),
        (
            "move_cursor",
            json!({"x": 400, "y": 300, "duration_ms": 40}),
        ),
        ("bring_to_front", json!({"app": "gedit"})),
    ] {
        let r = c.ok(tool, args).await;
        assert_eq!(r["effect"], "sent", "{tool}");
    }
    let st = server.desktop.state();
    assert_eq!(st.typed(), "héllo ✓");
    assert!(
        st.events
            .contains(&Event::Scroll(deskhand_engine::ScrollDirection::Up, 2))
    );
    assert_eq!(st.pointer, deskhand_engine::Point::new(400, 300));
    assert!(
        st.buttons.is_empty() && st.keys.is_empty(),
        "nothing left held"
    );
}

#[tokio::test]
async fn reads_give_windows_states_screenshots_and_health() {
    let server = desk(clipboard_consent()).await;
    let mut c = Mcp::connect(server.port).await;
    c.ok("start_session", json!({"clipboard_read": true})).await;
    let state = c.ok("get_window_state", json!({"app": "notes"})).await;
    assert_eq!(state["window"]["title"], "notes");
    assert_eq!(state["tree_error"]["code"], "unsupported");
    let shot = c
        .call("screenshot", json!({"format": "jpeg", "quality": 50}))
        .await;
    assert_eq!(
        shot["structuredContent"]["image"]["mime_type"],
        "image/jpeg"
    );
    assert_eq!(shot["content"][1]["mimeType"], "image/jpeg");
    let jpeg = {
        use base64::Engine as _;
        base64::engine::general_purpose::STANDARD
            .decode(shot["content"][1]["data"].as_str().expect("image data"))
            .expect("base64")
    };
    assert_eq!(&jpeg[..2], [0xFF, 0xD8], "a JPEG's start of image");
    assert_eq!(
        Some(jpeg.len() as u64),
        shot["structuredContent"]["image"]["bytes"].as_u64()
    );
    let health = c.ok("health_report", json!({})).await;
    assert_eq!(health["ready"], true);
    c.ok("clipboard_write", json!({"text": "mine"})).await;
    assert_eq!(c.ok("clipboard_read", json!({})).await["text"], "mine");
    c.ok("get_session_state", json!({})).await;
    c.ok("end_session", json!({})).await;
}

#[tokio::test]
async fn targets_are_resolved_or_refused_with_candidates() {
    let server = desk(Consent::sandbox()).await;
    server.desktop.state().windows.push(window(
        13,
        101,
        "XTerm",
        "second term",
        Rect::new(0, 700, 400, 300),
    ));
    let mut c = Mcp::connect(server.port).await;
    let e = c.err("get_window_state", json!({"app": "xterm"})).await;
    assert_eq!(code(&e), "ambiguous_target");
    assert_eq!(e["candidates"].as_array().map(Vec::len), Some(2));
    assert_eq!(e["disposition"]["retry"], "never");
    let e = c.err("get_window_state", json!({})).await;
    assert_eq!(code(&e), "ambiguous_window_target");
    assert_eq!(e["candidates"].as_array().map(Vec::len), Some(3));
    let e = c
        .err("get_window_state", json!({"app": "nothing-like-it"}))
        .await;
    assert_eq!(code(&e), "window_target_not_found");
    let one = c.ok("get_window_state", json!({"pid": 101})).await;
    assert_eq!(one["window"]["title"], "second term");
    let a = c
        .rpc(
            "tools/call",
            json!({"name": "click", "arguments": {"x": "left", "y": 3}}),
        )
        .await;
    let e = a.messages().remove(0)["result"]["structuredContent"]["error"].clone();
    assert_eq!(code(&e), "invalid_arguments");
}

#[tokio::test]
async fn candidates_are_at_most_eight_with_app_text_escaped() {
    let server = desk(Consent::sandbox()).await;
    for i in 0..10 {
        let class = format!("Evil\u{1b}[31m{}", "x".repeat(100));
        server.desktop.state().windows.push(window(
            20 + i,
            300 + i as u32,
            &class,
            "evil",
            Rect::new(10 * i as i32, 700, 100, 100),
        ));
    }
    let mut c = Mcp::connect(server.port).await;
    let e = c.err("get_window_state", json!({"app": "evil"})).await;
    let candidates = e["candidates"].as_array().expect("candidates");
    assert_eq!(candidates.len(), mcp::MAX_CANDIDATES);
    assert_eq!(e["candidates_truncated"], true);
    let app = candidates[0]["app"].as_str().expect("app");
    assert!(!app.contains('\u{1b}') && app.contains("\\u{1b}"), "{app}");
}

#[tokio::test]
async fn headless_and_scope_refuse_before_anything_is_sent() {
    let mut consent = Consent::sandbox();
    consent.apps = AppScope::Named(vec!["XTerm".into()]);
    let server = desk(consent).await;
    let mut c = Mcp::connect(server.port).await;
    let e = c.err("click", json!({"x": 100, "y": 100})).await;
    assert_eq!(code(&e), "requires_takeover");
    let e = c
        .err(
            "start_session",
            json!({"input": "takeover", "apps": ["XTerm", "Gedit"]}),
        )
        .await;
    assert_eq!(code(&e), "capability_not_consented");
    assert!(e["session_id"].is_string());
    let s = c.ok("get_session_state", json!({})).await;
    assert_eq!(s["apps"], json!(["XTerm"]));
    let e = c.err("click", json!({"x": 1000, "y": 100})).await;
    assert_eq!(
        code(&e),
        "capability_not_consented",
        "a click on the editor"
    );
    let e = c.err("clipboard_read", json!({})).await;
    assert_eq!(code(&e), "capability_not_consented");
    let e = c.err("click", json!({"x": 5000, "y": 5000})).await;
    assert_eq!(code(&e), "input_out_of_bounds");
    assert!(
        server.desktop.state().events.is_empty(),
        "something was sent"
    );
}

#[tokio::test]
async fn covered_and_unfocused_targets_are_refused() {
    let server = desk(Consent::sandbox()).await;
    // A window on top of the xterm's corner.
    server.desktop.state().windows.push(window(
        14,
        300,
        "XClock",
        "clock",
        Rect::new(0, 0, 200, 200),
    ));
    let mut c = Mcp::connect(server.port).await;
    c.ok("start_session", json!({"input": "takeover"})).await;
    let e = c
        .err("click", json!({"app": "term", "x": 50, "y": 50}))
        .await;
    assert_eq!(code(&e), "window_not_visible");
    let e = c
        .err("type_text", json!({"app": "notes", "text": "x"}))
        .await;
    assert_eq!(code(&e), "window_not_visible", "the editor has no focus");
    assert!(server.desktop.state().events.is_empty());
}

#[tokio::test]
async fn sessions_expire_are_per_client_and_notifications_are_unsupported() {
    let mut consent = Consent::sandbox();
    consent.lease = Some(Duration::from_secs(1));
    let server = desk(consent).await;
    let mut c = Mcp::connect(server.port).await;
    c.ok("start_session", json!({"input": "takeover"})).await;
    let e = c
        .err("get_session_state", json!({"session_id": "mcp-nope"}))
        .await;
    assert_eq!(code(&e), "session_not_found");
    for tool in [
        "list_notifications",
        "dismiss_notification",
        "invoke_notification_action",
    ] {
        let e = c.err(tool, json!({})).await;
        assert_eq!(
            (code(&e), e["reason"].as_str()),
            ("unsupported", Some("no_platform_api"))
        );
    }
    tokio::time::sleep(Duration::from_millis(1300)).await;
    let e = c.err("click", json!({"x": 10, "y": 10})).await;
    assert_eq!(code(&e), "consent_expired");
    server
        .eventually("the lease's end to take the takeover down", |d| {
            !d.state().indicator.shown
        })
        .await;
}

#[tokio::test]
async fn the_person_taking_over_stops_and_then_refuses_acts() {
    let server = desk(Consent::sandbox()).await;
    let mut c = Mcp::connect(server.port).await;
    c.ok("start_session", json!({"input": "takeover"})).await;
    server.desktop.state().person_after_chars = Some((
        5,
        deskhand_engine::WatchedInput::Pointer(deskhand_engine::Point::new(1500, 900)),
    ));
    let e = c
        .err("type_text", json!({"text": "abcdefghijklmnop"}))
        .await;
    assert_eq!(code(&e), "user_took_over");
    assert_eq!(e["effect"], "stopped");
    let typed = e["typed_characters"].as_u64().expect("typed") as usize;
    assert_eq!(server.desktop.state().typed().chars().count(), typed);
    let e = c.err("press_key", json!({"key": "Return"})).await;
    assert_eq!(
        (code(&e), e["effect"].as_str()),
        ("user_took_over", Some("refused"))
    );
    let s = c.ok("get_session_state", json!({})).await;
    assert_eq!(s["takeover"]["paused"], true);
    c.ok("list_windows", json!({})).await;
}

#[tokio::test]
async fn clipboard_refusals_keep_their_codes() {
    let server = desk(clipboard_consent()).await;
    let mut c = Mcp::connect(server.port).await;
    c.ok("start_session", json!({"clipboard_read": true})).await;
    server.desktop.copy_foreign("hunter2", true);
    let e = c.err("clipboard_read", json!({})).await;
    assert_eq!(code(&e), "clipboard_concealed");
    let e = c
        .err("clipboard_write", json!({"text": "x".repeat(1_100_000)}))
        .await;
    assert_eq!(code(&e), "file_too_large");
}

#[tokio::test]
async fn a_long_type_text_reports_progress() {
    let server = desk(Consent::sandbox()).await;
    let mut c = Mcp::connect(server.port).await;
    c.ok("start_session", json!({"input": "takeover"})).await;
    let a = c
        .rpc(
            "tools/call",
            json!({"name": "type_text",
                   "arguments": {"text": "y".repeat(450), "observe": {"screenshot": true}},
                   "_meta": {"progressToken": "p1"}}),
        )
        .await;
    assert!(a.body.contains("data: "), "progress makes an event stream");
    let messages = a.messages();
    let progress: Vec<&Value> = messages
        .iter()
        .filter(|m| m["method"] == "notifications/progress")
        .collect();
    assert!(progress.len() >= 2, "{}", a.body);
    assert_eq!(progress.last().expect("one")["params"]["progress"], 450.0);
    assert_eq!(progress[0]["params"]["total"], 450.0);
    assert!(
        messages
            .iter()
            .any(|m| m["result"]["structuredContent"]["typed_characters"] == 450)
    );
    let result = messages
        .iter()
        .find(|m| m["result"]["content"][1]["data"].is_string())
        .expect("the observed screenshot")["result"]
        .clone();
    let image = result["content"][1]["data"].as_str().expect("data");
    assert_eq!(
        Some(u64::from(decode_png(image).0)),
        result["structuredContent"]["observe"]["screenshot"]["width"].as_u64(),
        "the PNG is in the event"
    );
}

#[tokio::test]
async fn the_guard_and_session_owners_hold_on_mcp() {
    let server = desk(Consent::sandbox()).await;
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}).to_string();
    assert_eq!(post(server.port, &[], &body).await.status, 401);
    let c = Mcp::connect(server.port).await;
    let sid = c.session.clone().expect("sid");
    let auth = format!("Bearer {}", crate::common::TOKEN);
    let evil = [("Authorization", auth.as_str()), ("Origin", "null")];
    assert_eq!(post(server.port, &evil, &body).await.status, 403);
    let own = [
        ("Authorization", auth.as_str()),
        ("Mcp-Session-Id", sid.as_str()),
        ("MCP-Protocol-Version", "2025-06-18"),
    ];
    assert_eq!(post(server.port, &own, &body).await.status, 200);
}

/// Every code an adapter's sources name has a row of the one table that
/// the adapter may answer with, and a disposition.
#[test]
fn every_error_code_emitted_has_a_row_for_its_adapter() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    for (dir, allowed) in [("mcp", true), ("wire", false)] {
        let mut found = 0;
        for entry in std::fs::read_dir(root.join(dir)).expect("dir") {
            let text = std::fs::read_to_string(entry.expect("entry").path()).expect("read");
            for name in text.split("ErrorCode::").skip(1) {
                let name: String = name.chars().take_while(|c| c.is_alphanumeric()).collect();
                let code = ErrorCode::ALL
                    .iter()
                    .find(|c| format!("{c:?}") == name)
                    .unwrap_or_else(|| panic!("{dir} names ErrorCode::{name}, not in the table"));
                let info = code.info();
                let ok = if allowed {
                    info.adapters.mcp()
                } else {
                    info.adapters.wire()
                };
                assert!(ok, "{dir} emits {name}, which is not one of its codes");
                found += 1;
            }
        }
        assert!(found > 0, "{dir}: no codes found");
    }
}
