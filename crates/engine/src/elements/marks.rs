//! Set-of-mark boxes: the visible interactive elements of a window,
//! numbered, with the part of each box that can be seen (its bounds cut to
//! the window and to every ancestor's bounds, so a row scrolled half out of
//! its list is boxed where it shows), and the secure fields' boxes to
//! black out.

use std::time::Instant;

use serde_json::json;

use super::snapshots::Snapshot;
use crate::accessibility::{A11yNode, Role, State};
use crate::error::EngineError;
use crate::geometry::Rect;
use crate::{Engine, ListedWindow, Session};

/// The most marks on one image.
const MAX_MARKS: usize = 300;

/// One numbered box.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ElementMark {
    /// The number drawn, from 1.
    pub number: u32,
    /// The element's row.
    pub index: usize,
    /// The element's token.
    pub token: String,
    /// Its role's name.
    pub role: String,
    /// Its label, at most 80 characters.
    pub label: String,
    /// The visible part of its box, in global desktop pixels.
    pub rect: Rect,
}

/// The marks of a window and what to black out.
#[derive(Debug, Clone, PartialEq)]
pub struct MarkSet {
    /// The snapshot the marks' tokens belong to.
    pub snapshot_id: String,
    /// The marks, in document order.
    pub marks: Vec<ElementMark>,
    /// The visible parts of the secure fields.
    pub secure_bounds: Vec<Rect>,
}

/// Whether the element is one a person would click or type into.
fn is_interactive(n: &A11yNode) -> bool {
    let by_role = matches!(
        n.role,
        Role::Button
            | Role::ToggleButton
            | Role::CheckBox
            | Role::RadioButton
            | Role::TextField
            | Role::PasswordText
            | Role::SpinButton
            | Role::Slider
            | Role::ComboBox
            | Role::Link
            | Role::ListItem
            | Role::MenuItem
            | Role::Tab
            | Role::TreeItem
    );
    (by_role || !n.actions.is_empty()) && n.has(State::Showing)
}

/// The part of row `index`'s bounds inside `window` and every ancestor's
/// bounds.
fn visible_box(s: &Snapshot, index: usize, window: Rect) -> Option<Rect> {
    visible_part(s, index, s.tree.nodes[index].bounds?, window)
}

/// The part of `bounds` (row `index`'s) inside `window` and every
/// ancestor's bounds.
pub(super) fn visible_part(s: &Snapshot, index: usize, bounds: Rect, window: Rect) -> Option<Rect> {
    let nodes = &s.tree.nodes;
    let mut visible = bounds.intersection(&window)?;
    let mut up = nodes[index].parent;
    while let Some(p) = up {
        if let Some(f) = nodes[p].bounds {
            visible = visible.intersection(&f)?;
        }
        up = nodes[p].parent;
    }
    Some(visible)
}

/// The visible interactive elements of `s`, numbered from 1.
pub(crate) fn marks_of(s: &Snapshot, window: Rect) -> Vec<ElementMark> {
    let mut out = Vec::new();
    for (index, n) in s.tree.nodes.iter().enumerate() {
        if out.len() >= MAX_MARKS {
            break;
        }
        if !is_interactive(n) {
            continue;
        }
        let Some(rect) = visible_box(s, index, window) else {
            continue;
        };
        let row = super::rows::row(s, index, None, 0, None);
        out.push(ElementMark {
            number: u32::try_from(out.len() + 1).unwrap_or(u32::MAX),
            index,
            token: row.element_token,
            role: row.role,
            label: row.label,
            rect,
        });
    }
    out
}

/// The visible parts of `s`'s secure fields.
pub(crate) fn secure_bounds(s: &Snapshot, window: Rect) -> Vec<Rect> {
    // Bounds are blacked out whole, even where an ancestor clips them.
    s.tree
        .nodes
        .iter()
        .filter(|n| n.is_secure())
        .filter_map(|n| n.bounds?.intersection(&window))
        .collect()
}

impl Engine {
    /// Reads `window` into `session`'s snapshot and numbers its visible
    /// interactive elements.
    pub async fn element_marks(
        &self,
        session: &Session,
        window: &ListedWindow,
    ) -> Result<MarkSet, EngineError> {
        let started = Instant::now();
        let result = self
            .snapshot_window(session, window)
            .await
            .map(|s| MarkSet {
                snapshot_id: s.id.clone(),
                marks: marks_of(&s, window.window.rect),
                secure_bounds: secure_bounds(&s, window.window.rect),
            });
        let target = json!({
            "window_id": window.handle,
            "marks": result.as_ref().map_or(0, |m| m.marks.len()),
        });
        self.record(
            session,
            "a11y.marks",
            target,
            result.as_ref().map(|_| ()),
            started,
        );
        result
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::elements::snapshots::Snapshots;
    use crate::elements::test_tree::form_tree;

    #[test]
    fn marks_number_the_visible_interactive_elements_cut_to_what_shows() {
        let s = Snapshots::default().store("a", "w", form_tree(), 0, false);
        let window = Rect::new(100, 100, 400, 300);
        let marks = marks_of(&s, window);
        let rows: Vec<_> = marks.iter().map(|m| (m.number, m.index)).collect();
        assert_eq!(rows, [(1, 3), (2, 4), (3, 5), (4, 7)]);
        assert_eq!(marks[2].token, s.token(5));
        assert_eq!(marks[2].rect, Rect::new(200, 200, 80, 30));
        // The tool bar's button sticks out of the window and its bar.
        assert_eq!(marks[3].rect, Rect::new(480, 360, 20, 30));
        assert_eq!(secure_bounds(&s, window), [Rect::new(200, 160, 200, 30)]);
    }

    #[test]
    fn hidden_or_clipped_away_elements_get_no_mark() {
        let mut tree = form_tree();
        tree.nodes[5].states.retain(|s| *s != State::Showing);
        tree.nodes[7].bounds = Some(Rect::new(600, 360, 60, 30));
        let s = Snapshots::default().store("a", "w", tree, 0, false);
        let marks = marks_of(&s, Rect::new(100, 100, 400, 300));
        let rows: Vec<_> = marks.iter().map(|m| m.index).collect();
        assert_eq!(rows, [3, 4]);
    }
}
