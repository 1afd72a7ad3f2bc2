//! The Anthropic and OpenAI computer adapters over the mock desktop: tool
//! definitions sized like the frames, frames within the vendor caps,
//! clicks mapped back to desktop pixels (two displays, a gap, a layout
//! change), zoom, cursor text, and safety checks refused.

#![allow(missing_docs)]

use deskhand_backend_mock::{Event, MockDesktop, monitor};
use deskhand_engine::{Button, Consent, Key, Point, Rect, ScrollDirection};
use serde_json::{Value, json};

use crate::common::{Server, decode_png};
use crate::http::{get, post};

async fn anthropic(s: &Server, session: Option<&str>, input: Value) -> (Value, String) {
    let block = json!({"type": "tool_use", "id": "toolu_1", "name": "computer", "input": input});
    let a = post(s.port, "/v1/computer/anthropic", session, &block).await;
    assert_eq!(a.status, 200, "{}", String::from_utf8_lossy(&a.body));
    let id = a.session();
    (a.json(), id)
}

fn image_size(result: &Value) -> (u32, u32) {
    let img = result["content"]
        .as_array()
        .and_then(|c| c.iter().find(|p| p["type"] == "image"))
        .expect("an image");
    let (w, h, _) = decode_png(img["source"]["data"].as_str().expect("data"));
    (w, h)
}

fn text_of(result: &Value) -> String {
    result["content"]
        .as_array()
        .and_then(|c| c.iter().find(|p| p["type"] == "text"))
        .and_then(|p| p["text"].as_str())
        .unwrap_or("")
        .to_owned()
}

#[tokio::test]
async fn the_anthropic_tool_definition_has_the_frames_size() {
    let s = Server::sandbox().await;
    let a = get(
        s.port,
        "/v1/computer/anthropic/tool?version=computer_20251124",
    )
    .await;
    let def = a.json();
    assert_eq!(def["type"], "computer_20251124");
    assert_eq!(def["name"], "computer");
    assert_eq!(
        (
            def["display_width_px"].as_u64(),
            def["display_height_px"].as_u64()
        ),
        (Some(1429), Some(804))
    );
    assert_eq!(def["enable_zoom"], true);
    let old = get(
        s.port,
        "/v1/computer/anthropic/tool?version=computer_20250124",
    )
    .await
    .json();
    assert!(old.get("enable_zoom").is_none(), "{old}");
    let (r, _) = anthropic(&s, None, json!({"action": "screenshot"})).await;
    assert_eq!(
        image_size(&r),
        (1429, 804),
        "the frame is the size the tool said"
    );
    assert_eq!(r["tool_use_id"], "toolu_1");
    assert!(r.get("is_error").is_none());
}

#[tokio::test]
async fn anthropic_clicks_map_back_to_desktop_pixels_with_modifiers() {
    let s = Server::sandbox().await;
    let (_, session) = anthropic(&s, None, json!({"action": "screenshot"})).await;
    let (r, _) = anthropic(
        &s,
        Some(&session),
        json!({"action": "left_click", "coordinate": [1428, 803], "text": "shift"}),
    )
    .await;
    assert!(r.get("is_error").is_none(), "{r}");
    let st = s.desktop.state();
    assert_eq!(
        st.pointer,
        Point::new(1919, 1079),
        "the last frame pixel is the last desktop pixel"
    );
    let shift_down = st
        .events
        .iter()
        .position(|e| *e == Event::Key(Key::Shift, true));
    let click = st
        .events
        .iter()
        .position(|e| *e == Event::Button(Button::Left, true));
    assert!(
        shift_down.is_some() && shift_down < click,
        "{:?}",
        st.events
    );
}

