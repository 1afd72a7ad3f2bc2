//! The AT-SPI backend against a real GTK 3 app under Xvfb and its own
//! D-Bus session: what a read shows (elements, bounds, no secret), what
//! acts do (a click writes a file, text written and read back, secure
//! fields refused), the element limits, and a hung app failing in time;
//! and `gtk3-widget-factory` read whole. The timings of the reads are
//! printed (`--nocapture`).
//!
//! Needs Xvfb, dbus-run-session, at-spi2-core, python3-gi with GTK 3,
//! gtk-3-examples and xwininfo (`scripts/install-deps`); without them the
//! tests are skipped, except with `CI=true`, where they fail.

#![cfg(target_os = "linux")]

mod harness;

use std::time::{Duration, Instant};

use deskhand_backend::BackendError;
use deskhand_backend::Rect;
use deskhand_backend::accessibility::{
    A11yNode, A11yTree, Accessibility, BusProblem, BusStatus, NodePath, NodeTarget, Role, State,
    TextRead, TextWrite, TreeLimits, WindowRef,
};
use deskhand_backend_atspi::AtspiOptions;
use harness::{Desktop, wait_for_file};

/// The fixture's window titles.
const FORM: &str = "deskhand a11y form";
const LIST: &str = "deskhand a11y list";
/// The password the fixture's password entry holds.
const SECRET: &str = "hunter2-secret";
/// The rows of the fixture's list.
const ROWS: u32 = 500;

/// The fixture's bounds `key` as a rectangle.
fn rect(bounds: &serde_json::Value, key: &str) -> Rect {
    let v: Vec<i64> = bounds[key]
        .as_array()
        .unwrap_or_else(|| panic!("no bounds for {key}: {bounds}"))
        .iter()
        .map(|n| n.as_i64().expect("a number"))
        .collect();
    let int = |n: i64| i32::try_from(n).expect("fits");
    let size = |n: i64| u32::try_from(n).expect("fits");
    Rect::new(int(v[0]), int(v[1]), size(v[2]), size(v[3]))
}

/// The one element with this role and name.
fn one<'a>(tree: &'a A11yTree, role: Role, name: &str) -> &'a A11yNode {
    let found: Vec<_> = tree.find(&role, name).collect();
    assert_eq!(found.len(), 1, "one {role} {name:?} in the tree");
    found[0]
}

/// Asserts that `node`'s bounds is `want` to within 1 px on every edge.
fn assert_bounds(node: &A11yNode, want: Rect) {
    let got = node
        .bounds
        .unwrap_or_else(|| panic!("{} {:?} has no bounds", node.role, node.name));
    let close = |a: i64, b: i64| (a - b).abs() <= 1;
    assert!(
        close(got.x.into(), want.x.into())
            && close(got.y.into(), want.y.into())
            && close(got.right(), want.right())
            && close(got.bottom(), want.bottom()),
        "{} {:?}: bounds {got:?}, the fixture says {want:?}",
        node.role,
        node.name
    );
}

/// The window `title` of the fixture, with its bounds.
fn window(desk: &Desktop, title: &str, bounds: &serde_json::Value) -> WindowRef {
    let key = if title == FORM { "form" } else { "list" };
    WindowRef {
        pid: desk.app.pid,
        title: title.into(),
        bounds: Some(rect(bounds, key)),
        surface_origin: None,
    }
}

/// Reads `window` until the app is on the bus (it registers as it starts).
fn first_read(a11y: &dyn Accessibility, window: &WindowRef) -> A11yTree {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        match a11y.read_window_tree(window, &TreeLimits::default()) {
            Ok(tree) => return tree,
            Err(e) if Instant::now() < deadline => {
                eprintln!("not yet readable: {e}");
                std::thread::sleep(Duration::from_millis(200));
            }
            Err(e) => panic!("{:?} was never readable: {e}", window.title),
        }
    }
}

/// An act's target: `node` of `window`, expecting its role and name.
fn target(window: &WindowRef, node: &A11yNode) -> NodeTarget {
    NodeTarget {
        window: window.clone(),
        path: node.path.clone(),
        expect_role: Some(node.role.clone()),
        expect_name: Some(node.name.clone()),
        expect_child_counts: Vec::new(),
    }
}

