//! What a screenshot shows where deskhand's frame is drawn: the compositor
//! paints the frame into every screencast, so those pixels come from the
//! clean frame taken before it appeared, but only while that frame still
//! fits what is around them now. Where the desktop changed since (a
//! dialog closed), the clean pixels would be a ghost: the live pixels just
//! outside the frame are stretched over it instead.

use deskhand_backend::Rect;

use crate::frames::Frame;

/// How many of the pixels round a covered rectangle must still match the
/// clean frame for its clean pixels to be used.
const FIT: f64 = 0.9;
/// How far apart two pixels' channels may be and still match.
const NEAR: u8 = 16;
/// How far an edge fill looks for a pixel the frame does not cover.
const REACH: i32 = 96;

fn covered_at(covered: &[Rect], x: i32, y: i32) -> bool {
    covered
        .iter()
        .any(|c| c.contains(deskhand_backend::Point { x, y }))
}

fn pixel(f: &Frame, x: i32, y: i32) -> Option<&[u8]> {
    if x < 0 || y < 0 || x >= f.width as i32 || y >= f.height as i32 {
        return None;
    }
    let at = (y as usize * f.width as usize + x as usize) * 4;
    f.data.get(at..at + 4)
}

/// The places (frame pixels) just outside `c` that nothing covers.
fn ring<'a>(c: &Rect, covered: &'a [Rect]) -> impl Iterator<Item = (i32, i32)> + 'a {
    let (x0, y0) = (c.x - 1, c.y - 1);
    let (x1, y1) = (c.x + c.width as i32, c.y + c.height as i32);
    let rows = (x0..=x1).flat_map(move |x| [(x, y0), (x, y1)]);
    let cols = (y0 + 1..y1).flat_map(move |y| [(x0, y), (x1, y)]);
    rows.chain(cols)
        .filter(move |&(x, y)| !covered_at(covered, x, y))
}

/// Whether `clean` still fits `live` round `c` (rectangles in frame
/// pixels): nearly every uncovered pixel round it unchanged.
pub(crate) fn fits(clean: &Frame, live: &Frame, c: &Rect, covered: &[Rect]) -> bool {
    let (mut seen, mut same) = (0u32, 0u32);
    for (x, y) in ring(c, covered) {
        let (Some(a), Some(b)) = (pixel(clean, x, y), pixel(live, x, y)) else {
            continue;
        };
        seen += 1;
        if a[..3]
            .iter()
            .zip(&b[..3])
            .all(|(p, q)| p.abs_diff(*q) <= NEAR)
        {
            same += 1;
        }
    }
    seen == 0 || f64::from(same) >= FIT * f64::from(seen)
}

/// The live pixel that stands in for (x, y) of `c`: the nearest one the
/// frame does not cover, across the rectangle's short side.
pub(crate) fn stand_in<'a>(
    live: &'a Frame,
    c: &Rect,
    covered: &[Rect],
    (x, y): (i32, i32),
) -> Option<&'a [u8]> {
    let across: [(i32, i32); 2] = if c.width >= c.height {
        [(0, 1), (0, -1)]
    } else {
        [(1, 0), (-1, 0)]
    };
    (1..=REACH).find_map(|d| {
        across.iter().find_map(|(dx, dy)| {
            let (sx, sy) = (x + dx * d, y + dy * d);
            (!covered_at(covered, sx, sy))
                .then(|| pixel(live, sx, sy))
                .flatten()
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frame(w: u32, h: u32, paint: impl Fn(u32, u32) -> u8) -> Frame {
        let mut data = Vec::new();
        for y in 0..h {
            for x in 0..w {
                let v = paint(x, y);
                data.extend_from_slice(&[v, v, v, 0]);
            }
        }
        Frame {
            width: w,
            height: h,
            data,
            at: std::time::Instant::now(),
        }
    }

    #[test]
    fn clean_pixels_fit_only_while_the_desktop_round_them_is_unchanged() {
        let label = Rect::new(4, 0, 8, 2);
        let desktop = frame(16, 8, |_, _| 50);
        assert!(fits(&desktop, &desktop, &label, &[label]));
        // A dialog that was there when the clean frame was taken, gone now.
        let with_dialog = frame(16, 8, |x, y| {
            if (2..14).contains(&x) && y < 6 {
                200
            } else {
                50
            }
        });
        assert!(!fits(&with_dialog, &desktop, &label, &[label]));
    }

    #[test]
    fn a_stand_in_comes_from_the_uncovered_side_across_the_short_side() {
        let live = frame(16, 8, |x, y| (y * 16 + x) as u8);
        let top = Rect::new(0, 0, 16, 2);
        assert_eq!(
            stand_in(&live, &top, &[top], (5, 0)).map(|p| p[0]),
            Some(2 * 16 + 5)
        );
        let left = Rect::new(0, 0, 2, 8);
        assert_eq!(
            stand_in(&live, &left, &[left], (0, 3)).map(|p| p[0]),
            Some(3 * 16 + 2)
        );
        let all = Rect::new(0, 0, 16, 8);
        assert_eq!(
            stand_in(&live, &all, &[all], (3, 3)),
            None,
            "nothing uncovered"
        );
    }
}
