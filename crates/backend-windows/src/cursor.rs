//! The pointer's image with its transparency. Windows draws a cursor but
//! does not hand out its pixels with alpha in one form (colour cursors,
//! monochrome ones with a mask, inverting ones), so it is drawn twice, on
//! black and on white, and the alpha read from the difference: a pixel
//! drawn with alpha `a` over black is `c·a` (already premultiplied), over
//! white `c·a + (1 − a)`.

/// The premultiplied ARGB pixels of an image drawn on black (`black`) and
/// on white (`white`), both 0x00RRGGBB as a 32-bit DIB holds them.
/// Inverting pixels (lighter on black than on white) come out opaque.
pub fn unblend(black: &[u32], white: &[u32]) -> Vec<u32> {
    black
        .iter()
        .zip(white)
        .map(|(&b, &w)| {
            let channel = |shift: u32| ((b >> shift) & 0xff, (w >> shift) & 0xff);
            let [(br, wr), (bg, wg), (bb, wb)] = [channel(16), channel(8), channel(0)];
            // What white showed through, channel by channel; the largest
            // one decides (a drawn pixel never lets more through).
            let through = wr
                .saturating_sub(br)
                .min(wg.saturating_sub(bg))
                .min(wb.saturating_sub(bb));
            let alpha = 255 - through;
            let clamp = |c: u32| c.min(alpha);
            (alpha << 24) | (clamp(br) << 16) | (clamp(bg) << 8) | clamp(bb)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn opaque_transparent_and_half_pixels_unblend() {
        let black = [0x00ff0000, 0x0000_0000, 0x0040_4040];
        let white = [0x00ff0000, 0x00ff_ffff, 0x00bf_bfbf];
        assert_eq!(
            unblend(&black, &white),
            [0xffff0000, 0x0000_0000, 0x8040_4040]
        );
    }

    #[test]
    fn an_inverting_pixel_comes_out_opaque() {
        // White on black, black on white.
        assert_eq!(unblend(&[0x00ff_ffff], &[0x0000_0000]), [0xffff_ffff]);
    }

    #[test]
    fn colour_never_exceeds_alpha() {
        for (b, w) in [(0x0020_2020u32, 0x00f0_f0f0u32), (0x0010_8010, 0x0090_f090)] {
            let p = unblend(&[b], &[w])[0];
            let a = p >> 24;
            for shift in [16, 8, 0] {
                assert!((p >> shift) & 0xff <= a, "{p:08x}");
            }
        }
    }
}
