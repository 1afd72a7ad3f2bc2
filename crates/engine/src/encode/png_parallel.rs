//! PNG encoding on every core. The frame is cut into horizontal stripes;
//! each stripe is converted to RGB (cursor drawn in), Sub-filtered and
//! deflated by fdeflate's fast compressor on its own thread. The stripes'
//! zlib streams are then joined into ONE valid zlib stream, as parallel
//! gzip does: every stripe but the last becomes a non-final deflate block
//! followed by an empty stored block (which brings the stream back to a
//! byte boundary), and the Adler-32 checksums are combined.
//!
//! Joining needs to know where a stripe's end-of-block code ends inside its
//! last byte. fdeflate uses one fixed Huffman table, so this is found once:
//! a self-test joins two small streams and inflates the result. If that
//! ever fails (a future fdeflate with another table), encoding falls back
//! to one stripe, which needs no joining.

use std::sync::OnceLock;

use fdeflate::Compressor;

use super::{EncodeError, bgrx_row_to_rgb, draw_cursor_row};
use crate::backend::{CursorImage, Frame, PixelFormat};
use crate::geometry::Point;

/// PNG filter type byte for "Sub".
const FILTER_SUB: u8 = 1;

/// Below this many rows a frame is encoded in one stripe.
const MIN_ROWS_PER_STRIPE: usize = 64;

/// Most stripes (threads) per frame.
const MAX_STRIPES: usize = 8;

/// Encodes `frame` as an 8-bit RGB PNG.
pub fn encode_png(
    frame: &Frame<'_>,
    origin: Point,
    cursor: Option<&CursorImage>,
) -> Result<Vec<u8>, EncodeError> {
    encode_in_stripes(frame, origin, cursor, stripe_count(frame.height as usize))
}

/// Encodes `frame` cut into (at most) `stripes` stripes, one thread each.
fn encode_in_stripes(
    frame: &Frame<'_>,
    origin: Point,
    cursor: Option<&CursorImage>,
    stripes: usize,
) -> Result<Vec<u8>, EncodeError> {
    let (w, h) = (frame.width as usize, frame.height as usize);
    if w == 0 || h == 0 {
        return Err(EncodeError("empty image".into()));
    }
    let stripes = stripes.clamp(1, h);
    let rows_per = h.div_ceil(stripes);
    let ranges: Vec<(usize, usize)> = (0..h)
        .step_by(rows_per)
        .map(|y| (y, (y + rows_per).min(h)))
        .collect();
    let streams: Vec<Result<Stripe, EncodeError>> = std::thread::scope(|scope| {
        let handles: Vec<_> = ranges[1..]
            .iter()
            .map(|&(y0, y1)| scope.spawn(move || compress_rows(frame, origin, cursor, y0, y1)))
            .collect();
        let first = compress_rows(frame, origin, cursor, ranges[0].0, ranges[0].1);
        std::iter::once(first)
            .chain(handles.into_iter().map(|h| {
                h.join()
                    .unwrap_or_else(|_| Err(EncodeError("encoder thread panicked".into())))
            }))
            .collect()
    });
    let streams = streams.into_iter().collect::<Result<Vec<_>, _>>()?;
    let zlib = join_streams(&streams)?;
    Ok(png_container(frame.width, frame.height, &zlib))
}

/// How many stripes to cut `height` rows into.
fn stripe_count(height: usize) -> usize {
    if !joining_works() {
        return 1;
    }
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    cores
        .min(MAX_STRIPES)
        .min(height / MIN_ROWS_PER_STRIPE)
        .max(1)
}

/// One stripe's zlib stream and the length of the data it holds.
struct Stripe {
    zlib: Vec<u8>,
    raw_len: usize,
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
fn join_streams(stripes: &[Stripe]) -> Result<Vec<u8>, EncodeError> {
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
    for s in stripes {
        let z = &s.zlib;
        if z.len() < 7 {
            return Err(EncodeError("truncated zlib stream".into()));
        }
        let deflate = &z[2..z.len() - 4];
        let start = out.len();
        out.extend_from_slice(deflate);
        if !std::ptr::eq(s, last) {
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
    let stripes: Option<Vec<Stripe>> = parts
        .iter()
        .map(|p| {
            let mut z = Compressor::new(Vec::new()).ok()?;
            z.write_data(p).ok()?;
            Some(Stripe {
                zlib: z.finish().ok()?,
                raw_len: p.len(),
            })
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

    #[test]
    fn striped_png_decodes_to_every_pixel() {
        let (w, h) = (23u32, 101u32);
        let px: Vec<u8> = (0..w * h * 4).map(|i| (i * 7 % 253) as u8).collect();
        let frame = Frame {
            width: w,
            height: h,
            stride: w as usize * 4,
            format: PixelFormat::Bgrx,
            pixels: &px,
        };
        let cursor = CursorImage {
            origin: Point::new(5, 49),
            width: 2,
            height: 4,
            argb: vec![0xff_ff_ff_ff; 8],
        };
        let one = encode_in_stripes(&frame, Point::new(0, 0), Some(&cursor), 1).expect("one");
        for stripes in [2, 3, 7] {
            let png = encode_in_stripes(&frame, Point::new(0, 0), Some(&cursor), stripes)
                .expect("striped");
            let mut r = png::Decoder::new(std::io::Cursor::new(&png))
                .read_info()
                .expect("header");
            let mut buf = vec![0; r.output_buffer_size().expect("size")];
            r.next_frame(&mut buf).expect("frame");
            let mut r1 = png::Decoder::new(std::io::Cursor::new(&one))
                .read_info()
                .expect("header");
            let mut buf1 = vec![0; r1.output_buffer_size().expect("size")];
            r1.next_frame(&mut buf1).expect("frame");
            assert_eq!(buf, buf1, "{stripes} stripes decode like one");
            assert_eq!(
                &buf[(50 * 23 + 5) * 3..][..3],
                &[255, 255, 255],
                "cursor across a seam"
            );
        }
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