#[tokio::test]
async fn anthropic_cursor_zoom_keys_and_the_tool_set_shape() {
    let s = Server::sandbox().await;
    let (_, session) = anthropic(&s, None, json!({"action": "screenshot"})).await;
    let sid = Some(session.as_str());
    anthropic(
        &s,
        sid,
        json!({"action": "mouse_move", "coordinate": [100, 50]}),
    )
    .await;
    let (r, _) = anthropic(&s, sid, json!({"action": "cursor_position"})).await;
    assert_eq!(text_of(&r), "X=100,Y=50");
    let (z, _) = anthropic(
        &s,
        sid,
        json!({"action": "zoom", "region": [0, 0, 400, 300]}),
    )
    .await;
    let (w, h) = image_size(&z);
    assert!(
        (536..=538).contains(&w) && (402..=404).contains(&h),
        "native detail: {w}x{h}"
    );
    anthropic(&s, sid, json!({"action": "key", "text": "ctrl+a Delete"})).await;
    let block = json!({"type": "tool_use", "id": "t2", "name": "left_click", "toolset_name": "computer",
        "input": {"coordinate": [10, 10]}});
    let a = post(s.port, "/v1/computer/anthropic", sid, &block)
        .await
        .json();
    assert!(a.get("is_error").is_none(), "{a}");
    let st = s.desktop.state();
    let keys: Vec<&Event> = st
        .events
        .iter()
        .filter(|e| matches!(e, Event::Key(..)))
        .collect();
    assert_eq!(
        keys,
        vec![
            &Event::Key(Key::Control, true),
            &Event::Key(Key::Char('a'), true),
            &Event::Key(Key::Char('a'), false),
            &Event::Key(Key::Control, false),
            &Event::Key(Key::Delete, true),
            &Event::Key(Key::Delete, false),
        ]
    );
    assert!(st.events.contains(&Event::Button(Button::Left, true)));
}

#[tokio::test]
async fn two_displays_a_gap_and_a_moved_display() {
    let desktop = MockDesktop::with_monitors(vec![
        monitor(0, "A", true, Rect::new(0, 0, 1280, 800), 1.0),
        monitor(1, "B", false, Rect::new(1280, 0, 1024, 768), 1.0),
    ]);
    let backend = desktop.backend();
    let s = Server::start(desktop, backend, Consent::sandbox()).await;
    let (r, session) = anthropic(&s, None, json!({"action": "screenshot"})).await;
    assert_eq!(image_size(&r), (1568, 544), "2304x800 at the long-edge cap");
    let sid = Some(session.as_str());
    // Frame (1000, 100) is desktop (1469.4, 147) on display B.
    let (r, _) = anthropic(
        &s,
        sid,
        json!({"action": "left_click", "coordinate": [1000, 100]}),
    )
    .await;
    assert!(r.get("is_error").is_none(), "{r}");
    let p = s.desktop.state().pointer;
    assert!(
        (1468..=1471).contains(&p.x) && (146..=148).contains(&p.y),
        "{p:?}"
    );
    let (gap, _) = anthropic(
        &s,
        sid,
        json!({"action": "left_click", "coordinate": [1000, 540]}),
    )
    .await;
    assert_eq!(gap["is_error"], true);
    assert!(
        text_of(&gap).starts_with("DESKTOP_COORDINATE_OUT_OF_BOUNDS"),
        "{gap}"
    );
    s.desktop.state().monitors[1].rect.x = 1300;
    let (moved, _) = anthropic(
        &s,
        sid,
        json!({"action": "left_click", "coordinate": [10, 10]}),
    )
    .await;
    assert!(
        text_of(&moved).starts_with("DESKTOP_LAYOUT_CHANGED"),
        "{moved}"
    );
    assert_eq!(s.desktop.state().pointer, p, "nothing was sent");
}

#[tokio::test]
async fn anthropic_bad_actions_are_errors_the_model_can_read() {
    let s = Server::sandbox().await;
    let (r, _) = anthropic(
        &s,
        None,
        json!({"action": "left_click", "coordinate": [1, 1]}),
    )
    .await;
    assert_eq!(r["is_error"], true, "no frame yet");
    assert!(text_of(&r).contains("screenshot"), "{r}");
    let (r, _) = anthropic(&s, None, json!({"action": "fly"})).await;
    assert!(text_of(&r).starts_with("INVALID_ARGUMENTS"), "{r}");
    assert_eq!(image_size(&r), (1429, 804), "with a screenshot");
    assert!(s.desktop.state().events.is_empty());
}

async fn openai(s: &Server, session: Option<&str>, call: Value) -> (u16, Value, String) {
    let a = post(s.port, "/v1/computer/openai", session, &call).await;
    let id = a.session();
    (a.status, a.json(), id)
}

