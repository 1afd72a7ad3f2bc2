//! Turning a captured frame into PNG or JPEG bytes, fast: PNG with
//! fdeflate's fast mode and the Sub filter, JPEG with the SIMD encoder,
//! straight from the backend's buffer when no cursor is drawn.

use deskhand_protocol::messages::ImageFormat;
use jpeg_encoder::{ColorType, Encoder as JpegEncoder};
use png::{BitDepth, Compression, Encoder as PngEncoder, Filter};

use crate::backend::{CursorImage, Frame, PixelFormat};
use crate::geometry::Point;

/// Why a frame could not be encoded.
#[derive(Debug, thiserror::Error)]
#[error("encoding failed: {0}")]
pub struct EncodeError(String);

/// Encodes `frame`, captured with its top-left at `origin`, drawing
/// `cursor` over it when given.
pub fn encode(
    frame: &Frame<'_>,
    origin: Point,
    format: ImageFormat,
    quality: u8,
    cursor: Option<&CursorImage>,
) -> Result<Vec<u8>, EncodeError> {
    let tight = frame.stride == frame.width as usize * 4;
    match (format, cursor) {
        (ImageFormat::Jpeg, None) if tight => jpeg(frame.pixels, frame, ColorType::Bgra, quality),
        (ImageFormat::Jpeg, _) => {
            let rgb = to_rgb(frame, origin, cursor);
            jpeg(&rgb, frame, ColorType::Rgb, quality)
        }
        (ImageFormat::Png, _) => png_bytes(&to_rgb(frame, origin, cursor), frame),
    }
}

fn jpeg(
    data: &[u8],
    frame: &Frame<'_>,
    color: ColorType,
    quality: u8,
) -> Result<Vec<u8>, EncodeError> {
    let (w, h) = dims16(frame)?;
    let mut out = Vec::with_capacity(data.len() / 8);
    JpegEncoder::new(&mut out, quality.clamp(1, 100))
        .encode(data, w, h, color)
        .map_err(|e| EncodeError(e.to_string()))?;
    Ok(out)
}

fn dims16(frame: &Frame<'_>) -> Result<(u16, u16), EncodeError> {
    let w = u16::try_from(frame.width).map_err(|_| EncodeError("image too wide".into()))?;
    let h = u16::try_from(frame.height).map_err(|_| EncodeError("image too tall".into()))?;
    Ok((w, h))
}

#[doc(hidden)]
pub fn png_bytes(rgb: &[u8], frame: &Frame<'_>) -> Result<Vec<u8>, EncodeError> {
    let mut out = Vec::with_capacity(rgb.len() / 4);
    {
        let mut enc = PngEncoder::new(&mut out, frame.width, frame.height);
        enc.set_color(png::ColorType::Rgb);
        enc.set_depth(BitDepth::Eight);
        enc.set_compression(Compression::Fast);
        enc.set_filter(Filter::Sub);
        let mut writer = enc.write_header().map_err(|e| EncodeError(e.to_string()))?;
        writer
            .write_image_data(rgb)
            .map_err(|e| EncodeError(e.to_string()))?;
        writer.finish().map_err(|e| EncodeError(e.to_string()))?;
    }
    Ok(out)
}

/// Converts the frame to tightly packed RGB, drawing the cursor in.
#[doc(hidden)]
pub fn to_rgb(frame: &Frame<'_>, origin: Point, cursor: Option<&CursorImage>) -> Vec<u8> {
    let (w, h) = (frame.width as usize, frame.height as usize);
    let mut rgb = vec![0u8; w * h * 3];
    match frame.format {
        PixelFormat::Bgrx => {
            for (src, dst) in frame
                .pixels
                .chunks(frame.stride)
                .zip(rgb.chunks_exact_mut(w * 3))
            {
                bgrx_row_to_rgb(&src[..w * 4], dst);
            }
        }
    }
    if let Some(c) = cursor {
        draw_cursor(&mut rgb, w, h, origin, c);
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

fn draw_cursor(rgb: &mut [u8], w: usize, h: usize, origin: Point, c: &CursorImage) {
    for cy in 0..c.height as i64 {
        let y = i64::from(c.origin.y) + cy - i64::from(origin.y);
        if y < 0 || y >= h as i64 {
            continue;
        }
        for cx in 0..c.width as i64 {
            let x = i64::from(c.origin.x) + cx - i64::from(origin.x);
            if x < 0 || x >= w as i64 {
                continue;
            }
            let px = c.argb[(cy * i64::from(c.width) + cx) as usize];
            let a = px >> 24;
            if a == 0 {
                continue;
            }
            let i = (y as usize * w + x as usize) * 3;
            let inv = 255 - a;
            for (k, shift) in [16u32, 8, 0].into_iter().enumerate() {
                let src = (px >> shift) & 0xff;
                let dst = u32::from(rgb[i + k]);
                rgb[i + k] = (src + dst * inv / 255).min(255) as u8;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frame(pixels: &[u8], w: u32, h: u32) -> Frame<'_> {
        Frame {
            width: w,
            height: h,
            stride: w as usize * 4,
            format: PixelFormat::Bgrx,
            pixels,
        }
    }

    #[test]
    fn bgrx_becomes_rgb() {
        let px = [1u8, 2, 3, 0, 10, 20, 30, 0];
        let f = frame(&px, 2, 1);
        assert_eq!(
            to_rgb(&f, Point::new(0, 0), None),
            vec![3, 2, 1, 30, 20, 10]
        );
    }

    #[test]
    fn cursor_is_drawn_where_it_is() {
        let px = [0u8; 4 * 4];
        let f = frame(&px, 2, 2);
        let c = CursorImage {
            origin: Point::new(11, 10),
            width: 1,
            height: 1,
            argb: vec![0xff_ff_00_00],
        };
        let rgb = to_rgb(&f, Point::new(10, 10), Some(&c));
        assert_eq!(&rgb[3..6], &[255, 0, 0]);
        assert_eq!(&rgb[0..3], &[0, 0, 0]);
    }

    #[test]
    fn png_and_jpeg_have_their_magic() {
        let px = vec![128u8; 16 * 8 * 4];
        let f = frame(&px, 16, 8);
        let png = encode(&f, Point::new(0, 0), ImageFormat::Png, 75, None).expect("png");
        assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n");
        let jpg = encode(&f, Point::new(0, 0), ImageFormat::Jpeg, 75, None).expect("jpeg");
        assert_eq!(&jpg[..2], &[0xff, 0xd8]);
    }
}
