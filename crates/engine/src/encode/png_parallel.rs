//! PNG encoding on every core, reusing what did not change. The frame is
//! cut into horizontal stripes of [`STRIPE_ROWS`] rows; each stripe is
//! converted to RGB (cursor drawn in), Sub-filtered and deflated by
//! fdeflate's fast compressor, the stripes spread over one thread per core.
//! The stripes' zlib streams are then joined into ONE valid zlib stream, as
//! parallel gzip does: every stripe but the last becomes a non-final
//! deflate block followed by an empty stored block (which brings the stream
//! back to a byte boundary), and the Adler-32 checksums are combined.
//!
//! Because stripes are independent, a stripe whose pixels are the same as
//! in the last capture of the same rectangle (same 128-bit XXH3 of its
//! rows, and no cursor drawn over it) is not compressed again: agents take a
//! screenshot after each small action, and most stripes have not changed.
//!
//! Joining needs to know where a stripe's end-of-block code ends inside its
//! last byte. fdeflate uses one fixed Huffman table, so this is found once:
//! a self-test joins small streams and inflates the result. If that ever
//! fails (a future fdeflate with another table), encoding falls back to one
//! stripe, which needs no joining, and to no reuse.

use std::sync::{Arc, OnceLock};

use fdeflate::Compressor;
use xxhash_rust::xxh3::Xxh3;

use super::{EncodeError, bgrx_row_to_rgb, draw_cursor_row};
use crate::backend::{CursorImage, Frame, PixelFormat};
use crate::geometry::{Point, Rect};

/// PNG filter type byte for "Sub".
const FILTER_SUB: u8 = 1;

/// Rows per stripe. Fixed, so that the stripes of two captures of the same
/// rectangle line up.
pub const STRIPE_ROWS: usize = 64;

/// The compressed stripes of the last PNG capture of one rectangle.
#[derive(Debug, Default)]
pub struct StripeCache {
    rect: Option<Rect>,
    stripes: Vec<Option<(u128, Arc<Stripe>)>>,
}

/// One stripe's zlib stream and the length of the data it holds.
#[derive(Debug)]
struct Stripe {
    zlib: Vec<u8>,
    raw_len: usize,
}

/// Encodes `frame`, captured at `origin`, as an 8-bit RGB PNG, reusing the
/// unchanged stripes of the last capture of the same rectangle.
pub fn encode_png(
    frame: &Frame<'_>,
    origin: Point,
    cursor: Option<&CursorImage>,
    cache: &mut StripeCache,
) -> Result<Vec<u8>, EncodeError> {
    if joining_works() {
        encode_striped(frame, origin, cursor, cache, STRIPE_ROWS)
    } else {
        let whole = frame.height as usize;
        encode_striped(frame, origin, cursor, &mut StripeCache::default(), whole)
    }
}

/// Encodes `frame` in stripes of `rows` rows.
fn encode_striped(
    frame: &Frame<'_>,
    origin: Point,
    cursor: Option<&CursorImage>,
    cache: &mut StripeCache,
    rows: usize,
) -> Result<Vec<u8>, EncodeError> {
    let (w, h) = (frame.width as usize, frame.height as usize);
    if w == 0 || h == 0 || rows == 0 {
        return Err(EncodeError("empty image".into()));
    }
    let count = h.div_ceil(rows);
    let rect = Rect::new(origin.x, origin.y, frame.width, frame.height);
    if cache.rect != Some(rect) || cache.stripes.len() != count {
        cache.rect = Some(rect);
        cache.stripes = (0..count).map(|_| None).collect();
    }
    let workers = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .min(count);
    let previous = &cache.stripes;
    let work = |worker: usize| -> Result<Vec<(usize, u128, Arc<Stripe>)>, EncodeError> {
        let mut done = Vec::new();
        for i in (worker..count).step_by(workers) {
            let (y0, y1) = (i * rows, ((i + 1) * rows).min(h));
            let key = stripe_key(frame, y0, y1);
            let under_cursor = cursor.is_some_and(|c| {
                let top = i64::from(c.origin.y) - i64::from(origin.y);
                top < y1 as i64 && top + i64::from(c.height) > y0 as i64
            });
            let reusable = previous[i]
                .as_ref()
                .filter(|(k, _)| *k == key && !under_cursor)
                .map(|(_, s)| s.clone());
            let stripe = match reusable {
                Some(s) => s,
                None => Arc::new(compress_rows(frame, origin, cursor, y0, y1)?),
            };
            // A stripe with the cursor drawn in is not reused later.
            let key = if under_cursor { !key } else { key };
            done.push((i, key, stripe));
        }
        Ok(done)
    };
    let results: Vec<Result<Vec<_>, EncodeError>> = std::thread::scope(|scope| {
        let handles: Vec<_> = (1..workers).map(|t| scope.spawn(move || work(t))).collect();
        let first = work(0);
        std::iter::once(first)
            .chain(handles.into_iter().map(|h| {
                h.join()
                    .unwrap_or_else(|_| Err(EncodeError("encoder thread panicked".into())))
            }))
            .collect()
    });
    let mut stripes: Vec<Option<Arc<Stripe>>> = (0..count).map(|_| None).collect();
    for result in results {
        for (i, key, stripe) in result? {
            cache.stripes[i] = Some((key, stripe.clone()));
            stripes[i] = Some(stripe);
        }
    }
    let stripes: Vec<Arc<Stripe>> = stripes.into_iter().flatten().collect();
    if stripes.len() != count {
        return Err(EncodeError("a stripe is missing".into()));
    }
    let zlib = join_streams(&stripes)?;
    Ok(png_container(frame.width, frame.height, &zlib))
}

