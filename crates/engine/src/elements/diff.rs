//! What changed in a window's tree between two snapshots: elements are
//! matched by their path and role, so an element that stayed where it was
//! is "changed" when its label, states, value or bounds differ.

use std::collections::HashMap;

use deskhand_protocol::tree::TreeDiff;

use super::rows::row;
use super::snapshots::Snapshot;
use crate::accessibility::{A11yNode, NodePath, Role};

/// The most rows in each list of a diff.
const MAX_ROWS: usize = 50;

/// Whether what a row shows of `a` and `b` differs; of a light `a` (a
/// structure read), only what such a read has.
fn differs(a: &A11yNode, b: &A11yNode, light: bool) -> bool {
    let named = a.name != b.name || a.description != b.description;
    if light {
        return named || a.child_count != b.child_count;
    }
    named
        || a.states != b.states
        || a.value != b.value
        || a.bounds != b.bounds
        || a.child_count != b.child_count
}

/// The diff from `before` to `after`, which waited `settle_ms` to settle.
pub(crate) fn diff(before: &Snapshot, after: &Snapshot, settle_ms: f64) -> TreeDiff {
    let old: HashMap<(&NodePath, &Role), usize> = before
        .tree
        .nodes
        .iter()
        .enumerate()
        .map(|(i, n)| ((&n.path, &n.role), i))
        .collect();
    let mut out = TreeDiff {
        snapshot_id: after.id.clone(),
        settle_ms,
        ..TreeDiff::default()
    };
    let mut seen = vec![false; before.tree.nodes.len()];
    for (i, n) in after.tree.nodes.iter().enumerate() {
        let depth = n.path.depth();
        match old.get(&(&n.path, &n.role)) {
            Some(&j) => {
                seen[j] = true;
                if differs(&before.tree.nodes[j], n, before.light) {
                    push(&mut out.changed, &mut out.truncated, || {
                        row(after, i, n.parent, depth, None)
                    });
                }
            }
            None => push(&mut out.added, &mut out.truncated, || {
                row(after, i, n.parent, depth, None)
            }),
        }
    }
    for (j, _) in seen.iter().enumerate().filter(|(_, s)| !**s) {
        push(&mut out.removed, &mut out.truncated, || before.token(j));
    }
    out
}

/// Adds `make()` to `list` unless it is full (then marks the diff cut).
fn push<T>(list: &mut Vec<T>, truncated: &mut bool, make: impl FnOnce() -> T) {
    if list.len() < MAX_ROWS {
        list.push(make());
    } else {
        *truncated = true;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::accessibility::State;
    use crate::elements::snapshots::Snapshots;
    use crate::elements::test_tree::{form_tree, link, node};

    #[test]
    fn an_unchanged_tree_has_an_empty_diff() {
        let snaps = Snapshots::default();
        let a = snaps.store("a", "w", form_tree(), 0, false);
        let b = snaps.store("a", "w", form_tree(), 0, false);
        let d = diff(&a, &b, 0.0);
        assert!(d.added.is_empty() && d.removed.is_empty() && d.changed.is_empty());
        assert_eq!(d.snapshot_id, a.id);
    }

    #[test]
    fn changes_additions_and_removals_are_listed() {
        let snaps = Snapshots::default();
        let a = snaps.store("a", "w", form_tree(), 0, false);
        let mut nodes = form_tree().nodes;
        nodes[3].value = Some("Grace".into());
        nodes[5].states.push(State::Focused);
        nodes.truncate(7); // the tool bar's button goes
        nodes.push(node(Role::Label, "Saved", &[2]));
        let b = snaps.store("a", "w", link(nodes), 0, false);
        let d = diff(&a, &b, 12.5);
        let changed: Vec<_> = d.changed.iter().map(|r| r.element_index).collect();
        // The tool bar lost a child: its row changed too.
        assert_eq!(changed, [0, 3, 5, 6]);
        assert_eq!(d.changed[1].value.as_deref(), Some("Grace"));
        assert_eq!(d.added.len(), 1);
        assert_eq!(d.added[0].label, "Saved");
        assert_eq!(d.removed, [a.token(7)]);
        assert_ne!(d.snapshot_id, a.id, "a new structure is a new snapshot");
        assert_eq!(d.settle_ms, 12.5);
    }
}
