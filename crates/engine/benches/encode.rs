//! `cargo bench -p deskhand-engine`: encoding a 1920×1080 and a 3840×2160
//! frame of the standard scene (a generated photo-like wallpaper with text
//! windows over about a third of it) as PNG and JPEG q75. Prints median and
//! p95 in milliseconds.

#![allow(missing_docs)]

use std::time::Instant;

use deskhand_engine::Point;
use deskhand_engine::backend::{Frame, PixelFormat};
use deskhand_engine::encode::{StripeCache, encode};
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

/// Encodes the two frames in turn with one cache, as a screen that changed
/// completely between captures (nothing can be reused; buffers are).
fn measure(label: &str, frames: [&Frame<'_>; 2], format: ImageFormat) {
    let mut ms = Vec::new();
    let mut size = 0;
    let mut cache = StripeCache::default();
    for i in 0..41 {
        let t = Instant::now();
        let out = encode(
            frames[i % 2],
            Point::new(0, 0),
            format,
            75,
            None,
            &mut cache,
        )
        .expect("encode");
        ms.push(t.elapsed().as_secs_f64() * 1000.0);
        size = out.len();
    }
    ms.sort_by(f64::total_cmp);
    println!(
        "{label:<28} median {:>6.2} ms   p95 {:>6.2} ms   min {:>6.2} ms   {:>5} KiB",
        ms[ms.len() / 2],
        ms[ms.len() * 95 / 100],
        ms[0],
        size / 1024
    );
}

fn main() {
    // `cargo bench -p deskhand-engine -- 1920 PNG`: only the rows whose
    // label holds every word given.
    let words: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with('-'))
        .collect();
    let wanted = |label: &str| words.iter().all(|w| label.contains(w.as_str()));
    for (w, h) in [(1920usize, 1080usize), (3840, 2160)] {
        if !wanted(&format!("encode {w}x{h} PNG")) && !wanted(&format!("encode {w}x{h} JPEG q75")) {
            continue;
        }
        let pixels = [
            scene(w, h, 0x9e37_79b9_7f4a_7c15),
            scene(w, h, 0x2545_f491_4f6c_dd1d),
        ];
        let frames = pixels.each_ref().map(|px| Frame {
            width: w as u32,
            height: h as u32,
            stride: w * 4,
            format: PixelFormat::Bgrx,
            pixels: px,
        });
        let frames = [&frames[0], &frames[1]];
        for (label, format) in [
            (format!("encode {w}x{h} PNG"), ImageFormat::Png),
            (format!("encode {w}x{h} JPEG q75"), ImageFormat::Jpeg),
        ] {
            if wanted(&label) {
                measure(&label, frames, format);
            }
        }
    }
}
