//! PNG encoding on every core, reusing what did not change. The bitmap is
//! cut into horizontal stripes of [`STRIPE_ROWS`] rows; each stripe is
//! converted to RGB (cursor drawn in), Sub-filtered and deflated by
//! [`Deflater`] (one dynamic-Huffman block plus an empty stored block, so it
//! ends on a byte boundary, padded to a multiple of three bytes), the
//! stripes spread over the capturing thread and a pool of one thread per
//! other core. The stripes' blocks are then concatenated into ONE zlib
//! stream, as parallel gzip does, and their Adler-32 checksums combined.
//!
//! Because stripes are independent, a stripe whose pixels are the same as
//! in the last capture of the same rectangle (same 128-bit XXH3 of its
//! rows, and no cursor drawn over it) is not compressed again, nor its
//! base64 made again: agents take a screenshot after each small action, and
//! most stripes have not changed.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use twox_hash::XxHash3_128;

use super::deflate::{Deflater, EMPTY_STORED_BLOCK, FINAL_EMPTY_BLOCK};
use super::image::{EncodedImage, SharedPart};
use super::{EncodeError, bgrx_row_to_rgb, cursor_covers_row, draw_cursor_row};
use crate::{Bitmap, CursorImage, PixelFormat};
use deskhand_protocol::geometry::{Point, Rect};

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
    /// One per encoder thread, kept between captures.
    scratch: Vec<Scratch>,
}

/// What one encoder thread keeps between captures: its Huffman tables and
/// buffers.
#[derive(Default)]
struct Scratch {
    deflater: Deflater,
    filtered: Vec<u8>,
}

impl std::fmt::Debug for Scratch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Scratch").finish_non_exhaustive()
    }
}

/// One stripe's deflate blocks (a multiple of three bytes long) with their
/// base64 and CRC-32 (for the IDAT chunk), and the Adler-32 and length of
/// the data they hold.
#[derive(Debug)]
struct Stripe {
    deflate: Vec<u8>,
    base64: String,
    crc: crc32fast::Hasher,
    adler: u32,
    raw_len: usize,
}

impl SharedPart for Stripe {
    fn bytes(&self) -> &[u8] {
        &self.deflate
    }

    fn base64(&self) -> Option<&str> {
        Some(&self.base64)
    }
}

/// Encodes `bitmap`, captured at `origin`, as an 8-bit RGB PNG, reusing the
/// unchanged stripes of the last capture of the same rectangle.
pub fn encode_png(
    bitmap: &Bitmap<'_>,
    origin: Point,
    cursor: Option<&CursorImage>,
    cache: &mut StripeCache,
) -> Result<EncodedImage, EncodeError> {
    encode_striped(bitmap, origin, cursor, cache, STRIPE_ROWS)
}