/// 128-bit XXH3 of rows `y0..y1` (their pixels only, not the padding).
fn stripe_key(frame: &Frame<'_>, y0: usize, y1: usize) -> u128 {
    let row = frame.width as usize * 4;
    let mut h = Xxh3::new();
    for y in y0..y1 {
        h.update(&frame.pixels[y * frame.stride..][..row]);
    }
    h.digest128()
}

fn io_err(e: std::io::Error) -> EncodeError {
    EncodeError(e.to_string())
}

/// Converts, filters and deflates rows `y0..y1`.
fn compress_rows(
    frame: &Frame<'_>,
    origin: Point,
    cursor: Option<&CursorImage>,
    y0: usize,
    y1: usize,
) -> Result<Stripe, EncodeError> {
    let w = frame.width as usize;
    let line = 1 + w * 3;
    let mut rgb = vec![0u8; w * 3];
    let mut filtered = vec![0u8; line];
    let mut z = Compressor::new(Vec::with_capacity((y1 - y0) * line / 2)).map_err(io_err)?;
    for y in y0..y1 {
        let src = &frame.pixels[y * frame.stride..][..w * 4];
        match frame.format {
            PixelFormat::Bgrx => bgrx_row_to_rgb(src, &mut rgb),
        }
        if let Some(c) = cursor {
            draw_cursor_row(&mut rgb, origin.x, origin.y + y as i32, c);
        }
        sub_filter(&rgb, &mut filtered);
        z.write_data(&filtered).map_err(io_err)?;
    }
    Ok(Stripe {
        zlib: z.finish().map_err(io_err)?,
        raw_len: (y1 - y0) * line,
    })
}

/// Writes one filtered scanline: the filter byte, then each byte minus the
/// byte of the pixel to its left.
fn sub_filter(rgb: &[u8], out: &mut [u8]) {
    out[0] = FILTER_SUB;
    let out = &mut out[1..];
    out[..3].copy_from_slice(&rgb[..3]);
    for ((d, cur), left) in out[3..].iter_mut().zip(&rgb[3..]).zip(rgb) {
        *d = cur.wrapping_sub(*left);
    }
}

