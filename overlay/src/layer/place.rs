//! The layer-shell frame's plain decisions: which output a monitor is,
//! how a surface's logical coordinates map to desktop pixels, and the
//! pixels handed to the compositor (premultiplied ARGB, transparent but
//! for what the indicator draws).

use deskhand_protocol::geometry::{Point, Rect};

use deskhand_overlay::paint::{Layout, paint, relative_to};

/// What the compositor says of one output.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OutputPlace {
    /// Its top left in the compositor's logical space.
    pub logical_position: Option<(i32, i32)>,
    /// Its size in logical units.
    pub logical_size: Option<(i32, i32)>,
    /// Its integer scale.
    pub scale: i32,
}

/// Which output (an index into `outputs`) shows monitor `m`, the `i`-th
/// of the engine's: the one at the same top left, else the `i`-th, else
/// none (the compositor then picks).
pub fn output_for(outputs: &[OutputPlace], m: &Rect, i: usize) -> Option<usize> {
    outputs
        .iter()
        .position(|o| o.logical_position == Some((m.x, m.y)))
        .or_else(|| (i < outputs.len()).then_some(i))
}

/// The buffer scale for monitor `m` shown on an output of `logical` size
/// and `scale`: the output's scale when the monitor's pixels are that
/// many per logical unit, else 1 (drawn at the monitor's pixel size).
pub fn buffer_scale(m: &Rect, logical: Option<(i32, i32)>, scale: i32) -> i32 {
    match logical {
        Some((w, h))
            if scale > 1
                && i64::from(w) * i64::from(scale) == i64::from(m.width)
                && i64::from(h) * i64::from(scale) == i64::from(m.height) =>
        {
            scale
        }
        _ => 1,
    }
}

/// The desktop pixel under surface position `(x, y)` (logical units) of
/// a surface on monitor `m` drawn at buffer scale `scale`.
pub fn desktop_point(m: &Rect, scale: i32, (x, y): (f64, f64)) -> Point {
    let s = f64::from(scale.max(1));
    Point::new(m.x + (x * s) as i32, m.y + (y * s) as i32)
}

/// `r` (monitor-local pixels) in surface units at buffer scale `scale`,
/// grown to whole units so that nothing of it is left out.
pub fn surface_rect(r: &Rect, scale: i32) -> Rect {
    let s = scale.max(1);
    let x0 = r.x.div_euclid(s);
    let y0 = r.y.div_euclid(s);
    let x1 = (r.x + r.width as i32 + s - 1).div_euclid(s);
    let y1 = (r.y + r.height as i32 + s - 1).div_euclid(s);
    Rect::new(x0, y0, (x1 - x0).max(0) as u32, (y1 - y0).max(0) as u32)
}

/// Monitor `i` of `layout` as ARGB8888 bytes (little endian, as `wl_shm`
/// has them): every part opaque, everything else fully transparent.
pub fn argb(layout: &Layout, i: usize, out: &mut [u8]) {
    let Some(m) = layout.monitors.get(i) else {
        return;
    };
    let mut pixels = vec![0u32; m.width as usize * m.height as usize];
    paint(layout, i, &mut pixels);
    for r in layout.covered_on(i) {
        let local = relative_to(&r, m.x, m.y);
        for y in local.y.max(0)..(local.y + local.height as i32).min(m.height as i32) {
            let row = y as usize * m.width as usize;
            for x in local.x.max(0)..(local.x + local.width as i32).min(m.width as i32) {
                pixels[row + x as usize] |= 0xff00_0000;
            }
        }
    }
    for (px, chunk) in pixels.iter().zip(out.chunks_exact_mut(4)) {
        chunk.copy_from_slice(&px.to_le_bytes());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn output(x: i32, y: i32) -> OutputPlace {
        OutputPlace {
            logical_position: Some((x, y)),
            logical_size: Some((1280, 800)),
            scale: 1,
        }
    }

    #[test]
    fn a_monitor_is_the_output_at_its_top_left_else_the_one_in_its_place() {
        let outputs = [output(1280, 0), output(0, 0)];
        assert_eq!(
            output_for(&outputs, &Rect::new(0, 0, 1280, 800), 0),
            Some(1)
        );
        assert_eq!(
            output_for(&outputs, &Rect::new(1280, 0, 1280, 800), 1),
            Some(0)
        );
        assert_eq!(output_for(&outputs, &Rect::new(5, 5, 10, 10), 1), Some(1));
        assert_eq!(output_for(&outputs, &Rect::new(5, 5, 10, 10), 2), None);
    }

    #[test]
    fn a_hidpi_output_is_drawn_at_its_pixels() {
        let m = Rect::new(0, 0, 2560, 1600);
        assert_eq!(buffer_scale(&m, Some((1280, 800)), 2), 2);
        assert_eq!(buffer_scale(&m, Some((1707, 1067)), 2), 1, "fractional");
        assert_eq!(buffer_scale(&m, None, 2), 1);
        assert_eq!(
            desktop_point(&Rect::new(100, 0, 2560, 1600), 2, (10.5, 3.0)),
            Point::new(121, 6)
        );
        assert_eq!(
            surface_rect(&Rect::new(3, 4, 5, 5), 2),
            Rect::new(1, 2, 3, 3)
        );
        assert_eq!(
            surface_rect(&Rect::new(3, 4, 5, 5), 1),
            Rect::new(3, 4, 5, 5)
        );
    }

    #[test]
    fn the_frame_is_opaque_and_the_rest_clear() {
        let layout = Layout {
            monitors: vec![Rect::new(0, 0, 200, 120)],
            paused: false,
        };
        let mut out = vec![0u8; 200 * 120 * 4];
        argb(&layout, 0, &mut out);
        let at = |x: usize, y: usize| {
            let i = (y * 200 + x) * 4;
            u32::from_le_bytes([out[i], out[i + 1], out[i + 2], out[i + 3]])
        };
        assert_eq!(at(100, 0) >> 24, 0xff, "the frame's top edge");
        assert_eq!(at(100, 60), 0, "the middle shows what is below");
        let covered: u32 = layout
            .covered_on(0)
            .iter()
            .map(|r| r.width * r.height)
            .sum();
        let opaque = out.chunks_exact(4).filter(|c| c[3] == 0xff).count() as u32;
        assert!(opaque <= covered && opaque > 0, "{opaque} of {covered}");
    }
}
