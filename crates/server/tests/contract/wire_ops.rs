//! Contract tests: every wire op against the mock desktop, through a real
//! WebSocket connection to the real server.

use crate::common::{Server, TOKEN, decode_png, error_code};
use deskhand_backend_mock::{Event, MockDesktop, monitor};
use deskhand_engine::{Button, Consent, Key, Point, Rect};
use deskhand_protocol::ErrorCode;
use serde_json::{Value, json};
use tokio_tungstenite::tungstenite::client::IntoClientRequest;

#[tokio::test]
async fn hello_advertises_probed_features() {
    let server = Server::sandbox().await;
    let c = server.client().await;
    let p = &c.hello["payload"];
    assert_eq!(p["server"]["name"], "deskhand");
    assert_eq!(p["screen_resolution"], json!([1920, 1080]));
    assert_eq!(
        p["capabilities"],
        json!(["computer_use", "takeover_handback"])
    );
    let fine: Vec<&str> = p["computer_use_features"]
        .as_array()
        .expect("features")
        .iter()
        .filter_map(Value::as_str)
        .collect();
    for f in [
        "screenshot.region",
        "input.drag.path",
        "input.mouse.down_up",
        "cursor.position",
        "display.info",
        "input.wait",
        "input.type.unicode",
        "window.list",
        "window.focus",
        "screenshot.window",
        "app.list",
        "app.launch",
        "permissions.check",
    ] {
        assert!(fine.contains(&f), "missing {f}");
    }
    assert_eq!(
        p["computer_use_features_coarse"],
        json!(["screenshot", "input", "windows", "apps", "permissions"])
    );
}

#[tokio::test]
async fn requests_before_hello_ack_are_refused() {
    let server = Server::sandbox().await;
    let mut c = server.client().await;
    let r = c.request("CURSOR_POSITION_REQUEST", json!({})).await;
    assert_eq!(error_code(&r), "HANDSHAKE_REQUIRED");
}

#[tokio::test]
async fn screenshot_full_region_jpeg_and_cursor() {
    let server = Server::sandbox().await;
    server
        .desktop
        .state()
        .fill(Rect::new(100, 100, 50, 50), [255, 0, 0]);
    let mut c = server.ready_client().await;

    let r = c.request("SCREENSHOT_REQUEST", json!({})).await;
    assert_eq!(r["type"], "SCREENSHOT_RESPONSE", "{r}");
    let p = &r["payload"];
    assert_eq!(p["mime_type"], "image/png");
    let (w, h, rgb) = decode_png(p["image_base64"].as_str().expect("image"));
    assert_eq!((w, h), (1920, 1080));
    let at = |x: usize, y: usize| &rgb[(y * w as usize + x) * 3..][..3];
    assert_eq!(at(120, 120), &[255, 0, 0]);
    assert_eq!(at(10, 10), &[0, 0, 0]);
    assert_eq!(p["meta"], json!({"origin": [0, 0], "display_id": 0}));
    assert_eq!(p["display_scale"], 1.0);

    let r = c
        .request("SCREENSHOT_REQUEST", json!({"region": [90, 90, 130, 110]}))
        .await;
    let p = &r["payload"];
    let (w, h, rgb) = decode_png(p["image_base64"].as_str().expect("image"));
    assert_eq!((w, h), (40, 20));
    assert_eq!(
        &rgb[(15 * 40 + 15) * 3..][..3],
        &[255, 0, 0],
        "region pixel (105,105)"
    );
    assert_eq!(p["meta"]["origin"], json!([90, 90]));
    assert_eq!(p["region"], json!([90, 90, 130, 110]));

    let r = c
        .request(
            "SCREENSHOT_REQUEST",
            json!({"format": "jpeg", "quality": 90}),
        )
        .await;
    assert_eq!(r["payload"]["mime_type"], "image/jpeg");

    server.desktop.state().pointer = Point::new(500, 500);
    let r = c
        .request(
            "SCREENSHOT_REQUEST",
            json!({"region": [495, 495, 505, 505], "include_cursor": true}),
        )
        .await;
    let (_, _, rgb) = decode_png(r["payload"]["image_base64"].as_str().expect("image"));
    assert_eq!(
        &rgb[(5 * 10 + 5) * 3..][..3],
        &[255, 255, 255],
        "cursor drawn"
    );

    let r = c
        .request("SCREENSHOT_REQUEST", json!({"region": [0, 0, 5000, 10]}))
        .await;
    assert_eq!(error_code(&r), "INVALID_ARGUMENTS");
    let r = c.request("SCREENSHOT_REQUEST", json!({"monitor": 3})).await;
    assert_eq!(error_code(&r), "INVALID_ARGUMENTS");
    let r = c
        .request("SCREENSHOT_REQUEST", json!({"format": "gif"}))
        .await;
    assert_eq!(error_code(&r), "INVALID_ARGUMENTS");
}

