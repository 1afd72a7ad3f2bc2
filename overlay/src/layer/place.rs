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

/// How a monitor's pixels fit its layer surface.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Fit {
    /// The surface's size in logical units.
    pub size: (u32, u32),
    /// The surface's buffer scale (whole-number outputs).
    pub buffer_scale: i32,
    /// Monitor pixels per logical unit.
    pub factor: f64,
    /// A viewport scales the buffer (the monitor's pixels) to `size`:
    /// a fractional scale, such as KDE's 125% or 150%.
    pub viewport: bool,
}

/// How monitor `m` (in pixels) fits an output of `logical` size and
/// whole-number `scale`: at that scale where the pixels are that many per
/// unit, else through a viewport where the compositor has one (a
/// fractional scale), else one pixel a unit.
pub fn fit(m: &Rect, logical: Option<(i32, i32)>, scale: i32, viewporter: bool) -> Fit {
    let plain = Fit {
        size: (m.width, m.height),
        buffer_scale: 1,
        factor: 1.0,
        viewport: false,
    };
    let Some((w, h)) = logical.filter(|(w, h)| *w > 0 && *h > 0) else {
        return plain;
    };
    let (lw, lh) = (w as u32, h as u32);
    if (lw, lh) == (m.width, m.height) {
        return plain;
    }
    let whole = scale > 1 && lw * scale as u32 == m.width && lh * scale as u32 == m.height;
    if whole {
        return Fit {
            size: (lw, lh),
            buffer_scale: scale,
            factor: f64::from(scale),
            viewport: false,
        };
    }
    if viewporter {
        return Fit {
            size: (lw, lh),
            buffer_scale: 1,
            factor: f64::from(m.width) / f64::from(lw),
            viewport: true,
        };
    }
    plain
}

/// The desktop pixel under surface position `(x, y)` (logical units) of
/// a surface on monitor `m` with `factor` pixels a unit.
pub fn desktop_point(m: &Rect, factor: f64, (x, y): (f64, f64)) -> Point {
    Point::new(m.x + (x * factor) as i32, m.y + (y * factor) as i32)
}

/// `r` (monitor-local pixels) in surface units at `factor` pixels a
/// unit, grown to whole units so that nothing of it is left out.
pub fn surface_rect(r: &Rect, factor: f64) -> Rect {
    let f = if factor > 0.0 { factor } else { 1.0 };
    let x0 = (f64::from(r.x) / f).floor() as i32;
    let y0 = (f64::from(r.y) / f).floor() as i32;
    let x1 = ((f64::from(r.x) + f64::from(r.width)) / f).ceil() as i32;
    let y1 = ((f64::from(r.y) + f64::from(r.height)) / f).ceil() as i32;
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
        let at_2 = fit(&m, Some((1280, 800)), 2, true);
        assert_eq!(
            (at_2.size, at_2.buffer_scale, at_2.viewport),
            ((1280, 800), 2, false)
        );
        assert_eq!(fit(&m, None, 2, true).size, (2560, 1600));
        assert_eq!(fit(&m, Some((2560, 1600)), 1, true).factor, 1.0);
        assert_eq!(
            desktop_point(&Rect::new(100, 0, 2560, 1600), 2.0, (10.5, 3.0)),
            Point::new(121, 6)
        );
        assert_eq!(
            surface_rect(&Rect::new(3, 4, 5, 5), 2.0),
            Rect::new(1, 2, 3, 3)
        );
        assert_eq!(
            surface_rect(&Rect::new(3, 4, 5, 5), 1.0),
            Rect::new(3, 4, 5, 5)
        );
    }

    #[test]
    fn a_fractional_scale_fits_through_a_viewport_else_spills() {
        // 150%: 1920x1200 pixels are 1280x800 units (sway says scale 2).
        let m = Rect::new(0, 0, 1920, 1200);
        let f = fit(&m, Some((1280, 800)), 2, true);
        assert_eq!((f.size, f.buffer_scale, f.viewport), ((1280, 800), 1, true));
        assert_eq!(f.factor, 1.5);
        // A click at unit (640, 41) is pixel (960, 61).
        assert_eq!(
            desktop_point(&m, f.factor, (640.0, 41.0)),
            Point::new(960, 61)
        );
        // A button at pixels 100..201 is units 66..134 (grown, not cut).
        assert_eq!(
            surface_rect(&Rect::new(100, 46, 101, 32), 1.5),
            Rect::new(66, 30, 68, 22)
        );
        // No viewporter: drawn a pixel a unit (too big: the frame check
        // then refuses every act, rather than a frame drawn wrong).
        assert_eq!(fit(&m, Some((1280, 800)), 2, false).size, (1920, 1200));
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
