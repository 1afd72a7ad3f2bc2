//! Accessibility reads and element acts for every protocol: a window's
//! tree is read whole (5,000 elements, depth 200) into a snapshot of the
//! session, and reads list parts of it (a region, or a skeleton); acts
//! name an element by its token, are done through the element's own
//! action or text interface (no pointer, no keys, no focus change), and
//! return what changed in the tree once it settled.

mod acts;
mod bus;
mod diff;
mod marks;
mod rows;
mod snapshots;
#[cfg(test)]
mod test_tree;

use std::sync::Arc;
use std::time::Instant;

use deskhand_protocol::tree::ElementRow;
use serde_json::json;

pub use acts::{ActPath, ElementAct, ElementOutcome, Readback};
pub(crate) use bus::BusWatch;
pub use marks::{ElementMark, MarkSet};
pub use rows::{
    DEFAULT_DEPTH, DEFAULT_ROWS, RowLimits, SKELETON_DEPTH, SKELETON_MAX_ROWS, SKELETON_ROWS,
};
pub(crate) use snapshots::{Snapshot, Snapshots};

use crate::accessibility::{A11yTree, Accessibility, BusStatus, TreeLimits, WindowRef};
use crate::backend::BackendError;
use crate::error::EngineError;
use crate::geometry::Rect;
use crate::{Engine, ListedWindow, Session};

/// The most rows a full read lists, whatever it asks for.
const MAX_ROWS: usize = 5000;
/// The most levels a read goes down.
const MAX_DEPTH: usize = 200;

/// Which part of a window a read lists.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TreeKind {
    /// The whole window, from its root.
    Full,
    /// Containers and landmarks only.
    Skeleton,
    /// The element a token names and what lies below it.
    Below(String),
}

/// A read: which part, and at most how much of it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TreeQuery {
    /// Which part.
    pub kind: TreeKind,
    /// At most this many rows (the kind's default when `None`).
    pub max_elements: Option<usize>,
    /// At most this many levels below the root (the kind's default when
    /// `None`).
    pub max_depth: Option<usize>,
}

impl TreeQuery {
    /// A default full read of the whole window.
    pub fn full() -> Self {
        Self {
            kind: TreeKind::Full,
            max_elements: None,
            max_depth: None,
        }
    }

    /// The limits in force: the kind's defaults, capped.
    fn limits(&self) -> RowLimits {
        let (rows, depth, cap) = match self.kind {
            TreeKind::Skeleton => (SKELETON_ROWS, SKELETON_DEPTH, SKELETON_MAX_ROWS),
            _ => (DEFAULT_ROWS, DEFAULT_DEPTH, MAX_ROWS),
        };
        RowLimits {
            max_elements: self.max_elements.unwrap_or(rows).clamp(1, cap),
            max_depth: self.max_depth.unwrap_or(depth).min(MAX_DEPTH),
        }
    }
}

/// What a read lists.
#[derive(Debug, Clone, PartialEq)]
pub struct TreeView {
    /// The snapshot its tokens belong to.
    pub snapshot_id: String,
    /// The rows, in document order.
    pub rows: Vec<ElementRow>,
    /// One text line per row.
    pub text: String,
    /// Rows were left out to stay within the limits.
    pub truncated: bool,
    /// How many elements the whole window has (as read internally).
    pub window_elements: usize,
    /// The bounds of the window's secure fields, to black out of its
    /// screenshot.
    pub secure_bounds: Vec<Rect>,
}

impl Engine {
    /// The accessibility backend, when there is one.
    fn a11y(&self) -> Result<Arc<dyn Accessibility>, EngineError> {
        self.accessibility.clone().ok_or(EngineError::NotSupported {
            feature: "a11y.tree",
        })
    }

    /// Whether accessibility trees can be read now (the bus answers). It
    /// may wait for the bus a few seconds: call it off the hot path.
    pub async fn accessibility_status(&self) -> Option<BusStatus> {
        let a11y = self.accessibility.clone()?;
        tokio::task::spawn_blocking(move || a11y.bus_status())
            .await
            .ok()
    }

    /// Whether accessibility trees can be read, as last checked (without
    /// waiting: the check runs in the background at start, again when the
    /// answer is 30 s old (5 s while the bus did not answer), and after a
    /// read failed with a bus error). What HELLO's `a11y.tree` follows.
    pub fn accessibility_ready(&self) -> bool {
        self.bus.ready()
    }

    /// Reads `window`'s tree into `session`'s snapshot of it and lists
    /// what `query` asks for.
    pub async fn read_tree(
        &self,
        session: &Session,
        window: &ListedWindow,
        query: TreeQuery,
    ) -> Result<TreeView, EngineError> {
        let started = Instant::now();
        let result = self.read_tree_inner(session, window, &query).await;
        let target = json!({
            "window_id": window.handle,
            "kind": match query.kind { TreeKind::Full => "full", TreeKind::Skeleton => "skeleton", TreeKind::Below(_) => "region" },
            "rows": result.as_ref().map_or(0, |v| v.rows.len()),
        });
        self.record(
            session,
            "a11y.read",
            target,
            result.as_ref().map(|_| ()),
            started,
        );
        result
    }

