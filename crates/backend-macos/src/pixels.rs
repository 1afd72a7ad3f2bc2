//! Pixels from a `CGImage` for the encoder, which takes 4-byte BGRX rows:
//! where blue, green and red sit in a 32-bit pixel follows from the
//! image's alpha info and byte order, and rows are converted when they
//! are not BGRX already (ScreenCaptureKit is asked for BGRA, which is).
//! A capture that spans displays is composed from one image per display
//! into one frame.

use deskhand_backend::Rect;

/// `kCGBitmapByteOrder32Little`.
pub const BYTE_ORDER_32_LITTLE: u32 = 2 << 12;
/// `kCGBitmapByteOrder32Big`.
pub const BYTE_ORDER_32_BIG: u32 = 4 << 12;

/// Where blue, green and red are in a 4-byte pixel of a 32-bit image
/// with `alpha_info` (`CGImageAlphaInfo`) and `byte_order`
/// (`CGImageByteOrderInfo`, 0 for the default, big-endian); `None` for an
/// image with no alpha or padding byte (24-bit).
pub fn channel_offsets(alpha_info: u32, byte_order: u32) -> Option<[usize; 3]> {
    // Alpha (or padding) first: premultiplied first (2), first (4),
    // none-skip-first (6); last: premultiplied last (1), last (3),
    // none-skip-last (5).
    let alpha_first = match alpha_info {
        2 | 4 | 6 => true,
        1 | 3 | 5 => false,
        _ => return None,
    };
    let little = byte_order == BYTE_ORDER_32_LITTLE;
    // In memory order: the 32-bit value's bytes, reversed when little.
    let (b, g, r) = match (alpha_first, little) {
        (true, true) => (0, 1, 2),   // B G R A
        (false, true) => (1, 2, 3),  // A B G R
        (true, false) => (3, 2, 1),  // A R G B
        (false, false) => (2, 1, 0), // R G B A
    };
    Some([b, g, r])
}

/// `width × height` pixels of `src` (`stride` bytes a row, blue, green
/// and red at `offsets`) as BGRX rows of `width × 4` bytes.
pub fn to_bgrx(
    src: &[u8],
    stride: usize,
    width: usize,
    height: usize,
    offsets: [usize; 3],
) -> Vec<u8> {
    let mut out = vec![0u8; width * height * 4];
    for y in 0..height {
        let row = &src[y * stride..y * stride + width * 4];
        let dst = &mut out[y * width * 4..(y + 1) * width * 4];
        for (s, d) in row.chunks_exact(4).zip(dst.chunks_exact_mut(4)) {
            d[0] = s[offsets[0]];
            d[1] = s[offsets[1]];
            d[2] = s[offsets[2]];
            d[3] = 0xFF;
        }
    }
    out
}

/// Copies `part` (BGRX rows of `part_stride` bytes, at desktop pixels
/// `at`) into `frame` (BGRX rows of `frame.width × 4` bytes, at desktop
/// pixels `frame`), clipped to the frame.
pub fn blit(out: &mut [u8], frame: Rect, part: &[u8], part_stride: usize, at: Rect) {
    let Some(common) = frame.intersection(&at) else {
        return;
    };
    let width = common.width as usize * 4;
    let frame_stride = frame.width as usize * 4;
    for row in 0..common.height as usize {
        let sy = (common.y - at.y) as usize + row;
        let sx = (common.x - at.x) as usize * 4;
        let dy = (common.y - frame.y) as usize + row;
        let dx = (common.x - frame.x) as usize * 4;
        let from = sy * part_stride + sx;
        let to = dy * frame_stride + dx;
        out[to..to + width].copy_from_slice(&part[from..from + width]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bgra_little_is_bgrx_already_and_the_others_are_found() {
        assert_eq!(channel_offsets(2, BYTE_ORDER_32_LITTLE), Some([0, 1, 2]));
        assert_eq!(channel_offsets(6, BYTE_ORDER_32_LITTLE), Some([0, 1, 2]));
        assert_eq!(channel_offsets(1, BYTE_ORDER_32_LITTLE), Some([1, 2, 3]));
        assert_eq!(channel_offsets(2, 0), Some([3, 2, 1]), "ARGB in memory");
        assert_eq!(
            channel_offsets(5, BYTE_ORDER_32_BIG),
            Some([2, 1, 0]),
            "RGBX"
        );
        assert_eq!(channel_offsets(0, 0), None, "no alpha byte: 24-bit");
    }

    #[test]
    fn rows_are_converted_and_padding_dropped() {
        // Two RGBA pixels in a row of 12 bytes (4 of padding).
        let src = [10, 20, 30, 99, 40, 50, 60, 99, 0, 0, 0, 0];
        let out = to_bgrx(&src, 12, 2, 1, [2, 1, 0]);
        assert_eq!(out, [30, 20, 10, 255, 60, 50, 40, 255]);
    }

    #[test]
    fn parts_are_composed_into_the_frame() {
        // A 4×2 frame from (0, 0); a 2×2 part at (2, 0) of value 7 and a
        // 3×1 part at (-1, 1) of value 9 (clipped at the left).
        let frame = Rect::new(0, 0, 4, 2);
        let mut out = vec![0u8; 4 * 2 * 4];
        blit(&mut out, frame, &[7; 16], 8, Rect::new(2, 0, 2, 2));
        blit(&mut out, frame, &[9; 12], 12, Rect::new(-1, 1, 3, 1));
        let firsts: Vec<u8> = out.chunks_exact(4).map(|p| p[0]).collect();
        assert_eq!(firsts, [0, 0, 7, 7, 9, 9, 7, 7]);
        blit(&mut out, frame, &[1; 4], 4, Rect::new(10, 10, 1, 1));
        assert_eq!(
            out.iter().filter(|b| **b == 1).count(),
            0,
            "outside: nothing"
        );
    }
}
