//! A11Y_TREE_REQUEST over the mock desktop and the mock AT-SPI backend:
//! HELLO lists `a11y.tree` only while the bus answers; full, skeleton and
//! drill-down reads; a bad window id, a stale root token and invalid
//! arguments are refused with their codes.

#![allow(missing_docs)]

use std::sync::Arc;
use std::time::Duration;

use deskhand_backend_mock::accessibility::{MockNode, add_child};
use deskhand_backend_mock::{MockAccessibility, MockDesktop, window};
use deskhand_engine::accessibility::{BusProblem, BusStatus, NodePath, Role, State};
use deskhand_engine::{Consent, Rect};
use serde_json::{Value, json};

use crate::common::{Client, Server, error_code};

const PID: u32 = 4343;
const TITLE: &str = "Form";

/// A form: a panel with a name field, a password and a Save button, and a
/// 10-row list.
fn form() -> MockNode {
    let rows = (0..10).map(|i| MockNode::label(&format!("Row {i}")).with(State::Showing));
    MockNode::window(TITLE)
        .bounds(Rect::new(100, 100, 400, 300))
        .child(
            MockNode::new(Role::Panel, "fields")
                .child(MockNode::text_field("Name", "Ada").with(State::Showing))
                .child(MockNode::password("Password", "hunter2-secret").with(State::Showing))
                .child(MockNode::button("Save").with(State::Showing)),
        )
        .child(MockNode::new(Role::List, "rows").children(rows))
}

/// A server whose one window has the form's tree; the bus says `bus`.
async fn server(bus: BusStatus) -> (Server, MockAccessibility) {
    let desktop = MockDesktop::new();
    desktop.state().windows.push(window(
        9,
        PID,
        "FormApp",
        TITLE,
        Rect::new(100, 100, 400, 300),
    ));
    let a11y = MockAccessibility::new();
    a11y.set_tree(PID, TITLE, form().build());
    a11y.set_bus_status(bus);
    let mut backend = desktop.backend();
    backend.accessibility = Some(Arc::new(a11y.clone()));
    (
        Server::start(desktop, backend, Consent::sandbox()).await,
        a11y,
    )
}

fn lists_tree(c: &Client) -> bool {
    c.hello["payload"]["computer_use_features"]
        .as_array()
        .is_some_and(|f| f.contains(&json!("a11y.tree")))
}

/// A handshaken client once a HELLO lists `a11y.tree` (the bus check runs
/// in the background from the engine's start).
async fn tree_client(s: &Server) -> Client {
    for _ in 0..100 {
        let c = s.handshaken_client().await;
        if lists_tree(&c) {
            return c;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    panic!("no HELLO listed a11y.tree");
}

async fn form_window(c: &mut Client) -> String {
    let r = c.request("WINDOW_LIST_REQUEST", json!({})).await;
    r["payload"]["windows"][0]["window_id"]
        .as_str()
        .expect("a window")
        .to_owned()
}

async fn read(c: &mut Client, payload: Value) -> Value {
    let r = c.request("A11Y_TREE_REQUEST", payload).await;
    assert_eq!(r["type"], "A11Y_TREE_RESPONSE", "{r}");
    r["payload"].clone()
}

fn row<'a>(tree: &'a Value, role: &str, label: &str) -> &'a Value {
    tree["elements"]
        .as_array()
        .and_then(|rows| {
            rows.iter()
                .find(|r| r["role"] == role && r["label"] == label)
        })
        .unwrap_or_else(|| panic!("no {role} {label:?} in {tree}"))
}

