//! A captured bitmap as the encoder reads it, and the pointer's image drawn
//! into it.

use deskhand_protocol::geometry::Point;

/// Pixel layout of a captured bitmap.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PixelFormat {
    /// 4 bytes per pixel: blue, green, red, unused (X11 ZPixmap depth 24).
    Bgrx,
}

/// A captured bitmap, borrowed from the backend (e.g. a shared-memory
/// segment) for the duration of the capture callback.
#[derive(Debug)]
pub struct Bitmap<'a> {
    /// Width in pixels.
    pub width: u32,
    /// Height in pixels.
    pub height: u32,
    /// Bytes per row.
    pub stride: usize,
    /// Pixel layout.
    pub format: PixelFormat,
    /// `stride * height` bytes.
    pub pixels: &'a [u8],
}

impl<'a> Bitmap<'a> {
    /// `width` × `height` BGRx pixels in rows with no padding.
    pub fn bgrx(width: u32, height: u32, pixels: &'a [u8]) -> Self {
        Self {
            width,
            height,
            stride: width as usize * 4,
            format: PixelFormat::Bgrx,
            pixels,
        }
    }
}

/// The pointer's image, for drawing it into screenshots.
#[derive(Debug, Clone)]
pub struct CursorImage {
    /// Top-left of the image in global desktop pixels.
    pub origin: Point,
    /// Width in pixels.
    pub width: u32,
    /// Height in pixels.
    pub height: u32,
    /// Premultiplied ARGB, one `u32` per pixel, row-major.
    pub argb: Vec<u32>,
}
