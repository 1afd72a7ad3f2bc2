//! What the frame check decides from what Windows says of the overlay's
//! windows: a plain function, so its rules are tested on any OS.

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
}

/// What the check found and must put back: `None` when the frame is not
/// on screen at all (a window hidden or gone), else the first change
/// found (`moved`, `resized`, `faded`, `lowered`), or intact.
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
}
