//! What a read lists of a snapshot: full reads of a region (the window,
//! or an element and what lies below it), skeleton reads (containers and
//! landmarks only, driver contract §3), each row's fields and text line.

use deskhand_protocol::mcp::Bounds;
use deskhand_protocol::tree::ElementRow;

use super::snapshots::Snapshot;
use crate::accessibility::{A11yNode, Role, State};
use crate::geometry::Rect;

/// Rows of a full read by default, and levels below its root.
pub const DEFAULT_ROWS: usize = 250;
/// Levels below the root of a full read by default.
pub const DEFAULT_DEPTH: usize = 25;
/// Rows of a skeleton read by default.
pub const SKELETON_ROWS: usize = 60;
/// The most rows a skeleton read lists.
pub const SKELETON_MAX_ROWS: usize = 200;
/// Skeleton levels by default.
pub const SKELETON_DEPTH: usize = 8;
/// Longest label, in characters.
const LABEL_CHARS: usize = 80;
/// Longest value, in characters.
const VALUE_CHARS: usize = 200;

/// Bounds of what one read lists.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RowLimits {
    /// At most this many rows.
    pub max_elements: usize,
    /// At most this many levels below the root.
    pub max_depth: usize,
}

/// The rows listed, and whether some were left out.
pub(crate) struct Listed {
    pub(crate) rows: Vec<ElementRow>,
    pub(crate) truncated: bool,
}

/// States every visible element has: left out of rows to keep them short.
fn is_noise(s: State) -> bool {
    matches!(
        s,
        State::Visible | State::Showing | State::Enabled | State::Sensitive | State::Focusable
    )
}

/// `text` cut to `max` characters.
fn cut(text: &str, max: usize) -> String {
    text.chars().take(max).collect()
}

/// A rectangle as the protocol sends it.
pub(crate) fn bounds(r: Rect) -> Bounds {
    Bounds {
        x: r.x,
        y: r.y,
        width: r.width,
        height: r.height,
    }
}

/// Row `index` of `s`, as listed under `parent_index` at `depth`.
pub(crate) fn row(
    s: &Snapshot,
    index: usize,
    parent_index: Option<usize>,
    depth: usize,
    descendant_count: Option<usize>,
) -> ElementRow {
    let n = &s.tree.nodes[index];
    let mut states: Vec<String> = n
        .states
        .iter()
        .filter(|s| !is_noise(**s))
        .map(|s| s.name().to_owned())
        .collect();
    if !n.has(State::Enabled) && !n.has(State::Sensitive) {
        states.push("disabled".into());
    }
    let label = if n.name.is_empty() {
        &n.description
    } else {
        &n.name
    };
    ElementRow {
        element_index: index,
        element_token: s.token(index),
        role: n.role.name().to_owned(),
        label: cut(label, LABEL_CHARS),
        states,
        frame: n.bounds.map(bounds),
        value: n
            .value
            .as_deref()
            .filter(|_| !n.is_secure())
            .map(|v| cut(v, VALUE_CHARS)),
        actions: n.actions.clone(),
        parent_index,
        depth,
        child_count: n.child_count,
        descendant_count,
    }
}

/// A full read of row `root` and what lies below it.
pub(crate) fn region(s: &Snapshot, root: usize, limits: RowLimits) -> Listed {
    let base = s.tree.nodes[root].path.depth();
    let mut listed = Listed {
        rows: Vec::new(),
        truncated: s.tree.truncated,
    };
    for i in root..s.subtree_end[root] {
        let depth = s.tree.nodes[i].path.depth() - base;
        if depth > limits.max_depth {
            listed.truncated = true;
            continue;
        }
        if listed.rows.len() >= limits.max_elements {
            listed.truncated = true;
            break;
        }
        let parent = (i != root).then(|| s.tree.nodes[i].parent).flatten();
        listed.rows.push(row(s, i, parent, depth, None));
    }
    listed
}

/// Roles that make a landmark of an element with children.
fn is_landmark(role: &Role) -> bool {
    match role {
        Role::ToolBar
        | Role::MenuBar
        | Role::StatusBar
        | Role::TabList
        | Role::List
        | Role::Tree
        | Role::Table
        | Role::Document
        | Role::ScrollPane
        | Role::Dialog => true,
        Role::Other(raw) => matches!(
            raw.as_str(),
            "split_pane"
                | "landmark"
                | "navigation"
                | "form"
                | "article"
                | "header"
                | "footer"
                | "info_bar"
                | "notification"
        ),
        _ => false,
    }
}

/// Roles of generic containers: listed when they have children and a name.
fn is_container(role: &Role) -> bool {
    match role {
        Role::Panel | Role::Tab => true,
        Role::Other(raw) => matches!(
            raw.as_str(),
            "section" | "grouping" | "group" | "layered_pane" | "internal_frame" | "viewport"
        ),
        _ => false,
    }
}

/// Whether a skeleton read lists the element.
fn in_skeleton(n: &A11yNode, is_root: bool) -> bool {
    if is_root {
        return true;
    }
    !n.is_secure()
        && n.child_count > 0
        && (is_landmark(&n.role) || (is_container(&n.role) && !n.name.is_empty()))
}

