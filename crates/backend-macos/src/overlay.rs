//! The red frame's plain parts on macOS: what the backend tells the
//! overlay process of the displays (it places its windows in points,
//! while the engine's monitors are pixels), and what the frame check
//! decides from what `CGWindowListCopyWindowInfo` says of the overlay's
//! windows. Another process's windows cannot be moved back from here, so
//! a frame another program changed stops the act rather than being put
//! back.

use deskhand_backend::Rect;

use crate::layout::{Layout, PointRect};
use crate::window_list::WindowInfo;

pub use deskhand_protocol::overlay::DISPLAYS_ENV;

/// `NSScreenSaverWindowLevel`, the overlay's window level.
pub const OVERLAY_LEVEL: i64 = 1000;

/// How far a window's bounds may be off, in points (they are whole
/// points in practice).
const SLACK: f64 = 0.5;

/// The value of [`DISPLAYS_ENV`] for `layout`.
pub fn displays_env(layout: &Layout) -> String {
    deskhand_protocol::overlay::encode_displays(&layout.placements())
}

/// The bounds in points each overlay window must have: monitor `i`'s
/// display; `None` when a monitor is no longer a display.
pub fn wanted_bounds(layout: &Layout, monitors: &[Rect]) -> Option<Vec<PointRect>> {
    monitors.iter().map(|m| layout.bounds_of(*m)).collect()
}

/// What the check found of the frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// Every window on screen, in place, opaque, at its level.
    Intact,
    /// A window is off screen or gone: the frame is not there.
    Gone,
    /// Another program changed a window (`moved`, `resized`, `faded`,
    /// `lowered`); it cannot be put back from the backend.
    Changed(&'static str),
}

fn near(a: f64, b: f64) -> bool {
    (a - b).abs() <= SLACK
}

/// The first change of window `seen` against `want`, if any.
fn change(seen: &WindowInfo, want: &PointRect) -> Option<&'static str> {
    let b = seen.bounds?;
    if !near(b.width, want.width) || !near(b.height, want.height) {
        Some("resized")
    } else if !near(b.x, want.x) || !near(b.y, want.y) {
        Some("moved")
    } else if seen.alpha < 1.0 {
        Some("faded")
    } else if seen.layer < OVERLAY_LEVEL {
        Some("lowered")
    } else {
        None
    }
}

/// The frame check: window `i` as the list says it (`None`: not in the
/// list) against `wanted[i]`.
pub fn verdict(seen: &[Option<WindowInfo>], wanted: &[PointRect]) -> Verdict {
    if seen.len() != wanted.len() {
        return Verdict::Gone;
    }
    let mut found = Verdict::Intact;
    for (s, want) in seen.iter().zip(wanted) {
        let Some(s) = s.as_ref().filter(|s| s.on_screen && s.bounds.is_some()) else {
            return Verdict::Gone;
        };
        if let (Some(what), Verdict::Intact) = (change(s, want), found) {
            found = Verdict::Changed(what);
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::layout::Display;

    fn display(id: u32, main: bool, bounds: PointRect, scale: f64) -> Display {
        Display {
            id,
            name: format!("display-{id}"),
            main,
            bounds,
            scale,
        }
    }

    fn points(x: f64, y: f64, width: f64, height: f64) -> PointRect {
        PointRect {
            x,
            y,
            width,
            height,
        }
    }

    /// A Retina laptop with a 1× display on its right (the overlay's
    /// tests read this same value).
    fn pair() -> Layout {
        Layout::new(vec![
            display(1, true, points(0.0, 0.0, 1440.0, 900.0), 2.0),
            display(2, false, points(1440.0, 0.0, 1920.0, 1080.0), 1.0),
        ])
    }

    fn window(bounds: PointRect) -> WindowInfo {
        WindowInfo {
            number: 7,
            layer: OVERLAY_LEVEL,
            bounds: Some(bounds),
            alpha: 1.0,
            on_screen: true,
            owner_pid: Some(99),
            owner_name: "deskhand-overlay".into(),
            title: String::new(),
        }
    }

    #[test]
    fn the_overlay_gets_each_displays_pixels_and_points() {
        assert_eq!(
            displays_env(&pair()),
            "0,0,2880,1800@0,0,1440,900;2880,0,1920,1080@1440,0,1920,1080"
        );
        assert_eq!(displays_env(&Layout::new(Vec::new())), "");
        let half = Layout::new(vec![display(1, true, points(0.0, 0.0, 1512.5, 982.0), 2.0)]);
        assert_eq!(displays_env(&half), "0,0,3025,1964@0,0,1512.5,982");
    }

    #[test]
    fn monitors_are_found_as_displays_or_not_at_all() {
        let l = pair();
        let both = [Rect::new(0, 0, 2880, 1800), Rect::new(2880, 0, 1920, 1080)];
        let wanted = wanted_bounds(&l, &both).expect("both displays");
        assert_eq!(wanted[1], points(1440.0, 0.0, 1920.0, 1080.0));
        assert_eq!(wanted_bounds(&l, &[Rect::new(0, 0, 1440, 900)]), None);
    }

    #[test]
    fn a_frame_in_place_is_intact_and_a_missing_one_is_gone() {
        let want = [points(0.0, 0.0, 1440.0, 900.0)];
        assert_eq!(verdict(&[Some(window(want[0]))], &want), Verdict::Intact);
        assert_eq!(verdict(&[None], &want), Verdict::Gone);
        assert_eq!(verdict(&[], &want), Verdict::Gone, "a window missing");
        let mut hidden = window(want[0]);
        hidden.on_screen = false;
        assert_eq!(verdict(&[Some(hidden)], &want), Verdict::Gone);
    }

    #[test]
    fn moved_resized_faded_and_lowered_frames_are_named() {
        let want = [points(0.0, 0.0, 1440.0, 900.0)];
        let check = |w: WindowInfo| verdict(&[Some(w)], &want);
        assert_eq!(
            check(window(points(3.0, 0.0, 1440.0, 900.0))),
            Verdict::Changed("moved")
        );
        assert_eq!(
            check(window(points(0.0, 0.0, 700.0, 900.0))),
            Verdict::Changed("resized")
        );
        assert_eq!(
            check(window(points(0.2, 0.0, 1440.0, 900.0))),
            Verdict::Intact,
            "within half a point"
        );
        let mut faded = window(want[0]);
        faded.alpha = 0.3;
        assert_eq!(check(faded), Verdict::Changed("faded"));
        let mut lowered = window(want[0]);
        lowered.layer = 0;
        assert_eq!(check(lowered), Verdict::Changed("lowered"));
    }
}
