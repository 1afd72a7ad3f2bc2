//! Drawing onto a captured bitmap before it is encoded: secure fields
//! blacked out so that their content never reaches an agent, and numbered
//! set-of-mark boxes over interactive elements so that a model can name one
//! ("click 7").

use deskhand_protocol::geometry::{Point, Rect};
use font8x8::UnicodeFonts;

use crate::Bitmap;

/// A numbered box drawn over an interactive element, so that a model can
/// refer to the element by its number.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Mark {
    /// The number shown in the box's label.
    pub number: u32,
    /// The element's bounds in global desktop pixels.
    pub rect: Rect,
}

/// What to draw onto a bitmap before encoding it: blackouts first, then the
/// marks over them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Paint {
    /// Rectangles filled opaque black (secure fields' bounds), in global
    /// desktop pixels.
    pub blackouts: Vec<Rect>,
    /// Numbered boxes drawn over interactive elements.
    pub marks: Vec<Mark>,
}

impl Paint {
    /// Whether there is nothing to draw, so that the bitmap can be encoded
    /// straight from the capture without a copy.
    pub fn is_empty(&self) -> bool {
        self.blackouts.is_empty() && self.marks.is_empty()
    }
}

/// One pixel's bytes in the bitmap's layout: blue, green, red, unused.
type Bgrx = [u8; 4];

const BLACK: Bgrx = [0, 0, 0, 0];
const WHITE: Bgrx = [255, 255, 255, 0];

/// Outline and tag colours, chosen by mark number: saturated, far from one
/// another, and dark enough for white digits on them.
const PALETTE: [Bgrx; 6] = [
    [60, 20, 220, 0], // crimson
    [220, 90, 0, 0],  // blue
    [50, 140, 0, 0],  // green
    [160, 0, 190, 0], // magenta
    [0, 95, 215, 0],  // orange
    [140, 130, 0, 0], // teal
];

/// Thickness of a mark's outline, in pixels.
const OUTLINE: i64 = 2;
/// Side of a font8x8 glyph, in pixels at 1×.
const GLYPH: i64 = 8;
/// Margin around the digits inside a tag, in pixels at 1×.
const PAD: i64 = 1;
/// Smallest box side that gets 2× digits.
const BIG_BOX: i64 = 32;

/// An owned copy of `bitmap`'s pixels (same width, height, stride and
/// layout), captured with its top-left at `origin`, with `paint` drawn in:
/// blackouts filled first, then the marks drawn over them.
pub fn painted(bitmap: &Bitmap<'_>, origin: Point, paint: &Paint) -> Vec<u8> {
    let len = (bitmap.stride * bitmap.height as usize).min(bitmap.pixels.len());
    let mut pixels = bitmap.pixels[..len].to_vec();
    paint_in_place(
        &mut pixels,
        (bitmap.width, bitmap.height, bitmap.stride),
        origin,
        paint,
    );
    pixels
}

/// Draws `paint` into BGRX `pixels` of `(width, height, stride)` whose
/// top-left is at `origin` in `paint`'s coordinates.
pub(crate) fn paint_in_place(
    pixels: &mut [u8],
    (width, height, stride): (u32, u32, usize),
    origin: Point,
    paint: &Paint,
) {
    let mut surface = Surface {
        px: pixels,
        width: i64::from(width),
        height: i64::from(height),
        stride,
        origin,
    };
    for r in &paint.blackouts {
        surface.fill(surface.local(r), BLACK);
    }
    for m in &paint.marks {
        surface.outline(m);
    }
    // Labels after every outline, so that no later outline crosses them.
    for m in &paint.marks {
        surface.label(m);
    }
}

/// The colour of mark `number`'s outline and tag.
fn colour(number: u32) -> Bgrx {
    PALETTE[number as usize % PALETTE.len()]
}

/// The scale of a mark's digits: 2× for boxes large enough to carry them.
fn scale_for(b: Area) -> i64 {
    if b.x1 - b.x0 >= BIG_BOX && b.y1 - b.y0 >= BIG_BOX {
        2
    } else {
        1
    }
}

/// A rectangle in bitmap-local pixels, ends exclusive, not yet clipped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Area {
    x0: i64,
    y0: i64,
    x1: i64,
    y1: i64,
}

impl Area {
    fn new(x0: i64, y0: i64, w: i64, h: i64) -> Self {
        Self {
            x0,
            y0,
            x1: x0 + w,
            y1: y0 + h,
        }
    }
}

/// The copied pixels being drawn on.
struct Surface<'a> {
    px: &'a mut [u8],
    width: i64,
    height: i64,
    stride: usize,
    origin: Point,
}

