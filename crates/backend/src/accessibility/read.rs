//! What every accessibility backend's read shares: putting elements read
//! breadth-first in document order, and picking a window's root among an
//! app's top-level elements.

use crate::geometry::Rect;

use super::{A11yNode, A11yTree, NodePath, WindowRef};

/// One element of a breadth-first read, before it is put in document
/// order.
#[derive(Debug, Clone)]
pub struct ReadSlot {
    /// What was read of it (`parent`, `children` and `path` are filled in
    /// by [`in_document_order`]); `None` when it was not read.
    pub node: Option<A11yNode>,
    /// Its index among its parent's children.
    pub index: u32,
    /// Its children's indices in the slots, in order.
    pub children: Vec<usize>,
}

/// The slots (`slots[0]` the root) in document order: a parent before its
/// children, siblings in order, each with its parent, children and path.
/// A slot not read is left out with everything below it.
pub fn in_document_order(mut slots: Vec<ReadSlot>, truncated: bool) -> A11yTree {
    let mut nodes: Vec<A11yNode> = Vec::with_capacity(slots.len());
    // (slot, parent's index in `nodes`, path)
    let mut stack = vec![(0usize, None::<usize>, NodePath::root())];
    while let Some((s, parent, path)) = stack.pop() {
        let Some(mut node) = slots.get_mut(s).and_then(|slot| slot.node.take()) else {
            continue;
        };
        let me = nodes.len();
        if let Some(p) = parent {
            nodes[p].children.push(me);
        }
        for &c in slots[s].children.iter().rev() {
            stack.push((c, Some(me), path.child(slots[c].index)));
        }
        node.parent = parent;
        node.children = Vec::new();
        node.path = path;
        nodes.push(node);
    }
    A11yTree { nodes, truncated }
}

/// A top-level element of an app that may be a window's root.
#[derive(Debug, Clone)]
pub struct Candidate<T> {
    /// The element.
    pub item: T,
    /// Its accessible name.
    pub name: String,
    /// Its bounds, when it reports them.
    pub bounds: Option<Rect>,
}

/// How far apart two rectangles are: the sum of their edges' distances.
fn distance(a: &Rect, b: &Rect) -> i64 {
    (i64::from(a.x) - i64::from(b.x)).abs()
        + (i64::from(a.y) - i64::from(b.y)).abs()
        + (a.right() - b.right()).abs()
        + (a.bottom() - b.bottom()).abs()
}

/// How well a candidate fits `window`: lower is better (`i64::MAX` when
/// its bounds are unknown on either side).
fn misfit<T>(candidate: &Candidate<T>, window: &WindowRef) -> i64 {
    match (&candidate.bounds, &window.bounds) {
        (Some(a), Some(b)) => distance(a, b),
        _ => i64::MAX,
    }
}

/// The candidate for `window`: the best-fitting one with its title; else,
/// when the window's bounds are known, one with the same bounds (±2 px a
/// side) whatever its name.
pub fn choose_root<T>(all: Vec<Candidate<T>>, window: &WindowRef) -> Option<T> {
    let (titled, others): (Vec<_>, Vec<_>) = all.into_iter().partition(|c| c.name == window.title);
    if !titled.is_empty() {
        return titled
            .into_iter()
            .min_by_key(|c| misfit(c, window))
            .map(|c| c.item);
    }
    others
        .into_iter()
        .filter(|c| misfit(c, window) <= 8)
        .min_by_key(|c| misfit(c, window))
        .map(|c| c.item)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::accessibility::Role;

    /// A read slot named `name`.
    fn slot(index: u32, children: Vec<usize>, name: &str) -> ReadSlot {
        ReadSlot {
            node: Some(A11yNode {
                role: Role::Panel,
                name: name.into(),
                description: String::new(),
                states: Vec::new(),
                bounds: None,
                actions: Vec::new(),
                value: None,
                parent: None,
                children: Vec::new(),
                child_count: u32::try_from(children.len()).unwrap_or(0),
                path: NodePath::root(),
            }),
            index,
            children,
        }
    }

    #[test]
    fn document_order_with_paths_and_links() {
        // Breadth-first slots: root(0) -> a(1), b(2); a -> a0(3), a1(4).
        let slots = vec![
            slot(0, vec![1, 2], "root"),
            slot(0, vec![3, 4], "a"),
            slot(1, vec![], "b"),
            slot(0, vec![], "a0"),
            slot(1, vec![], "a1"),
        ];
        let tree = in_document_order(slots, false);
        let names: Vec<&str> = tree.nodes.iter().map(|n| n.name.as_str()).collect();
        assert_eq!(names, ["root", "a", "a0", "a1", "b"]);
        assert_eq!(tree.nodes[0].children, [1, 4]);
        assert_eq!(tree.nodes[1].children, [2, 3]);
        assert_eq!(tree.nodes[3].parent, Some(1));
        assert_eq!(tree.nodes[4].path, NodePath(vec![1]));
        assert_eq!(tree.nodes[3].path, NodePath(vec![0, 1]));
        assert_eq!(tree.nodes[0].parent, None);
    }

    #[test]
    fn a_slot_not_read_is_left_out_with_what_is_below_it() {
        let mut slots = vec![
            slot(0, vec![1, 2], "root"),
            slot(0, vec![3], "a"),
            slot(1, vec![], "b"),
            slot(0, vec![], "a0"),
        ];
        slots[1].node = None;
        let tree = in_document_order(slots, true);
        let names: Vec<&str> = tree.nodes.iter().map(|n| n.name.as_str()).collect();
        assert_eq!(names, ["root", "b"]);
        assert!(tree.truncated);
    }

    /// A candidate `n` named `name`.
    fn cand(n: u8, name: &str, bounds: Option<Rect>) -> Candidate<u8> {
        Candidate {
            item: n,
            name: name.into(),
            bounds,
        }
    }

    /// A window of pid 1.
    fn window(title: &str, bounds: Option<Rect>) -> WindowRef {
        WindowRef {
            pid: 1,
            title: title.into(),
            bounds,
            surface_origin: None,
        }
    }

    #[test]
    fn title_wins_then_closest_bounds() {
        let at = Rect::new(100, 100, 300, 200);
        let all = vec![
            cand(1, "other", Some(at)),
            cand(2, "doc", Some(Rect::new(0, 0, 300, 200))),
            cand(3, "doc", Some(Rect::new(101, 100, 300, 200))),
        ];
        assert_eq!(choose_root(all, &window("doc", Some(at))), Some(3));
    }

    #[test]
    fn without_the_title_only_the_same_bounds_match() {
        let at = Rect::new(100, 100, 300, 200);
        let near = vec![cand(1, "x", Some(Rect::new(101, 101, 300, 200)))];
        assert!(choose_root(near, &window("doc", Some(at))).is_some());
        let far = vec![cand(1, "x", Some(Rect::new(150, 100, 300, 200)))];
        assert!(choose_root(far, &window("doc", Some(at))).is_none());
        let unknown = vec![cand(1, "x", Some(at))];
        assert!(choose_root(unknown, &window("doc", None)).is_none());
    }
}
