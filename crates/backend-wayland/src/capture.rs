//! Screenshots from the ScreenCast stream's newest frame. After deskhand's
//! own input a capture waits (bounded) for a frame that arrived after it,
//! so it never shows the desktop from before the act; with the frame
//! shown, what it covers is painted from the newest frame taken before it
//! appeared (the compositor draws the frame into every screencast).
//! Where the desktop's portal has no ScreenCast, each capture is a shot
//! of the Screenshot portal.

use std::sync::Arc;
use std::time::Duration;

use deskhand_backend::{BackendError, Bitmap, Capture, CursorImage, Rect};

use crate::frames::Frame;
use crate::portal::{Grant, Portals};
use crate::under_frame;
use crate::watcher::LastInput;

/// How long a capture waits for the first frame of a new stream.
const FIRST_FRAME: Duration = Duration::from_secs(3);
/// How long it waits for a frame newer than deskhand's last input: an act
/// that changes nothing on screen brings none.
const AFTER_INPUT: Duration = Duration::from_millis(120);
/// How long the indicator's going may take to reach the screencast.
const CLEAN_WAIT: Duration = Duration::from_millis(300);
/// How long a Screenshot portal shot may take, the person's first answer
/// in the desktop's dialog included.
pub(crate) const SHOT_WAIT: Duration = Duration::from_secs(60);
/// Input older than this has shown on screen if it changed anything.
const SETTLED: Duration = Duration::from_millis(500);

pub(crate) struct PortalCapture {
    pub(crate) rt: Arc<crate::rt::Rt>,
    pub(crate) portals: Arc<Portals>,
    pub(crate) last: Arc<LastInput>,
    /// The frame before the indicator first showed, and what it covers.
    pub(crate) clean: Option<Frame>,
    pub(crate) covered: Vec<Rect>,
    /// When the indicator was last taken down: a clean frame is one that
    /// arrived after.
    pub(crate) hidden_at: Option<std::time::Instant>,
}

/// Why there are no frames.
pub(crate) fn no_frames(grant: &Grant) -> BackendError {
    match grant {
        Grant::Pending => BackendError::Unsupported(
            "screenshots wait for the person's answer in the desktop's screen-sharing dialog".into(),
        ),
        Grant::Denied => BackendError::Unsupported(
            "the person denied screen sharing in the desktop's dialog (portal_screencast_denied); restart deskhand to be asked again".into(),
        ),
        Grant::Unavailable(why) | Grant::Failed(why) => {
            BackendError::Unsupported(format!("no ScreenCast portal session: {why}"))
        }
        Grant::Granted => BackendError::Failed("the screencast stream ended".into()),
    }
}

/// `rect` (desktop pixels) of `frame`, whose top-left is at `origin`, with
/// the `covered` rectangles taken from `clean` while it still fits round
/// them, else stretched from the live pixels beside them
/// (`under_frame`); BGRx rows.
pub(crate) fn crop(
    frame: &Frame,
    origin: (i32, i32),
    rect: Rect,
    clean: Option<&Frame>,
    covered: &[Rect],
) -> Result<Vec<u8>, BackendError> {
    let (x0, y0) = (rect.x - origin.0, rect.y - origin.1);
    let inside = x0 >= 0
        && y0 >= 0
        && x0 as u32 + rect.width <= frame.width
        && y0 as u32 + rect.height <= frame.height;
    if !inside {
        return Err(BackendError::InvalidTarget(format!(
            "{rect:?} is outside the screencast ({}x{} at {origin:?})",
            frame.width, frame.height
        )));
    }
    let row = rect.width as usize * 4;
    let mut out = Vec::with_capacity(row * rect.height as usize);
    for y in 0..rect.height as usize {
        let start = ((y0 as usize + y) * frame.width as usize + x0 as usize) * 4;
        out.extend_from_slice(&frame.data[start..start + row]);
    }
    let clean = clean.filter(|c| (c.width, c.height) == (frame.width, frame.height));
    // The covered rectangles in the frame's own pixels.
    let local: Vec<Rect> = covered
        .iter()
        .map(|c| Rect::new(c.x - origin.0, c.y - origin.1, c.width, c.height))
        .collect();
    for (c, lc) in covered.iter().zip(&local) {
        let (cx0, cy0) = (c.x.max(rect.x), c.y.max(rect.y));
        let cx1 = (c.x + c.width as i32).min(rect.x + rect.width as i32);
        let cy1 = (c.y + c.height as i32).min(rect.y + rect.height as i32);
        if cx1 <= cx0 || cy1 <= cy0 {
            continue;
        }
        let fresh = clean.filter(|cl| under_frame::fits(cl, frame, lc, &local));
        for y in cy0..cy1 {
            let from =
                (((y - origin.1) as usize) * frame.width as usize + (cx0 - origin.0) as usize) * 4;
            let to = (((y - rect.y) as usize) * rect.width as usize + (cx0 - rect.x) as usize) * 4;
            let n = (cx1 - cx0).max(0) as usize * 4;
            match fresh {
                Some(clean) => out[to..to + n].copy_from_slice(&clean.data[from..from + n]),
                None => {
                    for (i, x) in (cx0..cx1).enumerate() {
                        let at = (x - origin.0, y - origin.1);
                        if let Some(p) = under_frame::stand_in(frame, lc, &local, at) {
                            out[to + i * 4..to + i * 4 + 4].copy_from_slice(p);
                        }
                    }
                }
            }
        }
    }
    Ok(out)
}

