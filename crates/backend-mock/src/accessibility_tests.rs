//! Tests of the scripted accessibility backend.

use std::time::{Duration, Instant};

use deskhand_backend::accessibility::BusProblem;

use super::*;

const PID: u32 = 42;
const TITLE: &str = "Form";

/// The form's window as the window list gives it.
fn window() -> WindowRef {
    WindowRef {
        pid: PID,
        title: TITLE.into(),
        bounds: None,
        surface_origin: None,
    }
}

/// Path `/a/b/…`.
fn path(steps: &[u32]) -> NodePath {
    NodePath(steps.to_vec())
}

/// A target at `steps`, expecting `role` and `name` when given.
fn target(steps: &[u32], role: Option<Role>, name: Option<&str>) -> NodeTarget {
    NodeTarget {
        window: window(),
        path: path(steps),
        expect_role: role,
        expect_name: name.map(str::to_owned),
        expect_child_counts: Vec::new(),
    }
}

/// Form → [panel → [name field, password], OK button, status label].
fn form() -> A11yTree {
    MockNode::window(TITLE)
        .child(
            MockNode::new(Role::Panel, "fields")
                .child(MockNode::text_field("Name", "Ada"))
                .child(MockNode::password("Password", "hunter2")),
        )
        .child(MockNode::button("OK").bounds(Rect::new(10, 10, 80, 30)))
        .child(MockNode::label("Ready"))
        .build()
}

/// A mock holding the form.
fn mock() -> MockAccessibility {
    let m = MockAccessibility::new();
    m.set_tree(PID, TITLE, form());
    m
}

/// Limits of `max_elements` and `max_depth`, default timeouts.
fn limits(max_elements: usize, max_depth: usize) -> TreeLimits {
    TreeLimits {
        max_elements,
        max_depth,
        ..TreeLimits::default()
    }
}

/// The names of the tree's elements, in order.
fn names(tree: &A11yTree) -> Vec<&str> {
    tree.nodes.iter().map(|n| n.name.as_str()).collect()
}

#[test]
fn the_builder_gives_document_order_with_links_and_paths() {
    let tree = form();
    assert_eq!(
        names(&tree),
        ["Form", "fields", "Name", "Password", "OK", "Ready"]
    );
    assert_eq!(tree.nodes[0].children, [1, 4, 5]);
    assert_eq!(tree.nodes[1].children, [2, 3]);
    assert_eq!(tree.nodes[0].child_count, 3);
    assert_eq!(tree.nodes[3].parent, Some(1));
    assert_eq!(tree.nodes[0].parent, None);
    assert_eq!(tree.nodes[3].path, path(&[0, 1]));
    assert_eq!(tree.nodes[5].path, path(&[2]));
    assert!(tree.nodes[3].has(State::Secure), "a password is secure");
    assert!(!tree.truncated);
}

#[test]
fn a_full_read_is_the_tree_without_secure_values() {
    let m = mock();
    let tree = m.read_window_tree(&window(), &TreeLimits::default());
    let tree = tree.expect("a tree");
    assert_eq!(tree.nodes.len(), 6);
    assert_eq!(tree.nodes[2].value.as_deref(), Some("Ada"));
    assert_eq!(tree.nodes[3].value, None, "never a secure value");
    assert_eq!(tree.secure_bounds(), Vec::<Rect>::new());
    let stored = m.tree(PID, TITLE).expect("stored");
    assert_eq!(stored.nodes[3].value.as_deref(), Some("hunter2"));
}

#[test]
fn max_elements_cuts_breadth_first_and_marks_truncated() {
    let tree = mock().read_window_tree(&window(), &limits(4, 200));
    let tree = tree.expect("a tree");
    // The root, then its three children, read before the panel's.
    assert_eq!(names(&tree), ["Form", "fields", "OK", "Ready"]);
    assert!(tree.truncated);
    assert_eq!(tree.nodes[1].child_count, 2);
    assert!(tree.nodes[1].children.is_empty());
    assert_eq!(tree.nodes[3].path, path(&[2]));
    let exact = mock().read_window_tree(&window(), &limits(6, 200));
    assert!(!exact.expect("a tree").truncated);
    let root = mock().read_window_tree(&window(), &limits(0, 200));
    assert_eq!(names(&root.expect("a tree")), ["Form"]);
}

#[test]
fn max_depth_cuts_levels_and_marks_truncated() {
    let tree = mock().read_window_tree(&window(), &limits(100, 1));
    let tree = tree.expect("a tree");
    assert_eq!(names(&tree), ["Form", "fields", "OK", "Ready"]);
    assert!(tree.truncated, "the panel has children not read");
    let leaves = MockNode::window(TITLE).child(MockNode::label("x")).build();
    let m = MockAccessibility::new();
    m.set_tree(PID, TITLE, leaves);
    let tree = m.read_window_tree(&window(), &limits(100, 1));
    assert!(!tree.expect("a tree").truncated, "only leaves at the limit");
}

