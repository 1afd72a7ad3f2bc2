//! The accessibility tools over the mock desktop and the mock AT-SPI
//! backend: full, skeleton and drill-down reads with tokens, headless
//! element acts with read-back and diffs, secure fields refused, stale
//! tokens after a structural change, and set-of-mark screenshots.

#![allow(missing_docs)]

use deskhand_backend_mock::accessibility::{MockNode, add_child};
use deskhand_backend_mock::{MockAccessibility, MockDesktop, window};
use deskhand_engine::accessibility::{NodePath, State};
use deskhand_engine::{Consent, Rect};
use serde_json::{Value, json};
use std::sync::Arc;

use crate::common::{Server, decode_png};
use crate::mcp_client::Mcp;

const PID: u32 = 4242;
const TITLE: &str = "Form";

/// A form: a named panel with a name field, a password and a Save button,
/// and a 40-row list.
fn form() -> MockNode {
    let rows = (0..40).map(|i| MockNode::label(&format!("Row {i}")).with(State::Showing));
    MockNode::window(TITLE)
        .bounds(Rect::new(100, 100, 400, 300))
        .child(
            MockNode::new(deskhand_engine::accessibility::Role::Panel, "fields")
                .bounds(Rect::new(100, 100, 400, 200))
                .child(
                    MockNode::text_field("Name", "Ada")
                        .bounds(Rect::new(200, 120, 200, 30))
                        .with(State::Showing),
                )
                .child(
                    MockNode::password("Password", "hunter2-secret")
                        .bounds(Rect::new(200, 160, 200, 30))
                        .with(State::Showing),
                )
                .child(
                    MockNode::button("Save")
                        .bounds(Rect::new(200, 200, 80, 30))
                        .with(State::Showing),
                ),
        )
        .child(
            MockNode::new(deskhand_engine::accessibility::Role::List, "rows")
                .bounds(Rect::new(100, 300, 400, 100))
                .children(rows),
        )
}

async fn server() -> (Server, MockAccessibility) {
    let desktop = MockDesktop::new();
    desktop.state().windows.push(window(
        7,
        PID,
        "FormApp",
        TITLE,
        Rect::new(100, 100, 400, 300),
    ));
    let a11y = MockAccessibility::new();
    a11y.set_tree(PID, TITLE, form().build());
    let mut backend = desktop.backend();
    backend.accessibility = Some(Arc::new(a11y.clone()));
    (
        Server::start(desktop, backend, Consent::sandbox()).await,
        a11y,
    )
}

async fn form_window(c: &mut Mcp) -> String {
    let w = c.ok("list_windows", json!({})).await;
    w["windows"][0]["window_id"]
        .as_str()
        .expect("a window")
        .to_owned()
}

/// An MCP session on `s` started with `start`, and the form's window id.
async fn session(s: &Server, start: Value) -> (Mcp, String) {
    let mut c = Mcp::connect(s.port).await;
    c.ok("start_session", start).await;
    let w = form_window(&mut c).await;
    (c, w)
}

/// The state of window `w`, without its screenshot.
async fn state(c: &mut Mcp, w: &str) -> Value {
    c.ok(
        "get_window_state",
        json!({"window_id": w, "include_screenshot": false}),
    )
    .await
}

fn row<'a>(state: &'a Value, role: &str, label: &str) -> &'a Value {
    state["elements"]
        .as_array()
        .and_then(|rows| {
            rows.iter()
                .find(|r| r["role"] == role && r["label"] == label)
        })
        .unwrap_or_else(|| panic!("no {role} {label:?} in {state}"))
}

fn token(v: &Value) -> String {
    v["element_token"].as_str().expect("a token").to_owned()
}