#[tokio::test]
async fn every_input_verb_reaches_the_desktop() {
    let server = Server::sandbox().await;
    let mut c = server.ready_client().await;
    let ok = |r: &Value| assert_eq!(r["type"], "ACK", "{r}");

    ok(&c
        .act(json!({"action": "mouse_move", "coordinate": [10, 20]}))
        .await);
    assert_eq!(server.desktop.state().pointer, Point::new(10, 20));

    for (verb, button, clicks) in [
        ("left_click", Button::Left, 1),
        ("right_click", Button::Right, 1),
        ("middle_click", Button::Middle, 1),
        ("double_click", Button::Left, 2),
        ("triple_click", Button::Left, 3),
    ] {
        server.desktop.state().events.clear();
        ok(&c.act(json!({"action": verb, "coordinate": [30, 40]})).await);
        let s = server.desktop.state();
        let presses = s
            .events
            .iter()
            .filter(|e| **e == Event::Button(button, true))
            .count();
        assert_eq!(presses, clicks, "{verb}");
        assert!(s.buttons.is_empty(), "{verb} left a button down");
    }

    server.desktop.state().events.clear();
    ok(&c
        .act(json!({"action": "left_click", "coordinate": [5, 5], "modifiers": ["shift", "ctrl"]}))
        .await);
    let ev = server.desktop.state().events.clone();
    let shift_down = ev
        .iter()
        .position(|e| *e == Event::Key(Key::Shift, true))
        .expect("shift down");
    let click = ev
        .iter()
        .position(|e| *e == Event::Button(Button::Left, true))
        .expect("click");
    let shift_up = ev
        .iter()
        .position(|e| *e == Event::Key(Key::Shift, false))
        .expect("shift up");
    assert!(shift_down < click && click < shift_up, "{ev:?}");

    ok(&c
        .act(json!({"action": "mouse_down", "coordinate": [50, 50], "button": "left"}))
        .await);
    assert_eq!(server.desktop.state().buttons, vec![Button::Left]);
    ok(&c
        .act(json!({"action": "mouse_up", "coordinate": [60, 60], "button": "left"}))
        .await);
    assert!(server.desktop.state().buttons.is_empty());

    server.desktop.state().events.clear();
    ok(&c
        .act(json!({"action": "drag", "path": [[100, 100], [200, 100], [200, 150]]}))
        .await);
    {
        let s = server.desktop.state();
        assert_eq!(s.pointer, Point::new(200, 150));
        assert!(
            s.events.contains(&Event::Move(Point::new(200, 100))),
            "passes through the corner"
        );
        assert!(s.buttons.is_empty());
    }

    server.desktop.state().events.clear();
    ok(&c.act(json!({"action": "scroll", "coordinate": [300, 300], "scroll_direction": "down", "scroll_amount": 4})).await);
    assert!(
        server
            .desktop
            .state()
            .events
            .contains(&Event::Scroll(deskhand_engine::ScrollDirection::Down, 4))
    );

    server.desktop.state().events.clear();
    ok(&c.act(json!({"action": "key", "key": "ctrl+s"})).await);
    assert_eq!(
        server.desktop.state().events,
        vec![
            Event::Key(Key::Control, true),
            Event::Key(Key::Char('s'), true),
            Event::Key(Key::Char('s'), false),
            Event::Key(Key::Control, false)
        ]
    );

    server.desktop.state().events.clear();
    let started = std::time::Instant::now();
    ok(&c
        .act(json!({"action": "hold_key", "key": "shift", "duration_ms": 150}))
        .await);
    assert!(started.elapsed().as_millis() >= 150);
    assert!(server.desktop.state().keys.is_empty());

    ok(&c.act(json!({"action": "type", "text": "héllo 日本"})).await);
    assert_eq!(server.desktop.state().typed(), "héllo 日本");

    server.desktop.state().events.clear();
    ok(&c.act(json!({"action": "wait", "duration_ms": 10})).await);
    assert!(
        server.desktop.state().events.is_empty(),
        "wait sends nothing"
    );
}