/// Joins zlib streams of consecutive data into one zlib stream.
fn join_streams(stripes: &[Arc<Stripe>]) -> Result<Vec<u8>, EncodeError> {
    let Some((last, rest)) = stripes.split_last() else {
        return Err(EncodeError("no data".into()));
    };
    if rest.is_empty() {
        return Ok(last.zlib.clone());
    }
    let total: usize = stripes.iter().map(|s| s.zlib.len() + 5).sum();
    let mut out = Vec::with_capacity(total);
    out.extend_from_slice(&last.zlib[..2]);
    let mut adler = 1u32;
    for (i, s) in stripes.iter().enumerate() {
        let z = &s.zlib;
        if z.len() < 7 {
            return Err(EncodeError("truncated zlib stream".into()));
        }
        let deflate = &z[2..z.len() - 4];
        let start = out.len();
        out.extend_from_slice(deflate);
        if i + 1 < stripes.len() {
            // Not the final block any more.
            out[start] &= !1;
            // The end-of-block code's last bit is 1, so the highest set bit
            // of the last byte marks its end; the zero bits above it start
            // an empty stored block (BFINAL 0, BTYPE 00), which needs three
            // bits: take one more byte when fewer are left.
            let last_byte = *deflate.last().unwrap_or(&0);
            let free_bits = last_byte.leading_zeros();
            if free_bits < 3 {
                out.push(0);
            }
            out.extend_from_slice(&[0x00, 0x00, 0xff, 0xff]);
        }
        let tail: [u8; 4] = z[z.len() - 4..].try_into().unwrap_or([0; 4]);
        adler = adler32_combine(adler, u32::from_be_bytes(tail), s.raw_len);
    }
    out.extend_from_slice(&adler.to_be_bytes());
    Ok(out)
}

/// Adler-32 of `A ++ B` from Adler-32 of `A`, of `B`, and `B`'s length
/// (zlib's `adler32_combine`).
fn adler32_combine(a: u32, b: u32, len_b: usize) -> u32 {
    const BASE: u64 = 65_521;
    let rem = len_b as u64 % BASE;
    let a1 = u64::from(a & 0xffff);
    let a2 = u64::from(a >> 16);
    let b1 = u64::from(b & 0xffff);
    let b2 = u64::from(b >> 16);
    let sum1 = (a1 + b1 + BASE - 1) % BASE;
    let sum2 = (rem * a1 % BASE + a2 + b2 + BASE - rem) % BASE;
    (sum1 | (sum2 << 16)) as u32
}

/// Whether joined fdeflate streams inflate back to their data; checked once.
fn joining_works() -> bool {
    static WORKS: OnceLock<bool> = OnceLock::new();
    *WORKS.get_or_init(|| {
        let ok = self_test();
        if !ok {
            tracing::warn!("joined fdeflate streams do not inflate; PNG encoding uses one core");
        }
        ok
    })
}

fn self_test() -> bool {
    let parts: [&[u8]; 3] = [
        b"\x01abc\x00\x00\x00\x00zz",
        &[0u8; 300],
        b"\x01\xff\xfe\x10tail",
    ];
    let stripes: Option<Vec<Arc<Stripe>>> = parts
        .iter()
        .map(|p| {
            let mut z = Compressor::new(Vec::new()).ok()?;
            z.write_data(p).ok()?;
            Some(Arc::new(Stripe {
                zlib: z.finish().ok()?,
                raw_len: p.len(),
            }))
        })
        .collect();
    let Some(joined) = stripes.and_then(|s| join_streams(&s).ok()) else {
        return false;
    };
    fdeflate::decompress_to_vec(&joined).is_ok_and(|d| d == parts.concat())
}

/// Signature, IHDR (8-bit RGB), one IDAT holding `zlib`, IEND.
fn png_container(width: u32, height: u32, zlib: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(zlib.len() + 64);
    out.extend_from_slice(b"\x89PNG\r\n\x1a\n");
    let mut ihdr = [0u8; 13];
    ihdr[..4].copy_from_slice(&width.to_be_bytes());
    ihdr[4..8].copy_from_slice(&height.to_be_bytes());
    // Bit depth 8, colour type 2 (RGB), deflate, adaptive filtering, no interlace.
    ihdr[8..].copy_from_slice(&[8, 2, 0, 0, 0]);
    chunk(&mut out, b"IHDR", &ihdr);
    chunk(&mut out, b"IDAT", zlib);
    chunk(&mut out, b"IEND", &[]);
    out
}

