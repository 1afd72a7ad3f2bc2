//! `POST /v1/actions` over the mock desktop: ordered batches halted at the
//! first failure with one fresh screenshot, coordinates through the frame,
//! sessions by header, the takeover a session's first input starts and
//! its idle end, hand-back, and the route's own refusals.

#![allow(missing_docs)]

use std::time::Duration;

use deskhand_backend_mock::{Event, MockDesktop};
use deskhand_engine::{Consent, Key, Point, Rect};
use serde_json::{Value, json};

use crate::common::{Server, TOKEN, decode_png};
use crate::http::{post, raw};

async fn batch(s: &Server, session: Option<&str>, actions: Value) -> (Value, String) {
    let a = post(s.port, "/v1/actions", session, &actions).await;
    assert_eq!(a.status, 200, "{}", String::from_utf8_lossy(&a.body));
    let session = a.session();
    (a.json(), session)
}

fn screenshot_size(r: &Value) -> (u32, u32) {
    let (w, h, _) = decode_png(
        r["action_result"]["screenshot"]
            .as_str()
            .expect("screenshot"),
    );
    (w, h)
}

#[tokio::test]
async fn a_screenshot_batch_is_a_read_with_one_full_size_image() {
    let s = Server::sandbox().await;
    s.desktop
        .state()
        .fill(Rect::new(0, 0, 1920, 1080), [10, 200, 30]);
    let (r, session) = batch(&s, None, json!([{"action_type": "screenshot"}])).await;
    assert_eq!(r["status"], "success", "{r}");
    assert_eq!(screenshot_size(&r), (1920, 1080));
    assert_eq!(
        r["action_result"]["screen_dimensions"],
        json!({"width": 1920, "height": 1080})
    );
    let (_, _, rgb) = decode_png(r["action_result"]["screenshot"].as_str().expect("png"));
    assert_eq!(&rgb[..3], &[10, 200, 30], "the desktop's pixels");
    assert!(session.starts_with("http-"), "{session}");
    assert!(
        !s.desktop.state().indicator.shown,
        "a read starts no takeover"
    );
    assert!(s.desktop.state().events.is_empty());
}

#[tokio::test]
async fn input_before_any_frame_is_refused_and_sends_nothing() {
    let s = Server::sandbox().await;
    let (r, _) = batch(
        &s,
        None,
        json!([{"action_type": "mouse_move", "x": 10, "y": 10}]),
    )
    .await;
    assert_eq!(r["status"], "error");
    assert_eq!(r["error"]["failed_action_index"], 0);
    assert_eq!(r["error"]["code"], "invalid_arguments");
    assert!(
        r["error"]["message"]
            .as_str()
            .unwrap_or("")
            .contains("screenshot"),
        "{r}"
    );
    assert_eq!(screenshot_size(&r), (1920, 1080), "a screenshot even so");
    let moved = s
        .desktop
        .state()
        .events
        .iter()
        .any(|e| matches!(e, Event::Move(_)));
    assert!(!moved);
}

#[tokio::test]
async fn a_batch_failing_at_action_two_of_four_stops_there() {
    let s = Server::sandbox().await;
    let (_, session) = batch(&s, None, json!({"action_type": "screenshot"})).await;
    let (r, again) = batch(
        &s,
        Some(&session),
        json!([
            {"action_type": "type", "text": "ab"},
            {"action_type": "mouse_move", "x": 1920, "y": 5},
            {"action_type": "type", "text": "cd"},
            {"action_type": "key", "key_name": "ENTER"},
        ]),
    )
    .await;
    assert_eq!(again, session, "the same session");
    assert_eq!(r["status"], "error", "{r}");
    assert_eq!(r["error"]["failed_action_index"], 1);
    assert_eq!(r["error"]["code"], "desktop_coordinate_out_of_bounds");
    assert_eq!(screenshot_size(&r), (1920, 1080));
    assert_eq!(
        r["timings"].as_array().map(Vec::len),
        Some(2),
        "two actions ran"
    );
    let st = s.desktop.state();
    assert_eq!(st.typed(), "ab", "actions 3 and 4 were not executed");
    assert!(
        !st.events
            .iter()
            .any(|e| matches!(e, Event::Key(Key::Return, _)))
    );
}