#[test]
fn an_unknown_window_is_stale() {
    let m = mock();
    let mut other = window();
    other.title = "Other".into();
    let e = m.read_window_tree(&other, &TreeLimits::default());
    assert!(matches!(e, Err(BackendError::Stale(m)) if m.contains("titled \"Other\"")));
    other.pid = 7;
    let e = m.press(
        &NodeTarget {
            window: other,
            ..target(&[1], None, None)
        },
        None,
    );
    assert!(matches!(e, Err(BackendError::Stale(m)) if m.contains("no app")));
    m.remove_window(PID, TITLE);
    let e = m.read_window_tree(&window(), &TreeLimits::default());
    assert!(matches!(e, Err(BackendError::Stale(_))));
}

#[test]
fn press_does_the_default_or_named_action_and_records_it() {
    let m = mock();
    let ok = target(&[1], Some(Role::Button), Some("OK"));
    assert_eq!(m.press(&ok, None).expect("pressed"), "click");
    assert_eq!(m.press(&ok, Some("CLICK")).expect("pressed"), "click");
    let e = m.press(&ok, Some("jump"));
    assert!(matches!(e, Err(BackendError::InvalidTarget(m)) if m.contains("no jump action")));
    let label = m.press(&target(&[2], None, None), None);
    assert!(matches!(label, Err(BackendError::InvalidTarget(m)) if m.contains("no actions")));
    let far = m.press(&target(&[0, 5], None, None), None);
    assert!(matches!(far, Err(BackendError::Stale(m)) if m.contains("no child 5")));
    assert_eq!(m.presses(), vec![(path(&[1]), "click".to_owned()); 2]);
    assert_eq!(m.counts().presses, 5);
}

#[test]
fn default_action_prefers_click_then_the_only_one() {
    let a = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    assert_eq!(default_action(&a(&["press", "click"])), Some(1));
    assert_eq!(default_action(&a(&["Toggle", "jump"])), Some(0));
    assert_eq!(default_action(&a(&["jump"])), Some(0));
    assert_eq!(default_action(&a(&["jump", "dance"])), None);
}

#[test]
fn acts_refuse_an_element_whose_role_name_or_ancestors_changed() {
    let m = mock();
    let e = m.press(&target(&[1], Some(Role::CheckBox), None), None);
    assert!(matches!(e, Err(BackendError::Stale(m)) if m.contains("not a check_box")));
    let e = m.press(&target(&[1], Some(Role::Button), Some("Cancel")), None);
    assert!(matches!(e, Err(BackendError::Stale(m)) if m.contains("not \"Cancel\"")));
    let e = m.set_text(&target(&[0, 0], None, Some("Email")), "x");
    assert!(matches!(e, Err(BackendError::Stale(_))));
    let mut grown = target(&[1], Some(Role::Button), Some("OK"));
    grown.expect_child_counts = vec![4];
    let e = m.press(&grown, None);
    assert!(matches!(e, Err(BackendError::Stale(m)) if m.contains("has 3 children now, not 4")));
    assert!(m.presses().is_empty() && m.writes().is_empty());
    grown.expect_child_counts = vec![3];
    assert!(m.press(&grown, None).is_ok());
}

#[test]
fn a_scripted_effect_changes_later_reads() {
    let m = mock();
    m.on_press(PID, TITLE, path(&[1]), |tree| {
        add_child(tree, &NodePath::root(), MockNode::label("Saved"));
        toggle_state(tree, &path(&[2]), State::Focused);
    });
    m.press(&target(&[1], None, None), None).expect("pressed");
    let tree = m.read_window_tree(&window(), &TreeLimits::default());
    let tree = tree.expect("a tree");
    let saved = tree.find(&Role::Label, "Saved").next().expect("added");
    assert_eq!((saved.path.clone(), saved.parent), (path(&[3]), Some(0)));
    assert_eq!(tree.nodes[0].child_count, 4);
    assert!(tree.at(&path(&[2])).is_some_and(|n| n.has(State::Focused)));
}

#[test]
fn set_text_writes_and_read_text_reads_it_back() {
    let m = mock();
    let name = target(&[0, 0], Some(Role::TextField), Some("Name"));
    assert_eq!(m.set_text(&name, "Grace").ok(), Some(TextWrite::Written));
    assert_eq!(
        m.read_text(&name).ok(),
        Some(TextRead::Text("Grace".into()))
    );
    let tree = m.read_window_tree(&window(), &TreeLimits::default());
    let value = tree.expect("a tree").nodes[2].value.clone();
    assert_eq!(value.as_deref(), Some("Grace"));
    assert_eq!(m.writes(), [(path(&[0, 0]), "Grace".to_owned())]);
    let label = m.set_text(&target(&[2], None, None), "x");
    assert!(matches!(label, Err(BackendError::InvalidTarget(m)) if m.contains("not an editable")));
    let e = m.read_text(&target(&[1], None, None));
    assert!(matches!(e, Err(BackendError::InvalidTarget(m)) if m.contains("has no text")));
}