impl PortalCapture {
    /// `rect` from a fresh shot of the Screenshot portal (no ScreenCast).
    fn shot(&self, rect: Rect, sink: &mut dyn FnMut(&Bitmap<'_>)) -> Result<(), BackendError> {
        let frame = self
            .rt
            .run(SHOT_WAIT, "a screenshot", self.portals.clone().shoot())?;
        let pixels = crop(&frame, (0, 0), rect, None, &[])?;
        sink(&Bitmap::bgrx(rect.width, rect.height, &pixels));
        Ok(())
    }
}

impl Capture for PortalCapture {
    fn capture(
        &mut self,
        rect: Rect,
        sink: &mut dyn FnMut(&Bitmap<'_>),
    ) -> Result<(), BackendError> {
        let Some(cast) = self.portals.cast() else {
            if self.portals.shots_instead() {
                return self.shot(rect, sink);
            }
            return Err(no_frames(&self.portals.screencast_grant()));
        };
        if !cast.frames.running() {
            return Err(no_frames(&Grant::Granted));
        }
        let after = self.last.get().filter(|t| t.elapsed() < SETTLED);
        let origin = cast.stream.position;
        let (clean, covered) = (self.clean.as_ref(), self.covered.as_slice());
        let wait = if after.is_some() {
            AFTER_INPUT
        } else {
            FIRST_FRAME
        };
        let pixels = cast
            .frames
            .latest
            .read(after, wait, |f| crop(f, origin, rect, clean, covered))
            .or_else(|| {
                cast.frames
                    .latest
                    .read(None, FIRST_FRAME, |f| crop(f, origin, rect, clean, covered))
            })
            .ok_or_else(|| BackendError::Failed("the screencast sent no frame".into()))??;
        sink(&Bitmap::bgrx(rect.width, rect.height, &pixels));
        Ok(())
    }

    fn cursor_image(&mut self) -> Result<Option<CursorImage>, BackendError> {
        Ok(None)
    }

    fn supports_cursor(&self) -> bool {
        false
    }

    fn prepare_exclusion(&mut self) {
        if let Some(cast) = self.portals.cast() {
            self.clean = cast
                .frames
                .latest
                .read(self.hidden_at, CLEAN_WAIT, Frame::clone);
        }
    }

    fn exclude(&mut self, _windows: &[u64], covered: &[Rect]) {
        self.covered = covered.to_vec();
        if covered.is_empty() {
            self.clean = None;
            self.hidden_at = Some(std::time::Instant::now());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Instant;

    fn frame(w: u32, h: u32, fill: u8) -> Frame {
        let mut data = vec![fill; (w * h * 4) as usize];
        for (i, px) in data.chunks_mut(4).enumerate() {
            px[0] = i as u8;
        }
        Frame {
            width: w,
            height: h,
            data,
            at: Instant::now(),
        }
    }

    #[test]
    fn a_crop_is_the_rect_and_the_covered_part_comes_from_the_clean_frame() {
        let now = frame(4, 3, 9);
        let clean = frame(4, 3, 1);
        let out = crop(&now, (0, 0), Rect::new(1, 1, 2, 2), None, &[]).expect("inside");
        assert_eq!(
            out.iter().step_by(4).copied().collect::<Vec<_>>(),
            vec![5, 6, 9, 10]
        );
        let covered = [Rect::new(0, 0, 4, 2)];
        let out =
            crop(&now, (0, 0), Rect::new(1, 1, 2, 2), Some(&clean), &covered).expect("inside");
        assert_eq!(out[1], 1, "row 1 was under the frame: clean");
        assert_eq!(out[2 * 4 + 1], 9, "row 2 was not");
        assert!(crop(&now, (0, 0), Rect::new(3, 0, 2, 1), None, &[]).is_err());
        // A covered strip right of, or under, the rect is not in it.
        let strips = [Rect::new(3, 0, 1, 3), Rect::new(0, 2, 4, 1)];
        let out = crop(&now, (0, 0), Rect::new(0, 0, 2, 2), Some(&clean), &strips).expect("inside");
        assert_eq!(
            out,
            crop(&now, (0, 0), Rect::new(0, 0, 2, 2), None, &[]).expect("inside")
        );
        assert!(
            crop(&now, (10, 0), Rect::new(10, 0, 4, 3), None, &[]).is_ok(),
            "a placed stream"
        );
    }

    #[test]
    fn a_clean_frame_the_desktop_moved_on_from_leaves_no_ghost() {
        // The live desktop is plain (40) with the frame's label (255)
        // drawn over rows 0-1; the clean frame still had a dialog (200).
        let paint = |v: &dyn Fn(usize) -> u8| {
            let mut data = Vec::new();
            for i in 0..8 * 6 {
                let p = v(i);
                data.extend_from_slice(&[p, p, p, 0]);
            }
            Frame {
                width: 8,
                height: 6,
                data,
                at: Instant::now(),
            }
        };
        let live = paint(&|i| if i < 16 { 255 } else { 40 });
        let clean = paint(&|_| 200);
        let label = [Rect::new(0, 0, 8, 2)];
        let out = crop(&live, (0, 0), Rect::new(0, 0, 8, 6), Some(&clean), &label).expect("in");
        assert!(
            out.chunks(4).all(|p| p[0] == 40),
            "the desktop as it is now, no dialog, no label"
        );
    }
}