#[tokio::test]
async fn a_bad_action_anywhere_sends_nothing() {
    let s = Server::sandbox().await;
    let (r, _) = batch(
        &s,
        None,
        json!([{"action_type": "type", "text": "x"}, {"action_type": "fly"}]),
    )
    .await;
    assert_eq!(r["error"]["failed_action_index"], 1);
    assert_eq!(r["error"]["code"], "invalid_arguments");
    assert!(
        s.desktop.state().events.is_empty(),
        "not even the first action"
    );
    assert!(!s.desktop.state().indicator.shown);
}

#[tokio::test]
async fn coordinates_are_the_primary_displays_pixels_and_input_starts_the_takeover() {
    let desktop = MockDesktop::with_monitors(vec![
        deskhand_backend_mock::monitor(0, "LEFT", false, Rect::new(0, 0, 1280, 800), 1.0),
        deskhand_backend_mock::monitor(1, "MAIN", true, Rect::new(1280, 0, 1024, 768), 1.0),
    ]);
    let backend = desktop.backend();
    let s = Server::start(desktop, backend, Consent::sandbox()).await;
    let (r, session) = batch(&s, None, json!([{"action_type": "screenshot"}])).await;
    assert_eq!(screenshot_size(&r), (1024, 768), "the primary display");
    let (r, _) = batch(
        &s,
        Some(&session),
        json!([{"action_type": "mouse_move", "x": 100, "y": 200}, {"action_type": "left_click"}]),
    )
    .await;
    assert_eq!(r["status"], "success", "{r}");
    let st = s.desktop.state();
    assert_eq!(
        st.pointer,
        Point::new(1380, 200),
        "mapped onto the primary display"
    );
    assert!(st.indicator.shown, "the first input started the takeover");
}

#[tokio::test]
async fn while_the_person_holds_the_desktop_input_answers_user_took_over() {
    let s = Server::sandbox().await;
    let (_, session) = batch(&s, None, json!([{"action_type": "screenshot"}])).await;
    let (r, _) = batch(
        &s,
        Some(&session),
        json!([{"action_type": "type", "text": "a"}]),
    )
    .await;
    assert_eq!(r["status"], "success", "{r}");
    s.desktop.person_moves_pointer(900, 900);
    s.eventually("paused", |d| d.state().indicator.paused).await;
    let (r, _) = batch(
        &s,
        Some(&session),
        json!([{"action_type": "type", "text": "b"}]),
    )
    .await;
    assert_eq!(r["error"]["code"], "user_took_over", "{r}");
    assert_eq!(r["error"]["failed_action_index"], 0);
    assert_eq!(screenshot_size(&r), (1920, 1080), "with a screenshot");
    assert_eq!(s.desktop.state().typed(), "a");
}

#[tokio::test]
async fn an_idle_takeover_ends() {
    let desktop = MockDesktop::new();
    let backend = desktop.backend();
    let s = Server::start_tuned(desktop, backend, Consent::sandbox(), |c| {
        // Long enough that a loaded machine still sees the indicator
        // right after the batch; `eventually` waits up to 2 s.
        c.takeover_idle = Duration::from_millis(800);
    })
    .await;
    let (_, session) = batch(&s, None, json!([{"action_type": "screenshot"}])).await;
    batch(
        &s,
        Some(&session),
        json!([{"action_type": "type", "text": "a"}]),
    )
    .await;
    assert!(s.desktop.state().indicator.shown);
    s.eventually("the indicator hidden", |d| !d.state().indicator.shown)
        .await;
    // The next input starts it again.
    batch(
        &s,
        Some(&session),
        json!([{"action_type": "type", "text": "b"}]),
    )
    .await;
    assert!(s.desktop.state().indicator.shown);
    assert_eq!(s.desktop.state().typed(), "ab");
}

#[tokio::test]
async fn without_input_consent_nothing_is_sent() {
    let desktop = MockDesktop::new();
    let backend = desktop.backend();
    let s = Server::start(desktop, backend, Consent::none()).await;
    let (_, session) = batch(&s, None, json!([{"action_type": "screenshot"}])).await;
    let (r, _) = batch(
        &s,
        Some(&session),
        json!([{"action_type": "type", "text": "a"}]),
    )
    .await;
    assert_eq!(r["error"]["code"], "capability_not_granted", "{r}");
    assert!(s.desktop.state().events.is_empty());
}

