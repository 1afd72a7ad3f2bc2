//! Accessibility trees on the wire: A11Y_TREE_REQUEST reads a window's
//! tree (whole, its skeleton, or below an element token) through the same
//! engine read and row type as the MCP tools. Like the other window reads
//! of the wire (WINDOW_LIST, SCREENSHOT with a window id) it needs no input
//! consent or takeover; secure fields' values are never listed.

use deskhand_engine::EngineError;
use deskhand_engine::elements::{TreeKind, TreeQuery, TreeView};
use deskhand_protocol::MessageType;
use deskhand_protocol::messages::{A11yTreeRequest, A11yTreeResponse};

use super::{Handler, Reply, to_value};

/// The audit name of the op's refusals (the read itself is `a11y.read`).
const OP: &str = "a11y.tree";

/// The engine's read for `req`, or the field at fault; nothing is read
/// before this passes.
pub(super) fn query(req: &A11yTreeRequest) -> Result<TreeQuery, EngineError> {
    if req.window_id.is_empty() {
        return Err(EngineError::required("window_id"));
    }
    let kind = match (req.skeleton.unwrap_or(false), &req.root) {
        (true, Some(_)) => {
            return Err(EngineError::invalid(
                "root",
                "give skeleton or root, not both",
            ));
        }
        (false, Some(token)) if token.is_empty() => {
            return Err(EngineError::invalid("root", "empty element token"));
        }
        (true, None) => TreeKind::Skeleton,
        (false, Some(token)) => TreeKind::Below(token.clone()),
        (false, None) => TreeKind::Full,
    };
    if req.max_elements == Some(0) {
        return Err(EngineError::invalid("max_elements", "must be at least 1"));
    }
    Ok(TreeQuery {
        kind,
        max_elements: req.max_elements.map(|n| n as usize),
        max_depth: req.max_depth.map(|n| n as usize),
    })
}

/// The response of a read of `window_id`.
fn response(window_id: String, view: TreeView) -> A11yTreeResponse {
    A11yTreeResponse {
        window_id,
        snapshot_id: view.snapshot_id,
        elements: view.rows,
        truncated: view.truncated,
        window_elements: u32::try_from(view.window_elements).unwrap_or(u32::MAX),
    }
}

impl Handler {
    /// A11Y_TREE_REQUEST: checks the arguments, resolves the window and
    /// reads its tree into this session's snapshot of it.
    pub(super) async fn a11y_tree(&self, req: A11yTreeRequest) -> Reply {
        let query = match query(&req) {
            Ok(q) => q,
            Err(e) => return self.refuse(OP, e),
        };
        let engine = &self.state.engine;
        let window = match engine.listed_window(req.window_id).await {
            Ok(w) => w,
            Err(e) => return self.refuse(OP, e),
        };
        match engine.read_tree(&self.session, &window, query).await {
            Ok(view) => Reply::Message(
                MessageType::A11yTreeResponse,
                to_value(&response(window.handle, view)),
            ),
            Err(e) => self.engine_error(&e),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn req(json: &str) -> A11yTreeRequest {
        serde_json::from_str(json).expect("parse")
    }

    fn field_of(r: Result<TreeQuery, EngineError>) -> &'static str {
        match r {
            Err(EngineError::InvalidArguments { field, .. }) => field,
            other => panic!("not invalid arguments: {other:?}"),
        }
    }

    #[test]
    fn bad_arguments_name_their_field() {
        assert_eq!(field_of(query(&req("{}"))), "window_id");
        let both = r#"{"window_id":"w","skeleton":true,"root":"s:1"}"#;
        assert_eq!(field_of(query(&req(both))), "root");
        let zero = r#"{"window_id":"w","max_elements":0}"#;
        assert_eq!(field_of(query(&req(zero))), "max_elements");
    }

    #[test]
    fn kinds_follow_skeleton_and_root() {
        let q = query(&req(r#"{"window_id":"w"}"#)).expect("ok");
        assert_eq!(q, TreeQuery::full());
        let q = query(&req(r#"{"window_id":"w","skeleton":true,"max_depth":2}"#)).expect("ok");
        assert_eq!((q.kind, q.max_depth), (TreeKind::Skeleton, Some(2)));
        let q = query(&req(r#"{"window_id":"w","root":"s:3","max_elements":5}"#)).expect("ok");
        assert_eq!(
            (q.kind, q.max_elements),
            (TreeKind::Below("s:3".into()), Some(5))
        );
    }
}
