//! `cargo bench -p deskhand-encode`: encoding a 1920×1080 and a 3840×2160
//! bitmap of the standard scene (a generated photo-like wallpaper with text
//! windows over about a third of it) as PNG and JPEG q75, beside the crates
//! one would use instead (the `png` crate's fast settings, `fdeflate` over
//! the same Sub-filtered rows, `jpeg-encoder`), so that the reason for a
//! hand-written coder stays visible; and the timeline's thumbnail of such a
//! bitmap. Prints median and p95 in milliseconds.

#![allow(missing_docs)]

use std::time::Instant;

use deskhand_encode::{Bitmap, PixelFormat, StripeCache, encode, thumbnail};
use deskhand_protocol::geometry::Point;
use deskhand_protocol::messages::ImageFormat;

/// A small deterministic generator (xorshift) for the noise.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}

/// BGRX pixels: smooth gradients plus fractal-ish noise (photo-like), and
/// two "terminal" rectangles of dark text strokes on light background.
fn scene(w: usize, h: usize, seed: u64) -> Vec<u8> {
    let mut rng = Rng(seed);
    let mut px = vec![0u8; w * h * 4];
    for y in 0..h {
        for x in 0..w {
            let fx = x as f64 / w as f64;
            let fy = y as f64 / h as f64;
            let base = [
                128.0 + 90.0 * (fx * 7.0 + fy * 3.0).sin(),
                128.0 + 90.0 * (fy * 5.0 - fx * 2.0).cos(),
                128.0 + 90.0 * (fx * 11.0 * fy).sin(),
            ];
            let noise = (rng.next() % 13) as f64 - 6.0;
            let i = (y * w + x) * 4;
            for (c, b) in base.iter().enumerate() {
                px[i + c] = (b + noise).clamp(0.0, 255.0) as u8;
            }
        }
    }
    for (x0, y0) in [(0, h / 20), (w / 3, h / 10)] {
        let (tw, th) = (w * 3 / 10, h * 6 / 10);
        for y in y0..(y0 + th).min(h) {
            for x in x0..(x0 + tw).min(w) {
                let in_glyph = (y % 16) < 11 && (x % 9) < 6 && rng.next().is_multiple_of(3);
                let v = if in_glyph { 30 } else { 245 };
                let i = (y * w + x) * 4;
                px[i..i + 3].copy_from_slice(&[v, v, v]);
            }
        }
    }
    px
}