#[tokio::test]
async fn the_route_refuses_what_it_cannot_trust() {
    let s = Server::sandbox().await;
    let body = json!([{"action_type": "screenshot"}]).to_string();
    let head = |fields: &str| {
        format!(
            "POST /v1/actions HTTP/1.1\r\nHost: 127.0.0.1:{}\r\n{fields}",
            s.port
        )
    };
    let json_with_token = head(&format!(
        "Authorization: Bearer {TOKEN}\r\nContent-Type: application/json"
    ));
    let no_token = raw(
        s.port,
        &head("Content-Type: application/json"),
        body.as_bytes(),
    )
    .await;
    assert_eq!(no_token.status, 401);
    let plain = raw(
        s.port,
        &head(&format!(
            "Authorization: Bearer {TOKEN}\r\nContent-Type: text/plain"
        )),
        body.as_bytes(),
    )
    .await;
    assert_eq!(plain.status, 415, "a browser's simple request type");
    let invented = post(
        s.port,
        "/v1/actions",
        Some("http-not-a-session"),
        &json!([{"action_type": "screenshot"}]),
    )
    .await;
    assert_eq!(invented.status, 400);
    assert_eq!(
        invented.json()["error"]["details"]["field"],
        "X-Deskhand-Session"
    );
    let big = format!(
        "[{{\"action_type\":\"type\",\"text\":\"{}\"}}]",
        "a".repeat(2 << 20)
    );
    let too_big = raw(s.port, &json_with_token, big.as_bytes()).await;
    assert_eq!(too_big.status, 413);
    let not_json = raw(s.port, &json_with_token, b"[{").await;
    assert_eq!(not_json.status, 400);
    assert!(s.desktop.state().events.is_empty(), "nothing was sent");
}

#[tokio::test]
async fn ending_a_session_ends_its_takeover() {
    let s = Server::sandbox().await;
    let (_, session) = batch(&s, None, json!([{"action_type": "screenshot"}])).await;
    batch(
        &s,
        Some(&session),
        json!([{"action_type": "type", "text": "a"}]),
    )
    .await;
    assert!(s.desktop.state().indicator.shown);
    let head = format!(
        "DELETE /v1/computer/session HTTP/1.1\r\nHost: 127.0.0.1:{}\r\nAuthorization: Bearer {TOKEN}\r\nX-Deskhand-Session: {session}",
        s.port
    );
    assert_eq!(raw(s.port, &head, b"").await.status, 204);
    s.eventually("the indicator hidden", |d| !d.state().indicator.shown)
        .await;
    let gone = post(
        s.port,
        "/v1/actions",
        Some(&session),
        &json!([{"action_type": "screenshot"}]),
    )
    .await;
    assert_eq!(gone.status, 400, "the session is gone");
    assert_eq!(raw(s.port, &head, b"").await.status, 400, "twice");
}

#[tokio::test]
async fn the_image_after_input_waits_for_the_screen_to_settle_within_a_bound() {
    let s = Server::sandbox().await;
    let (r, session) = batch(&s, None, json!([{"action_type": "screenshot"}])).await;
    assert!(
        r["settle_ms"].is_null(),
        "a read does not wait: {}",
        r["settle_ms"]
    );
    let (r, _) = batch(
        &s,
        Some(&session),
        json!([{"action_type": "type", "text": "a"}]),
    )
    .await;
    let still = r["settle_ms"].as_f64().expect("settle_ms after input");
    assert!(still < 500.0, "a still screen settles at once: {still} ms");
    // A screen that never stops changing: the wait ends at its bound.
    let desktop = s.desktop.clone();
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let flag = stop.clone();
    let painter = std::thread::spawn(move || {
        let mut i = 0u8;
        while !flag.load(std::sync::atomic::Ordering::SeqCst) {
            i = i.wrapping_add(1);
            desktop.state().fill(Rect::new(0, 0, 64, 64), [i, i, i]);
            std::thread::sleep(Duration::from_millis(3));
        }
    });
    let (r, _) = batch(
        &s,
        Some(&session),
        json!([{"action_type": "type", "text": "b"}]),
    )
    .await;
    stop.store(true, std::sync::atomic::Ordering::SeqCst);
    painter.join().expect("painter");
    let busy = r["settle_ms"].as_f64().expect("settle_ms");
    assert!(
        (1000.0..1500.0).contains(&busy),
        "bounded at 1 s: {busy} ms"
    );
    assert_eq!(r["status"], "success");
}

