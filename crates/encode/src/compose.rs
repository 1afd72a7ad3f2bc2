//! Model-sized bitmaps: captured displays scaled (SIMD, `fast_image_resize`)
//! into one BGRX canvas that is black wherever no display is.

use fast_image_resize::images::{Image, ImageRef};
use fast_image_resize::{FilterType, PixelType, ResizeAlg, ResizeOptions, Resizer};

use crate::EncodeError;
use crate::bitmap::{Bitmap, PixelFormat};

/// Where a captured image goes on the canvas, in canvas pixels.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Placement {
    /// Left edge.
    pub x: u32,
    /// Top edge.
    pub y: u32,
    /// Width.
    pub width: u32,
    /// Height.
    pub height: u32,
}

/// A BGRX image the displays of a bitmap are drawn onto; starts black.
#[derive(Debug, Clone)]
pub struct Canvas {
    width: u32,
    height: u32,
    pixels: Vec<u8>,
}

impl Canvas {
    /// A black canvas of `width` × `height`.
    pub fn new(width: u32, height: u32) -> Self {
        Self {
            width,
            height,
            pixels: vec![0; width as usize * height as usize * 4],
        }
    }

    /// The canvas as a bitmap, for [`crate::encode`].
    pub fn bitmap(&self) -> Bitmap<'_> {
        Bitmap {
            width: self.width,
            height: self.height,
            stride: self.width as usize * 4,
            format: PixelFormat::Bgrx,
            pixels: &self.pixels,
        }
    }

    /// Draws `paint` onto the canvas, its rectangles in canvas pixels.
    pub fn paint(&mut self, paint: &crate::Paint) {
        let size = (self.width, self.height, self.width as usize * 4);
        let origin = deskhand_protocol::geometry::Point::new(0, 0);
        crate::paint::paint_in_place(&mut self.pixels, size, origin, paint);
    }

    /// Draws `src` scaled to fill `at` (copied as is when the sizes match).
    pub fn draw(&mut self, src: &Bitmap<'_>, at: Placement) -> Result<(), EncodeError> {
        if at.width == 0 || at.height == 0 {
            return Ok(());
        }
        if u64::from(at.x) + u64::from(at.width) > u64::from(self.width)
            || u64::from(at.y) + u64::from(at.height) > u64::from(self.height)
        {
            return Err(EncodeError(format!(
                "placement {at:?} is outside the {}x{} canvas",
                self.width, self.height
            )));
        }
        if at.x == 0 && at.y == 0 && at.width == self.width && at.height == self.height {
            // The common case (one display): scale straight into the canvas.
            let mut dst =
                Image::from_slice_u8(self.width, self.height, &mut self.pixels, PixelType::U8x4)
                    .map_err(|e| EncodeError(format!("canvas: {e}")))?;
            return resize_into(src, &mut dst);
        }
        let scaled = resize(src, at.width, at.height)?;
        self.blit(&scaled, at);
        Ok(())
    }

    /// Copies a tight BGRX image of `at`'s size to `at`.
    fn blit(&mut self, tight: &[u8], at: Placement) {
        let row = at.width as usize * 4;
        let stride = self.width as usize * 4;
        for (y, src) in tight.chunks_exact(row).enumerate() {
            let start = (at.y as usize + y) * stride + at.x as usize * 4;
            self.pixels[start..start + row].copy_from_slice(src);
        }
    }
}

/// `src` scaled to `width` × `height`, as tight BGRX rows.
pub fn resize(src: &Bitmap<'_>, width: u32, height: u32) -> Result<Vec<u8>, EncodeError> {
    let mut dst = Image::new(width, height, PixelType::U8x4);
    resize_into(src, &mut dst)?;
    Ok(dst.into_vec())
}

/// A small JPEG of `src` at most `max_width` wide (the Activity window's
/// timeline): scaled by interpolation, which reads only a few source
/// pixels per thumbnail pixel, so that it costs little beside a capture.
pub fn thumbnail(src: &Bitmap<'_>, max_width: u32) -> Result<Thumbnail, EncodeError> {
    let width = src.width.min(max_width).max(1);
    let height = (u64::from(src.height) * u64::from(width) / u64::from(src.width.max(1)))
        .clamp(1, u64::from(u32::MAX)) as u32;
    let mut dst = Image::new(width, height, PixelType::U8x4);
    resize_with(
        src,
        &mut dst,
        ResizeAlg::Interpolation(FilterType::Bilinear),
    )?;
    let pixels = dst.into_vec();
    let jpeg = crate::jpeg::encode_bgrx(
        &Bitmap {
            width,
            height,
            stride: width as usize * 4,
            format: PixelFormat::Bgrx,
            pixels: &pixels,
        },
        THUMBNAIL_QUALITY,
    )?;
    Ok(Thumbnail {
        width,
        height,
        jpeg,
    })
}

/// The JPEG quality of thumbnails.
const THUMBNAIL_QUALITY: u8 = 70;

/// A thumbnail: its size and its JPEG bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Thumbnail {
    /// Width in pixels.
    pub width: u32,
    /// Height in pixels.
    pub height: u32,
    /// JPEG bytes.
    pub jpeg: Vec<u8>,
}

fn resize_into(src: &Bitmap<'_>, dst: &mut Image<'_>) -> Result<(), EncodeError> {
    resize_with(src, dst, ResizeAlg::Convolution(FilterType::Bilinear))
}

