//! Turning a captured bitmap into PNG or JPEG bytes, fast: PNG filtered and
//! deflated in stripes on every core (Sub filter, a Huffman-only deflate
//! made for it), JPEG with libjpeg-turbo straight from the backend's buffer
//! when no cursor is drawn; bitmaps of several displays scaled onto one
//! canvas first (`compose`); secure fields blacked out and set-of-mark
//! boxes drawn in before encoding (`paint`).

mod bitmap;
mod compose;
mod deflate;
mod image;
mod jpeg;
#[cfg(feature = "turbojpeg")]
mod jpeg_strips;
mod paint;
mod png_parallel;

pub use bitmap::{Bitmap, CursorImage, PixelFormat};
pub use compose::{Canvas, Placement, Thumbnail, resize, thumbnail};
pub use image::EncodedImage;
pub use paint::{Mark, Paint, painted};
pub use png_parallel::StripeCache;

use deskhand_protocol::messages::ImageFormat;

use deskhand_protocol::geometry::Point;

/// Why a bitmap could not be encoded.
#[derive(Debug, thiserror::Error)]
#[error("encoding failed: {0}")]
pub struct EncodeError(String);

/// Encodes `bitmap`, captured with its top-left at `origin`, drawing
/// `cursor` over it when given.
pub fn encode(
    bitmap: &Bitmap<'_>,
    origin: Point,
    format: ImageFormat,
    quality: u8,
    cursor: Option<&CursorImage>,
    cache: &mut StripeCache,
) -> Result<EncodedImage, EncodeError> {
    match (format, cursor) {
        (ImageFormat::Jpeg, None) => jpeg::encode_bgrx(bitmap, quality).map(EncodedImage::from),
        (ImageFormat::Jpeg, Some(_)) => {
            let rgb = to_rgb(bitmap, origin, cursor);
            jpeg::encode_rgb(&rgb, bitmap.width, bitmap.height, quality).map(EncodedImage::from)
        }
        (ImageFormat::Png, _) => png_parallel::encode_png(bitmap, origin, cursor, cache),
    }
}

/// Converts the bitmap to tightly packed RGB, drawing the cursor in.
fn to_rgb(bitmap: &Bitmap<'_>, origin: Point, cursor: Option<&CursorImage>) -> Vec<u8> {
    let (w, h) = (bitmap.width as usize, bitmap.height as usize);
    let mut rgb = vec![0u8; w * h * 3];
    match bitmap.format {
        PixelFormat::Bgrx => {
            for (src, dst) in bitmap
                .pixels
                .chunks(bitmap.stride)
                .zip(rgb.chunks_exact_mut(w * 3))
            {
                bgrx_row_to_rgb(&src[..w * 4], dst);
            }
        }
    }
    if let Some(c) = cursor {
        draw_cursor(&mut rgb, w, origin, c);
    }
    rgb
}

/// Converts one BGRX row to RGB, four pixels at a time with fixed sizes so
/// that the compiler can keep it branch-free.
fn bgrx_row_to_rgb(src: &[u8], dst: &mut [u8]) {
    let mut s = src.chunks_exact(16);
    let mut d = dst.chunks_exact_mut(12);
    for (s, d) in (&mut s).zip(&mut d) {
        for k in 0..4 {
            d[k * 3] = s[k * 4 + 2];
            d[k * 3 + 1] = s[k * 4 + 1];
            d[k * 3 + 2] = s[k * 4];
        }
    }
    for (s, d) in s
        .remainder()
        .chunks_exact(4)
        .zip(d.into_remainder().chunks_exact_mut(3))
    {
        d[0] = s[2];
        d[1] = s[1];
        d[2] = s[0];
    }
}

fn draw_cursor(rgb: &mut [u8], w: usize, origin: Point, c: &CursorImage) {
    for (y, row) in rgb.chunks_exact_mut(w * 3).enumerate() {
        draw_cursor_row(row, origin.x, origin.y + y as i32, c);
    }
}

/// Whether the cursor image has pixels on global row `y`.
fn cursor_covers_row(c: &CursorImage, y: i32) -> bool {
    let cy = i64::from(y) - i64::from(c.origin.y);
    (0..i64::from(c.height)).contains(&cy)
}

/// Blends the cursor (premultiplied ARGB) into one RGB row whose first
/// pixel is at global (`x0`, `y`).
fn draw_cursor_row(row: &mut [u8], x0: i32, y: i32, c: &CursorImage) {
    if !cursor_covers_row(c, y) {
        return;
    }
    let cy = i64::from(y) - i64::from(c.origin.y);
    let w = (row.len() / 3) as i64;
    for cx in 0..i64::from(c.width) {
        let x = i64::from(c.origin.x) + cx - i64::from(x0);
        if x < 0 || x >= w {
            continue;
        }
        let px = c.argb[(cy * i64::from(c.width) + cx) as usize];
        let a = px >> 24;
        if a == 0 {
            continue;
        }
        let i = x as usize * 3;
        let inv = 255 - a;
        for (k, shift) in [16u32, 8, 0].into_iter().enumerate() {
            let src = (px >> shift) & 0xff;
            let dst = u32::from(row[i + k]);
            row[i + k] = (src + dst * inv / 255).min(255) as u8;
        }
    }
}

/// Helpers shared by the encoder tests.
#[cfg(test)]
pub(crate) mod test_util {
    use super::*;

