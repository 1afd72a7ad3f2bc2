//! What the frame check decides from what Windows says of the overlay's
//! windows: plain functions, so their rules are tested on any OS. Besides
//! place, size and opacity, another program can hide the frame without
//! touching those: a window region that leaves the drawn parts out, a
//! layered colour key, or a window stacked above the frame's edges.

use deskhand_backend::{FrameCheck, Rect};

/// One overlay window as Windows reports it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Seen {
    /// The window exists and is shown.
    pub visible: bool,
    /// Where it is.
    pub rect: Rect,
    /// It has the topmost style.
    pub topmost: bool,
    /// Its layered alpha is below opaque (someone faded it).
    pub faded: bool,
    /// It has a layered colour key (the overlay never sets one: its
    /// colour's pixels would be drawn transparent).
    pub keyed: bool,
    /// Its window region leaves out part of what it draws.
    pub clipped: bool,
    /// A window stacked above it covers part of what it draws.
    pub covered: bool,
}

/// The parts of `r` that `hole` does not cover (at most four).
fn minus(r: Rect, hole: Rect) -> Vec<Rect> {
    let Some(cut) = r.intersection(&hole) else {
        return vec![r];
    };
    let (right, bottom) = (r.right(), r.bottom());
    let (cut_right, cut_bottom) = (cut.right(), cut.bottom());
    let span = |a: i64, b: i64| (b - a).max(0) as u32;
    [
        // above and below the cut, the full width
        Rect::new(r.x, r.y, r.width, span(r.y.into(), cut.y.into())),
        Rect::new(r.x, cut_bottom as i32, r.width, span(cut_bottom, bottom)),
        // left and right of the cut, its height
        Rect::new(r.x, cut.y, span(r.x.into(), cut.x.into()), cut.height),
        Rect::new(cut_right as i32, cut.y, span(cut_right, right), cut.height),
    ]
    .into_iter()
    .filter(|p| p.width > 0 && p.height > 0)
    .collect()
}

/// Whether the window `region` (its rectangles; `None` when the window has
/// no region, so all of it is drawn) leaves out part of `drawn`.
pub fn clipped(drawn: &[Rect], region: Option<&[Rect]>) -> bool {
    let Some(region) = region else {
        return false;
    };
    drawn.iter().any(|&d| {
        let left = region.iter().fold(vec![d], |parts, &r| {
            parts.into_iter().flat_map(|p| minus(p, r)).collect()
        });
        !left.is_empty()
    })
}

/// Whether any of the windows `above` (their rectangles) lies over any of
/// `drawn`.
pub fn covered(drawn: &[Rect], above: &[Rect]) -> bool {
    above
        .iter()
        .any(|a| drawn.iter().any(|d| d.intersection(a).is_some()))
}

/// What the overlay window on `monitor` draws: the parts of `covered` (what
/// the whole frame draws, global) on that monitor, global or moved to the
/// window's own coordinates when `local`.
pub fn drawn_on(monitor: Rect, covered: &[Rect], local: bool) -> Vec<Rect> {
    covered
        .iter()
        .filter_map(|c| c.intersection(&monitor))
        .map(|r| match local {
            true => Rect::new(r.x - monitor.x, r.y - monitor.y, r.width, r.height),
            false => r,
        })
        .collect()
}