#[tokio::test]
async fn cursor_and_display_info() {
    let desktop = MockDesktop::with_monitors(vec![
        monitor(0, "A", true, Rect::new(0, 0, 1280, 800), 1.0),
        monitor(1, "B", false, Rect::new(1280, 0, 1024, 768), 2.0),
    ]);
    let backend = desktop.backend();
    let server = Server::start(desktop, backend, Consent::sandbox()).await;
    let mut c = server.ready_client().await;
    let r = c.request("DISPLAY_INFO_REQUEST", json!({})).await;
    let monitors = r["payload"]["monitors"]
        .as_array()
        .expect("monitors")
        .clone();
    assert_eq!(monitors.len(), 2);
    assert_eq!(monitors[1]["origin"], json!([1280, 0]));
    assert_eq!(monitors[1]["physical_size"], json!([1024, 768]));
    assert_eq!(monitors[1]["logical_size"], json!([512, 384]));
    assert_eq!(monitors[1]["scale"], 2.0);

    c.act(json!({"action": "mouse_move", "coordinate": [1300, 10]}))
        .await;
    let r = c.request("CURSOR_POSITION_REQUEST", json!({})).await;
    assert_eq!(r["payload"], json!({"x": 1300, "y": 10, "monitor": 1}));

    let r = c.request("SCREENSHOT_REQUEST", json!({"monitor": 1})).await;
    assert_eq!(
        (
            r["payload"]["width"].clone(),
            r["payload"]["height"].clone()
        ),
        (json!(1024), json!(768))
    );
    assert_eq!(r["payload"]["display_scale"], 2.0);
    assert_eq!(
        r["payload"]["meta"],
        json!({"origin": [1280, 0], "display_id": 1})
    );

    // Below the smaller display: inside the bounding box, outside the union.
    let r = c
        .act(json!({"action": "left_click", "coordinate": [1300, 790]}))
        .await;
    assert_eq!(error_code(&r), "INPUT_OUT_OF_BOUNDS");
    assert_eq!(
        r["payload"]["details"]["displays"].as_array().map(Vec::len),
        Some(2)
    );
    assert_eq!(
        r["payload"]["details"]["requested_coordinate"],
        json!([1300, 790])
    );
}

#[tokio::test]
async fn out_of_bounds_and_bad_arguments_send_nothing() {
    let server = Server::sandbox().await;
    let mut c = server.ready_client().await;
    server.desktop.state().events.clear();
    let r = c
        .act(json!({"action": "left_click", "coordinate": [10000, 10000]}))
        .await;
    assert_eq!(error_code(&r), "INPUT_OUT_OF_BOUNDS");
    assert_eq!(
        r["payload"]["details"]["displays"],
        json!([{"index": 0, "origin": [0, 0], "size": [1920, 1080]}])
    );
    let r = c
        .act(json!({"action": "drag", "path": [[10, 10], [5000, 10]]}))
        .await;
    assert_eq!(error_code(&r), "INPUT_OUT_OF_BOUNDS");
    let r = c
        .act(json!({"action": "key", "key": "ctrl+nosuchkey"}))
        .await;
    assert_eq!(error_code(&r), "INVALID_ARGUMENTS");
    assert_eq!(r["payload"]["details"]["field"], "key");
    let r = c
        .act(json!({"action": "left_click", "coordinate": "here"}))
        .await;
    assert_eq!(error_code(&r), "INVALID_ARGUMENTS");
    assert!(server.desktop.state().events.is_empty(), "nothing was sent");
}

