//! Element snapshots: each session's latest accessibility read of each
//! window it read, the tokens `<snapshot_id>:<N>` that name their rows,
//! and when tokens go stale. A read of an unchanged structure keeps the
//! snapshot's id (its tokens keep working); a changed structure or a
//! resume since the read gives a new id, and older tokens are stale.

use std::collections::HashMap;
use std::hash::{Hash, Hasher};
use std::sync::{Arc, Mutex, MutexGuard};

use crate::accessibility::A11yTree;
use crate::error::EngineError;

/// How many windows' snapshots a session keeps (the oldest is dropped).
const WINDOWS_PER_SESSION: usize = 16;
/// The longest token accepted, in bytes.
const MAX_TOKEN_BYTES: usize = 64;

/// One read of a window, as its tokens refer to it.
#[derive(Debug)]
pub(crate) struct Snapshot {
    /// The id in its tokens.
    pub(crate) id: String,
    /// The window's `win_…` handle.
    pub(crate) window: String,
    /// The whole window, as read.
    pub(crate) tree: A11yTree,
    /// For each row, the end (exclusive) of its subtree: the rows below it
    /// are `i + 1 .. subtree_end[i]` (the tree is in document order).
    pub(crate) subtree_end: Vec<usize>,
    /// Read for its structure only (a skeleton read): only the rows it
    /// listed and the secure fields have states and bounds.
    pub(crate) light: bool,
    /// Fingerprint of the structure: paths, roles and child counts.
    structure: u64,
    /// The resume count when it was read.
    epoch: u64,
}

impl Snapshot {
    /// A snapshot of `tree` that no session holds: to look at a read
    /// before it is stored.
    pub(crate) fn detached(tree: A11yTree) -> Self {
        Self {
            id: String::new(),
            window: String::new(),
            subtree_end: subtree_ends(&tree),
            structure: 0,
            epoch: 0,
            light: true,
            tree,
        }
    }

    /// The token of row `index`.
    pub(crate) fn token(&self, index: usize) -> String {
        format!("{}:{index}", self.id)
    }

    /// How many rows lie below row `index`.
    pub(crate) fn descendants(&self, index: usize) -> usize {
        self.subtree_end[index].saturating_sub(index + 1)
    }
}

/// Every session's snapshots.
#[derive(Debug, Default)]
pub(crate) struct Snapshots {
    by_session: Mutex<HashMap<String, Vec<Arc<Snapshot>>>>,
}

impl Snapshots {
    fn lock(&self) -> MutexGuard<'_, HashMap<String, Vec<Arc<Snapshot>>>> {
        self.by_session.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Stores `session`'s new read of `window` (taken at resume count
    /// `epoch`) and returns it: with the previous snapshot's id when the
    /// structure and the epoch are the same, else with a new id.
    pub(crate) fn store(
        &self,
        session: &str,
        window: &str,
        tree: A11yTree,
        epoch: u64,
        light: bool,
    ) -> Arc<Snapshot> {
        let structure = structure_of(&tree);
        let mut all = self.lock();
        let list = all.entry(session.to_owned()).or_default();
        let previous = list.iter().position(|s| s.window == window);
        let id = match previous.map(|i| list.remove(i)) {
            Some(old) if old.structure == structure && old.epoch == epoch => old.id.clone(),
            _ => new_id(),
        };
        let snapshot = Arc::new(Snapshot {
            id,
            window: window.to_owned(),
            subtree_end: subtree_ends(&tree),
            tree,
            structure,
            epoch,
            light,
        });
        if list.len() >= WINDOWS_PER_SESSION {
            list.remove(0);
        }
        list.push(snapshot.clone());
        snapshot
    }

    /// The snapshot and row a token of `session` names, while it is not
    /// stale (`epoch` is the resume count now).
    pub(crate) fn lookup(
        &self,
        session: &str,
        token: &str,
        epoch: u64,
    ) -> Result<(Arc<Snapshot>, usize), EngineError> {
        let (id, index) = parse_token(token)?;
        let snapshot = self
            .lock()
            .get(session)
            .and_then(|list| list.iter().find(|s| s.id == id).cloned())
            .filter(|s| s.epoch == epoch)
            .ok_or_else(|| EngineError::StaleElementToken {
                token: bounded(token),
            })?;
        if index >= snapshot.tree.nodes.len() {
            return Err(EngineError::invalid(
                "element_token",
                format!("snapshot {id} has no element {index}"),
            ));
        }
        Ok((snapshot, index))
    }

    /// `session`'s latest snapshot of `window`, if it read one.
    pub(crate) fn latest(&self, session: &str, window: &str) -> Option<Arc<Snapshot>> {
        self.lock()
            .get(session)
            .and_then(|list| list.iter().find(|s| s.window == window).cloned())
    }

    /// `session`'s snapshots are gone with it.
    pub(crate) fn drop_session(&self, session: &str) {
        self.lock().remove(session);
    }
}