    /// A tight BGRX bitmap over `pixels`.
    pub fn bitmap(pixels: &[u8], w: u32, h: u32) -> Bitmap<'_> {
        Bitmap {
            width: w,
            height: h,
            stride: w as usize * 4,
            format: PixelFormat::Bgrx,
            pixels,
        }
    }

    /// Decodes a PNG into (width, height, RGB).
    pub fn decode(png_bytes: &[u8]) -> (u32, u32, Vec<u8>) {
        let mut r = png::Decoder::new(std::io::Cursor::new(png_bytes))
            .read_info()
            .expect("header");
        let mut buf = vec![0; r.output_buffer_size().expect("size")];
        let info = r.next_frame(&mut buf).expect("bitmap");
        buf.truncate(info.buffer_size());
        (info.width, info.height, buf)
    }

    /// Decodes a JPEG into (width, height, RGB).
    #[cfg(feature = "turbojpeg")]
    pub fn decode_jpeg(jpeg: &[u8]) -> (u32, u32, Vec<u8>) {
        let image = turbojpeg::decompress(jpeg, turbojpeg::PixelFormat::RGB).expect("decodes");
        (image.width as u32, image.height as u32, image.pixels)
    }

    /// Encodes with a fresh stripe cache.
    pub fn enc(
        f: &Bitmap<'_>,
        origin: Point,
        format: ImageFormat,
        quality: u8,
        cursor: Option<&CursorImage>,
    ) -> Vec<u8> {
        encode(
            f,
            origin,
            format,
            quality,
            cursor,
            &mut StripeCache::default(),
        )
        .expect("encode")
        .to_vec()
    }
}

#[cfg(test)]
mod tests {
    use super::test_util::{bitmap, decode, enc};
    use super::*;

    #[test]
    fn bgrx_becomes_rgb() {
        let px = [1u8, 2, 3, 0, 10, 20, 30, 0];
        let f = bitmap(&px, 2, 1);
        assert_eq!(
            to_rgb(&f, Point::new(0, 0), None),
            vec![3, 2, 1, 30, 20, 10]
        );
    }

    #[test]
    fn cursor_is_drawn_where_it_is() {
        let px = [0u8; 4 * 4];
        let f = bitmap(&px, 2, 2);
        let c = CursorImage {
            origin: Point::new(11, 10),
            width: 1,
            height: 1,
            argb: vec![0xff_ff_00_00],
        };
        let rgb = to_rgb(&f, Point::new(10, 10), Some(&c));
        assert_eq!(&rgb[3..6], &[255, 0, 0]);
        assert_eq!(&rgb[6..9], &[0, 0, 0], "second row untouched");
        assert_eq!(&rgb[0..3], &[0, 0, 0]);
    }

    #[test]
    fn png_round_trips_every_pixel() {
        // Odd width, many rows (several batches), varied content.
        let (w, h) = (37u32, 53u32);
        let px: Vec<u8> = (0..w * h * 4).map(|i| (i * 7 % 251) as u8).collect();
        let f = bitmap(&px, w, h);
        let png = enc(&f, Point::new(0, 0), ImageFormat::Png, 75, None);
        let (dw, dh, rgb) = decode(&png);
        assert_eq!((dw, dh), (w, h));
        assert_eq!(rgb, to_rgb(&f, Point::new(0, 0), None));
    }

    #[test]
    fn png_has_the_cursor_where_it_is() {
        let px = vec![0u8; 8 * 8 * 4];
        let f = bitmap(&px, 8, 8);
        let c = CursorImage {
            origin: Point::new(103, 52),
            width: 2,
            height: 1,
            argb: vec![0xff_00_ff_00, 0x80_40_00_00],
        };
        let png = enc(&f, Point::new(100, 50), ImageFormat::Png, 75, Some(&c));
        let (_, _, rgb) = decode(&png);
        let at = |x: usize, y: usize| &rgb[(y * 8 + x) * 3..][..3];
        assert_eq!(at(3, 2), &[0, 255, 0]);
        assert_eq!(
            at(4, 2),
            &[64, 0, 0],
            "premultiplied half-transparent red over black"
        );
        assert_eq!(at(3, 1), &[0, 0, 0]);
    }

    #[test]
    fn jpeg_quality_is_honoured() {
        let (w, h) = (64u32, 64u32);
        let px: Vec<u8> = (0..w * h * 4).map(|i| ((i * 31) ^ (i / 7)) as u8).collect();
        let f = bitmap(&px, w, h);
        let hi = enc(&f, Point::new(0, 0), ImageFormat::Jpeg, 95, None);
        let lo = enc(&f, Point::new(0, 0), ImageFormat::Jpeg, 20, None);
        assert!(
            lo.len() < hi.len(),
            "q20 {} bytes, q95 {} bytes",
            lo.len(),
            hi.len()
        );
        assert_eq!(&hi[hi.len() - 2..], &[0xff, 0xd9], "ends with EOI");
    }

    #[test]
    fn png_and_jpeg_have_their_magic() {
        let px = vec![128u8; 16 * 8 * 4];
        let f = bitmap(&px, 16, 8);
        let png = enc(&f, Point::new(0, 0), ImageFormat::Png, 75, None);
        assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n");
        let jpg = enc(&f, Point::new(0, 0), ImageFormat::Jpeg, 75, None);
        assert_eq!(&jpg[..2], &[0xff, 0xd8]);
    }
}