/// The read shows the form's widgets where GTK put them, and no secret.
fn check_form_read(tree: &A11yTree, bounds: &serde_json::Value) {
    assert_eq!(tree.nodes[0].role, Role::Window);
    assert_eq!(tree.nodes[0].name, FORM);
    assert!(!tree.truncated);
    assert_bounds(&tree.nodes[0], rect(bounds, "form"));
    assert_bounds(one(tree, Role::TextField, "Name"), rect(bounds, "Name"));
    assert_bounds(one(tree, Role::Button, "Save"), rect(bounds, "Save"));
    assert_bounds(
        one(tree, Role::CheckBox, "Subscribe"),
        rect(bounds, "Subscribe"),
    );
    let password = one(tree, Role::PasswordText, "Password");
    assert_bounds(password, rect(bounds, "Password"));
    assert!(password.is_secure());
    assert_eq!(password.value, None);
    assert_eq!(
        tree.secure_bounds(),
        vec![password.bounds.expect("with bounds")]
    );
    let shown = format!("{tree:?}");
    assert!(!shown.contains(SECRET), "the password leaked into the read");
    let save = one(tree, Role::Button, "Save");
    assert!(
        save.actions.iter().any(|a| a == "click"),
        "{:?}",
        save.actions
    );
}

/// Text written to the Name entry reads back; Save writes it to a file.
fn check_acts(desk: &Desktop, a11y: &dyn Accessibility, form: &WindowRef, tree: &A11yTree) {
    let name = target(form, one(tree, Role::TextField, "Name"));
    let typed = "Ada Lovelace ✓";
    assert_eq!(
        a11y.set_text(&name, typed).expect("set_text"),
        TextWrite::Written
    );
    assert_eq!(
        a11y.read_text(&name).expect("read_text"),
        TextRead::Text(typed.into())
    );
    let saved = desk.dir.join("saved");
    assert!(!saved.exists());
    let save = target(form, one(tree, Role::Button, "Save"));
    assert_eq!(a11y.press(&save, None).expect("press"), "click");
    let text = wait_for_file(&saved, Duration::from_secs(5)).expect("Save wrote the file");
    assert_eq!(text, typed);
    // The entry's value shows in a read, and the check box's action by
    // name checks it.
    let subscribe = one(tree, Role::CheckBox, "Subscribe");
    assert!(!subscribe.has(State::Checked));
    let done = a11y.press(&target(form, subscribe), Some("click"));
    assert_eq!(done.expect("press Subscribe"), "click");
    // GTK does an action from an idle callback, after the call returns.
    let deadline = Instant::now() + Duration::from_secs(3);
    let after = loop {
        let after = a11y
            .read_window_tree(form, &TreeLimits::default())
            .expect("re-read");
        let checked = one(&after, Role::CheckBox, "Subscribe").has(State::Checked);
        if checked || Instant::now() > deadline {
            break after;
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    assert!(one(&after, Role::CheckBox, "Subscribe").has(State::Checked));
    let value = one(&after, Role::TextField, "Name").value.as_deref();
    assert_eq!(value, Some(typed));
    let err = a11y.press(&target(form, subscribe), Some("fly"));
    assert!(
        matches!(err, Err(BackendError::InvalidTarget(_))),
        "{err:?}"
    );
}

/// The password entry is neither written nor read; a stale role or name,
/// and text for a button, are refused.
fn check_refusals(desk: &Desktop, a11y: &dyn Accessibility, form: &WindowRef, tree: &A11yTree) {
    let password = target(form, one(tree, Role::PasswordText, "Password"));
    let refused = a11y.set_text(&password, "overwritten").expect("set_text");
    assert_eq!(refused, TextWrite::RefusedSecure);
    assert_eq!(
        a11y.read_text(&password).expect("read_text"),
        TextRead::Secure
    );
    let bounds = desk.bounds();
    assert_eq!(
        bounds["password_changed"], false,
        "the password was written"
    );
    let mut stale = target(form, one(tree, Role::Button, "Save"));
    stale.expect_role = Some(Role::CheckBox);
    let err = a11y
        .press(&stale, None)
        .expect_err("a stale role is refused");
    assert!(matches!(err, BackendError::Stale(_)), "{err}");
    let mut renamed = target(form, one(tree, Role::Button, "Save"));
    renamed.expect_name = Some("Delete".into());
    let err = a11y
        .press(&renamed, None)
        .expect_err("a stale name is refused");
    assert!(err.to_string().contains("now named"), "{err}");
    let button = target(form, one(tree, Role::Button, "Save"));
    let err = a11y
        .set_text(&button, "x")
        .expect_err("a button takes no text");
    assert!(matches!(err, BackendError::InvalidTarget(_)), "{err}");
}

/// The 500-row list reads whole within the limits, and is cut (and says
/// so) under smaller ones.
fn check_list(a11y: &dyn Accessibility, list: &WindowRef, how: &str) {
    let mut times = Vec::new();
    let mut tree = A11yTree::default();
    for _ in 0..5 {
        let started = Instant::now();
        tree = a11y
            .read_window_tree(list, &TreeLimits::default())
            .expect("read list");
        times.push(started.elapsed().as_secs_f64() * 1000.0);
    }
    times.sort_by(f64::total_cmp);
    eprintln!(
        "full read of the {ROWS}-row list window ({how}): {} elements; 5 reads: min {:.1} ms, median {:.1} ms, max {:.1} ms",
        tree.nodes.len(),
        times[0],
        times[2],
        times[4]
    );
    let rows = tree
        .nodes
        .iter()
        .filter(|n| n.role == Role::ListItem)
        .count();
    assert_eq!(rows, ROWS as usize);
    assert!(!tree.truncated);
    assert!(tree.find(&Role::Label, "Row 499").count() == 1);
    // Rows on screen have bounds inside the window; rows scrolled out of
    // view (Row 499) have none.
    let bounds = list.bounds.expect("the list window's bounds");
    let first = one(&tree, Role::Label, "Row 0")
        .bounds
        .expect("Row 0 is on screen");
    assert!(bounds.contains_rect(&first), "{first:?} in {bounds:?}");
    assert_eq!(one(&tree, Role::Label, "Row 499").bounds, None);
    // A structure read walks the same elements, without states or
    // bounds; the elements it names read in full by path.
    let light = TreeLimits {
        structure_only: true,
        ..TreeLimits::default()
    };
    let started = Instant::now();
    let structure = a11y.read_window_tree(list, &light).expect("structure read");
    println!(
        "{how}: structure read of {} elements in {:?}",
        structure.nodes.len(),
        started.elapsed()
    );
    let shape = |t: &A11yTree| -> Vec<_> {
        t.nodes
            .iter()
            .map(|n| (n.path.clone(), n.role.clone(), n.child_count))
            .collect()
    };
    assert_eq!(shape(&structure), shape(&tree));
    assert!(
        structure
            .nodes
            .iter()
            .all(|n| n.bounds.is_none() && n.states.is_empty())
    );
    let row0 = one(&tree, Role::Label, "Row 0");
    let paths = [row0.path.clone(), NodePath(vec![9, 9, 9])];
    let read = a11y
        .read_nodes(list, &paths, &TreeLimits::default())
        .expect("read by path");
    assert_eq!(
        read[0].as_ref().map(|n| (n.name.as_str(), n.bounds)),
        Some(("Row 0", row0.bounds))
    );
    assert!(read[1].is_none(), "a path to nowhere");
    let framed = tree.nodes.iter().filter_map(|n| n.bounds);
    assert!(framed.clone().all(|f| bounds.overlap_area(&f) > 0));
    let small = TreeLimits {
        max_elements: 100,
        ..TreeLimits::default()
    };
    let cut = a11y.read_window_tree(list, &small).expect("read list, 100");
    assert_eq!(cut.nodes.len(), 100);
    assert!(cut.truncated);
    let shallow = TreeLimits {
        max_depth: 2,
        ..TreeLimits::default()
    };
    let cut = a11y
        .read_window_tree(list, &shallow)
        .expect("read list, depth 2");
    assert!(cut.truncated);
    assert!(cut.nodes.iter().all(|n| n.path.depth() <= 2));
}

/// A stopped app fails a read within its time bound, and reads again once
/// it runs.
fn check_hung_app(desk: &Desktop, a11y: &dyn Accessibility, form: &WindowRef) {
    let limits = TreeLimits {
        per_call_timeout: Duration::from_millis(300),
        total_timeout: Duration::from_secs(2),
        ..TreeLimits::default()
    };
    desk.signal("-STOP");
    let started = Instant::now();
    let result = a11y.read_window_tree(form, &limits);
    let took = started.elapsed();
    desk.signal("-CONT");
    let err = result.expect_err("a read of a stopped app fails");
    assert!(took < Duration::from_secs(3), "took {took:?}: {err}");
    assert!(err.to_string().contains("did not answer"), "{err}");
    a11y.read_window_tree(form, &TreeLimits::default())
        .expect("reads again once the app runs");
}

#[test]
fn gtk_form_and_list_through_atspi() {
    let Some(_turn) = harness::tools_or_skip() else {
        return;
    };
    let desk = Desktop::start(ROWS);
    let options = AtspiOptions {
        session_bus: Some(desk.app.bus.clone()),
        a11y_bus: None,
        bus_only: false,
    };
    let a11y = deskhand_backend_atspi::open(&options).expect("open the backend");
    assert_eq!(a11y.bus_status(), BusStatus::Ok);
    let bounds = desk.bounds();
    let form = window(&desk, FORM, &bounds);
    let _ = first_read(a11y.as_ref(), &form);
    let started = Instant::now();
    let tree = a11y
        .read_window_tree(&form, &TreeLimits::default())
        .expect("read form");
    eprintln!(
        "full read of the form window: {} elements in {:.1} ms",
        tree.nodes.len(),
        started.elapsed().as_secs_f64() * 1000.0
    );
    check_form_read(&tree, &bounds);
    check_acts(&desk, a11y.as_ref(), &form, &tree);
    check_refusals(&desk, a11y.as_ref(), &form, &tree);
    let list = window(&desk, LIST, &bounds);
    check_list(a11y.as_ref(), &list, "straight to the app");
    let through_bus = AtspiOptions {
        bus_only: true,
        ..options
    };
    let bus_only = deskhand_backend_atspi::open(&through_bus).expect("open, bus only");
    check_list(bus_only.as_ref(), &list, "through the bus");
    check_hung_app(&desk, a11y.as_ref(), &form);
}

#[test]
fn bus_problems_have_the_contracts_reasons() {
    let dead = "unix:path=/nonexistent/deskhand-no-bus";
    let no_session = AtspiOptions {
        session_bus: Some(dead.into()),
        a11y_bus: None,
        bus_only: false,
    };
    let a11y = deskhand_backend_atspi::open(&no_session).expect("open");
    match a11y.bus_status() {
        BusStatus::Unavailable { problem, .. } => assert_eq!(problem, BusProblem::NotAdvertised),
        BusStatus::Ok => panic!("no session bus, yet the bus answers"),
    }
    let no_a11y = AtspiOptions {
        session_bus: None,
        a11y_bus: Some(dead.into()),
        bus_only: false,
    };
    let a11y = deskhand_backend_atspi::open(&no_a11y).expect("open");
    match a11y.bus_status() {
        BusStatus::Unavailable { problem, .. } => assert_eq!(problem, BusProblem::Unreachable),
        BusStatus::Ok => panic!("no accessibility bus, yet it answers"),
    }
    let window = WindowRef {
        pid: 1,
        title: "x".into(),
        bounds: None,
        surface_origin: None,
    };
    let err = a11y
        .read_window_tree(&window, &TreeLimits::default())
        .expect_err("no bus, no read");
    assert!(err.to_string().contains("atspi_bus_unreachable"), "{err}");
    // Calls block, but may be made (and the backend dropped) inside an
    // async runtime: the backend runs its own.
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    rt.block_on(async move {
        assert_ne!(a11y.bus_status(), BusStatus::Ok);
        drop(a11y);
    });
}

/// A real app of many widget kinds reads whole, consistently, in time.
#[test]
fn gtk3_widget_factory_reads_whole() {
    let Some(_turn) = harness::tools_or_skip() else {
        return;
    };
    let desk = Desktop::start_widget_factory();
    let options = AtspiOptions {
        session_bus: Some(desk.app.bus.clone()),
        ..AtspiOptions::default()
    };
    let a11y = deskhand_backend_atspi::open(&options).expect("open the backend");
    // Its accessible bounds has no name: it is found by its bounds, read
    // again on every try (the window may still be settling its size).
    let title = "gtk3-widget-factory";
    let deadline = Instant::now() + Duration::from_secs(30);
    let window = loop {
        let window = WindowRef {
            pid: desk.app.pid,
            title: title.into(),
            bounds: desk.x_window_bounds(title).filter(|f| f.width > 10),
            surface_origin: None,
        };
        let read = match window.bounds {
            Some(_) => a11y.read_window_tree(&window, &TreeLimits::default()),
            None => Err(BackendError::InvalidTarget("no X window yet".into())),
        };
        match read {
            Ok(_) => break window,
            Err(e) if Instant::now() < deadline => {
                eprintln!("not yet readable: {e}");
                std::thread::sleep(Duration::from_millis(200));
            }
            Err(e) => panic!("{title} was never readable: {e}"),
        }
    };
    let started = Instant::now();
    let tree = a11y
        .read_window_tree(&window, &TreeLimits::default())
        .expect("read");
    eprintln!(
        "full read of gtk3-widget-factory: {} elements, {} levels, in {:.1} ms",
        tree.nodes.len(),
        tree.nodes.iter().map(|n| n.path.depth()).max().unwrap_or(0),
        started.elapsed().as_secs_f64() * 1000.0
    );
    assert!(!tree.truncated);
    assert!(tree.nodes.len() > 100, "{} elements", tree.nodes.len());
    assert!(tree.nodes.iter().any(|n| n.role == Role::Button));
    assert!(tree.nodes.iter().any(|n| n.role == Role::CheckBox));
    for (i, node) in tree.nodes.iter().enumerate() {
        for &c in &node.children {
            assert!(c > i, "children come after their parent");
            assert_eq!(tree.nodes[c].parent, Some(i));
            assert_eq!(tree.nodes[c].path.depth(), node.path.depth() + 1);
        }
    }
}