#[tokio::test]
async fn input_without_consent_or_backend_input_is_refused() {
    let desktop = MockDesktop::new();
    let backend = desktop.backend();
    let server = Server::start(desktop, backend, Consent::none()).await;
    let mut c = server.ready_client().await;
    let r = c
        .act(json!({"action": "mouse_move", "coordinate": [1, 1]}))
        .await;
    assert_eq!(error_code(&r), "CAPABILITY_NOT_GRANTED");
    assert_eq!(r["payload"]["details"]["capability"], "input");
    assert!(server.desktop.state().events.is_empty());
    let r = c.request("SCREENSHOT_REQUEST", json!({})).await;
    assert_eq!(
        r["type"], "SCREENSHOT_RESPONSE",
        "reads need no input grant"
    );

    let desktop = MockDesktop::new();
    let backend = desktop.backend_without_input();
    let server = Server::start(desktop, backend, Consent::sandbox()).await;
    let mut c = server.ready_client().await;
    assert_eq!(
        c.hello["payload"]["computer_use_features_coarse"],
        json!(["screenshot", "windows", "apps", "permissions"])
    );
    let r = c
        .act(json!({"action": "left_click", "coordinate": [1, 1]}))
        .await;
    assert_eq!(error_code(&r), "FEATURE_NOT_SUPPORTED");
    let r = c
        .act(json!({"action": "drag", "path": [[1, 1], [2, 2]]}))
        .await;
    assert_eq!(error_code(&r), "FEATURE_NOT_SUPPORTED");
}

#[tokio::test]
async fn malformed_and_unknown_messages_keep_the_connection() {
    let server = Server::sandbox().await;
    let mut c = server.ready_client().await;
    c.send_raw("{not json".into()).await;
    let r = c.recv().await;
    assert_eq!(error_code(&r), "INVALID_MESSAGE");
    assert_eq!(r["payload"]["fatal"], false);

    c.send_raw(json!({"id": "x1", "payload": {}}).to_string())
        .await;
    let r = c.recv().await;
    assert_eq!(
        (error_code(&r), r["id"].clone()),
        ("INVALID_MESSAGE", json!("x1"))
    );

    let r = c.request("TELEPORT", json!({})).await;
    assert_eq!(error_code(&r), "UNKNOWN_MESSAGE_TYPE");
    let r = c.request("ACK", json!({})).await;
    assert_eq!(error_code(&r), "UNKNOWN_MESSAGE_TYPE");
    let r = c.request("INPUT_ACTION", json!([1, 2])).await;
    assert_eq!(error_code(&r), "INVALID_ARGUMENTS");

    let r = c.request("CURSOR_POSITION_REQUEST", json!({})).await;
    assert_eq!(r["type"], "CURSOR_POSITION_RESPONSE", "still connected");
}

#[tokio::test]
async fn every_error_code_on_the_wire_is_in_the_table() {
    let server = Server::sandbox().await;
    let mut c = server.ready_client().await;
    let replies = [
        c.act(json!({"action": "left_click", "coordinate": [-1, 0]}))
            .await,
        c.act(json!({"action": "nope"})).await,
        c.request("NOPE", json!({})).await,
        c.request("SCREENSHOT_REQUEST", json!({"window_id": "win_x"}))
            .await,
    ];
    for r in replies {
        let code = error_code(&r);
        let row = ErrorCode::ALL.iter().find(|c| c.wire_name() == code);
        let row = row.unwrap_or_else(|| panic!("code {code} is not in the table"));
        assert_eq!(r["payload"]["suggestion"], row.info().suggestion);
        assert_eq!(r["payload"]["fatal"], row.info().fatal);
    }
}

#[tokio::test]
async fn disconnect_releases_held_input() {
    let server = Server::sandbox().await;
    let mut c = server.ready_client().await;
    let r = c
        .act(json!({"action": "mouse_down", "coordinate": [50, 50]}))
        .await;
    assert_eq!(r["type"], "ACK");
    assert_eq!(server.desktop.state().buttons, vec![Button::Left]);
    drop(c);
    server
        .eventually("button released after disconnect", |d| {
            d.state().buttons.is_empty()
        })
        .await;
}