fn data_url_size(output: &Value) -> (u32, u32) {
    let url = output["output"]["image_url"].as_str().expect("image_url");
    let b64 = url
        .strip_prefix("data:image/png;base64,")
        .expect("a PNG data URL");
    let (w, h, _) = decode_png(b64);
    (w, h)
}

#[tokio::test]
async fn openai_calls_run_their_actions_and_answer_a_screenshot() {
    let s = Server::sandbox().await;
    let call = json!({"type": "computer_call", "id": "cu_1", "call_id": "call_1",
        "action": {"type": "screenshot"}, "pending_safety_checks": [], "status": "completed"});
    let (status, out, session) = openai(&s, None, call).await;
    assert_eq!(status, 200, "{out}");
    assert_eq!(out["type"], "computer_call_output");
    assert_eq!(out["call_id"], "call_1");
    assert_eq!(out["output"]["type"], "computer_screenshot");
    assert_eq!(data_url_size(&out), (1365, 768));
    assert!(out.get("acknowledged_safety_checks").is_none());
    let call = json!({"type": "computer_call", "call_id": "call_2", "actions": [
        {"type": "click", "button": "left", "x": 682, "y": 384, "keys": ["CTRL"]},
        {"type": "type", "text": "hi"},
        {"type": "keypress", "keys": ["CTRL", "SHIFT", "P"]},
        {"type": "scroll", "x": 10, "y": 10, "scroll_x": 0, "scroll_y": 250},
        {"type": "click", "button": "back", "x": 10, "y": 10},
    ]});
    let (status, out, _) = openai(&s, Some(&session), call).await;
    assert_eq!(status, 200, "{out}");
    let st = s.desktop.state();
    assert_eq!(st.typed(), "hi");
    assert!(
        st.events.contains(&Event::Key(Key::Char('P'), true)),
        "{:?}",
        st.events
    );
    assert!(
        st.events.contains(&Event::Scroll(ScrollDirection::Down, 3)),
        "250 px is 3 steps"
    );
    assert!(st.events.contains(&Event::Button(Button::Back, true)));
}

#[tokio::test]
async fn openai_safety_checks_are_refused_without_a_person() {
    let s = Server::sandbox().await;
    let (_, _, session) = openai(
        &s,
        None,
        json!({"call_id": "c0", "action": {"type": "screenshot"}}),
    )
    .await;
    let call = json!({"type": "computer_call", "call_id": "call_3",
        "action": {"type": "type", "text": "rm -rf"},
        "pending_safety_checks": [{"id": "sc_1", "code": "malicious_instructions", "message": "?"}]});
    let (status, body, _) = openai(&s, Some(&session), call).await;
    assert_eq!(status, 422);
    assert_eq!(body["error"]["code"], "approval_denied");
    assert!(
        body["error"]["message"]
            .as_str()
            .unwrap_or("")
            .contains("person")
    );
    assert!(
        body["computer_call_output"]
            .get("acknowledged_safety_checks")
            .is_none()
    );
    assert_eq!(
        data_url_size(&body["computer_call_output"]),
        (1365, 768),
        "a screenshot"
    );
    assert!(s.desktop.state().events.is_empty(), "nothing was sent");
}

#[tokio::test]
async fn an_openai_batch_failing_reports_the_actions_index() {
    let s = Server::sandbox().await;
    let (_, _, session) = openai(
        &s,
        None,
        json!({"call_id": "c0", "action": {"type": "screenshot"}}),
    )
    .await;
    let call = json!({"call_id": "c1", "actions": [
        {"type": "scroll", "x": 1, "y": 1, "scroll_x": 100, "scroll_y": 100},
        {"type": "move", "x": 5000, "y": 1},
        {"type": "type", "text": "never"},
    ]});
    let (status, body, _) = openai(&s, Some(&session), call).await;
    assert_eq!(status, 422);
    assert_eq!(body["error"]["failed_action_index"], 1, "{body}");
    assert_eq!(body["error"]["code"], "desktop_coordinate_out_of_bounds");
    assert_eq!(s.desktop.state().typed(), "");
}