/// Encodes `bitmap` in stripes of `rows` rows.
fn encode_striped(
    bitmap: &Bitmap<'_>,
    origin: Point,
    cursor: Option<&CursorImage>,
    cache: &mut StripeCache,
    rows: usize,
) -> Result<EncodedImage, EncodeError> {
    let (w, h) = (bitmap.width as usize, bitmap.height as usize);
    if w == 0 || h == 0 || rows == 0 {
        return Err(EncodeError("empty image".into()));
    }
    let count = h.div_ceil(rows);
    let rect = Rect::new(origin.x, origin.y, bitmap.width, bitmap.height);
    if cache.rect != Some(rect) || cache.stripes.len() != count {
        cache.rect = Some(rect);
        cache.stripes = (0..count).map(|_| None).collect();
    }
    let pool = encoder_pool();
    let workers = pool.map_or(1, |p| p.current_num_threads() + 1).min(count);
    cache.scratch.resize_with(workers, Scratch::default);
    let previous = &cache.stripes;
    // Stripes are handed out one at a time, so that a thread the scheduler
    // delays takes fewer of them.
    let next = AtomicUsize::new(0);
    let work = |scratch: &mut Scratch| -> Vec<(usize, u128, Arc<Stripe>)> {
        let mut done = Vec::new();
        loop {
            let i = next.fetch_add(1, Ordering::Relaxed);
            if i >= count {
                break;
            }
            let (y0, y1) = (i * rows, ((i + 1) * rows).min(h));
            let key = stripe_key(bitmap, y0, y1);
            let under_cursor = cursor.is_some_and(|c| {
                let top = i64::from(c.origin.y) - i64::from(origin.y);
                top < y1 as i64 && top + i64::from(c.height) > y0 as i64
            });
            let reusable = previous[i]
                .as_ref()
                .filter(|(k, _)| *k == key && !under_cursor)
                .map(|(_, s)| s.clone());
            let stripe = reusable.unwrap_or_else(|| {
                Arc::new(compress_rows(scratch, bitmap, origin, cursor, y0, y1))
            });
            // A stripe with the cursor drawn in is not reused later.
            let key = if under_cursor { !key } else { key };
            done.push((i, key, stripe));
        }
        done
    };
    let work = |scratch: &mut Scratch| {
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| work(scratch)))
            .map_err(|_| EncodeError("an encoder thread panicked".into()))
    };
    let work = &work;
    let mut results: Vec<Result<Vec<_>, EncodeError>> =
        (0..workers).map(|_| Ok(Vec::new())).collect();
    let (first_scratch, others) = cache.scratch.split_at_mut(1);
    let (first_result, other_results) = results.split_at_mut(1);
    match pool {
        // The calling thread takes stripes too; the pool's threads (kept
        // between captures, so that the scheduler wakes them where they
        // last ran instead of queueing a new thread behind this one) take
        // the rest.
        Some(pool) if workers > 1 => pool.in_place_scope(|scope| {
            for (scratch, result) in others.iter_mut().zip(other_results) {
                scope.spawn(move |_| *result = work(scratch));
            }
            first_result[0] = work(&mut first_scratch[0]);
        }),
        _ => first_result[0] = work(&mut first_scratch[0]),
    }
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
    Ok(png_container(bitmap.width, bitmap.height, &stripes))
}

/// The encoder's worker threads: one fewer than the cores (the capturing
/// thread works too), started on first use; `None` where there is one
/// core or no thread could be started.
pub(crate) fn encoder_pool() -> Option<&'static rayon::ThreadPool> {
    static POOL: std::sync::OnceLock<Option<rayon::ThreadPool>> = std::sync::OnceLock::new();
    POOL.get_or_init(|| {
        let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
        if threads < 2 {
            return None;
        }
        rayon::ThreadPoolBuilder::new()
            .num_threads(threads - 1)
            .thread_name(|i| format!("deskhand-png-{i}"))
            .build()
            .inspect_err(|e| tracing::warn!(error = %e, "PNG encoder threads did not start: encoding on one"))
            .ok()
    })
    .as_ref()
}

/// 128-bit XXH3 of rows `y0..y1` (their pixels only, not the padding),
/// with AVX2 where the CPU has it.
fn stripe_key(bitmap: &Bitmap<'_>, y0: usize, y1: usize) -> u128 {
    let row = bitmap.width as usize * 4;
    if bitmap.stride == row {
        return XxHash3_128::oneshot(&bitmap.pixels[y0 * row..y1 * row]);
    }
    let mut h = XxHash3_128::new();
    for y in y0..y1 {
        h.write(&bitmap.pixels[y * bitmap.stride..][..row]);
    }
    h.finish_128()
}

/// Converts, filters and deflates rows `y0..y1`, compiled for AVX2 and
/// BMI2 where the CPU has them.
fn compress_rows(
    scratch: &mut Scratch,
    bitmap: &Bitmap<'_>,
    origin: Point,
    cursor: Option<&CursorImage>,
    y0: usize,
    y1: usize,
) -> Stripe {
    #[cfg(target_arch = "x86_64")]
    if std::is_x86_feature_detected!("avx2") && std::is_x86_feature_detected!("bmi2") {
        // SAFETY: the CPU has AVX2 and BMI2, checked just above.
        return unsafe { compress_rows_avx2(scratch, bitmap, origin, cursor, y0, y1) };
    }
    compress_rows_portable(scratch, bitmap, origin, cursor, y0, y1)
}

