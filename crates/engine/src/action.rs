//! Validated input actions: what every protocol adapter translates its own
//! verbs into. Coordinates are global desktop pixels.

use std::time::Duration;

use crate::backend::{Button, ScrollDirection};
use crate::geometry::Point;
use crate::keys::Key;

/// Longest `wait` and `hold_key` the engine performs.
pub const MAX_WAIT: Duration = Duration::from_millis(5000);

/// Most keys of a chord, or wheel steps, in a brief action
/// ([`Action::is_brief`]).
const BRIEF_MAX_EVENTS: usize = 8;

/// One input action.
#[derive(Debug, Clone, PartialEq)]
pub enum Action {
    /// Move the pointer.
    MoveTo(Point),
    /// Move the pointer there over `duration`, in steps of at most 10 ms
    /// (each step checks whether the person took over).
    Glide {
        /// Where to.
        to: Point,
        /// How long (≤ [`MAX_WAIT`]).
        duration: Duration,
    },
    /// Click `count` times (1 single, 2 double, 3 triple), optionally
    /// moving first, holding `modifiers`.
    Click {
        /// Where to click; the current position when absent.
        at: Option<Point>,
        /// Which button.
        button: Button,
        /// 1..=3.
        count: u8,
        /// Held during the click.
        modifiers: Vec<Key>,
    },
    /// Press a button and keep it held.
    ButtonDown {
        /// Where to press; the current position when absent.
        at: Option<Point>,
        /// Which button.
        button: Button,
    },
    /// Release a held button.
    ButtonUp {
        /// Where to release; the current position when absent.
        at: Option<Point>,
        /// Which button.
        button: Button,
    },
    /// Press at the first point, move through the others, release at the last.
    Drag {
        /// At least two points.
        path: Vec<Point>,
        /// Which button.
        button: Button,
        /// Held during the drag.
        modifiers: Vec<Key>,
    },
    /// Turn the wheel.
    Scroll {
        /// Where to scroll; the current position when absent.
        at: Option<Point>,
        /// Which way.
        direction: ScrollDirection,
        /// Wheel steps.
        amount: u32,
        /// Held during the scroll.
        modifiers: Vec<Key>,
    },
    /// Press and release a chord.
    Key {
        /// Keys in press order.
        keys: Vec<Key>,
    },
    /// Press a chord, hold it, release it.
    HoldKey {
        /// Keys in press order.
        keys: Vec<Key>,
        /// How long to hold (≤ [`MAX_WAIT`]).
        duration: Duration,
    },
    /// Type text.
    Type {
        /// The text; never logged.
        text: String,
    },
    /// Type text by pasting it through the clipboard (`type` with
    /// `paste: true`); shorter than [`crate::clipboard::PASTE_MIN_CHARS`]
    /// it is typed like [`Action::Type`].
    Paste {
        /// The text; never logged.
        text: String,
        /// Put the previous clipboard back afterwards, unless it changed.
        preserve_clipboard: bool,
    },
    /// Do nothing for a while (≤ [`MAX_WAIT`]).
    Wait {
        /// How long.
        duration: Duration,
    },
}

impl Action {
    /// Every coordinate the action touches, for the bounds check.
    pub fn points(&self) -> Vec<Point> {
        match self {
            Action::MoveTo(p) | Action::Glide { to: p, .. } => vec![*p],
            Action::Click { at, .. }
            | Action::ButtonDown { at, .. }
            | Action::ButtonUp { at, .. }
            | Action::Scroll { at, .. } => at.iter().copied().collect(),
            Action::Drag { path, .. } => path.clone(),
            Action::Key { .. }
            | Action::HoldKey { .. }
            | Action::Type { .. }
            | Action::Paste { .. }
            | Action::Wait { .. } => Vec::new(),
        }
    }

    /// Whether the action takes only a few round trips to the display
    /// server, with no sleeping: a move, a single click, a press or release,
    /// a short chord, a few wheel steps. Such an action may run on the
    /// caller's thread when the desktop is idle, without the hop to the
    /// desktop thread and back.
    pub fn is_brief(&self) -> bool {
        match self {
            Action::MoveTo(_) | Action::ButtonDown { .. } | Action::ButtonUp { .. } => true,
            Action::Click { count, .. } => *count <= 1,
            Action::Key { keys } => keys.len() <= BRIEF_MAX_EVENTS,
            Action::Scroll { amount, .. } => *amount as usize <= BRIEF_MAX_EVENTS,
            Action::Glide { .. }
            | Action::Drag { .. }
            | Action::HoldKey { .. }
            | Action::Type { .. }
            | Action::Paste { .. }
            | Action::Wait { .. } => false,
        }
    }

    /// Whether the first thing the action sends is a pointer move (the
    /// hand-back check can then be made by the move itself).
    pub fn starts_with_move(&self) -> bool {
        match self {
            Action::MoveTo(_) | Action::Glide { .. } | Action::Drag { .. } => true,
            Action::Click { at, .. }
            | Action::ButtonDown { at, .. }
            | Action::ButtonUp { at, .. }
            | Action::Scroll { at, .. } => at.is_some(),
            Action::Key { .. }
            | Action::HoldKey { .. }
            | Action::Type { .. }
            | Action::Paste { .. }
            | Action::Wait { .. } => false,
        }
    }

    /// Whether the action sends synthetic input (all but `Wait`).
    pub fn sends_input(&self) -> bool {
        !matches!(self, Action::Wait { .. })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn actions_that_start_with_a_move_are_those_with_a_first_point() {
        let p = Point::new(1, 2);
        let click = |at| Action::Click {
            at,
            button: Button::Left,
            count: 1,
            modifiers: Vec::new(),
        };
        assert!(Action::MoveTo(p).starts_with_move());
        assert!(click(Some(p)).starts_with_move());
        assert!(
            !click(None).starts_with_move(),
            "a click where the pointer is"
        );
        assert!(
            !Action::Key {
                keys: vec![Key::Return]
            }
            .starts_with_move()
        );
        assert!(!Action::Type { text: "x".into() }.starts_with_move());
    }
}