#[tokio::test]
async fn reads_list_rows_with_tokens_skeletons_and_regions() {
    let (s, _a11y) = server().await;
    let (mut c, w) = session(&s, json!({})).await;
    let full = state(&mut c, &w).await;
    assert_eq!(full["window_elements"], 46);
    let name = row(&full, "text_field", "Name");
    assert_eq!(name["value"], "Ada");
    assert_eq!(
        name["frame"],
        json!({"x": 200, "y": 120, "width": 200, "height": 30})
    );
    assert_eq!(
        token(name),
        format!(
            "{}:{}",
            full["snapshot_id"].as_str().unwrap_or(""),
            name["element_index"]
        )
    );
    let password = row(&full, "password_text", "Password");
    assert!(password.get("value").is_none());
    assert!(!full.to_string().contains("hunter2"));

    let skeleton = c
        .ok(
            "get_window_state",
            json!({"window_id": w, "skeleton": true}),
        )
        .await;
    let roles: Vec<&str> = skeleton["elements"]
        .as_array()
        .map(|r| r.iter().filter_map(|e| e["role"].as_str()).collect())
        .unwrap_or_default();
    assert_eq!(roles, ["window", "panel", "list"]);
    assert_eq!(skeleton["snapshot_id"], full["snapshot_id"]);
    assert!(
        skeleton.get("screenshot").is_none(),
        "skeletons come without one"
    );
    let list = row(&skeleton, "list", "rows");
    assert_eq!(list["descendant_count"], 40);

    let region = c
        .ok(
            "get_window_state",
            json!({"window_id": w, "root": token(list), "max_elements": 5,
                   "include_screenshot": false}),
        )
        .await;
    let labels: Vec<&str> = region["elements"]
        .as_array()
        .map(|r| r.iter().filter_map(|e| e["label"].as_str()).collect())
        .unwrap_or_default();
    assert_eq!(labels, ["rows", "Row 0", "Row 1", "Row 2", "Row 3"]);
    assert_eq!(region["truncated"], true);
    let e = c
        .err(
            "get_window_state",
            json!({"window_id": w, "root": "nonsense", "include_screenshot": false}),
        )
        .await;
    assert_eq!(e["code"], "invalid_arguments");

    // A window whose app is not on the accessibility bus has no tree.
    s.desktop.state().windows.push(window(
        8,
        PID + 1,
        "Plain",
        "plain",
        Rect::new(600, 100, 200, 200),
    ));
    let plain = c
        .ok(
            "get_window_state",
            json!({"app": "Plain", "include_screenshot": false}),
        )
        .await;
    assert_eq!(plain["tree_error"]["code"], "unsupported", "{plain}");
    assert!(plain.get("elements").is_none());
}

#[tokio::test]
async fn headless_element_acts_read_back_and_never_touch_the_pointer() {
    let (s, a11y) = server().await;
    let (mut c, w) = session(&s, json!({})).await;
    let full = state(&mut c, &w).await;
    let pointer = s.desktop.state().pointer;
    let name = token(row(&full, "text_field", "Name"));
    let r = c
        .ok(
            "set_value",
            json!({"element_token": name, "value": "Grace"}),
        )
        .await;
    assert_eq!(
        (r["readback"].as_str(), r["effect"].as_str()),
        (Some("match"), Some("confirmed"))
    );
    assert_eq!(r["path"], "accessibility");
    assert_eq!(r["diff"]["changed"][0]["value"], "Grace");
    let r = c
        .ok(
            "type_text",
            json!({"element_token": name, "text": " Hopper"}),
        )
        .await;
    assert_eq!(r["readback"], "match");
    let save = token(row(&full, "button", "Save"));
    let r = c
        .ok(
            "click",
            json!({"element_token": save, "observe": {"tree": true}}),
        )
        .await;
    assert_eq!(
        (r["action"].as_str(), r["effect"].as_str()),
        (Some("click"), Some("done"))
    );
    assert_eq!(r["observe"]["elements"][0]["role"], "window");
    assert_eq!(a11y.presses().len(), 1);
    let writes: Vec<String> = a11y.writes().into_iter().map(|(_, t)| t).collect();
    assert_eq!(writes, ["Grace", "Grace Hopper"]);
    assert_eq!(s.desktop.state().pointer, pointer, "no pointer move");
    assert!(s.desktop.state().events.is_empty(), "no synthetic input");

    a11y.set_write_filter(|t| t.to_uppercase());
    let r = c
        .ok("set_value", json!({"element_token": name, "value": "ada"}))
        .await;
    assert_eq!(
        (r["readback"].as_str(), r["verified"].as_bool()),
        (Some("mismatch"), Some(false))
    );
}

