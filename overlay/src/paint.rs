//! How the overlay process draws the indicator's parts
//! ([`deskhand_protocol::overlay_layout`]): filled rectangles, and text in
//! an 8×8 bitmap font at twice its size.

use deskhand_protocol::geometry::Rect;
use deskhand_protocol::overlay_layout::{GLYPH, SCALE, WHITE, text_width};
pub use deskhand_protocol::overlay_layout::{Layout, Press};
use font8x8::UnicodeFonts;

/// `r` moved by (-dx, -dy): from global to a window's own coordinates.
pub fn relative_to(r: &Rect, dx: i32, dy: i32) -> Rect {
    Rect::new(r.x - dx, r.y - dy, r.width, r.height)
}

/// Paints monitor `i` of `layout`: `buf` is `width × height` 0RGB pixels
/// of that monitor.
pub fn paint(layout: &Layout, i: usize, buf: &mut [u32]) {
    let Some(m) = layout.monitors.get(i) else {
        return;
    };
    let mut canvas = Canvas {
        buf,
        width: m.width,
        height: m.height,
    };
    for part in layout.parts(i) {
        let local = relative_to(&part.rect, m.x, m.y);
        canvas.fill(local, part.colour);
        if let Some(text) = part.text {
            canvas.text(local, text, WHITE);
        }
    }
}

struct Canvas<'a> {
    buf: &'a mut [u32],
    width: u32,
    height: u32,
}

impl Canvas<'_> {
    fn put(&mut self, x: i32, y: i32, colour: u32) {
        if x >= 0 && y >= 0 && (x as u32) < self.width && (y as u32) < self.height {
            let i = y as usize * self.width as usize + x as usize;
            if let Some(p) = self.buf.get_mut(i) {
                *p = colour;
            }
        }
    }

    fn fill(&mut self, r: Rect, colour: u32) {
        for y in r.y..r.y + r.height as i32 {
            for x in r.x..r.x + r.width as i32 {
                self.put(x, y, colour);
            }
        }
    }

    /// Draws `text` centred in `r`.
    fn text(&mut self, r: Rect, text: &str, colour: u32) {
        let w = text_width(text) as i32;
        let x0 = r.x + (r.width as i32 - w) / 2;
        let y0 = r.y + (r.height as i32 - GLYPH as i32) / 2;
        for (n, c) in text.chars().enumerate() {
            let glyph = font8x8::BASIC_FONTS
                .get(c)
                .or_else(|| font8x8::LATIN_FONTS.get(c))
                .unwrap_or([0; 8]);
            for (row, bits) in glyph.iter().enumerate() {
                for col in 0..8 {
                    if bits & (1 << col) == 0 {
                        continue;
                    }
                    for dy in 0..SCALE as i32 {
                        for dx in 0..SCALE as i32 {
                            self.put(
                                x0 + n as i32 * GLYPH as i32 + col * SCALE as i32 + dx,
                                y0 + row as i32 * SCALE as i32 + dy,
                                colour,
                            );
                        }
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use deskhand_protocol::overlay_layout::RED;

    fn one(paused: bool) -> Layout {
        Layout {
            monitors: vec![Rect::new(0, 0, 1280, 800)],
            paused,
        }
    }

    #[test]
    fn paint_draws_frame_and_text_and_nothing_inside() {
        let l = one(false);
        let mut buf = vec![0u32; 1280 * 800];
        paint(&l, 0, &mut buf);
        assert_eq!(buf[0], RED, "corner is frame");
        assert_eq!(buf[400 * 1280 + 640], 0, "the middle is left alone");
        let label = l.label().expect("label");
        let inside: Vec<u32> = (label.y..label.y + label.height as i32)
            .flat_map(|y| (label.x..label.x + label.width as i32).map(move |x| (x, y)))
            .map(|(x, y)| buf[y as usize * 1280 + x as usize])
            .collect();
        assert!(inside.contains(&WHITE), "label text drawn");
        assert!(inside.contains(&RED), "label background drawn");
    }
}
