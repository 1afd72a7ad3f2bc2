//! Walking a window's tree in UI Automation's control view within
//! [`TreeLimits`], and following a path back to its element. Over a
//! [`Source`]: on Windows a subtree fetched into UIA's cache in one
//! cross-process call (reads), or live `FindAll` calls (acts); in tests a
//! recorded tree.

use std::collections::VecDeque;
use std::time::Instant;

use deskhand_backend::accessibility::{
    A11yNode, A11yTree, NodePath, ReadSlot, TreeLimits, in_document_order,
};

use super::UiaError;
use super::map::{self, Props};

/// Where elements and their properties come from.
pub trait Source {
    /// An element.
    type Element: Clone;

    /// The children of `of` in the control view, in order, each with its
    /// properties.
    fn children(&self, of: &Self::Element) -> Result<Vec<(Self::Element, Props)>, UiaError>;
}

/// The row of an element with `props` (`structure_only`: role, name and
/// description alone); its place in the tree is filled in later.
pub fn node_of(props: &Props, child_count: u32, structure_only: bool) -> A11yNode {
    let role = map::role(props);
    let mut node = A11yNode {
        states: Vec::new(),
        bounds: None,
        actions: Vec::new(),
        value: None,
        name: props.name.clone(),
        description: props.help_text.clone(),
        role,
        parent: None,
        children: Vec::new(),
        child_count,
        path: NodePath::root(),
    };
    if !structure_only {
        node.states = map::states(props, &node.role);
        node.bounds = map::bounds(props);
        node.actions = map::actions(&props.patterns);
        node.value = map::value(props, &node.role);
    }
    node
}

/// One element found by the walk.
struct Slot<E> {
    element: E,
    props: Props,
    index: u32,
    depth: usize,
    children: Vec<usize>,
    /// Its child count, once its children were asked for.
    count: Option<u32>,
}

/// Reads the tree under `root` breadth first within `limits`, the time
/// counted from `started`. Every element listed asks for its children (to
/// know how many it has); those past the depth or element bounds are left
/// out and the tree says it was cut.
pub fn read_tree<S: Source>(
    src: &S,
    root: (S::Element, Props),
    limits: &TreeLimits,
    started: Instant,
) -> Result<A11yTree, UiaError> {
    let max_elements = limits.max_elements.max(1);
    let mut slots = vec![Slot {
        element: root.0,
        props: root.1,
        index: 0,
        depth: 0,
        children: Vec::new(),
        count: None,
    }];
    let mut queue = VecDeque::from([0usize]);
    let mut truncated = false;
    while let Some(i) = queue.pop_front() {
        if started.elapsed() > limits.total_timeout {
            return Err(UiaError::Timeout(limits.total_timeout));
        }
        let children = src.children(&slots[i].element)?;
        slots[i].count = Some(u32::try_from(children.len()).unwrap_or(u32::MAX));
        let depth = slots[i].depth + 1;
        if depth > limits.max_depth && !children.is_empty() {
            truncated = true;
            continue;
        }
        for (index, (element, props)) in children.into_iter().enumerate() {
            if slots.len() >= max_elements {
                truncated = true;
                break;
            }
            let child = slots.len();
            slots.push(Slot {
                element,
                props,
                index: u32::try_from(index).unwrap_or(u32::MAX),
                depth,
                children: Vec::new(),
                count: None,
            });
            slots[i].children.push(child);
            queue.push_back(child);
        }
    }
    let read = slots
        .into_iter()
        .map(|s| ReadSlot {
            node: Some(node_of(
                &s.props,
                s.count.unwrap_or(0),
                limits.structure_only,
            )),
            index: s.index,
            children: s.children,
        })
        .collect();
    Ok(in_document_order(read, truncated))
}

/// The element at `path` below `root`, with its properties. Each
/// ancestor's child count is checked against `counts` (root first; a
/// shorter list checks fewer), so a child added or removed on the way is
/// caught before an act.
pub fn follow<S: Source>(
    src: &S,
    root: (S::Element, Props),
    path: &NodePath,
    counts: &[u32],
) -> Result<(S::Element, Props), UiaError> {
    let mut at = root;
    for (depth, step) in path.0.iter().enumerate() {
        let mut children = src.children(&at.0)?;
        let now = children.len();
        if let Some(then) = counts.get(depth)
            && u64::try_from(now).ok() != Some(u64::from(*then))
        {
            return Err(UiaError::NotFound(format!(
                "level {} of {path} has {now} children now, not {then}: the window changed",
                depth + 1
            )));
        }
        let index = usize::try_from(*step).unwrap_or(usize::MAX);
        if index >= now {
            return Err(UiaError::NotFound(format!(
                "no element at {path} (level {} has no child {step})",
                depth + 1
            )));
        }
        at = children.swap_remove(index);
    }
    Ok(at)
}