#[tokio::test]
async fn secure_fields_are_refused_and_blacked_out() {
    let (s, a11y) = server().await;
    s.desktop
        .state()
        .fill(Rect::new(0, 0, 1920, 1080), [200, 200, 200]);
    let (mut c, w) = session(&s, json!({})).await;
    let r = c.call("get_window_state", json!({"window_id": w})).await;
    let state = &r["structuredContent"];
    let password = token(row(state, "password_text", "Password"));
    let (width, _, rgb) = decode_png(r["content"][1]["data"].as_str().expect("image"));
    // The password field (200,160 200x30) in the window's image at 100,100.
    let at = |x: u32, y: u32| {
        let i = ((y * width + x) * 3) as usize;
        [rgb[i], rgb[i + 1], rgb[i + 2]]
    };
    assert_eq!(at(150, 75), [0, 0, 0]);
    assert_eq!(at(150, 40), [200, 200, 200]);
    for (tool, args) in [
        (
            "set_value",
            json!({"element_token": password, "value": "x"}),
        ),
        ("type_text", json!({"element_token": password, "text": "x"})),
    ] {
        let e = c.err(tool, args).await;
        assert_eq!(e["code"], "secure_field", "{tool}");
    }
    assert!(a11y.writes().is_empty());
    let name = token(row(state, "text_field", "Name"));
    a11y.make_secure(PID, TITLE, NodePath(vec![0, 0]), 0);
    let e = c
        .err("set_value", json!({"element_token": name, "value": "x"}))
        .await;
    assert_eq!(e["code"], "secure_field", "the live re-check caught it");
    assert!(a11y.writes().is_empty());
}

#[tokio::test]
async fn a_structural_change_makes_tokens_stale_and_marks_map_to_tokens() {
    let (s, a11y) = server().await;
    let (mut c, w) = session(&s, json!({})).await;
    let r = c
        .call("screenshot", json!({"window_id": w, "marks": true}))
        .await;
    let shot = &r["structuredContent"];
    let marks = shot["marks"].as_array().cloned().unwrap_or_default();
    let save = marks
        .iter()
        .find(|m| m["label"] == "Save")
        .expect("Save is marked");
    assert_eq!(
        save["frame"],
        json!({"x": 200, "y": 200, "width": 80, "height": 30})
    );
    assert!(
        marks.iter().all(|m| m["role"] != "label"),
        "labels are not interactive"
    );
    assert_eq!(marks[0]["mark"], 1);

    let mut tree = a11y.tree(PID, TITLE).expect("tree");
    add_child(&mut tree, &NodePath(vec![0]), MockNode::button("Added"));
    a11y.set_tree(PID, TITLE, tree);
    let e = c
        .err("click", json!({"element_token": save["element_token"]}))
        .await;
    assert_eq!(e["code"], "stale_element_token");
    assert_eq!(e["disposition"]["retry"], "after_refresh");
    assert!(a11y.presses().is_empty());
    let fresh = state(&mut c, &w).await;
    assert_ne!(fresh["snapshot_id"], shot["snapshot_id"]);
    let save = token(row(&fresh, "button", "Save"));
    c.ok("click", json!({"element_token": save})).await;
    assert_eq!(a11y.presses().len(), 1);
}

#[tokio::test]
async fn a_hand_back_refuses_element_acts_and_a_resume_stales_tokens() {
    let (s, a11y) = server().await;
    let (mut c, w) = session(&s, json!({"input": "takeover"})).await;
    let full = state(&mut c, &w).await;
    let save = token(row(&full, "button", "Save"));
    c.ok("move_cursor", json!({"x": 150, "y": 150})).await;
    s.desktop.person_moves_pointer(600, 500);
    s.eventually("the hand-back", |d| d.state().indicator.paused)
        .await;
    let e = c.err("click", json!({"element_token": save})).await;
    assert_eq!(
        e["code"], "user_took_over",
        "no act while the person holds it"
    );
    assert!(a11y.presses().is_empty());
    s.desktop.click_continue();
    s.eventually("the resume", |d| !d.state().indicator.paused)
        .await;
    let e = c.err("click", json!({"element_token": save})).await;
    assert_eq!(
        e["code"], "stale_element_token",
        "tokens before a resume are stale"
    );
    let fresh = state(&mut c, &w).await;
    assert_ne!(fresh["snapshot_id"], full["snapshot_id"]);
    assert_eq!(
        row(&fresh, "button", "Save")["element_index"],
        row(&full, "button", "Save")["element_index"],
        "row numbers stay"
    );
    c.ok(
        "click",
        json!({"element_token": token(row(&fresh, "button", "Save"))}),
    )
    .await;
    assert_eq!(a11y.presses().len(), 1);
}