/// [`compress_rows_portable`] compiled with AVX2 and BMI2.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,bmi1,bmi2")]
fn compress_rows_avx2(
    scratch: &mut Scratch,
    bitmap: &Bitmap<'_>,
    origin: Point,
    cursor: Option<&CursorImage>,
    y0: usize,
    y1: usize,
) -> Stripe {
    compress_rows_portable(scratch, bitmap, origin, cursor, y0, y1)
}

/// Converts, filters and deflates rows `y0..y1`.
#[inline(always)]
fn compress_rows_portable(
    scratch: &mut Scratch,
    bitmap: &Bitmap<'_>,
    origin: Point,
    cursor: Option<&CursorImage>,
    y0: usize,
    y1: usize,
) -> Stripe {
    let w = bitmap.width as usize;
    let line = 1 + w * 3;
    let filtered = &mut scratch.filtered;
    filtered.resize((y1 - y0) * line, 0);
    let mut rgb = Vec::new();
    for (y, out) in (y0..y1).zip(filtered.chunks_exact_mut(line)) {
        let src = &bitmap.pixels[y * bitmap.stride..][..w * 4];
        out[0] = FILTER_SUB;
        let y_global = origin.y + y as i32;
        match cursor {
            Some(c) if cursor_covers_row(c, y_global) => {
                rgb.resize(w * 3, 0);
                match bitmap.format {
                    PixelFormat::Bgrx => bgrx_row_to_rgb(src, &mut rgb),
                }
                draw_cursor_row(&mut rgb, origin.x, y_global, c);
                sub_filter(&rgb, &mut out[1..]);
            }
            _ => match bitmap.format {
                PixelFormat::Bgrx => sub_filter_bgrx(src, &mut out[1..]),
            },
        }
    }
    let mut deflate = scratch.deflater.stripe(filtered);
    // Empty stored blocks (five bytes each) up to a multiple of three
    // bytes, so that the stripe's base64 (made here, on the encoder's
    // threads, and kept with it) joins the others' without padding.
    while !deflate.len().is_multiple_of(3) {
        deflate.extend_from_slice(&EMPTY_STORED_BLOCK);
    }
    let mut crc = crc32fast::Hasher::new();
    crc.update(&deflate);
    Stripe {
        base64: base64_simd::STANDARD.encode_to_string(&deflate),
        deflate,
        crc,
        adler: simd_adler32::adler32(&filtered.as_slice()),
        raw_len: filtered.len(),
    }
}

/// Sub-filters one RGB scanline: each byte minus the byte of the pixel to
/// its left.
fn sub_filter(rgb: &[u8], out: &mut [u8]) {
    out[..3].copy_from_slice(&rgb[..3]);
    for ((d, cur), left) in out[3..].iter_mut().zip(&rgb[3..]).zip(rgb) {
        *d = cur.wrapping_sub(*left);
    }
}

/// Converts one BGRX row to RGB and Sub-filters it in the same pass (with
/// AVX2 where the CPU has it).
#[inline(always)]
fn sub_filter_bgrx(src: &[u8], out: &mut [u8]) {
    out[..3].copy_from_slice(&[src[2], src[1], src[0]]);
    #[cfg(target_arch = "x86_64")]
    let done = if std::is_x86_feature_detected!("avx2") {
        // SAFETY: the CPU has AVX2, checked just above.
        unsafe { sub_filter_bgrx_avx2(src, out) }
    } else {
        0
    };
    #[cfg(not(target_arch = "x86_64"))]
    let done = 0;
    for ((d, cur), left) in out[3 + done * 3..]
        .chunks_exact_mut(3)
        .zip(src[4 + done * 4..].chunks_exact(4))
        .zip(src[done * 4..].chunks_exact(4))
    {
        d[0] = cur[2].wrapping_sub(left[2]);
        d[1] = cur[1].wrapping_sub(left[1]);
        d[2] = cur[0].wrapping_sub(left[0]);
    }
}