/// Runs `encode_one` on the two bitmaps in turn (a screen that changed
/// completely between captures: nothing can be reused; buffers are) and
/// prints the times and the output size.
fn measure(
    label: &str,
    bitmaps: [&Bitmap<'_>; 2],
    mut encode_one: impl FnMut(&Bitmap<'_>) -> usize,
) {
    let mut ms = Vec::new();
    let mut size = 0;
    for i in 0..41 {
        let t = Instant::now();
        size = encode_one(bitmaps[i % 2]);
        ms.push(t.elapsed().as_secs_f64() * 1000.0);
    }
    ms.sort_by(f64::total_cmp);
    println!(
        "{label:<34} median {:>6.2} ms   p95 {:>6.2} ms   min {:>6.2} ms   {:>5} KiB",
        ms[ms.len() / 2],
        ms[ms.len() * 95 / 100],
        ms[0],
        size / 1024
    );
}

/// The bitmap as tightly packed RGB rows.
fn rgb(f: &Bitmap<'_>) -> Vec<u8> {
    let mut out = Vec::with_capacity(f.width as usize * f.height as usize * 3);
    for row in f.pixels.chunks(f.stride).take(f.height as usize) {
        for px in row[..f.width as usize * 4].chunks_exact(4) {
            out.extend_from_slice(&[px[2], px[1], px[0]]);
        }
    }
    out
}

/// The `png` crate at its fast setting with the Sub filter (what one would
/// reach for first), from the same BGRX bitmap.
fn png_crate(f: &Bitmap<'_>, compression: png::Compression) -> usize {
    let rgb = rgb(f);
    let mut out = Vec::new();
    let mut enc = png::Encoder::new(&mut out, f.width, f.height);
    enc.set_color(png::ColorType::Rgb);
    enc.set_depth(png::BitDepth::Eight);
    enc.set_compression(compression);
    enc.set_filter(png::Filter::Sub);
    let mut w = enc.write_header().expect("header");
    w.write_image_data(&rgb).expect("data");
    w.finish().expect("finish");
    out.len()
}

/// `fdeflate` (one thread) over the same Sub-filtered RGB rows our PNG
/// deflates: the deflate coder alone, without PNG framing.
fn fdeflate_rows(f: &Bitmap<'_>) -> usize {
    let rgb = rgb(f);
    let stride = f.width as usize * 3;
    let mut filtered = Vec::with_capacity(rgb.len() + f.height as usize);
    for row in rgb.chunks(stride) {
        filtered.push(1); // Sub
        filtered.extend(
            row.iter()
                .enumerate()
                .map(|(i, b)| b.wrapping_sub(if i >= 3 { row[i - 3] } else { 0 })),
        );
    }
    fdeflate::compress_to_vec(&filtered).len()
}

/// `jpeg-encoder` (pure Rust, SIMD) at q75 straight from BGRX.
fn jpeg_encoder_q75(f: &Bitmap<'_>) -> usize {
    let mut out = Vec::new();
    let enc = jpeg_encoder::Encoder::new(&mut out, 75);
    let tight: Vec<u8> = f
        .pixels
        .chunks(f.stride)
        .take(f.height as usize)
        .flat_map(|r| r[..f.width as usize * 4].iter().copied())
        .collect();
    enc.encode(
        &tight,
        f.width as u16,
        f.height as u16,
        jpeg_encoder::ColorType::Bgra,
    )
    .expect("jpeg");
    out.len()
}

fn ours(format: ImageFormat) -> impl FnMut(&Bitmap<'_>) -> usize {
    let mut cache = StripeCache::default();
    move |f| {
        encode(f, Point::new(0, 0), format, 75, None, &mut cache)
            .expect("encode")
            .len()
    }
}

fn main() {
    // `cargo bench -p deskhand-encode -- 1920 PNG`: only the rows whose
    // label holds every word given.
    let words: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with('-'))
        .collect();
    let wanted = |label: &str| words.iter().all(|w| label.contains(w.as_str()));
    for (w, h) in [(1920usize, 1080usize), (3840, 2160)] {
        let pixels = [
            scene(w, h, 0x9e37_79b9_7f4a_7c15),
            scene(w, h, 0x2545_f491_4f6c_dd1d),
        ];
        let bitmaps = pixels.each_ref().map(|px| Bitmap {
            width: w as u32,
            height: h as u32,
            stride: w * 4,
            format: PixelFormat::Bgrx,
            pixels: px,
        });
        let bitmaps = [&bitmaps[0], &bitmaps[1]];
        type Row = (String, Box<dyn FnMut(&Bitmap<'_>) -> usize>);
        let rows: Vec<Row> = vec![
            (
                format!("encode {w}x{h} PNG"),
                Box::new(ours(ImageFormat::Png)),
            ),
            (
                format!("  png crate Fastest {w}x{h} PNG"),
                Box::new(|f: &Bitmap<'_>| png_crate(f, png::Compression::Fastest)),
            ),
            (
                format!("  png crate Fast {w}x{h} PNG"),
                Box::new(|f: &Bitmap<'_>| png_crate(f, png::Compression::Fast)),
            ),
            (
                format!("  fdeflate rows {w}x{h} PNG"),
                Box::new(fdeflate_rows),
            ),
            (
                format!("encode {w}x{h} JPEG q75"),
                Box::new(ours(ImageFormat::Jpeg)),
            ),
            (
                format!("  jpeg-encoder {w}x{h} JPEG q75"),
                Box::new(jpeg_encoder_q75),
            ),
            (
                format!("thumbnail {w}x{h} to 240 wide"),
                Box::new(|f: &Bitmap<'_>| thumbnail(f, 240).expect("thumbnail").jpeg.len()),
            ),
        ];
        for (label, encode_one) in rows {
            if wanted(&label) {
                measure(&label, bitmaps, encode_one);
            }
        }
    }
}
