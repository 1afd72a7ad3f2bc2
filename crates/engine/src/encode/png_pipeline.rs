//! PNG encoding on both cores: one thread converts BGRX rows to RGB (with
//! the cursor drawn in) and applies the Sub filter, while the calling
//! thread deflates what is ready with fdeflate's fast compressor. The PNG
//! container (signature, IHDR, one IDAT, IEND) is written around the zlib
//! stream.

use std::io::Write;
use std::sync::mpsc;

use fdeflate::Compressor;

use super::{EncodeError, bgrx_row_to_rgb, draw_cursor_row};
use crate::backend::{CursorImage, Frame, PixelFormat};
use crate::geometry::Point;

/// Rows handed from the filtering thread to the deflating thread at once.
const ROWS_PER_BATCH: usize = 16;

/// PNG filter type byte for "Sub".
const FILTER_SUB: u8 = 1;

/// Encodes `frame` as an 8-bit RGB PNG.
pub fn encode_png(
    frame: &Frame<'_>,
    origin: Point,
    cursor: Option<&CursorImage>,
) -> Result<Vec<u8>, EncodeError> {
    let (w, h) = (frame.width as usize, frame.height as usize);
    if w == 0 || h == 0 {
        return Err(EncodeError("empty image".into()));
    }
    let line = 1 + w * 3;
    let zlib = std::thread::scope(|scope| -> Result<Vec<u8>, EncodeError> {
        let (tx, rx) = mpsc::sync_channel::<Vec<u8>>(8);
        scope.spawn(move || {
            let mut rgb = vec![0u8; w * 3];
            let rows = frame.pixels.chunks(frame.stride).take(h).enumerate();
            let mut batch = Vec::with_capacity(ROWS_PER_BATCH * line);
            for (y, src) in rows {
                match frame.format {
                    PixelFormat::Bgrx => bgrx_row_to_rgb(&src[..w * 4], &mut rgb),
                }
                if let Some(c) = cursor {
                    draw_cursor_row(&mut rgb, origin.x, origin.y + y as i32, c);
                }
                let start = batch.len();
                batch.resize(start + line, 0);
                sub_filter(&rgb, &mut batch[start..]);
                if batch.len() >= ROWS_PER_BATCH * line {
                    let full =
                        std::mem::replace(&mut batch, Vec::with_capacity(ROWS_PER_BATCH * line));
                    if tx.send(full).is_err() {
                        return;
                    }
                }
            }
            if !batch.is_empty() {
                let _ = tx.send(batch);
            }
        });
        let io = |e: std::io::Error| EncodeError(e.to_string());
        let mut z = Compressor::new(Vec::with_capacity(w * h)).map_err(io)?;
        for batch in rx {
            z.write_data(&batch).map_err(io)?;
        }
        z.finish().map_err(io)
    })?;
    if zlib.len() < 6 {
        return Err(EncodeError("compressor produced no stream".into()));
    }
    let mut out = Vec::with_capacity(zlib.len() + 64);
    out.extend_from_slice(b"\x89PNG\r\n\x1a\n");
    let mut ihdr = Vec::with_capacity(13);
    ihdr.extend_from_slice(&frame.width.to_be_bytes());
    ihdr.extend_from_slice(&frame.height.to_be_bytes());
    // Bit depth 8, colour type 2 (RGB), deflate, adaptive filtering, no interlace.
    ihdr.extend_from_slice(&[8, 2, 0, 0, 0]);
    chunk(&mut out, b"IHDR", &ihdr);
    chunk(&mut out, b"IDAT", &zlib);
    chunk(&mut out, b"IEND", &[]);
    Ok(out)
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

fn chunk(out: &mut Vec<u8>, kind: &[u8; 4], data: &[u8]) {
    let len = u32::try_from(data.len()).unwrap_or(u32::MAX);
    out.extend_from_slice(&len.to_be_bytes());
    let start = out.len();
    out.extend_from_slice(kind);
    let _ = out.write_all(data);
    let crc = crc32fast::hash(&out[start..]);
    out.extend_from_slice(&crc.to_be_bytes());
}