#[tokio::test]
async fn hello_lists_the_tree_only_while_the_bus_answers() {
    let (s, _a11y) = server(BusStatus::Ok).await;
    tree_client(&s).await;

    let down = BusStatus::Unavailable {
        problem: BusProblem::NotAdvertised,
        detail: "no bus".into(),
    };
    let (s, _a11y) = server(down).await;
    tokio::time::sleep(Duration::from_millis(100)).await;
    let mut c = s.handshaken_client().await;
    assert!(!lists_tree(&c), "{}", c.hello);
    let w = form_window(&mut c).await;
    let r = c
        .request("A11Y_TREE_REQUEST", json!({"window_id": w}))
        .await;
    assert_eq!(error_code(&r), "FEATURE_NOT_SUPPORTED", "{r}");
}

#[tokio::test]
async fn full_skeleton_and_drill_down_reads() {
    let (s, _a11y) = server(BusStatus::Ok).await;
    let mut c = tree_client(&s).await;
    let w = form_window(&mut c).await;

    let full = read(&mut c, json!({"window_id": w})).await;
    assert_eq!(full["window_id"], w.as_str());
    assert_eq!(full["window_elements"], 16);
    assert_eq!(full["truncated"], false);
    assert_eq!(row(&full, "text_field", "Name")["value"], "Ada");
    assert!(
        row(&full, "password_text", "Password")
            .get("value")
            .is_none()
    );
    assert!(!full.to_string().contains("hunter2"));
    let save = row(&full, "button", "Save");
    assert_eq!(
        save["element_token"],
        format!(
            "{}:{}",
            full["snapshot_id"].as_str().unwrap_or(""),
            save["element_index"]
        )
    );

    let skeleton = read(&mut c, json!({"window_id": w, "skeleton": true})).await;
    let roles: Vec<&str> = skeleton["elements"]
        .as_array()
        .map(|r| r.iter().filter_map(|e| e["role"].as_str()).collect())
        .unwrap_or_default();
    assert_eq!(roles, ["window", "panel", "list"]);
    let list = row(&skeleton, "list", "rows");
    assert_eq!(list["descendant_count"], 10);

    let region = read(
        &mut c,
        json!({"window_id": w, "root": list["element_token"], "max_elements": 3}),
    )
    .await;
    let labels: Vec<&str> = region["elements"]
        .as_array()
        .map(|r| r.iter().filter_map(|e| e["label"].as_str()).collect())
        .unwrap_or_default();
    assert_eq!(labels, ["rows", "Row 0", "Row 1"]);
    assert_eq!(region["truncated"], true);
}

#[tokio::test]
async fn bad_windows_stale_roots_and_bad_arguments_are_refused() {
    let (s, a11y) = server(BusStatus::Ok).await;
    let mut c = tree_client(&s).await;
    let w = form_window(&mut c).await;

    let r = c
        .request("A11Y_TREE_REQUEST", json!({"window_id": "win_nope"}))
        .await;
    assert_eq!(error_code(&r), "WINDOW_STALE", "{r}");

    let bad = [
        json!({}),
        json!({"window_id": ""}),
        json!({"window_id": w, "skeleton": true, "root": "x:1"}),
        json!({"window_id": w, "max_elements": 0}),
    ];
    for payload in bad {
        let r = c.request("A11Y_TREE_REQUEST", payload.clone()).await;
        assert_eq!(error_code(&r), "INVALID_ARGUMENTS", "{payload}: {r}");
    }

    let full = read(&mut c, json!({"window_id": w})).await;
    let panel = row(&full, "panel", "fields")["element_token"].clone();
    let mut tree = a11y.tree(PID, TITLE).expect("tree");
    add_child(&mut tree, &NodePath(vec![0]), MockNode::button("Added"));
    a11y.set_tree(PID, TITLE, tree);
    let r = c
        .request("A11Y_TREE_REQUEST", json!({"window_id": w, "root": panel}))
        .await;
    assert_eq!(error_code(&r), "STALE_ELEMENT_TOKEN", "{r}");
    let fresh = read(&mut c, json!({"window_id": w})).await;
    assert_ne!(fresh["snapshot_id"], full["snapshot_id"]);
    row(&fresh, "button", "Added");
}