impl Surface<'_> {
    /// `r` (global desktop pixels) in bitmap-local pixels.
    fn local(&self, r: &Rect) -> Area {
        let x0 = i64::from(r.x) - i64::from(self.origin.x);
        let y0 = i64::from(r.y) - i64::from(self.origin.y);
        Area::new(x0, y0, i64::from(r.width), i64::from(r.height))
    }

    /// `a` clipped to the bitmap, or `None` when nothing of it is inside.
    fn clip(&self, a: Area) -> Option<Area> {
        let c = Area {
            x0: a.x0.max(0),
            y0: a.y0.max(0),
            x1: a.x1.min(self.width),
            y1: a.y1.min(self.height),
        };
        (c.x1 > c.x0 && c.y1 > c.y0).then_some(c)
    }

    /// Fills the part of `a` inside the bitmap with `colour`.
    fn fill(&mut self, a: Area, colour: Bgrx) {
        let Some(c) = self.clip(a) else { return };
        let (x0, x1) = (c.x0 as usize * 4, c.x1 as usize * 4);
        for y in c.y0 as usize..c.y1 as usize {
            let start = y * self.stride;
            let Some(row) = self.px.get_mut(start + x0..start + x1) else {
                return;
            };
            for p in row.chunks_exact_mut(4) {
                p.copy_from_slice(&colour);
            }
        }
    }

    /// Draws the mark's outline along the inside of its box.
    fn outline(&mut self, m: &Mark) {
        let b = self.local(&m.rect);
        let c = colour(m.number);
        let t = OUTLINE;
        self.fill(
            Area {
                y1: b.y1.min(b.y0 + t),
                ..b
            },
            c,
        );
        self.fill(
            Area {
                y0: b.y0.max(b.y1 - t),
                ..b
            },
            c,
        );
        self.fill(
            Area {
                x1: b.x1.min(b.x0 + t),
                ..b
            },
            c,
        );
        self.fill(
            Area {
                x0: b.x0.max(b.x1 - t),
                ..b
            },
            c,
        );
    }

    /// Draws the mark's label tag: its number in white on its colour.
    fn label(&mut self, m: &Mark) {
        let b = self.local(&m.rect);
        if self.clip(b).is_none() {
            return;
        }
        let text = m.number.to_string();
        let scale = scale_for(b);
        let tag = self.tag_area(b, text.len() as i64, scale);
        self.fill(tag, colour(m.number));
        let (x, y) = (tag.x0 + PAD * scale, tag.y0 + PAD * scale);
        for (i, ch) in text.chars().enumerate() {
            self.glyph(x + i as i64 * GLYPH * scale, y, ch, scale);
        }
    }

    /// Where the tag of box `b` goes: just above its top-left corner, inside
    /// the box when that would leave the bitmap, and moved into the bitmap
    /// when the box is partly outside.
    fn tag_area(&self, b: Area, digits: i64, scale: i64) -> Area {
        let w = (digits * GLYPH + 2 * PAD) * scale;
        let h = (GLYPH + 2 * PAD) * scale;
        let above = b.y0 - h;
        let y = if above >= 0 { above } else { b.y0 };
        let x = b.x0.min(self.width - w).max(0);
        let y = y.min(self.height - h).max(0);
        Area::new(x, y, w, h)
    }

    /// Draws `ch` in white with its top-left at (`x`, `y`), each font pixel
    /// a `scale`×`scale` square.
    fn glyph(&mut self, x: i64, y: i64, ch: char, scale: i64) {
        let bits = font8x8::BASIC_FONTS.get(ch).unwrap_or([0; 8]);
        for (row, byte) in (0i64..).zip(bits) {
            for col in (0..GLYPH).filter(|c| byte & (1 << c) != 0) {
                let px = Area::new(x + col * scale, y + row * scale, scale, scale);
                self.fill(px, WHITE);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::PixelFormat;
    use crate::test_util::{bitmap, decode, enc};
    use deskhand_protocol::messages::ImageFormat;

    /// A `w`×`h` tight bitmap whose pixels are neither black, white nor a
    /// palette colour, and differ from their neighbours.
    fn background(w: usize, h: usize) -> Vec<u8> {
        let mut px = Vec::with_capacity(w * h * 4);
        for y in 0..h {
            for x in 0..w {
                px.extend([100 + (x % 50) as u8, 100 + (y % 50) as u8, 128, 0]);
            }
        }
        px
    }

    fn at(px: &[u8], w: usize, x: usize, y: usize) -> Bgrx {
        let i = (y * w + x) * 4;
        [px[i], px[i + 1], px[i + 2], px[i + 3]]
    }

    /// The pixels (x, y) that differ between two tight `w`-wide bitmaps.
    fn changed(a: &[u8], b: &[u8], w: usize) -> Vec<(usize, usize)> {
        let pixels = a.chunks_exact(4).zip(b.chunks_exact(4)).enumerate();
        pixels
            .filter(|(_, (p, q))| p != q)
            .map(|(i, _)| (i % w, i / w))
            .collect()
    }

    /// Every pixel of the rectangle `x0..x1` × `y0..y1`.
    fn block(x0: usize, y0: usize, x1: usize, y1: usize) -> Vec<(usize, usize)> {
        (y0..y1)
            .flat_map(|y| (x0..x1).map(move |x| (x, y)))
            .collect()
    }

    fn paint_on(px: &[u8], w: u32, h: u32, origin: Point, paint: &Paint) -> Vec<u8> {
        painted(&bitmap(px, w, h), origin, paint)
    }

    /// A `size`-square background, and it with `list`'s marks painted at
    /// the origin.
    fn marked(size: u32, list: &[(u32, Rect)]) -> (Vec<u8>, Vec<u8>) {
        let px = background(size as usize, size as usize);
        let out = paint_on(&px, size, size, Point::new(0, 0), &marks(list));
        (px, out)
    }

    fn blackouts(rects: &[Rect]) -> Paint {
        Paint {
            blackouts: rects.to_vec(),
            marks: vec![],
        }
    }

    fn marks(list: &[(u32, Rect)]) -> Paint {
        let marks = list.iter().map(|&(number, rect)| Mark { number, rect });
        Paint {
            blackouts: vec![],
            marks: marks.collect(),
        }
    }

    /// Whether the white pixels of `text`'s glyphs, drawn at `scale` with
    /// the tag's top-left at (`x`, `y`), are exactly where font8x8 has its
    /// bits, on the tag's `colour` elsewhere.
    fn assert_label(
        px: &[u8],
        w: usize,
        (x, y): (usize, usize),
        text: &str,
        scale: usize,
        c: Bgrx,
    ) {
        let pad = PAD as usize * scale;
        let tag_w = text.len() * 8 * scale + 2 * pad;
        let tag_h = 8 * scale + 2 * pad;
        for (tx, ty) in block(0, 0, tag_w, tag_h) {
            let (gx, gy) = (tx.wrapping_sub(pad) / scale, ty.wrapping_sub(pad) / scale);
            let inside = tx >= pad && ty >= pad && gx < text.len() * 8 && gy < 8;
            let bit = inside && {
                let ch = text.chars().nth(gx / 8).expect("char");
                let glyph = font8x8::BASIC_FONTS.get(ch).expect("glyph");
                glyph[gy] & (1 << (gx % 8)) != 0
            };
            let want = if bit { WHITE } else { c };
            assert_eq!(
                at(px, w, x + tx, y + ty),
                want,
                "{text:?} at tag ({tx}, {ty})"
            );
        }
    }

    /// The tag-sized region at (`x`, `y`) as a mask of white pixels.
    fn white_mask(px: &[u8], w: usize, (x, y): (usize, usize), tw: usize, th: usize) -> Vec<bool> {
        let pixels = block(x, y, x + tw, y + th).into_iter();
        pixels.map(|(x, y)| at(px, w, x, y) == WHITE).collect()
    }

    #[test]
    fn blackout_is_black_and_nothing_around_changes() {
        let px = background(20, 20);
        let paint = blackouts(&[Rect::new(105, 55, 4, 3)]);
        let out = paint_on(&px, 20, 20, Point::new(100, 50), &paint);
        assert_eq!(changed(&px, &out, 20), block(5, 5, 9, 8));
        for (x, y) in block(5, 5, 9, 8) {
            assert_eq!(at(&out, 20, x, y)[..3], [0, 0, 0]);
        }
        for (x, y) in [(4, 5), (9, 5), (5, 4), (5, 8), (8, 8), (9, 7)] {
            assert_eq!(at(&out, 20, x, y), at(&px, 20, x, y), "({x}, {y})");
        }
    }

    #[test]
    fn empty_paint_returns_the_identical_bytes() {
        // A padded stride: the padding is copied too.
        let (w, h, stride) = (5u32, 3u32, 5 * 4 + 12);
        let px: Vec<u8> = (0..stride * h as usize).map(|i| (i * 13) as u8).collect();
        let f = Bitmap {
            width: w,
            height: h,
            stride,
            format: PixelFormat::Bgrx,
            pixels: &px,
        };
        let paint = Paint::default();
        assert!(paint.is_empty());
        assert_eq!(painted(&f, Point::new(-7, 3), &paint), px);
        assert!(!blackouts(&[Rect::new(0, 0, 1, 1)]).is_empty());
        assert!(!marks(&[(1, Rect::new(0, 0, 1, 1))]).is_empty());
    }

    #[test]
    fn padded_stride_is_kept_and_drawn_by_row() {
        let (w, h, stride) = (4u32, 4u32, 4 * 4 + 8);
        let px = vec![7u8; stride * h as usize];
        let f = Bitmap {
            width: w,
            height: h,
            stride,
            format: PixelFormat::Bgrx,
            pixels: &px,
        };
        let out = painted(&f, Point::new(0, 0), &blackouts(&[Rect::new(0, 2, 9, 9)]));
        assert_eq!(out.len(), px.len());
        assert!(out[..2 * stride].iter().all(|&b| b == 7), "rows above");
        for row in out[2 * stride..].chunks(stride) {
            assert!(row[..16].iter().all(|&b| b == 0), "pixels black");
            assert!(row[16..].iter().all(|&b| b == 7), "padding untouched");
        }
    }

    #[test]
    fn outline_has_the_palette_colour_two_pixels_wide() {
        let (px, out) = marked(60, &[(3, Rect::new(10, 20, 30, 25))]);
        let c = colour(3);
        let edges = [(10, 30), (11, 30), (38, 30), (39, 30), (25, 20), (25, 21)];
        for (x, y) in edges.into_iter().chain([(25, 43), (25, 44), (39, 44)]) {
            assert_eq!(at(&out, 60, x, y), c, "outline at ({x}, {y})");
        }
        for (x, y) in [
            (12, 30),
            (37, 30),
            (25, 22),
            (25, 42),
            (9, 30),
            (40, 30),
            (25, 45),
        ] {
            assert_eq!(
                at(&out, 60, x, y),
                at(&px, 60, x, y),
                "({x}, {y}) untouched"
            );
        }
        assert_ne!(colour(3), colour(4), "neighbours differ");
    }

    #[test]
    fn label_shows_the_number_in_white_digits() {
        let (_, out) = marked(60, &[(7, Rect::new(10, 20, 20, 20))]);
        // 1×, just above the box's top-left corner: 10×10 at (10, 10).
        assert_label(&out, 60, (10, 10), "7", 1, colour(7));
        assert!(white_mask(&out, 60, (10, 10), 10, 10).contains(&true));
    }

    #[test]
    fn twelve_and_twenty_one_differ() {
        let px = background(60, 60);
        let one = |n| {
            paint_on(
                &px,
                60,
                60,
                Point::new(0, 0),
                &marks(&[(n, Rect::new(10, 20, 24, 20))]),
            )
        };
        let (a, b) = (one(12), one(21));
        assert_label(&a, 60, (10, 10), "12", 1, colour(12));
        assert_label(&b, 60, (10, 10), "21", 1, colour(21));
        assert_ne!(
            white_mask(&a, 60, (10, 10), 18, 10),
            white_mask(&b, 60, (10, 10), 18, 10)
        );
    }

    #[test]
    fn big_boxes_get_double_size_digits() {
        let (_, out) = marked(100, &[(5, Rect::new(10, 40, 64, 48))]);
        // 2×: 20×20, just above the box.
        assert_label(&out, 100, (10, 20), "5", 2, colour(5));
    }

    #[test]
    fn tag_goes_inside_the_box_at_the_top_edge() {
        let (px, out) = marked(40, &[(9, Rect::new(5, 2, 20, 20))]);
        assert_label(&out, 40, (5, 2), "9", 1, colour(9));
        assert_eq!(at(&out, 40, 5, 1), at(&px, 40, 5, 1), "nothing above");
    }

    #[test]
    fn tag_stays_in_the_bitmap_for_a_box_past_the_right_edge() {
        let (_, out) = marked(40, &[(4, Rect::new(35, 20, 20, 10))]);
        assert_label(&out, 40, (30, 10), "4", 1, colour(4));
    }

    #[test]
    fn blackouts_are_clipped_at_every_edge() {
        let px = background(40, 40);
        let cases = [
            (Rect::new(-3, 5, 6, 4), block(0, 5, 3, 9)),
            (Rect::new(5, -3, 4, 6), block(5, 0, 9, 3)),
            (Rect::new(37, 5, 10, 4), block(37, 5, 40, 9)),
            (Rect::new(5, 37, 4, 10), block(5, 37, 9, 40)),
            (Rect::new(-5, -5, 50, 50), block(0, 0, 40, 40)),
        ];
        for (r, want) in cases {
            let out = paint_on(&px, 40, 40, Point::new(0, 0), &blackouts(&[r]));
            assert_eq!(changed(&px, &out, 40), want, "{r:?}");
        }
    }

    #[test]
    fn marks_are_clipped_at_every_edge() {
        let px = background(40, 40);
        let cases = [
            (0, Rect::new(-10, 15, 20, 10), (9, 20), (0, 5)),
            (1, Rect::new(15, -10, 20, 20), (30, 9), (15, 0)),
            (2, Rect::new(35, 25, 20, 10), (35, 30), (30, 15)),
            (3, Rect::new(5, 35, 10, 20), (10, 36), (5, 25)),
        ];
        for (n, r, edge, tag) in cases {
            let out = paint_on(&px, 40, 40, Point::new(0, 0), &marks(&[(n, r)]));
            assert_eq!(at(&out, 40, edge.0, edge.1), colour(n), "{r:?}");
            assert_label(&out, 40, tag, &n.to_string(), 1, colour(n));
        }
    }

    #[test]
    fn rects_fully_outside_change_nothing() {
        let px = background(40, 40);
        let outside = [
            Rect::new(-20, 0, 20, 10),
            Rect::new(40, 0, 5, 5),
            Rect::new(0, -10, 10, 10),
            Rect::new(0, 40, 10, 10),
            Rect::new(1000, 1000, 50, 50),
            Rect::new(10, 10, 0, 5),
            Rect::new(i32::MAX, i32::MIN, u32::MAX, u32::MAX),
        ];
        for r in outside {
            let paint = Paint {
                blackouts: vec![r],
                marks: vec![Mark {
                    number: 12,
                    rect: r,
                }],
            };
            assert_eq!(paint_on(&px, 40, 40, Point::new(0, 0), &paint), px, "{r:?}");
        }
    }

    #[test]
    fn origin_offsets_are_respected_negative_too() {
        let px = background(40, 40);
        let out = paint_on(
            &px,
            40,
            40,
            Point::new(-50, -30),
            &blackouts(&[Rect::new(-48, -29, 2, 2)]),
        );
        assert_eq!(changed(&px, &out, 40), block(2, 1, 4, 3));

        let paint = marks(&[(4, Rect::new(-90, -80, 20, 20))]);
        let out = paint_on(&px, 40, 40, Point::new(-100, -100), &paint);
        assert_eq!(at(&out, 40, 10, 25), colour(4));
        assert_eq!(at(&out, 40, 9, 25), at(&px, 40, 9, 25));
        assert_label(&out, 40, (10, 10), "4", 1, colour(4));
    }

    #[test]
    fn outline_of_a_tiny_box_stays_inside_it() {
        let (px, out) = marked(40, &[(6, Rect::new(10, 10, 1, 1))]);
        let mut want = block(10, 0, 20, 10);
        want.push((10, 10));
        assert_eq!(
            changed(&px, &out, 40),
            want,
            "the tag and the box's one pixel"
        );
        assert_eq!(at(&out, 40, 10, 10), colour(6));
    }

    #[test]
    fn tags_wider_than_the_bitmap_are_clipped() {
        let px = background(12, 12);
        let paint = marks(&[(u32::MAX, Rect::new(0, 0, 12, 12))]);
        let out = paint_on(&px, 12, 12, Point::new(0, 0), &paint);
        assert_eq!(at(&out, 12, 0, 0), colour(u32::MAX), "tag's margin");
    }

    #[test]
    fn blacked_out_pixels_decode_black_from_png() {
        let px = background(16, 16);
        let paint = Paint {
            blackouts: vec![Rect::new(11, 4, 4, 4)],
            marks: vec![Mark {
                number: 1,
                rect: Rect::new(0, 12, 16, 4),
            }],
        };
        let out = paint_on(&px, 16, 16, Point::new(0, 0), &paint);
        let png = enc(
            &bitmap(&out, 16, 16),
            Point::new(0, 0),
            ImageFormat::Png,
            75,
            None,
        );
        let (_, _, rgb) = decode(&png);
        let rgb_at = |x: usize, y: usize| &rgb[(y * 16 + x) * 3..][..3];
        assert_eq!(rgb_at(12, 5), &[0, 0, 0]);
        assert_eq!(rgb_at(15, 1), &[128, 101, 115], "background as RGB");
        let [b, g, r, _] = colour(1);
        assert_eq!(rgb_at(8, 15), &[r, g, b], "mark's bottom edge");
    }
}