    async fn read_tree_inner(
        &self,
        session: &Session,
        window: &ListedWindow,
        query: &TreeQuery,
    ) -> Result<TreeView, EngineError> {
        let limits = query.limits();
        let snapshot = match query.kind {
            TreeKind::Skeleton => self.skeleton_snapshot(session, window, limits).await?,
            _ => self.snapshot_window(session, window).await?,
        };
        let root = match &query.kind {
            TreeKind::Below(token) => self.root_in(session, &snapshot, token)?,
            _ => 0,
        };
        let listed = match query.kind {
            TreeKind::Skeleton => rows::skeleton(&snapshot, limits),
            _ => rows::region(&snapshot, root, limits),
        };
        Ok(TreeView {
            snapshot_id: snapshot.id.clone(),
            text: rows::text_lines(&listed.rows),
            rows: listed.rows,
            truncated: listed.truncated,
            window_elements: snapshot.tree.nodes.len(),
            secure_bounds: marks::secure_bounds(&snapshot, window.window.rect),
        })
    }

    /// The row a drill-down token names in the fresh `snapshot` of its
    /// window: stale when the read found another structure.
    fn root_in(
        &self,
        session: &Session,
        snapshot: &Snapshot,
        token: &str,
    ) -> Result<usize, EngineError> {
        let (named, index) = self
            .snapshots
            .lookup(&session.id, token, self.takeovers.resumes())?;
        if named.window != snapshot.window {
            return Err(EngineError::invalid(
                "root",
                "the token belongs to another window than the one read",
            ));
        }
        Ok(index)
    }

    /// The secure fields' bounds known from `session`'s latest read of
    /// `window` (none when it read none), to black out of its screenshots
    /// without reading the tree again.
    pub fn known_secure_bounds(&self, session: &Session, window: &ListedWindow) -> Vec<Rect> {
        self.snapshots
            .latest(&session.id, &window.handle)
            .map(|s| marks::secure_bounds(&s, window.window.rect))
            .unwrap_or_default()
    }

    /// Reads `window` whole and stores it as `session`'s snapshot of it.
    pub(crate) async fn snapshot_window(
        &self,
        session: &Session,
        window: &ListedWindow,
    ) -> Result<Arc<Snapshot>, EngineError> {
        let tree = self.read_whole(window_ref(window)?).await?;
        Ok(self.snapshots.store(
            &session.id,
            &window.handle,
            tree,
            self.takeovers.resumes(),
            false,
        ))
    }

    /// A skeleton read's snapshot: the whole window's structure (about half
    /// the calls of a full read), then in full only the rows the skeleton
    /// lists and the secure fields (to black out).
    async fn skeleton_snapshot(
        &self,
        session: &Session,
        window: &ListedWindow,
        limits: RowLimits,
    ) -> Result<Arc<Snapshot>, EngineError> {
        let wref = window_ref(window)?;
        let structure = TreeLimits {
            structure_only: true,
            ..TreeLimits::default()
        };
        let probe = Snapshot::detached(self.read_whole_with(wref.clone(), structure).await?);
        let mut wanted: Vec<usize> = rows::skeleton(&probe, limits)
            .rows
            .iter()
            .map(|r| r.element_index)
            .collect();
        let nodes = &probe.tree.nodes;
        wanted.extend((0..nodes.len()).filter(|&i| nodes[i].is_secure()));
        let paths: Vec<_> = wanted.iter().map(|&i| nodes[i].path.clone()).collect();
        let a11y = self.a11y()?;
        let details = tokio::task::spawn_blocking(move || {
            a11y.read_nodes(&wref, &paths, &TreeLimits::default())
        })
        .await
        .map_err(|_| EngineError::ShuttingDown)??;
        let mut tree = probe.tree;
        for (i, read) in wanted.into_iter().zip(details) {
            let node = &mut tree.nodes[i];
            if let Some(read) = read.filter(|r| r.role == node.role) {
                node.states = read.states;
                node.bounds = read.bounds;
                node.actions = read.actions;
                node.value = read.value.filter(|_| !node.is_secure());
            }
        }
        Ok(self.snapshots.store(
            &session.id,
            &window.handle,
            tree,
            self.takeovers.resumes(),
            true,
        ))
    }

    /// The internal read of a window (contract §3: 5,000 elements, depth
    /// 200), off the async threads.
    pub(crate) async fn read_whole(&self, window: WindowRef) -> Result<A11yTree, EngineError> {
        self.read_whole_with(window, TreeLimits::default()).await
    }

    /// A read of a window within `limits`, off the async threads.
    async fn read_whole_with(
        &self,
        window: WindowRef,
        limits: TreeLimits,
    ) -> Result<A11yTree, EngineError> {
        let a11y = self.a11y()?;
        let read = tokio::task::spawn_blocking(move || a11y.read_window_tree(&window, &limits))
            .await
            .map_err(|_| EngineError::ShuttingDown)?;
        match &read {
            Ok(_) => self.bus.bus_answered(),
            Err(BackendError::Unsupported(_)) => self.bus.bus_failed(),
            Err(_) => {}
        }
        // A window whose app offers no accessible root has no tree here:
        // not a stale token, not a wrong argument.
        read.map_err(|e| match e {
            BackendError::Stale(m) => EngineError::Backend(BackendError::Unsupported(m)),
            other => EngineError::Backend(other),
        })
    }
}

/// What the accessibility backend needs to find `window`'s tree.
fn window_ref(window: &ListedWindow) -> Result<WindowRef, EngineError> {
    WindowRef::of(&window.window).ok_or_else(|| {
        EngineError::Backend(BackendError::Unsupported(
            "the window's process is unknown (no _NET_WM_PID): its tree cannot be found".into(),
        ))
    })
}
