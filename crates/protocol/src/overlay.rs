//! The JSON lines between the daemon and its indicator process
//! (`deskhand-overlay`): commands on the overlay's stdin, events on its
//! stdout. Both sides use these types; nothing builds or reads the lines
//! by hand.

use serde::{Deserialize, Serialize};

use crate::geometry::Rect;

/// A command from the daemon.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "cmd", rename_all = "snake_case")]
pub enum Command {
    /// Show the frame round these monitors (global desktop pixels; the
    /// label goes on the first), paused or not.
    Show {
        /// Monitor rectangles.
        monitors: Vec<Rect>,
        /// Come up in the paused look, with the Continue button.
        #[serde(default)]
        paused: bool,
    },
    /// The person took over: dimmed frame, other label, Continue button.
    Pause,
    /// Back to the active look.
    Resume,
    /// Take the indicator down.
    Hide,
    /// Take it down and exit.
    Quit,
}

/// An event from the overlay.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum Event {
    /// The overlay process is up.
    Ready,
    /// Every window is mapped: their X ids and the rectangles they cover
    /// (global), which captures must fill from the windows beneath.
    Shown {
        /// X window ids.
        windows: Vec<u32>,
        /// Covered rectangles.
        rects: Vec<Rect>,
    },
    /// The look changed (paused or active); the covered rectangles with it.
    Changed {
        /// Paused look.
        paused: bool,
        /// Covered rectangles.
        rects: Vec<Rect>,
    },
    /// Every window is unmapped.
    Hidden,
    /// A left click (press and release) on Continue.
    ContinueClicked,
    /// A left click on "Stop agents".
    StopClicked,
    /// The indicator went away without being told to.
    Lost {
        /// `unmapped`, `destroyed` or `display_closed`.
        reason: String,
    },
    /// A command could not be carried out.
    Error {
        /// What went wrong.
        message: String,
    },
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commands_parse() {
        let c: Command = serde_json::from_str(
            r#"{"cmd":"show","monitors":[{"x":0,"y":0,"width":800,"height":600}]}"#,
        )
        .expect("show");
        assert_eq!(
            c,
            Command::Show {
                monitors: vec![Rect::new(0, 0, 800, 600)],
                paused: false
            }
        );
        let p: Command = serde_json::from_str(r#"{"cmd":"pause"}"#).expect("pause");
        assert_eq!(p, Command::Pause);
        assert!(serde_json::from_str::<Command>(r#"{"cmd":"dance"}"#).is_err());
        let back: Command =
            serde_json::from_str(&serde_json::to_string(&c).expect("json")).expect("round trip");
        assert_eq!(back, c);
    }

    #[test]
    fn events_carry_their_tag_both_ways() {
        let lost = Event::Lost {
            reason: "unmapped".into(),
        };
        let e = serde_json::to_string(&lost).expect("json");
        assert_eq!(e, r#"{"event":"lost","reason":"unmapped"}"#);
        assert_eq!(serde_json::from_str::<Event>(&e).expect("parse"), lost);
        let shown: Event = serde_json::from_str(
            r#"{"event":"shown","windows":[7],"rects":[{"x":-5,"y":0,"width":6,"height":9}]}"#,
        )
        .expect("shown");
        assert_eq!(
            shown,
            Event::Shown {
                windows: vec![7],
                rects: vec![Rect::new(-5, 0, 6, 9)]
            }
        );
    }
}