/// The body of [`sub_filter_bgrx`] eight pixels at a time: each BGRX byte
/// minus the one four bytes before it, three of every four bytes picked in
/// RGB order, 24 bytes stored (in a 32-byte store whose last 8 bytes the
/// next step overwrites). Returns how many pixels after the first it did;
/// the last few are left to the caller.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn sub_filter_bgrx_avx2(src: &[u8], out: &mut [u8]) -> usize {
    use std::arch::x86_64::{
        __m256i, _mm256_permutevar8x32_epi32, _mm256_setr_epi8, _mm256_setr_epi32,
        _mm256_shuffle_epi8, _mm256_sub_epi8,
    };
    let pick = _mm256_setr_epi8(
        2, 1, 0, 6, 5, 4, 10, 9, 8, 14, 13, 12, -1, -1, -1, -1, //
        2, 1, 0, 6, 5, 4, 10, 9, 8, 14, 13, 12, -1, -1, -1, -1,
    );
    let pack = _mm256_setr_epi32(0, 1, 2, 4, 5, 6, 7, 7);
    // Step k reads src[32k..32k + 36] and writes out[3 + 24k..3 + 24k + 32].
    let steps = match (src.len().checked_sub(36), out.len().checked_sub(35)) {
        (Some(s), Some(o)) => (s / 32 + 1).min(o / 24 + 1),
        _ => 0,
    };
    for k in 0..steps {
        let load = |at: usize| -> __m256i {
            let bytes: [u8; 32] = src[at..at + 32].try_into().unwrap_or([0; 32]);
            bytemuck::cast(bytes)
        };
        let diff = _mm256_sub_epi8(load(4 + 32 * k), load(32 * k));
        let rgb = _mm256_permutevar8x32_epi32(_mm256_shuffle_epi8(diff, pick), pack);
        out[3 + 24 * k..3 + 24 * k + 32].copy_from_slice(&bytemuck::cast::<__m256i, [u8; 32]>(rgb));
    }
    steps * 8
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

/// Signature, IHDR (8-bit RGB), a tEXt chunk naming deskhand (it brings
/// the stripes' start to a multiple of three bytes, where their kept
/// base64 joins up), one IDAT holding the zlib stream of the joined
/// stripes (shared with the cache, not copied), IEND.
fn png_container(width: u32, height: u32, stripes: &[Arc<Stripe>]) -> EncodedImage {
    const ZLIB_HEADER: [u8; 2] = [0x78, 0x01]; // deflate, 32 KiB window, fastest
    let deflated: usize = stripes.iter().map(|s| s.deflate.len()).sum();
    let idat_len = ZLIB_HEADER.len() + deflated + FINAL_EMPTY_BLOCK.len() + 4;
    let mut head = Vec::with_capacity(64);
    head.extend_from_slice(b"\x89PNG\r\n\x1a\n");
    let mut ihdr = [0u8; 13];
    ihdr[..4].copy_from_slice(&width.to_be_bytes());
    ihdr[4..8].copy_from_slice(&height.to_be_bytes());
    // Bit depth 8, colour type 2 (RGB), deflate, adaptive filtering, no interlace.
    ihdr[8..].copy_from_slice(&[8, 2, 0, 0, 0]);
    chunk(&mut head, b"IHDR", &ihdr);
    chunk(&mut head, b"tEXt", b"Software\0deskhand");
    head.extend_from_slice(&u32::try_from(idat_len).unwrap_or(u32::MAX).to_be_bytes());
    head.extend_from_slice(b"IDAT");
    head.extend_from_slice(&ZLIB_HEADER);
    let mut crc = crc32fast::Hasher::new();
    crc.update(b"IDAT");
    crc.update(&ZLIB_HEADER);
    debug_assert_eq!(head.len() % 3, 0, "the stripes start on a base64 group");
    let mut image = EncodedImage::from(head);
    for s in stripes {
        crc.combine(&s.crc);
        image.push_shared(s.clone());
    }
    let adler = stripes
        .iter()
        .fold(1, |a, s| adler32_combine(a, s.adler, s.raw_len));
    let mut tail = Vec::with_capacity(32);
    tail.extend_from_slice(&FINAL_EMPTY_BLOCK);
    tail.extend_from_slice(&adler.to_be_bytes());
    crc.update(&tail);
    tail.extend_from_slice(&crc.finalize().to_be_bytes());
    chunk(&mut tail, b"IEND", &[]);
    image.push(tail);
    image
}

