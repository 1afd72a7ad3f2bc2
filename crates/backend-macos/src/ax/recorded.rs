//! Recorded AX trees for the tests: a window's elements as Accessibility
//! Inspector shows them (role, subrole, title, value, frame in pixels,
//! actions), loaded from `fixtures/*.json` and flattened into rows in
//! document order, as the AX client will walk a live app.

use deskhand_backend::Rect;
use deskhand_backend::accessibility::{A11yNode, A11yTree, NodePath, Role, State};
use serde::Deserialize;

use super::map::{self, AxProps, AxValue};

/// One element as recorded.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct Element {
    role: String,
    #[serde(default)]
    subrole: String,
    #[serde(default)]
    title: String,
    #[serde(default)]
    description: String,
    #[serde(default)]
    help: String,
    value: Option<serde_json::Value>,
    #[serde(default)]
    settable: bool,
    #[serde(default = "yes")]
    enabled: bool,
    #[serde(default)]
    focused: bool,
    #[serde(default)]
    focusable: bool,
    selected: Option<bool>,
    expanded: Option<bool>,
    #[serde(default)]
    modal: bool,
    rect: Option<[i32; 4]>,
    #[serde(default)]
    actions: Vec<String>,
    #[serde(default)]
    children: Vec<Element>,
}

fn yes() -> bool {
    true
}

impl Element {
    /// Its properties as the AX client reads them: the value only where
    /// the role and subrole allow it.
    fn props(&self) -> AxProps {
        let value = match &self.value {
            _ if !map::may_read_value(&self.role, &self.subrole) => AxValue::None,
            Some(serde_json::Value::String(s)) => AxValue::Text(s.clone()),
            Some(serde_json::Value::Number(n)) => AxValue::Number(n.as_f64().unwrap_or(0.0)),
            _ => AxValue::None,
        };
        AxProps {
            role: self.role.clone(),
            subrole: self.subrole.clone(),
            title: self.title.clone(),
            description: self.description.clone(),
            help: self.help.clone(),
            value,
            value_settable: self.settable,
            enabled: self.enabled,
            focused: self.focused,
            focusable: self.focusable,
            selected: self.selected,
            expanded: self.expanded,
            modal: self.modal,
            bounds: self
                .rect
                .map(|[x, y, w, h]| Rect::new(x, y, w as u32, h as u32)),
            actions: self.actions.clone(),
        }
    }
}

/// The fixture `name` flattened into a tree of rows.
fn load(name: &str) -> A11yTree {
    let text = match name {
        "sign_in" => include_str!("fixtures/sign_in.json"),
        other => panic!("no fixture {other}"),
    };
    let root: Element = serde_json::from_str(text).expect("a valid fixture");
    let mut tree = A11yTree::default();
    walk(&root, None, NodePath::root(), &mut tree.nodes);
    tree
}

/// Adds `e` and its subtree in document order.
fn walk(e: &Element, parent: Option<usize>, path: NodePath, nodes: &mut Vec<A11yNode>) {
    let index = nodes.len();
    let mut node = map::node_of(&e.props(), e.children.len() as u32);
    node.parent = parent;
    node.path = path.clone();
    nodes.push(node);
    for (i, child) in e.children.iter().enumerate() {
        let at = nodes.len();
        nodes[index].children.push(at);
        walk(child, Some(index), path.child(i as u32), nodes);
    }
}

#[test]
fn a_sign_in_sheet_reads_as_the_other_backends_rows() {
    let tree = load("sign_in");
    let rows: Vec<(&str, &str)> = tree
        .nodes
        .iter()
        .map(|n| (n.role.name(), n.name.as_str()))
        .collect();
    assert_eq!(
        rows,
        [
            ("window", "Sign in"),
            ("dialog", "Sign in to Contoso"),
            ("label", "Sign in to Contoso"),
            ("text_field", "User name"),
            ("password_text", "Password"),
            ("check_box", "Remember me"),
            ("combo_box", "Server"),
            ("link", "Forgot password?"),
            ("button", "Sign in"),
            ("button", "Cancel"),
            ("AXRuler", ""),
        ]
    );
    let user = tree
        .find(&Role::TextField, "User name")
        .next()
        .expect("user");
    assert_eq!(user.value.as_deref(), Some("ada"));
    assert!(user.has(State::Focused) && user.has(State::Editable));
    let remember = tree
        .find(&Role::CheckBox, "Remember me")
        .next()
        .expect("box");
    assert!(remember.has(State::Checked));
    assert_eq!(remember.actions, ["click"]);
    let link = tree
        .find(&Role::Link, "Forgot password?")
        .next()
        .expect("link");
    assert!(!link.has(State::Enabled));
    let server = tree.find(&Role::ComboBox, "Server").next().expect("popup");
    assert_eq!(server.actions, ["click", "show_menu"]);
    assert_eq!(server.value.as_deref(), Some("eu-west"));
}

#[test]
fn the_password_is_never_read_and_its_bounds_are_blacked_out() {
    let tree = load("sign_in");
    let password = tree
        .find(&Role::PasswordText, "Password")
        .next()
        .expect("the field");
    assert_eq!(password.value, None);
    assert!(password.is_secure() && password.has(State::Secure));
    assert_eq!(tree.secure_bounds(), [Rect::new(840, 800, 720, 48)]);
}

#[test]
fn paths_lead_back_to_their_rows() {
    let tree = load("sign_in");
    let sheet = &tree.nodes[1];
    assert_eq!(sheet.path, NodePath(vec![0]));
    assert_eq!(sheet.child_count, 9);
    let cancel = tree.at(&NodePath(vec![0, 7])).expect("Cancel");
    assert_eq!(cancel.name, "Cancel");
    assert_eq!(cancel.parent, Some(1));
    assert_eq!(tree.nodes[0].children, [1]);
}