/// A skeleton read of the whole window: the window, its landmarks and
/// named containers, each under its nearest listed ancestor.
pub(crate) fn skeleton(s: &Snapshot, limits: RowLimits) -> Listed {
    let nodes = &s.tree.nodes;
    // For each element: its nearest listed ancestor-or-self and that one's
    // skeleton depth.
    let mut nearest: Vec<Option<(usize, usize)>> = vec![None; nodes.len()];
    let mut listed = Listed {
        rows: Vec::new(),
        truncated: s.tree.truncated,
    };
    for (i, n) in nodes.iter().enumerate() {
        let above = n.parent.and_then(|p| nearest[p]);
        if !in_skeleton(n, i == 0) {
            nearest[i] = above;
            continue;
        }
        let depth = above.map_or(0, |(_, d)| d + 1);
        nearest[i] = Some((i, depth));
        if depth > limits.max_depth {
            listed.truncated = true;
            continue;
        }
        if listed.rows.len() >= limits.max_elements {
            listed.truncated = true;
            break;
        }
        let parent = above.map(|(p, _)| p);
        listed
            .rows
            .push(row(s, i, parent, depth, Some(s.descendants(i))));
    }
    listed
}

/// One text line per row: `[N] role "label"`, then the value, states and
/// bounds of a full read, or the counts of a skeleton read; indented by
/// depth.
pub(crate) fn text_lines(rows: &[ElementRow]) -> String {
    let mut out = String::new();
    for r in rows {
        let label = serde_json::to_string(&r.label).unwrap_or_default();
        out.push_str(&"  ".repeat(r.depth.min(40)));
        out.push_str(&format!("[{}] {} {label}", r.element_index, r.role));
        match r.descendant_count {
            Some(d) => out.push_str(&format!(" children={} descendants={d}", r.child_count)),
            None => {
                if let Some(v) = &r.value {
                    let v = serde_json::to_string(v).unwrap_or_default();
                    out.push_str(&format!(" value={v}"));
                }
                if !r.states.is_empty() {
                    out.push_str(&format!(" ({})", r.states.join(", ")));
                }
                if let Some(f) = &r.frame {
                    out.push_str(&format!(" @{},{} {}x{}", f.x, f.y, f.width, f.height));
                }
            }
        }
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::elements::snapshots::Snapshots;
    use crate::elements::test_tree::form_tree;

    const ALL: RowLimits = RowLimits {
        max_elements: 100,
        max_depth: 100,
    };

    #[test]
    fn a_full_read_lists_every_row_with_tokens_and_no_secret() {
        let s = Snapshots::default().store("a", "win_1", form_tree(), 0, false);
        let listed = region(&s, 0, ALL);
        assert_eq!(listed.rows.len(), 8);
        assert!(!listed.truncated);
        let entry = &listed.rows[3];
        assert_eq!(entry.element_token, format!("{}:3", s.id));
        assert_eq!(
            (entry.role.as_str(), entry.label.as_str()),
            ("text_field", "Name")
        );
        assert_eq!(entry.value.as_deref(), Some("Ada"));
        assert_eq!(entry.states, ["editable"]);
        assert_eq!((entry.parent_index, entry.depth), (Some(1), 2));
        let password = &listed.rows[4];
        assert_eq!(password.role, "password_text");
        assert_eq!(password.value, None);
        let text = text_lines(&listed.rows);
        assert!(
            text.contains("    [3] text_field \"Name\" value=\"Ada\" (editable) @200,120 200x30")
        );
    }

    #[test]
    fn limits_cut_and_say_so_and_a_region_starts_at_its_root() {
        let s = Snapshots::default().store("a", "win_1", form_tree(), 0, false);
        let few = region(
            &s,
            0,
            RowLimits {
                max_elements: 3,
                max_depth: 100,
            },
        );
        assert_eq!((few.rows.len(), few.truncated), (3, true));
        let shallow = region(
            &s,
            0,
            RowLimits {
                max_elements: 100,
                max_depth: 1,
            },
        );
        assert_eq!(shallow.rows.len(), 3);
        assert!(shallow.truncated);
        let tools = region(&s, 6, ALL);
        let names: Vec<_> = tools.rows.iter().map(|r| r.label.as_str()).collect();
        assert_eq!(names, ["tools", "Open"]);
        assert_eq!((tools.rows[0].parent_index, tools.rows[0].depth), (None, 0));
        assert_eq!(tools.rows[1].depth, 1);
    }

    #[test]
    fn a_skeleton_lists_the_window_landmarks_and_named_containers() {
        let mut tree = form_tree();
        let s = Snapshots::default().store("a", "win_1", tree.clone(), 0, false);
        let listed = skeleton(&s, ALL);
        let rows: Vec<_> = listed
            .rows
            .iter()
            .map(|r| (r.element_index, r.depth))
            .collect();
        // The unnamed panel is left out; the tool bar is a landmark.
        assert_eq!(rows, [(0, 0), (6, 1)]);
        assert_eq!(listed.rows[1].parent_index, Some(0));
        assert_eq!(listed.rows[0].descendant_count, Some(7));
        assert!(
            text_lines(&listed.rows).contains("[6] tool_bar \"tools\" children=1 descendants=1")
        );
        tree.nodes[1].name = "fields".into();
        let s = Snapshots::default().store("a", "win_1", tree, 0, false);
        let rows: Vec<_> = skeleton(&s, ALL)
            .rows
            .iter()
            .map(|r| r.element_index)
            .collect();
        assert_eq!(rows, [0, 1, 6]);
        let cut = skeleton(
            &s,
            RowLimits {
                max_elements: 2,
                max_depth: 5,
            },
        );
        assert!(cut.truncated);
        assert_eq!(cut.rows.len(), 2);
    }
}