#[tokio::test]
async fn a_frame_over_its_byte_budget_is_sent_smaller_and_says_so() {
    let s = Server::sandbox().await;
    {
        // Noise: a PNG of it is megabytes.
        let mut st = s.desktop.state();
        let mut x = 0x2545_f491u32;
        for p in st.pixels.iter_mut() {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            *p = x as u8;
        }
    }
    let a = post(
        s.port,
        "/v1/actions?max_bytes=200000",
        None,
        &json!([{"action_type": "screenshot"}]),
    )
    .await;
    let note = a.header("x-deskhand-frame-note").map(str::to_owned);
    let session = a.session();
    let r = a.json();
    assert_eq!(r["status"], "success", "{r}");
    let res = &r["action_result"];
    assert_eq!(res["mime_type"], "image/jpeg");
    assert!(
        res["frame_note"]
            .as_str()
            .is_some_and(|n| n.contains("budget")),
        "{res}"
    );
    assert!(note.is_some(), "said in a header too");
    use base64::Engine as _;
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(res["screenshot"].as_str().expect("image"))
        .expect("base64");
    assert!(bytes.len() <= 200_000, "{} bytes", bytes.len());
    assert_eq!(&bytes[..2], &[0xff, 0xd8], "a JPEG");
    let (w, h) = (
        res["screen_dimensions"]["width"].as_i64().expect("w"),
        res["screen_dimensions"]["height"].as_i64().expect("h"),
    );
    assert!(w < 1920 && h < 1080, "{w}x{h}");
    // Coordinates are the smaller frame's pixels.
    let (m, _) = batch(
        &s,
        Some(&session),
        json!([{"action_type": "mouse_move", "x": w - 1, "y": h - 1}]),
    )
    .await;
    assert_eq!(m["status"], "success", "{m}");
    // The centre of the frame's last pixel, which spans 1920/w desktop pixels.
    let p = s.desktop.state().pointer;
    let span = |full: i64, n: i64| (full - (full + n - 1) / n)..full;
    assert!(span(1920, w).contains(&i64::from(p.x)), "{p:?} for {w}x{h}");
    assert!(span(1080, h).contains(&i64::from(p.y)), "{p:?} for {w}x{h}");
}

#[tokio::test]
async fn clients_that_drop_the_session_header_do_not_lock_others_out() {
    let s = Server::sandbox().await;
    let (_, driver) = batch(&s, None, json!([{"action_type": "screenshot"}])).await;
    batch(
        &s,
        Some(&driver),
        json!([{"action_type": "type", "text": "a"}]),
    )
    .await;
    for _ in 0..70 {
        batch(&s, None, json!([{"action_type": "cursor_position"}])).await;
    }
    // The session holding the takeover was kept.
    let (r, _) = batch(
        &s,
        Some(&driver),
        json!([{"action_type": "type", "text": "b"}]),
    )
    .await;
    assert_eq!(r["status"], "success", "{r}");
    assert_eq!(s.desktop.state().typed(), "ab");
}

#[tokio::test]
async fn a_client_gone_mid_batch_ends_its_takeover_and_the_rest_is_not_sent() {
    use tokio::io::AsyncWriteExt;
    let s = Server::sandbox().await;
    let (_, session) = batch(&s, None, json!([{"action_type": "screenshot"}])).await;
    let body = json!([
        {"action_type": "type", "text": "a"},
        {"action_type": "wait", "duration": 2.0},
        {"action_type": "type", "text": "b"},
    ])
    .to_string();
    let mut sock = tokio::net::TcpStream::connect(("127.0.0.1", s.port))
        .await
        .expect("connect");
    let req = format!(
        "POST /v1/actions HTTP/1.1\r\nHost: 127.0.0.1:{}\r\nAuthorization: Bearer {TOKEN}\r\nContent-Type: application/json\r\nX-Deskhand-Session: {session}\r\nContent-Length: {}\r\n\r\n{body}",
        s.port,
        body.len()
    );
    sock.write_all(req.as_bytes()).await.expect("send");
    s.eventually("the first text typed", |d| d.state().typed() == "a")
        .await;
    drop(sock);
    s.eventually("the takeover ended", |d| !d.state().indicator.shown)
        .await;
    tokio::time::sleep(Duration::from_millis(2500)).await;
    assert_eq!(s.desktop.state().typed(), "a", "the rest was not sent");
}