/// What the check found and must put back: `None` when the frame is not
/// on screen at all (a window hidden or gone), else the first change
/// found (`resized`, `moved`, `faded`, `keyed`, `reshaped`, `covered`), or
/// intact. A window merely not topmost any more is raised again without
/// refusing the act (an app activated by a click is drawn above it under
/// Wine); one that stacked itself above the drawn frame is `covered`.
pub fn verdict(seen: &[Seen], wanted: &[Rect]) -> Option<FrameCheck> {
    if seen.len() != wanted.len() || seen.iter().any(|s| !s.visible) {
        return None;
    }
    let mut found = FrameCheck::Intact;
    for (s, want) in seen.iter().zip(wanted) {
        let change = if (s.rect.width, s.rect.height) != (want.width, want.height) {
            Some("resized")
        } else if (s.rect.x, s.rect.y) != (want.x, want.y) {
            Some("moved")
        } else if s.faded {
            Some("faded")
        } else if s.keyed {
            Some("keyed")
        } else if s.clipped {
            Some("reshaped")
        } else if s.covered {
            Some("covered")
        } else {
            None
        };
        if let (Some(what), FrameCheck::Intact) = (change, found) {
            found = FrameCheck::Restored(what);
        }
    }
    Some(found)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn seen(x: i32, y: i32, w: u32, h: u32) -> Seen {
        Seen {
            visible: true,
            rect: Rect::new(x, y, w, h),
            topmost: true,
            faded: false,
            keyed: false,
            clipped: false,
            covered: false,
        }
    }

    #[test]
    fn a_frame_in_place_is_intact_and_a_hidden_one_is_not_there() {
        let want = [Rect::new(0, 0, 1280, 800), Rect::new(1280, 0, 1024, 768)];
        let both = [seen(0, 0, 1280, 800), seen(1280, 0, 1024, 768)];
        assert_eq!(verdict(&both, &want), Some(FrameCheck::Intact));
        let mut hidden = both;
        hidden[1].visible = false;
        assert_eq!(verdict(&hidden, &want), None);
        assert_eq!(verdict(&both[..1], &want), None, "a window missing");
    }

    #[test]
    fn moved_resized_and_faded_frames_are_named() {
        let want = [Rect::new(0, 0, 1280, 800)];
        assert_eq!(
            verdict(&[seen(5, 0, 1280, 800)], &want),
            Some(FrameCheck::Restored("moved"))
        );
        assert_eq!(
            verdict(&[seen(0, 0, 640, 800)], &want),
            Some(FrameCheck::Restored("resized"))
        );
        let mut faded = seen(0, 0, 1280, 800);
        faded.faded = true;
        assert_eq!(
            verdict(&[faded], &want),
            Some(FrameCheck::Restored("faded"))
        );
        // Lowered below another window: raised again, not a change the
        // act is refused for (as on X11).
        let mut lowered = seen(0, 0, 1280, 800);
        lowered.topmost = false;
        assert_eq!(verdict(&[lowered], &want), Some(FrameCheck::Intact));
    }

    #[test]
    fn a_colour_key_a_region_and_a_cover_are_named() {
        let want = [Rect::new(0, 0, 1280, 800)];
        for (what, set) in [
            ("keyed", (|s: &mut Seen| s.keyed = true) as fn(&mut Seen)),
            ("reshaped", |s: &mut Seen| s.clipped = true),
            ("covered", |s: &mut Seen| s.covered = true),
        ] {
            let mut s = seen(0, 0, 1280, 800);
            set(&mut s);
            assert_eq!(
                verdict(&[s], &want),
                Some(FrameCheck::Restored(what)),
                "{what}"
            );
        }
    }

    /// The frame's parts on a 1280x800 monitor: four edges and the label.
    fn parts() -> Vec<Rect> {
        vec![
            Rect::new(0, 0, 1280, 6),
            Rect::new(0, 794, 1280, 6),
            Rect::new(0, 6, 6, 788),
            Rect::new(1274, 6, 6, 788),
            Rect::new(440, 6, 400, 32),
        ]
    }

    #[test]
    fn a_region_that_leaves_out_any_drawn_part_clips_the_frame() {
        let drawn = parts();
        // What the overlay sets: exactly its parts; no region at all draws
        // the whole window.
        assert!(!clipped(&drawn, Some(&drawn)));
        assert!(!clipped(&drawn, None));
        assert!(!clipped(&drawn, Some(&[Rect::new(0, 0, 1280, 800)])));
        // Another program's empty region hides everything.
        assert!(clipped(&drawn, Some(&[])));
        // One edge left out, or one pixel of it.
        assert!(clipped(&drawn, Some(&drawn[..4])));
        let mut nibbled = drawn.clone();
        nibbled[0] = Rect::new(1, 0, 1279, 6);
        assert!(clipped(&drawn, Some(&nibbled)));
        // A region of many pieces that together hold the parts (as Windows
        // gives a region back, in bands) is whole.
        let bands = [
            Rect::new(0, 0, 1280, 6),
            Rect::new(0, 6, 6, 32),
            Rect::new(440, 6, 400, 32),
            Rect::new(1274, 6, 6, 32),
            Rect::new(0, 38, 6, 756),
            Rect::new(1274, 38, 6, 756),
            Rect::new(0, 794, 1280, 6),
        ];
        assert!(!clipped(&drawn, Some(&bands)));
    }

    #[test]
    fn a_window_above_any_drawn_part_covers_the_frame() {
        let drawn = parts();
        // Over the four edges, as the attack did.
        assert!(covered(&drawn, &[Rect::new(0, 0, 1280, 800)]));
        // A strip over the bottom edge only.
        assert!(covered(&drawn, &[Rect::new(300, 790, 100, 10)]));
        // A window inside the frame, touching no edge and not the label.
        assert!(!covered(&drawn, &[Rect::new(6, 40, 1268, 754)]));
        assert!(!covered(&drawn, &[]));
    }

    #[test]
    fn each_window_is_judged_by_what_it_draws_on_its_monitor() {
        let second = Rect::new(1280, 0, 1024, 768);
        let all = [
            Rect::new(0, 0, 1280, 6),
            Rect::new(1280, 0, 1024, 6),
            Rect::new(1280, 762, 1024, 6),
        ];
        assert_eq!(
            drawn_on(second, &all, true),
            [Rect::new(0, 0, 1024, 6), Rect::new(0, 762, 1024, 6)]
        );
        assert_eq!(drawn_on(second, &all, false), all[1..]);
    }
}