/// A token's snapshot id and row; a malformed token is refused.
pub(crate) fn parse_token(token: &str) -> Result<(&str, usize), EngineError> {
    let bad = || {
        EngineError::invalid(
            "element_token",
            "an element token is <snapshot_id>:<N>, as get_window_state gives it",
        )
    };
    if token.len() > MAX_TOKEN_BYTES {
        return Err(bad());
    }
    let (id, index) = token.rsplit_once(':').ok_or_else(bad)?;
    let valid_id = !id.is_empty() && id.bytes().all(|b| b.is_ascii_alphanumeric());
    match (valid_id, index.parse::<usize>()) {
        (true, Ok(index)) => Ok((id, index)),
        _ => Err(bad()),
    }
}

/// The token as it may appear in a message: it was checked to be short.
fn bounded(token: &str) -> String {
    token.chars().take(MAX_TOKEN_BYTES).collect()
}

/// A fresh snapshot id: `s` and 8 hex digits.
fn new_id() -> String {
    let hex = uuid::Uuid::new_v4().simple().to_string();
    format!("s{}", &hex[..8])
}

/// What makes two reads the same structure: every row's path, role and
/// child count, and whether the read was cut. Names, states, values and
/// bounds may change without making tokens stale.
fn structure_of(tree: &A11yTree) -> u64 {
    let mut h = std::collections::hash_map::DefaultHasher::new();
    tree.truncated.hash(&mut h);
    for n in &tree.nodes {
        n.path.hash(&mut h);
        n.role.hash(&mut h);
        n.child_count.hash(&mut h);
    }
    h.finish()
}

/// The end of each row's subtree: the first later row that is not below
/// it (rows are in document order, so a subtree is a run of rows).
fn subtree_ends(tree: &A11yTree) -> Vec<usize> {
    let n = tree.nodes.len();
    let mut ends = vec![n; n];
    let mut open: Vec<usize> = Vec::new();
    for (i, node) in tree.nodes.iter().enumerate() {
        while let Some(&top) = open.last() {
            if tree.nodes[top].path.depth() >= node.path.depth() {
                ends[top] = i;
                open.pop();
            } else {
                break;
            }
        }
        open.push(i);
    }
    ends
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::accessibility::Role;
    use crate::elements::test_tree::{form_tree, node};

    #[test]
    fn tokens_parse_and_malformed_ones_are_refused() {
        assert_eq!(parse_token("s1a2b3c4:17").ok(), Some(("s1a2b3c4", 17)));
        for bad in [
            "",
            "17",
            "s1:",
            ":3",
            "s-1:3",
            "s1:x",
            "s1:-2",
            &"a".repeat(70),
        ] {
            assert!(
                matches!(
                    parse_token(bad),
                    Err(EngineError::InvalidArguments {
                        field: "element_token",
                        ..
                    })
                ),
                "{bad:?}"
            );
        }
    }

    #[test]
    fn an_unchanged_structure_keeps_the_id_and_a_change_stales_old_tokens() {
        let snaps = Snapshots::default();
        let first = snaps.store("a", "win_1", form_tree(), 0, false);
        let mut renamed = form_tree();
        renamed.nodes[2].name = "Renamed".into();
        let second = snaps.store("a", "win_1", renamed, 0, false);
        assert_eq!(first.id, second.id, "names do not change the structure");
        let token = second.token(2);
        assert!(snaps.lookup("a", &token, 0).is_ok());
        let mut grown = form_tree();
        grown.nodes[0].child_count += 1;
        let third = snaps.store("a", "win_1", grown, 0, false);
        assert_ne!(third.id, second.id);
        assert!(matches!(
            snaps.lookup("a", &token, 0),
            Err(EngineError::StaleElementToken { .. })
        ));
        assert!(snaps.lookup("a", &third.token(2), 0).is_ok());
    }

    #[test]
    fn a_resume_or_another_session_makes_tokens_unusable() {
        let snaps = Snapshots::default();
        let s = snaps.store("a", "win_1", form_tree(), 0, false);
        let token = s.token(1);
        assert!(matches!(
            snaps.lookup("a", &token, 1),
            Err(EngineError::StaleElementToken { .. })
        ));
        assert!(matches!(
            snaps.lookup("b", &token, 0),
            Err(EngineError::StaleElementToken { .. })
        ));
        let again = snaps.store("a", "win_1", form_tree(), 1, false);
        assert_ne!(again.id, s.id, "a resume mints a new id");
        assert!(matches!(
            snaps.lookup("a", &again.token(99), 1),
            Err(EngineError::InvalidArguments { .. })
        ));
        snaps.drop_session("a");
        assert!(snaps.lookup("a", &again.token(1), 1).is_err());
    }

    #[test]
    fn subtrees_are_runs_of_rows() {
        let tree = A11yTree {
            nodes: vec![
                node(Role::Window, "w", &[]),
                node(Role::Panel, "p", &[0]),
                node(Role::Button, "b", &[0, 0]),
                node(Role::Label, "l", &[0, 1]),
                node(Role::Button, "c", &[1]),
            ],
            truncated: false,
        };
        assert_eq!(subtree_ends(&tree), vec![5, 4, 3, 4, 5]);
    }
}