#[tokio::test]
async fn an_element_without_actions_is_clicked_with_the_pointer_only_in_takeover() {
    let (s, a11y) = server().await;
    let mut tree = a11y.tree(PID, TITLE).expect("tree");
    let note = MockNode::label("Note")
        .bounds(Rect::new(300, 250, 100, 20))
        .with(State::Showing);
    add_child(&mut tree, &NodePath(vec![0]), note);
    a11y.set_tree(PID, TITLE, tree);

    let (mut headless, w) = session(&s, json!({})).await;
    let note = note_token(&mut headless, &w).await;
    let pointer = s.desktop.state().pointer;
    let e = headless.err("click", json!({"element_token": note})).await;
    assert_eq!(
        e["code"], "invalid_arguments",
        "no actions and no takeover: {e}"
    );
    assert!(
        e["message"].as_str().unwrap_or("").contains("takeover"),
        "{e}"
    );
    assert_eq!(
        s.desktop.state().pointer,
        pointer,
        "the pointer never moved"
    );
    headless.ok("end_session", json!({})).await;

    let mut c = Mcp::connect(s.port).await;
    c.ok("start_session", json!({"input": "takeover"})).await;
    let note = note_token(&mut c, &w).await;
    let r = c.ok("click", json!({"element_token": note})).await;
    assert_eq!(r["path"], "synthetic", "{r}");
    assert_eq!(r["took_cursor"], true);
    assert_eq!(
        s.desktop.state().pointer,
        deskhand_engine::Point::new(350, 260)
    );
    assert!(
        a11y.presses().is_empty(),
        "no accessibility action was done"
    );

    // Another app's window over the element: the click is refused unsent.
    let cover = window(9, PID + 2, "Cover", "cover", Rect::new(320, 240, 100, 100));
    s.desktop.state().windows.push(cover);
    let presses_before = s.desktop.state().events.len();
    let e = c.err("click", json!({"element_token": note})).await;
    assert_eq!(e["code"], "window_not_visible", "{e}");
    assert_eq!(
        s.desktop.state().events.len(),
        presses_before,
        "nothing sent"
    );
}

/// The token of the form's "Note" label in a fresh full read.
async fn note_token(c: &mut Mcp, w: &str) -> String {
    let full = state(c, w).await;
    token(row(&full, "label", "Note"))
}

#[tokio::test]
async fn computer_frames_mark_the_focused_windows_elements_in_frame_pixels() {
    let (s, _a11y) = server().await;
    s.desktop
        .state()
        .fill(Rect::new(0, 0, 1920, 1080), [40, 50, 60]);
    let mut c = Mcp::connect(s.port).await;
    c.ok("start_session", json!({"input": "takeover"})).await;
    let r = c
        .call(
            "computer",
            json!({"action": {"type": "screenshot"}, "marks": true,
                   "max_width": 960, "max_height": 540}),
        )
        .await;
    let out = &r["structuredContent"];
    let marks = out["marks"]["marks"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let save = marks
        .iter()
        .find(|m| m["label"] == "Save")
        .unwrap_or_else(|| panic!("Save is marked: {out}"));
    assert_eq!(
        save["box"],
        json!({"x": 100, "y": 100, "width": 40, "height": 15}),
        "the global box at the frame's scale of 0.5"
    );
    assert_eq!(save["center"], json!([120, 107]));
    assert!(!out.to_string().contains("hunter2"));
    let (w, _, rgb) = decode_png(r["content"][1]["data"].as_str().expect("image"));
    let at = |x: usize, y: usize| rgb[(y * w as usize + x) * 3..][..3].to_vec();
    assert_eq!(at(10, 10), [40, 50, 60], "the desktop away from the marks");
    assert_ne!(at(100, 112), [40, 50, 60], "Save's outline is drawn");
    assert_eq!(at(150, 87), [0, 0, 0], "the password field is blacked out");

    c.ok(
        "computer",
        json!({"action": {"type": "click", "x": 120, "y": 107},
               "max_width": 960, "max_height": 540}),
    )
    .await;
    let pointer = s.desktop.state().pointer;
    assert!(
        Rect::new(200, 200, 80, 30).contains(pointer),
        "the mark's centre clicks Save: {pointer:?}"
    );
    let r = c
        .ok("click", json!({"element_token": save["element_token"]}))
        .await;
    assert_eq!(r["path"], "accessibility", "its token works for click");
}

#[tokio::test]
async fn a_token_read_before_a_skeleton_still_presses_its_element() {
    let (s, a11y) = server().await;
    let (mut c, w) = session(&s, json!({})).await;
    let full = state(&mut c, &w).await;
    let save = token(row(&full, "button", "Save"));
    let skeleton = c
        .ok(
            "get_window_state",
            json!({"window_id": w, "skeleton": true}),
        )
        .await;
    assert_eq!(
        skeleton["snapshot_id"], full["snapshot_id"],
        "one structure"
    );
    let r = c.ok("click", json!({"element_token": save})).await;
    assert_eq!(r["path"], "accessibility", "{r}");
    assert_eq!(a11y.presses().len(), 1, "the button's own action ran");
}
