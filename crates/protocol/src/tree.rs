//! The rows of an accessibility read, shared by the MCP tools
//! (`get_window_state`, `observe {tree}`, act diffs) and the wire op
//! `A11Y_TREE_REQUEST`: one definition for both protocols.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::mcp::Bounds;

/// One element of a window's accessibility tree as a read lists it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ElementRow {
    /// Its row number in the window's snapshot: the same across reads
    /// while the window's structure is unchanged.
    pub element_index: usize,
    /// `<snapshot_id>:<element_index>`: what acts take to name it.
    pub element_token: String,
    /// Normalized role (`button`, `text_field`, `password_text`, `link`,
    /// `image`, …), the same names on every OS.
    pub role: String,
    /// Its accessible name, at most 80 characters (untrusted app text).
    pub label: String,
    /// Its states (`focused`, `checked`, `editable`, …).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub states: Vec<String>,
    /// Bounds in global desktop pixels, when it is on screen.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub frame: Option<Bounds>,
    /// Its value (a field's text, a slider's number), at most 200
    /// characters; never given for a secure field.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value: Option<String>,
    /// The actions it offers (`click`, `activate`, `toggle`, …).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub actions: Vec<String>,
    /// The row of its nearest listed ancestor; absent for the read's root.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parent_index: Option<usize>,
    /// Levels below the read's root (skeleton reads: skeleton levels).
    pub depth: usize,
    /// How many children it has.
    pub child_count: u32,
    /// How many elements lie below it (skeleton reads only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub descendant_count: Option<usize>,
}

/// What changed in a window's tree after an act.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct TreeDiff {
    /// The snapshot the rows below belong to (a new one when the act
    /// changed the structure: older tokens are stale then).
    pub snapshot_id: String,
    /// Elements that appeared.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub added: Vec<ElementRow>,
    /// Tokens of the elements that went away (of the snapshot before).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub removed: Vec<String>,
    /// Elements whose label, states, value or bounds changed, as they are
    /// now.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub changed: Vec<ElementRow>,
    /// Rows were left out of the lists above to keep the diff short.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub truncated: bool,
    /// Milliseconds waited for the tree to stop changing.
    pub settle_ms: f64,
}