#[tokio::test]
async fn backend_failure_releases_what_the_action_held() {
    let server = Server::sandbox().await;
    let mut c = server.ready_client().await;
    // Fail the key press after shift went down: shift must come back up.
    server.desktop.state().events.clear();
    {
        let mut s = server.desktop.state();
        s.keys.clear();
    }
    let r = c
        .act(json!({"action": "mouse_down", "coordinate": [5, 5]}))
        .await;
    assert_eq!(r["type"], "ACK");
    server.desktop.state().fail_next_input = true;
    let r = c.act(json!({"action": "key", "key": "shift+a"})).await;
    assert_eq!(error_code(&r), "BACKEND_FAILURE");
    assert_eq!(r["payload"]["disposition"], "unsafe");
    let s = server.desktop.state();
    assert!(
        s.buttons.is_empty() && s.keys.is_empty(),
        "held: {:?} {:?}",
        s.buttons,
        s.keys
    );
}

async fn http_status(server: &Server, headers: &[(&'static str, String)]) -> u16 {
    let mut req = server.url().into_client_request().expect("request");
    for (k, v) in headers {
        req.headers_mut().insert(*k, v.parse().expect("header"));
    }
    match tokio_tungstenite::connect_async(req).await {
        Ok(_) => 101,
        Err(tokio_tungstenite::tungstenite::Error::Http(resp)) => resp.status().as_u16(),
        Err(e) => panic!("unexpected error {e}"),
    }
}

#[tokio::test]
async fn token_origin_and_host_are_checked_before_the_upgrade() {
    let server = Server::sandbox().await;
    let bearer = format!("Bearer {TOKEN}");
    assert_eq!(http_status(&server, &[]).await, 401);
    assert_eq!(
        http_status(&server, &[("Authorization", "Bearer wrong".into())]).await,
        401
    );
    assert_eq!(
        http_status(&server, &[("Authorization", bearer.clone())]).await,
        101
    );
    assert_eq!(
        http_status(
            &server,
            &[
                ("Authorization", bearer.clone()),
                ("Origin", "http://evil.example".into())
            ]
        )
        .await,
        403
    );
    assert_eq!(
        http_status(
            &server,
            &[
                ("Authorization", bearer.clone()),
                ("Host", format!("evil.example:{}", server.port))
            ]
        )
        .await,
        403
    );
    assert_eq!(
        http_status(&server, &[("Origin", "http://evil.example".into())]).await,
        403
    );
}

/// The status line's code for a raw HTTP/1.1 GET of `/v1/ws` with the
/// token and `headers`.
async fn raw_get_status(server: &Server, headers: &str) -> u16 {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let mut tcp = tokio::net::TcpStream::connect(("127.0.0.1", server.port))
        .await
        .expect("connect");
    let request = format!(
        "GET /v1/ws HTTP/1.1\r\nHost: 127.0.0.1:{}\r\nAuthorization: Bearer {TOKEN}\r\n{headers}\r\n",
        server.port
    );
    tcp.write_all(request.as_bytes()).await.expect("write");
    let mut head = [0u8; 12];
    tcp.read_exact(&mut head).await.expect("status line");
    std::str::from_utf8(&head[9..12])
        .expect("ascii")
        .parse()
        .expect("status code")
}

#[tokio::test]
async fn requests_that_are_not_websocket_upgrades_are_refused() {
    let server = Server::sandbox().await;
    let upgrade = "Connection: keep-alive, Upgrade\r\nUpgrade: websocket\r\n";
    let key = "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n";
    // A plain GET.
    assert_eq!(raw_get_status(&server, "").await, 400);
    // No key, or a version other than 13.
    let v13 = "Sec-WebSocket-Version: 13\r\n";
    assert_eq!(
        raw_get_status(&server, &format!("{upgrade}{v13}")).await,
        400
    );
    let v8 = "Sec-WebSocket-Version: 8\r\n";
    assert_eq!(
        raw_get_status(&server, &format!("{upgrade}{v8}{key}")).await,
        426
    );
    // The same with everything right is switched.
    assert_eq!(
        raw_get_status(&server, &format!("{upgrade}{v13}{key}")).await,
        101
    );
}

#[tokio::test]
async fn oversized_messages_are_refused() {
    let server = Server::sandbox().await;
    let mut c = server.ready_client().await;
    let huge = "x".repeat(deskhand_server::DEFAULT_MAX_MESSAGE_BYTES + 10);
    let _ = futures_util::SinkExt::send(
        &mut c.ws,
        tokio_tungstenite::tungstenite::Message::Text(huge.into()),
    )
    .await;
    let next = tokio::time::timeout(
        std::time::Duration::from_secs(5),
        futures_util::StreamExt::next(&mut c.ws),
    )
    .await;
    match next {
        Ok(Some(Ok(tokio_tungstenite::tungstenite::Message::Close(_))))
        | Ok(None)
        | Ok(Some(Err(_))) => {}
        other => panic!("expected the connection to close, got {other:?}"),
    }
}

#[tokio::test]
async fn audit_has_one_record_per_op_and_no_typed_text() {
    let dir = std::env::temp_dir().join(format!("dh-contract-audit-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let path = dir.join("audit.jsonl");
    let audit = deskhand_engine::AuditLog::open(&path).expect("audit");
    let desktop = MockDesktop::new();
    let backend = desktop.backend();
    let server =
        crate::common::Server::start_with_audit(desktop, backend, Consent::sandbox(), audit).await;
    let mut c = server.ready_client().await;
    let secret = "correct horse battery staple";
    c.act(json!({"action": "type", "text": secret})).await;
    c.act(json!({"action": "left_click", "coordinate": [9999, 0]}))
        .await;
    c.request("SCREENSHOT_REQUEST", json!({"region": [0, 0, 10, 10]}))
        .await;
    c.request("CURSOR_POSITION_REQUEST", json!({})).await;
    let text = std::fs::read_to_string(&path).expect("audit file");
    assert!(
        !text.contains(secret),
        "typed text leaked into the audit log"
    );
    let records: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).expect("JSON line"))
        .collect();
    let ops: Vec<&str> = records.iter().filter_map(|r| r["op"].as_str()).collect();
    assert_eq!(
        ops,
        [
            "session.open",
            "hello_ack",
            "takeover.started",
            "takeover.request",
            "input.type",
            "input.left_click",
            "screenshot",
            "cursor_position"
        ]
    );
    assert_eq!(records[4]["target"]["text_chars"], secret.chars().count());
    assert_eq!(records[5]["outcome"], "input_out_of_bounds");
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test]
async fn a_wait_does_not_hold_up_other_sessions() {
    let server = Server::sandbox().await;
    // A wait sends nothing: it needs no takeover (the other one holds it).
    let mut waiting = server.handshaken_client().await;
    let mut other = server.ready_client().await;
    waiting
        .send_raw(
            json!({"type": "INPUT_ACTION", "id": "w", "ts": 0,
                   "payload": {"action": "wait", "duration_ms": 3000}})
            .to_string(),
        )
        .await;
    // Another session acts while the wait is still running.
    let r = other
        .act(json!({"action": "mouse_move", "coordinate": [7, 7]}))
        .await;
    assert_eq!(r["type"], "ACK");
    assert_eq!(server.desktop.state().pointer, Point::new(7, 7));
    let pending = tokio::time::timeout(
        std::time::Duration::from_millis(50),
        futures_util::StreamExt::next(&mut waiting.ws),
    )
    .await;
    assert!(pending.is_err(), "the wait answered before it was over");
    let r = waiting.recv().await;
    assert_eq!(
        (r["type"].clone(), r["id"].clone()),
        (json!("ACK"), json!("w"))
    );
}

#[tokio::test]
async fn screenshots_leave_thumbnails_for_the_timeline_only_when_the_host_keeps_them() {
    let server = Server::sandbox().await;
    let mut c = server.ready_client().await;
    let session = c.hello["payload"]["session_id"].clone();
    let r = c.request("SCREENSHOT_REQUEST", json!({})).await;
    assert_eq!(r["type"], "SCREENSHOT_RESPONSE", "{r}");
    assert!(
        server.engine.thumbnails().is_empty(),
        "none unless a host keeps them"
    );
    server.engine.keep_thumbnails();
    let r = c
        .request("SCREENSHOT_REQUEST", json!({"format": "jpeg"}))
        .await;
    assert_eq!(r["type"], "SCREENSHOT_RESPONSE", "{r}");
    let kept = server.engine.thumbnails();
    assert_eq!(kept.len(), 1, "{kept:?}");
    assert_eq!(json!(kept[0].session), session);
    assert_eq!((kept[0].width, kept[0].height), (240, 135));
    let jpeg = server.engine.thumbnail_jpeg(kept[0].id).expect("its bytes");
    assert_eq!(&jpeg[..2], &[0xff, 0xd8], "a JPEG");
}