/// Reads the elements at `paths` below `root` in full; `None` for a path
/// that leads nowhere now.
pub fn read_paths<S: Source>(
    src: &S,
    root: &(S::Element, Props),
    paths: &[NodePath],
) -> Result<Vec<Option<A11yNode>>, UiaError> {
    paths
        .iter()
        .map(|path| match follow(src, root.clone(), path, &[]) {
            Ok((element, props)) => {
                let count = src.children(&element)?.len();
                let mut node = node_of(&props, u32::try_from(count).unwrap_or(u32::MAX), false);
                node.path = path.clone();
                Ok(Some(node))
            }
            Err(UiaError::NotFound(_)) => Ok(None),
            Err(e) => Err(e),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use deskhand_backend::Rect;
    use deskhand_backend::accessibility::{Role, State};

    use super::*;
    use crate::uia::recorded::Recorded;

    fn limits() -> TreeLimits {
        TreeLimits::default()
    }

    #[test]
    fn notepad_reads_as_rows_in_document_order() {
        let rec = Recorded::load("notepad");
        let tree = read_tree(&rec, rec.root(), &limits(), Instant::now()).expect("read");
        assert!(!tree.truncated);
        let root = &tree.nodes[0];
        assert_eq!(
            (root.role.clone(), root.name.as_str()),
            (Role::Window, "Untitled - Notepad")
        );
        let edit = tree
            .find(&Role::Document, "Text Editor")
            .next()
            .expect("the text area");
        assert_eq!(edit.value.as_deref(), Some("Hello from a recorded tree"));
        assert!(edit.has(State::Editable) && edit.has(State::Focused));
        assert_eq!(edit.bounds, Some(Rect::new(108, 182, 784, 496)));
        let file = tree.find(&Role::MenuItem, "File").next().expect("File");
        assert_eq!(file.actions, ["expand", "collapse"]);
        assert_eq!(tree.at(&file.path).map(|n| &n.name), Some(&file.name));
        // The title bar's buttons sit under it, in order.
        let close = tree.find(&Role::Button, "Close").next().expect("Close");
        let bar = &tree.nodes[close.parent.expect("a parent")];
        assert_eq!(bar.role, Role::ToolBar);
        assert_eq!(bar.children.len() as u32, bar.child_count);
    }

    #[test]
    fn a_password_field_shows_no_value_and_is_secure() {
        let rec = Recorded::load("sign_in");
        let tree = read_tree(&rec, rec.root(), &limits(), Instant::now()).expect("read");
        let pass = tree
            .find(&Role::PasswordText, "Password")
            .next()
            .expect("the password field");
        assert!(pass.is_secure() && pass.value.is_none());
        let user = tree
            .find(&Role::TextField, "User name")
            .next()
            .expect("user");
        assert_eq!(user.value.as_deref(), Some("ada"));
        assert_eq!(tree.secure_bounds(), [pass.bounds.expect("bounds")]);
        assert_eq!(tree.nodes[0].role, Role::Dialog);
        let remember = tree
            .find(&Role::CheckBox, "Remember me")
            .next()
            .expect("box");
        assert!(remember.has(State::Checked));
        assert_eq!(remember.actions, ["toggle"]);
    }

    #[test]
    fn limits_cut_the_tree_and_say_so() {
        let rec = Recorded::load("notepad");
        let full = read_tree(&rec, rec.root(), &limits(), Instant::now()).expect("read");
        let few = TreeLimits {
            max_elements: 4,
            ..limits()
        };
        let cut = read_tree(&rec, rec.root(), &few, Instant::now()).expect("read");
        assert!(cut.truncated && cut.nodes.len() == 4);
        let shallow = TreeLimits {
            max_depth: 1,
            ..limits()
        };
        let top = read_tree(&rec, rec.root(), &shallow, Instant::now()).expect("read");
        assert!(top.truncated);
        assert!(top.nodes.iter().all(|n| n.path.depth() <= 1));
        assert_eq!(top.nodes[0].child_count, full.nodes[0].child_count);
        // The children of the deepest rows read are counted, not listed.
        assert!(
            top.nodes
                .iter()
                .any(|n| n.child_count > 0 && n.children.is_empty())
        );
    }

    #[test]
    fn a_structure_read_has_roles_and_names_only() {
        let rec = Recorded::load("notepad");
        let light = TreeLimits {
            structure_only: true,
            ..limits()
        };
        let tree = read_tree(&rec, rec.root(), &light, Instant::now()).expect("read");
        let edit = tree
            .find(&Role::Document, "Text Editor")
            .next()
            .expect("edit");
        assert!(edit.value.is_none() && edit.states.is_empty() && edit.bounds.is_none());
    }

    #[test]
    fn a_read_past_its_time_fails() {
        let rec = Recorded::load("notepad");
        let past = Instant::now() - Duration::from_secs(20);
        let err = read_tree(&rec, rec.root(), &limits(), past).expect_err("too late");
        assert!(matches!(err, UiaError::Timeout(_)), "{err}");
    }

    #[test]
    fn paths_lead_back_and_changed_counts_are_caught() {
        let rec = Recorded::load("notepad");
        let tree = read_tree(&rec, rec.root(), &limits(), Instant::now()).expect("read");
        let close = tree.find(&Role::Button, "Close").next().expect("Close");
        let (_, props) = follow(&rec, rec.root(), &close.path, &[]).expect("found");
        assert_eq!(props.name, "Close");
        let wrong = follow(&rec, rec.root(), &close.path, &[9]).expect_err("stale");
        assert!(
            wrong.to_string().contains("has 3 children now, not 9"),
            "{wrong}"
        );
        let nowhere = NodePath(vec![0, 40]);
        assert!(matches!(
            follow(&rec, rec.root(), &nowhere, &[]),
            Err(UiaError::NotFound(_))
        ));
        let read = read_paths(&rec, &rec.root(), &[close.path.clone(), nowhere]).expect("read");
        assert_eq!(read[0].as_ref().map(|n| n.name.as_str()), Some("Close"));
        assert_eq!(
            read[0].as_ref().map(|n| n.path.clone()),
            Some(close.path.clone())
        );
        assert!(read[1].is_none());
    }
}
