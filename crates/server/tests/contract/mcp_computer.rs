//! The MCP `computer` tool over the mock desktop: frames as image blocks,
//! coordinates through the frame, a batch halted at its first failure
//! with a screenshot, and the session checks before anything is sent.

#![allow(missing_docs)]

use deskhand_backend_mock::Event;
use deskhand_engine::{AppScope, Consent, Point, Rect};
use serde_json::json;

use crate::common::{Server, decode_png};
use crate::mcp_client::Mcp;

#[tokio::test]
async fn computer_frames_map_clicks_and_halt_at_the_first_failure() {
    let s = Server::sandbox().await;
    s.desktop
        .state()
        .fill(Rect::new(0, 0, 1920, 1080), [40, 50, 60]);
    let mut c = Mcp::connect(s.port).await;
    c.ok("start_session", json!({"input": "takeover"})).await;
    let r = c
        .call(
            "computer",
            json!({"action": {"type": "screenshot"}, "max_width": 960, "max_height": 540}),
        )
        .await;
    let frame = &r["structuredContent"]["frame"];
    assert_eq!(
        (frame["width"].as_u64(), frame["height"].as_u64()),
        (Some(960), Some(540))
    );
    assert_eq!(frame["displays"][0]["pixel"]["width"], 960);
    let (w, h, rgb) = decode_png(r["content"][1]["data"].as_str().expect("image"));
    assert_eq!((w, h), (960, 540));
    assert_eq!(&rgb[..3], &[40, 50, 60], "the desktop's pixels");

    let r = c
        .ok(
            "computer",
            json!({"action": {"type": "click", "x": 100, "y": 50}, "max_width": 960,
                   "max_height": 540}),
        )
        .await;
    assert_eq!(r["timings_ms"].as_array().map(Vec::len), Some(1));
    let (pointer, events) = {
        let st = s.desktop.state();
        (st.pointer, st.events.clone())
    };
    assert_eq!(
        pointer,
        Point::new(201, 101),
        "a frame pixel at scale 0.5 lands at the centre of its 2x2 desktop pixels: {:?}",
        events
    );
    assert!(events.iter().any(|e| matches!(e, Event::Button(_, true))));

    let r = c
        .call(
            "computer",
            json!({"actions": [{"type": "type", "text": "ab"},
                               {"type": "move", "x": 960, "y": 5},
                               {"type": "type", "text": "cd"}],
                   "max_width": 960, "max_height": 540}),
        )
        .await;
    let e = &r["structuredContent"]["error"];
    assert_eq!(e["code"], "desktop_coordinate_out_of_bounds");
    assert_eq!(e["failed_action_index"], 1);
    assert_eq!(r["content"][1]["type"], "image", "a screenshot even so");
    assert_eq!(s.desktop.state().typed(), "ab", "action 3 was not executed");
}

#[tokio::test]
async fn computer_needs_takeover_for_input_and_the_whole_desktop() {
    let s = Server::sandbox().await;
    let mut c = Mcp::connect(s.port).await;
    c.ok("start_session", json!({})).await;
    c.ok("computer", json!({"action": {"type": "screenshot"}}))
        .await;
    let e = c
        .err(
            "computer",
            json!({"action": {"type": "click", "x": 10, "y": 10}}),
        )
        .await;
    assert_eq!(e["code"], "requires_takeover", "{e}");
    assert_eq!(e["failed_action_index"], 0);
    let e = c
        .err(
            "computer",
            json!({"action": {"type": "screenshot"}, "actions": []}),
        )
        .await;
    assert_eq!(e["code"], "invalid_arguments");
    assert!(s.desktop.state().events.is_empty(), "nothing was sent");

    let scoped = Consent {
        apps: AppScope::Named(vec!["XTerm".into()]),
        ..Consent::sandbox()
    };
    let desktop = deskhand_backend_mock::MockDesktop::new();
    let backend = desktop.backend();
    let s = Server::start(desktop, backend, scoped).await;
    let mut c = Mcp::connect(s.port).await;
    let e = c
        .err("computer", json!({"action": {"type": "screenshot"}}))
        .await;
    assert_eq!(e["code"], "capability_not_consented", "{e}");
}
