//! Cutting a rectangle out of a larger 32-bit image (a mapped texture, a
//! window's whole image) for the encoder, which reads `stride × height`
//! bytes from the first pixel: borrowed where those bytes lie inside the
//! image, copied row by row where the last row would run past its end.

use std::borrow::Cow;

/// Rows `y..y + height`, columns `x..x + width` of an image of 4-byte
/// pixels with `stride` bytes per row, and the stride of the result.
/// `None` when the rectangle is not inside the image.
pub fn crop(
    image: &[u8],
    stride: usize,
    (x, y): (usize, usize),
    (width, height): (usize, usize),
) -> Option<(Cow<'_, [u8]>, usize)> {
    let row = width.checked_mul(4)?;
    let start = y.checked_mul(stride)?.checked_add(x.checked_mul(4)?)?;
    let last_row_end = (y + height.checked_sub(1)?) * stride + x * 4 + row;
    if width == 0 || x * 4 + row > stride || last_row_end > image.len() {
        return None;
    }
    let whole = start + stride * height;
    if whole <= image.len() {
        return Some((Cow::Borrowed(&image[start..whole]), stride));
    }
    let mut copied = Vec::with_capacity(row * height);
    for r in 0..height {
        let from = start + r * stride;
        copied.extend_from_slice(&image[from..from + row]);
    }
    Some((Cow::Owned(copied), row))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A 4×3 image whose pixel (x, y) is 4 bytes of `10·y + x`.
    fn image() -> Vec<u8> {
        (0..3u8)
            .flat_map(|y| (0..4u8).flat_map(move |x| [10 * y + x; 4]))
            .collect()
    }

    /// The first byte of each pixel of a crop.
    fn firsts(bytes: &[u8], stride: usize, width: usize, height: usize) -> Vec<u8> {
        (0..height)
            .flat_map(|r| (0..width).map(move |c| bytes[r * stride + c * 4]))
            .collect()
    }

    #[test]
    fn a_crop_that_fits_is_borrowed() {
        let img = image();
        let (bytes, stride) = crop(&img, 16, (1, 0), (2, 2)).expect("inside");
        assert!(matches!(bytes, Cow::Borrowed(_)));
        assert_eq!(stride, 16);
        assert_eq!(firsts(&bytes, stride, 2, 2), [1, 2, 11, 12]);
    }

    #[test]
    fn a_crop_whose_last_row_would_overrun_is_copied() {
        let img = image();
        let (bytes, stride) = crop(&img, 16, (2, 1), (2, 2)).expect("inside");
        assert!(matches!(bytes, Cow::Owned(_)));
        assert_eq!((stride, bytes.len()), (8, 16));
        assert_eq!(firsts(&bytes, stride, 2, 2), [12, 13, 22, 23]);
    }

    #[test]
    fn a_crop_outside_the_image_is_refused() {
        let img = image();
        assert!(crop(&img, 16, (3, 0), (2, 1)).is_none());
        assert!(crop(&img, 16, (0, 2), (1, 2)).is_none());
        assert!(crop(&img, 16, (0, 0), (0, 1)).is_none());
        assert!(crop(&img, 16, (0, 0), (1, 0)).is_none());
    }
}