/// Appends one chunk.
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

    fn bgrx_bitmap(px: &[u8], w: u32, h: u32) -> Bitmap<'_> {
        crate::test_util::bitmap(px, w, h)
    }

    /// The stripes the cache holds now.
    fn cached(cache: &StripeCache) -> Vec<Arc<Stripe>> {
        cache
            .stripes
            .iter()
            .flatten()
            .map(|(_, s)| s.clone())
            .collect()
    }

    /// `w`×`h` BGRX test pixels, byte `i` being `i * mul % modulo`.
    fn pattern(w: u32, h: u32, mul: u32, modulo: u32) -> Vec<u8> {
        (0..w * h * 4).map(|i| (i * mul % modulo) as u8).collect()
    }

    /// A cursor image of one ARGB colour.
    fn solid_cursor(origin: Point, width: u32, height: u32, argb: u32) -> CursorImage {
        CursorImage {
            origin,
            width,
            height,
            argb: vec![argb; (width * height) as usize],
        }
    }

    fn decode(png: &EncodedImage) -> Vec<u8> {
        crate::test_util::decode(&png.to_vec()).2
    }

    #[test]
    fn striped_png_decodes_to_every_pixel() {
        let (w, h) = (23u32, 101u32);
        let px = pattern(w, h, 7, 253);
        let bitmap = bgrx_bitmap(&px, w, h);
        let cursor = solid_cursor(Point::new(5, 44), 2, 4, 0xff_ff_ff_ff);
        let at = Point::new(0, 0);
        let one = decode(
            &encode_striped(&bitmap, at, Some(&cursor), &mut StripeCache::default(), 101)
                .expect("one stripe"),
        );
        for rows in [50, 15, 7, 1] {
            let png = encode_striped(
                &bitmap,
                at,
                Some(&cursor),
                &mut StripeCache::default(),
                rows,
            )
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
    fn kept_base64_is_the_base64_of_the_png() {
        let (w, h) = (29u32, 57u32);
        let mut px = pattern(w, h, 11, 247);
        let mut cache = StripeCache::default();
        let at = Point::new(1, 2);
        for round in 0..2 {
            let png =
                encode_striped(&bgrx_bitmap(&px, w, h), at, None, &mut cache, 8).expect("striped");
            assert!(
                cached(&cache)
                    .iter()
                    .all(|s| s.deflate.len().is_multiple_of(3))
            );
            let text = png.base64_pieces().concat();
            assert_eq!(
                text,
                base64_simd::STANDARD.encode_to_string(png.to_vec()),
                "round {round}"
            );
            assert_eq!(decode(&png).len(), (w * h * 3) as usize);
            // The second round reuses all stripes but the changed one.
            px[(20 * w as usize + 3) * 4] ^= 0x55;
        }
    }

    #[test]
    fn unchanged_stripes_are_reused_and_changed_ones_are_not() {
        let (w, h) = (16u32, 40u32);
        let mut px = pattern(w, h, 5, 251);
        let mut cache = StripeCache::default();
        let at = Point::new(3, 4);
        let first = encode_striped(&bgrx_bitmap(&px, w, h), at, None, &mut cache, 10).expect("1st");
        let before: Vec<Arc<Stripe>> = cached(&cache);
        // Change one pixel in row 25 (stripe 2).
        px[(25 * w as usize + 3) * 4] ^= 0xff;
        let second =
            encode_striped(&bgrx_bitmap(&px, w, h), at, None, &mut cache, 10).expect("2nd");
        let after: Vec<Arc<Stripe>> = cached(&cache);
        for (i, (b, a)) in before.iter().zip(&after).enumerate() {
            assert_eq!(Arc::ptr_eq(b, a), i != 2, "stripe {i} reuse");
        }
        let fresh = encode_striped(
            &bgrx_bitmap(&px, w, h),
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
            &bgrx_bitmap(&px, w, h),
            Point::new(0, 0),
            None,
            &mut cache,
            10,
        )
        .expect("3rd");
        let moved: Vec<Arc<Stripe>> = cached(&cache);
        assert!(moved.iter().zip(&after).all(|(m, a)| !Arc::ptr_eq(m, a)));
    }

    #[test]
    fn stripe_keys_cover_the_pixels_and_not_the_padding() {
        let (w, h) = (37u32, 9u32);
        let tight = pattern(w, h, 31, 241);
        let row = w as usize * 4;
        let mut padded = Vec::new();
        for (y, r) in tight.chunks_exact(row).enumerate() {
            padded.extend_from_slice(r);
            padded.extend_from_slice(&[y as u8 ^ 0x5a; 12]);
        }
        let padded_bitmap = Bitmap {
            stride: row + 12,
            ..bgrx_bitmap(&padded, w, h)
        };
        let key = stripe_key(&bgrx_bitmap(&tight, w, h), 2, 7);
        assert_eq!(stripe_key(&padded_bitmap, 2, 7), key);
        let mut changed = tight.clone();
        changed[6 * row + 5] ^= 1;
        assert_ne!(stripe_key(&bgrx_bitmap(&changed, w, h), 2, 7), key);
    }

    #[test]
    fn the_avx2_build_writes_what_the_portable_one_writes() {
        let (w, h) = (37u32, 9u32);
        let px = pattern(w, h, 31, 241);
        let bitmap = bgrx_bitmap(&px, w, h);
        let cursor = solid_cursor(Point::new(3, 2), 2, 3, 0x80_40_40_40);
        for cursor in [None, Some(&cursor)] {
            let at = Point::new(0, 0);
            let a = compress_rows(&mut Scratch::default(), &bitmap, at, cursor, 0, 9);
            let b = compress_rows_portable(&mut Scratch::default(), &bitmap, at, cursor, 0, 9);
            assert_eq!(
                (a.deflate, a.adler, a.raw_len),
                (b.deflate, b.adler, b.raw_len)
            );
        }
    }

    #[test]
    fn the_fused_filter_is_rgb_minus_the_left_pixel_at_every_width() {
        for w in 1..=90usize {
            let src: Vec<u8> = (0..w * 4).map(|i| (i * 37 % 251) as u8).collect();
            let mut rgb = vec![0; w * 3];
            bgrx_row_to_rgb(&src, &mut rgb);
            let mut want = vec![0; w * 3];
            sub_filter(&rgb, &mut want);
            let mut got = vec![0; w * 3];
            sub_filter_bgrx(&src, &mut got);
            assert_eq!(got, want, "width {w}");
        }
    }

    #[test]
    fn adler_combination_matches_the_whole() {
        let data: Vec<u8> = (0..100_000u32).map(|i| (i * 13 % 256) as u8).collect();
        let (a, b) = data.split_at(37_123);
        let adler = |d: &[u8]| simd_adler32::adler32(&d);
        assert_eq!(adler32_combine(adler(a), adler(b), b.len()), adler(&data));
    }
}