#[test]
fn a_secure_field_is_never_written_nor_read() {
    let m = mock();
    let secret = target(&[0, 1], Some(Role::PasswordText), None);
    assert_eq!(
        m.set_text(&secret, "x").ok(),
        Some(TextWrite::RefusedSecure)
    );
    assert_eq!(m.read_text(&secret).ok(), Some(TextRead::Secure));
    let stored = m.tree(PID, TITLE).expect("stored");
    assert_eq!(stored.nodes[3].value.as_deref(), Some("hunter2"));
    assert!(m.writes().is_empty());
}

#[test]
fn a_field_turning_secure_is_caught_at_the_act() {
    let m = mock();
    let name = target(&[0, 0], Some(Role::TextField), None);
    m.make_secure(PID, TITLE, path(&[0, 0]), 1);
    assert_eq!(m.set_text(&name, "Grace").ok(), Some(TextWrite::Written));
    // The read-back, the next act, finds it secure.
    assert_eq!(m.read_text(&name).ok(), Some(TextRead::Secure));
    assert_eq!(m.set_text(&name, "x").ok(), Some(TextWrite::RefusedSecure));
    let tree = m.read_window_tree(&window(), &TreeLimits::default());
    assert_eq!(tree.expect("a tree").nodes[2].value, None);
}

#[test]
fn the_write_filter_makes_a_field_store_something_else() {
    let m = mock();
    m.set_write_filter(|t| t.chars().take(3).collect());
    let name = target(&[0, 0], None, None);
    assert_eq!(m.set_text(&name, "Grace").ok(), Some(TextWrite::Written));
    assert_eq!(m.read_text(&name).ok(), Some(TextRead::Text("Gra".into())));
}

#[test]
fn reads_wait_the_delay_and_time_out_past_the_limits() {
    let m = mock();
    m.set_delay(PID, TITLE, Duration::from_millis(30));
    let started = Instant::now();
    assert!(
        m.read_window_tree(&window(), &TreeLimits::default())
            .is_ok()
    );
    assert!(started.elapsed() >= Duration::from_millis(30));
    let short = TreeLimits {
        per_call_timeout: Duration::from_millis(5),
        ..TreeLimits::default()
    };
    let e = m.read_window_tree(&window(), &short);
    assert!(matches!(e, Err(BackendError::Failed(m)) if m.contains("within 5 ms")));
}

#[test]
fn a_scripted_failure_fails_the_next_read_only() {
    let m = mock();
    m.fail_next_read(PID, TITLE, BackendError::Failed("boom".into()));
    let e = m.read_window_tree(&window(), &TreeLimits::default());
    assert!(matches!(e, Err(BackendError::Failed(m)) if m == "boom"));
    assert!(
        m.read_window_tree(&window(), &TreeLimits::default())
            .is_ok()
    );
    assert_eq!(m.counts().reads, 2);
}

#[test]
fn an_unavailable_bus_is_reported_and_fails_every_call() {
    let m = mock();
    assert_eq!(m.bus_status(), BusStatus::Ok);
    let down = BusStatus::Unavailable {
        problem: BusProblem::NotAdvertised,
        detail: "no org.a11y.Bus".into(),
    };
    m.set_bus_status(down.clone());
    assert_eq!(m.bus_status(), down);
    let e = m.read_window_tree(&window(), &TreeLimits::default());
    assert!(
        matches!(e, Err(BackendError::Unsupported(m)) if m.contains("atspi_bus_not_advertised"))
    );
    let e = m.read_text(&target(&[0, 0], None, None));
    assert!(matches!(e, Err(BackendError::Unsupported(_))));
}

#[test]
fn clones_share_the_state_and_count_every_call() {
    let m = mock();
    let engine_side: Box<dyn Accessibility> = Box::new(m.clone());
    let name = target(&[0, 0], None, None);
    engine_side
        .read_window_tree(&window(), &TreeLimits::default())
        .ok();
    engine_side.set_text(&name, "x").ok();
    engine_side.read_text(&name).ok();
    engine_side.press(&target(&[1], None, None), None).ok();
    let counts = Counts {
        reads: 1,
        presses: 1,
        writes: 1,
        text_reads: 1,
    };
    assert_eq!(m.counts(), counts);
}

#[test]
fn relink_normalizes_a_hand_written_tree() {
    let mut tree = MockNode::window(TITLE).child(MockNode::label("a")).build();
    tree.nodes[0].children.push(9);
    tree.nodes[1].path = path(&[7]);
    let fixed = relink(&tree);
    assert_eq!(fixed.nodes[1].path, path(&[0]));
    assert_eq!(fixed.nodes[0].child_count, 1);
}