fn resize_with(src: &Bitmap<'_>, dst: &mut Image<'_>, alg: ResizeAlg) -> Result<(), EncodeError> {
    let row = src.width as usize * 4;
    let tight;
    let pixels = if src.stride == row {
        &src.pixels[..row * src.height as usize]
    } else {
        // Rows with padding: the resizer wants them packed.
        tight = src
            .pixels
            .chunks(src.stride)
            .take(src.height as usize)
            .flat_map(|r| &r[..row])
            .copied()
            .collect::<Vec<u8>>();
        &tight
    };
    let same_size = src.width == dst.width() && src.height == dst.height();
    if same_size {
        dst.buffer_mut().copy_from_slice(pixels);
        return Ok(());
    }
    let view = ImageRef::new(src.width, src.height, pixels, PixelType::U8x4)
        .map_err(|e| EncodeError(format!("source image: {e}")))?;
    // Captures are opaque: the fourth byte is padding, not alpha.
    let options = ResizeOptions::new().resize_alg(alg).use_alpha(false);
    Resizer::new()
        .resize(&view, dst, &options)
        .map_err(|e| EncodeError(format!("resize: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_util::bitmap;

    fn solid(w: u32, h: u32, bgrx: [u8; 4]) -> Vec<u8> {
        bgrx.iter()
            .copied()
            .cycle()
            .take((w * h * 4) as usize)
            .collect()
    }

    #[test]
    #[cfg(feature = "turbojpeg")]
    fn a_thumbnail_keeps_the_aspect_and_the_colour() {
        let pixels = solid(1280, 800, [40, 160, 220, 0]);
        let t = thumbnail(&bitmap(&pixels, 1280, 800), 240).expect("thumbnail");
        assert_eq!((t.width, t.height), (240, 150));
        let (w, h, rgb) = crate::test_util::decode_jpeg(&t.jpeg);
        assert_eq!((w, h), (240, 150));
        let centre = &rgb[(75 * 240 + 120) * 3..][..3];
        for (got, want) in centre.iter().zip([220u8, 160, 40]) {
            assert!(got.abs_diff(want) <= 4, "{centre:?}");
        }
        let small = thumbnail(&bitmap(&pixels[..100 * 50 * 4], 100, 50), 240).expect("small");
        assert_eq!((small.width, small.height), (100, 50), "never scaled up");
    }

    fn px(c: &Canvas, x: u32, y: u32) -> [u8; 4] {
        let i = ((y * c.width + x) * 4) as usize;
        c.pixels[i..i + 4].try_into().expect("4 bytes")
    }

    #[test]
    fn two_displays_land_where_placed_and_the_gap_stays_black() {
        let red = solid(40, 20, [0, 0, 255, 0]);
        let blue = solid(20, 10, [255, 0, 0, 0]);
        let mut c = Canvas::new(30, 10);
        let at = |x, w, h| Placement {
            x,
            y: 0,
            width: w,
            height: h,
        };
        c.draw(&bitmap(&red, 40, 20), at(0, 20, 10)).expect("red");
        c.draw(&bitmap(&blue, 20, 10), at(20, 10, 5)).expect("blue");
        assert_eq!(px(&c, 5, 5), [0, 0, 255, 0], "red scaled to half");
        assert_eq!(px(&c, 25, 2), [255, 0, 0, 0], "blue scaled to half");
        assert_eq!(px(&c, 25, 8), [0, 0, 0, 0], "below the smaller display");
    }

    #[test]
    fn a_full_canvas_draw_scales_in_place() {
        let grey = solid(1920, 1080, [90, 90, 90, 0]);
        let mut c = Canvas::new(1366, 768);
        c.draw(
            &bitmap(&grey, 1920, 1080),
            Placement {
                x: 0,
                y: 0,
                width: 1366,
                height: 768,
            },
        )
        .expect("draw");
        assert_eq!(px(&c, 0, 0), [90, 90, 90, 0]);
        assert_eq!(px(&c, 1365, 767), [90, 90, 90, 0]);
    }

    #[test]
    fn paint_draws_in_canvas_pixels() {
        use deskhand_protocol::geometry::Rect;
        let grey = solid(40, 40, [90, 90, 90, 0]);
        let mut c = Canvas::new(40, 40);
        let whole = Placement {
            x: 0,
            y: 0,
            width: 40,
            height: 40,
        };
        c.draw(&bitmap(&grey, 40, 40), whole).expect("draw");
        c.paint(&crate::Paint {
            blackouts: vec![Rect::new(30, 30, 5, 5)],
            marks: vec![crate::Mark {
                number: 1,
                rect: Rect::new(10, 20, 12, 12),
            }],
        });
        assert_eq!(px(&c, 32, 32), [0, 0, 0, 0], "blacked out");
        assert_ne!(px(&c, 10, 25), [90, 90, 90, 0], "the mark's left edge");
        assert_eq!(px(&c, 16, 26), [90, 90, 90, 0], "inside the mark");
        assert_eq!(px(&c, 5, 5), [90, 90, 90, 0], "away from both");
    }

    #[test]
    fn padded_rows_are_read_without_their_padding() {
        // 2×2 with a stride of 12 bytes (4 bytes of padding per row).
        let mut px_in = vec![0u8; 24];
        px_in[0..4].copy_from_slice(&[1, 2, 3, 0]);
        px_in[16..20].copy_from_slice(&[7, 8, 9, 0]);
        let f = Bitmap {
            width: 2,
            height: 2,
            stride: 12,
            format: PixelFormat::Bgrx,
            pixels: &px_in,
        };
        let out = resize(&f, 2, 2).expect("copy");
        assert_eq!(&out[0..4], &[1, 2, 3, 0]);
        assert_eq!(&out[12..16], &[7, 8, 9, 0]);
    }

    #[test]
    fn a_placement_past_the_canvas_is_refused() {
        let red = solid(4, 4, [0, 0, 255, 0]);
        let mut c = Canvas::new(4, 4);
        let far = Placement {
            x: 2,
            y: 0,
            width: 4,
            height: 4,
        };
        assert!(c.draw(&bitmap(&red, 4, 4), far).is_err());
    }
}