fn chunk(out: &mut Vec<u8>, kind: &[u8; 4], data: &[u8]) {
    let len = u32::try_from(data.len()).unwrap_or(u32::MAX);
    out.extend_from_slice(&len.to_be_bytes());
    let start = out.len();
    out.extend_from_slice(kind);
    out.extend_from_slice(data);
    let crc = crc32fast::hash(&out[start..]);
    out.extend_from_slice(&crc.to_be_bytes());
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn joined_streams_inflate_to_the_joined_data() {
        assert!(
            self_test(),
            "fdeflate's end-of-block code no longer ends in a 1 bit"
        );
        assert!(joining_works());
    }

    fn bgrx_frame(px: &[u8], w: u32, h: u32) -> Frame<'_> {
        crate::encode::test_util::frame(px, w, h)
    }

    fn decode(png: &[u8]) -> Vec<u8> {
        crate::encode::test_util::decode(png).2
    }

    #[test]
    fn striped_png_decodes_to_every_pixel() {
        let (w, h) = (23u32, 101u32);
        let px: Vec<u8> = (0..w * h * 4).map(|i| (i * 7 % 253) as u8).collect();
        let frame = bgrx_frame(&px, w, h);
        let cursor = CursorImage {
            origin: Point::new(5, 44),
            width: 2,
            height: 4,
            argb: vec![0xff_ff_ff_ff; 8],
        };
        let at = Point::new(0, 0);
        let one = decode(
            &encode_striped(&frame, at, Some(&cursor), &mut StripeCache::default(), 101)
                .expect("one stripe"),
        );
        for rows in [50, 15, 7, 1] {
            let png = encode_striped(&frame, at, Some(&cursor), &mut StripeCache::default(), rows)
                .expect("striped");
            assert_eq!(decode(&png), one, "stripes of {rows} rows decode like one");
        }
        assert_eq!(
            &one[(45 * 23 + 5) * 3..][..3],
            &[255, 255, 255],
            "cursor across a seam"
        );
    }

    #[test]
    fn unchanged_stripes_are_reused_and_changed_ones_are_not() {
        let (w, h) = (16u32, 40u32);
        let mut px: Vec<u8> = (0..w * h * 4).map(|i| (i * 5 % 251) as u8).collect();
        let mut cache = StripeCache::default();
        let at = Point::new(3, 4);
        let first = encode_striped(&bgrx_frame(&px, w, h), at, None, &mut cache, 10).expect("1st");
        let before: Vec<Arc<Stripe>> = cache
            .stripes
            .iter()
            .flatten()
            .map(|(_, s)| s.clone())
            .collect();
        // Change one pixel in row 25 (stripe 2).
        px[(25 * w as usize + 3) * 4] ^= 0xff;
        let second = encode_striped(&bgrx_frame(&px, w, h), at, None, &mut cache, 10).expect("2nd");
        let after: Vec<Arc<Stripe>> = cache
            .stripes
            .iter()
            .flatten()
            .map(|(_, s)| s.clone())
            .collect();
        for (i, (b, a)) in before.iter().zip(&after).enumerate() {
            assert_eq!(Arc::ptr_eq(b, a), i != 2, "stripe {i} reuse");
        }
        let fresh = encode_striped(
            &bgrx_frame(&px, w, h),
            at,
            None,
            &mut StripeCache::default(),
            10,
        )
        .expect("fresh");
        assert_eq!(
            decode(&second),
            decode(&fresh),
            "the reused image is the current one"
        );
        assert_ne!(decode(&first), decode(&second));
        // Another rectangle starts over.
        encode_striped(
            &bgrx_frame(&px, w, h),
            Point::new(0, 0),
            None,
            &mut cache,
            10,
        )
        .expect("3rd");
        let moved: Vec<Arc<Stripe>> = cache
            .stripes
            .iter()
            .flatten()
            .map(|(_, s)| s.clone())
            .collect();
        assert!(moved.iter().zip(&after).all(|(m, a)| !Arc::ptr_eq(m, a)));
    }

    #[test]
    fn adler_combination_matches_the_whole() {
        let data: Vec<u8> = (0..100_000u32).map(|i| (i * 13 % 256) as u8).collect();
        let (a, b) = data.split_at(37_123);
        let whole = fdeflate::compress_to_vec(&data);
        let part = |d: &[u8]| {
            let z = fdeflate::compress_to_vec(d);
            u32::from_be_bytes(z[z.len() - 4..].try_into().expect("4 bytes"))
        };
        let expect = u32::from_be_bytes(whole[whole.len() - 4..].try_into().expect("4 bytes"));
        assert_eq!(adler32_combine(part(a), part(b), b.len()), expect);
    }
}
