//! JPEG encoding: libjpeg-turbo (SIMD, 4:2:0) straight from the BGRX
//! buffer when the `turbojpeg` feature is on, else the pure-Rust SIMD
//! encoder.

use super::EncodeError;
use crate::{Frame, PixelFormat};

/// Encodes BGRX pixels (any stride) at `quality` (1..=100).
pub fn encode_bgrx(frame: &Frame<'_>, quality: u8) -> Result<Vec<u8>, EncodeError> {
    match frame.format {
        PixelFormat::Bgrx => {}
    }
    imp::encode_bgrx(frame, quality.clamp(1, 100))
}

/// Encodes tightly packed RGB of `width`×`height`.
pub fn encode_rgb(
    rgb: &[u8],
    width: u32,
    height: u32,
    quality: u8,
) -> Result<Vec<u8>, EncodeError> {
    imp::encode_rgb(rgb, width, height, quality.clamp(1, 100))
}

#[cfg(feature = "turbojpeg")]
mod imp {
    use std::cell::RefCell;

    use turbojpeg::{Compressor, Image, PixelFormat, Subsamp};

    use super::EncodeError;
    use crate::Frame;

    thread_local! {
        static COMPRESSOR: RefCell<Option<Compressor>> = const { RefCell::new(None) };
    }

    fn compress(image: Image<&[u8]>, quality: u8) -> Result<Vec<u8>, EncodeError> {
        let err = |e: turbojpeg::Error| EncodeError(e.to_string());
        COMPRESSOR.with(|cell| {
            let mut slot = cell.borrow_mut();
            if slot.is_none() {
                *slot = Some(Compressor::new().map_err(err)?);
            }
            let c = slot
                .as_mut()
                .ok_or_else(|| EncodeError("no JPEG compressor".into()))?;
            c.set_quality(i32::from(quality)).map_err(err)?;
            c.set_subsamp(Subsamp::Sub2x2).map_err(err)?;
            c.compress_to_vec(image).map_err(err)
        })
    }

    pub fn encode_bgrx(frame: &Frame<'_>, quality: u8) -> Result<Vec<u8>, EncodeError> {
        let image = Image {
            pixels: frame.pixels,
            width: frame.width as usize,
            pitch: frame.stride,
            height: frame.height as usize,
            format: PixelFormat::BGRX,
        };
        compress(image, quality)
    }

    pub fn encode_rgb(
        rgb: &[u8],
        width: u32,
        height: u32,
        quality: u8,
    ) -> Result<Vec<u8>, EncodeError> {
        let image = Image {
            pixels: rgb,
            width: width as usize,
            pitch: width as usize * 3,
            height: height as usize,
            format: PixelFormat::RGB,
        };
        compress(image, quality)
    }
}

#[cfg(not(feature = "turbojpeg"))]
mod imp {
    use jpeg_encoder::{ColorType, Encoder};

    use super::EncodeError;
    use crate::Frame;

    fn dims(width: u32, height: u32) -> Result<(u16, u16), EncodeError> {
        let w = u16::try_from(width).map_err(|_| EncodeError("image too wide".into()))?;
        let h = u16::try_from(height).map_err(|_| EncodeError("image too tall".into()))?;
        Ok((w, h))
    }

    fn encode(
        data: &[u8],
        width: u32,
        height: u32,
        color: ColorType,
        quality: u8,
    ) -> Result<Vec<u8>, EncodeError> {
        let (w, h) = dims(width, height)?;
        let mut out = Vec::with_capacity(data.len() / 8);
        Encoder::new(&mut out, quality)
            .encode(data, w, h, color)
            .map_err(|e| EncodeError(e.to_string()))?;
        Ok(out)
    }

    pub fn encode_bgrx(frame: &Frame<'_>, quality: u8) -> Result<Vec<u8>, EncodeError> {
        let row = frame.width as usize * 4;
        if frame.stride == row {
            return encode(
                frame.pixels,
                frame.width,
                frame.height,
                ColorType::Bgra,
                quality,
            );
        }
        let tight: Vec<u8> = frame
            .pixels
            .chunks(frame.stride)
            .take(frame.height as usize)
            .flat_map(|r| &r[..row])
            .copied()
            .collect();
        encode(&tight, frame.width, frame.height, ColorType::Bgra, quality)
    }

    pub fn encode_rgb(
        rgb: &[u8],
        width: u32,
        height: u32,
        quality: u8,
    ) -> Result<Vec<u8>, EncodeError> {
        encode(rgb, width, height, ColorType::Rgb, quality)
    }
}
