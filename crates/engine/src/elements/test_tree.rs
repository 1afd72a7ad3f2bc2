//! Trees for the unit tests of this module.

use crate::accessibility::{A11yNode, A11yTree, NodePath, Role, State};
use crate::geometry::Rect;

/// A node with `role`, `name` and `path`; links are set by [`link`].
pub(crate) fn node(role: Role, name: &str, path: &[u32]) -> A11yNode {
    A11yNode {
        role,
        name: name.into(),
        description: String::new(),
        states: vec![
            State::Enabled,
            State::Sensitive,
            State::Showing,
            State::Visible,
        ],
        bounds: None,
        actions: Vec::new(),
        value: None,
        parent: None,
        children: Vec::new(),
        child_count: 0,
        path: NodePath(path.to_vec()),
    }
}

/// Fills in parent, children and child counts from the paths (the nodes
/// are in document order).
pub(crate) fn link(mut nodes: Vec<A11yNode>) -> A11yTree {
    for n in &mut nodes {
        n.parent = None;
        n.children.clear();
        n.child_count = 0;
    }
    for i in 0..nodes.len() {
        let parent_path = match nodes[i].path.0.split_last() {
            Some((_, up)) => up.to_vec(),
            None => continue,
        };
        let parent = nodes[..i]
            .iter()
            .rposition(|n| n.path.0 == parent_path)
            .expect("the parent comes first");
        nodes[i].parent = Some(parent);
        nodes[parent].children.push(i);
        nodes[parent].child_count += 1;
    }
    A11yTree {
        nodes,
        truncated: false,
    }
}

/// A form window: a panel holding a label, a name entry, a password
/// entry and a Save button, and a tool bar with one button.
pub(crate) fn form_tree() -> A11yTree {
    let mut nodes = vec![
        node(Role::Window, "form", &[]),
        node(Role::Panel, "", &[0]),
        node(Role::Label, "Name", &[0, 0]),
        node(Role::TextField, "Name", &[0, 1]),
        node(Role::PasswordText, "Password", &[0, 2]),
        node(Role::Button, "Save", &[0, 3]),
        node(Role::ToolBar, "tools", &[1]),
        node(Role::Button, "Open", &[1, 0]),
    ];
    nodes[0].bounds = Some(Rect::new(100, 100, 400, 300));
    nodes[1].bounds = Some(Rect::new(100, 100, 400, 250));
    nodes[3].bounds = Some(Rect::new(200, 120, 200, 30));
    nodes[3].value = Some("Ada".into());
    nodes[3].states.push(State::Editable);
    nodes[4].bounds = Some(Rect::new(200, 160, 200, 30));
    nodes[4].states.push(State::Secure);
    nodes[5].bounds = Some(Rect::new(200, 200, 80, 30));
    nodes[5].actions = vec!["click".into()];
    nodes[6].bounds = Some(Rect::new(100, 350, 400, 50));
    nodes[7].bounds = Some(Rect::new(480, 360, 60, 30));
    nodes[7].actions = vec!["click".into()];
    link(nodes)
}
