//! The red frame where GNOME's extension is missing and the compositor
//! has the wlr layer shell (KDE Plasma, the wlroots desktops): the
//! overlay process draws it as layer surfaces, and before each act the
//! frame is looked for in the compositor's own screencast, in a picture
//! taken since it took its shape, never on the overlay's word: a frame
//! another surface covers, or one that cannot be seen, is no frame.

use std::sync::Arc;
use std::time::{Duration, Instant};

use deskhand_backend::overlay_process::{FrameInspector, OverlayIndicator, find_overlay};
use deskhand_backend::{BackendError, FrameCheck, Indicator, Point, Rect};
use deskhand_protocol::overlay::{LAYER_SHELL, SURFACE_ENV};
use deskhand_protocol::overlay_layout::{DIM_RED, RED};

use crate::frames::Frame;
use crate::portal::Portals;

/// How long a frame just shown gets to reach the screencast.
const SHOWN_WITHIN: Duration = Duration::from_millis(300);

/// The overlay drawing on the layer shell; `None` without the program.
pub(crate) fn indicator(portals: Arc<Portals>) -> Option<Box<dyn Indicator>> {
    let Some(program) = find_overlay() else {
        tracing::warn!("deskhand-overlay not found: no frame, so no takeover");
        return None;
    };
    let mut env: Vec<(String, String)> = ["WAYLAND_DISPLAY", "XDG_RUNTIME_DIR"]
        .into_iter()
        .filter_map(|k| std::env::var(k).ok().map(|v| (k.to_owned(), v)))
        .collect();
    env.push((SURFACE_ENV.to_owned(), LAYER_SHELL.to_owned()));
    Some(Box::new(OverlayIndicator::new(
        &program,
        env,
        Box::new(ScreencastInspector {
            portals,
            shown: None,
        }),
    )))
}

/// Whether BGRx `frame`, whose top left is desktop pixel `origin`, shows
/// the frame's colour at every one of `points`.
pub(crate) fn shows_frame(frame: &Frame, origin: (i32, i32), points: &[Point]) -> bool {
    let near = |a: u8, b: u32| (i32::from(a) - (b & 0xff) as i32).abs() <= 24;
    let is_frame = |b: u8, g: u8, r: u8| {
        [RED, DIM_RED]
            .iter()
            .any(|c| near(b, *c) && near(g, c >> 8) && near(r, c >> 16))
    };
    !points.is_empty()
        && points.iter().all(|p| {
            let (x, y) = (p.x - origin.0, p.y - origin.1);
            if x < 0 || y < 0 || x as u32 >= frame.width || y as u32 >= frame.height {
                return false;
            }
            let i = (y as usize * frame.width as usize + x as usize) * 4;
            frame
                .data
                .get(i..i + 3)
                .is_some_and(|px| is_frame(px[0], px[1], px[2]))
        })
}

/// The middle of each of the frame's four edges (the first four parts).
fn edge_points(covered: &[Rect]) -> Vec<Point> {
    covered
        .iter()
        .take(4)
        .map(|r| Point::new(r.x + r.width as i32 / 2, r.y + r.height as i32 / 2))
        .collect()
}

struct ScreencastInspector {
    portals: Arc<Portals>,
    /// What the frame last covered, and since when: only a picture taken
    /// after that counts (one from before a change of shape does not).
    shown: Option<(Vec<Rect>, Instant)>,
}

impl ScreencastInspector {
    /// When the frame took its current shape.
    fn since(&mut self, covered: &[Rect]) -> Instant {
        match &self.shown {
            Some((rects, at)) if rects == covered => *at,
            _ => {
                // First checked right after it was shown: the picture that
                // shows it may have come just before this check.
                let now = Instant::now();
                let at = now.checked_sub(SHOWN_WITHIN * 3).unwrap_or(now);
                self.shown = Some((covered.to_vec(), at));
                at
            }
        }
    }
}

impl FrameInspector for ScreencastInspector {
    fn inspect(
        &mut self,
        _windows: &[u64],
        _monitors: &[Rect],
        covered: &[Rect],
    ) -> Result<Option<FrameCheck>, BackendError> {
        let since = self.since(covered);
        let Some(cast) = self.portals.cast().filter(|c| c.frames.running()) else {
            // Without the screencast the frame cannot be seen: no act
            // without a frame that was seen.
            tracing::warn!("the frame cannot be checked: no screencast");
            return Ok(None);
        };
        let points = edge_points(covered);
        let origin = cast.stream.position;
        let seen = |f: &Frame| f.at >= since && shows_frame(f, origin, &points);
        let latest = &cast.frames.latest;
        let now = latest.read(Some(since), SHOWN_WITHIN, seen) == Some(true)
            || latest.read(Some(Instant::now()), SHOWN_WITHIN, seen) == Some(true);
        Ok(now.then_some(FrameCheck::Intact))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn screen(width: u32, height: u32, fill: [u8; 4]) -> Frame {
        Frame {
            width,
            height,
            data: fill.repeat((width * height) as usize),
            at: Instant::now(),
        }
    }

    fn paint(f: &mut Frame, p: Point, bgrx: [u8; 4]) {
        let i = (p.y as usize * f.width as usize + p.x as usize) * 4;
        f.data[i..i + 4].copy_from_slice(&bgrx);
    }

    #[test]
    fn the_frame_is_seen_only_where_all_four_edges_show_it() {
        let covered = [
            Rect::new(100, 0, 200, 6),
            Rect::new(100, 194, 200, 6),
            Rect::new(100, 6, 6, 188),
            Rect::new(294, 6, 6, 188),
            Rect::new(150, 6, 100, 32),
        ];
        let points = edge_points(&covered);
        assert_eq!(points.len(), 4);
        // The stream shows the monitor at desktop x = 100.
        let mut f = screen(200, 200, [0x99, 0x66, 0x33, 0]);
        for p in &points {
            paint(&mut f, Point::new(p.x - 100, p.y), [0x24, 0x1b, 0xe0, 0]);
        }
        assert!(shows_frame(&f, (100, 0), &points));
        assert!(
            !shows_frame(&f, (0, 0), &points),
            "looked in the wrong place"
        );
        paint(
            &mut f,
            Point::new(points[2].x - 100, points[2].y),
            [0x99, 0x66, 0x33, 0],
        );
        assert!(!shows_frame(&f, (100, 0), &points), "an edge covered");
        assert!(!shows_frame(&f, (100, 0), &[]));
    }
}
