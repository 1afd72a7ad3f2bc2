//! The JSON lines between the daemon and its indicator process
//! (`deskhand-overlay`): commands on the overlay's stdin, events on its
//! stdout. Both sides use these types; nothing builds or reads the lines
//! by hand.

use serde::{Deserialize, Serialize};

use crate::geometry::{PointRect, Rect};

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

/// The variable that picks how a Linux overlay draws: unset, X11 windows;
/// [`LAYER_SHELL`], layer surfaces of a Wayland compositor that offers the
/// wlr layer shell (KDE Plasma, sway and other wlroots desktops).
pub const SURFACE_ENV: &str = "DESKHAND_OVERLAY_SURFACE";

/// [`SURFACE_ENV`]'s value for the wlr layer shell.
pub const LAYER_SHELL: &str = "layer-shell";

/// The variable a macOS overlay reads its displays from: AppKit places
/// windows in points while the engine's monitors are pixels. One display
/// per `;`, `x,y,w,h@x,y,w,h` (desktop pixels, then global points).
pub const DISPLAYS_ENV: &str = "DESKHAND_OVERLAY_DISPLAYS";

/// One display: its rectangle in desktop pixels and in points.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct DisplayPlacement {
    /// Desktop pixels, as the engine's monitor.
    pub pixels: Rect,
    /// Global display points, as AppKit places windows.
    pub points: PointRect,
}

impl DisplayPlacement {
    /// Pixels per point (1 when the rectangles are degenerate).
    pub fn scale(&self) -> f64 {
        if self.points.width > 0.0 && self.pixels.width > 0 {
            f64::from(self.pixels.width) / self.points.width
        } else {
            1.0
        }
    }

    /// `r`, in pixels from the display's top left, in points from there.
    pub fn local_points(&self, r: Rect) -> PointRect {
        let s = self.scale();
        PointRect {
            x: f64::from(r.x) / s,
            y: f64::from(r.y) / s,
            width: f64::from(r.width) / s,
            height: f64::from(r.height) / s,
        }
    }

    /// `r`, in pixels from the display's top left, in global points.
    pub fn global_points(&self, r: Rect) -> PointRect {
        let local = self.local_points(r);
        PointRect {
            x: self.points.x + local.x,
            y: self.points.y + local.y,
            ..local
        }
    }
}

/// The value of [`DISPLAYS_ENV`] for `displays`.
pub fn encode_displays(displays: &[DisplayPlacement]) -> String {
    displays
        .iter()
        .map(|d| {
            let (px, pt) = (d.pixels, d.points);
            format!(
                "{},{},{},{}@{},{},{},{}",
                px.x, px.y, px.width, px.height, pt.x, pt.y, pt.width, pt.height
            )
        })
        .collect::<Vec<_>>()
        .join(";")
}

fn four<T: std::str::FromStr>(text: &str) -> Option<[T; 4]> {
    let mut parts = text.split(',').map(|n| n.trim().parse::<T>().ok());
    let out = [
        parts.next()??,
        parts.next()??,
        parts.next()??,
        parts.next()??,
    ];
    parts.next().is_none().then_some(out)
}

/// The displays in a [`DISPLAYS_ENV`] value; one that does not read is
/// left out.
pub fn parse_displays(text: &str) -> Vec<DisplayPlacement> {
    text.split(';')
        .filter(|s| !s.trim().is_empty())
        .filter_map(|one| {
            let (px, pt) = one.split_once('@')?;
            let [x, y, w, h] = four::<i64>(px)?;
            let pixels = Rect::new(
                i32::try_from(x).ok()?,
                i32::try_from(y).ok()?,
                u32::try_from(w).ok()?,
                u32::try_from(h).ok()?,
            );
            let [x, y, width, height] = four::<f64>(pt)?;
            let points = PointRect {
                x,
                y,
                width,
                height,
            };
            (width > 0.0 && height > 0.0).then_some(DisplayPlacement { pixels, points })
        })
        .collect()
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

    #[test]
    fn the_displays_variable_reads_back_and_a_bad_display_is_left_out() {
        let retina = DisplayPlacement {
            pixels: Rect::new(0, 0, 2880, 1800),
            points: PointRect {
                x: 0.0,
                y: 0.0,
                width: 1440.0,
                height: 900.0,
            },
        };
        let side = DisplayPlacement {
            pixels: Rect::new(2880, 0, 1920, 1080),
            points: PointRect {
                x: 1440.0,
                y: 0.0,
                width: 1920.0,
                height: 1080.0,
            },
        };
        let text = encode_displays(&[retina, side]);
        assert_eq!(
            text,
            "0,0,2880,1800@0,0,1440,900;2880,0,1920,1080@1440,0,1920,1080"
        );
        assert_eq!(parse_displays(&text), vec![retina, side]);
        assert_eq!(parse_displays("1,2,3@4,5,6,7;x;0,0,1,1@0,0,0,1"), vec![]);
        assert_eq!(retina.scale(), 2.0);
        assert_eq!(side.global_points(Rect::new(10, 20, 30, 40)).x, 1450.0);
    }
}
