//! JPEG encoding: libjpeg-turbo (SIMD, 4:2:0) straight from the BGRX
//! buffer when the `turbojpeg` feature is on, else the pure-Rust SIMD
//! encoder.

use super::EncodeError;
use crate::{Bitmap, PixelFormat};

/// Encodes BGRX pixels (any stride) at `quality` (1..=100).
pub fn encode_bgrx(bitmap: &Bitmap<'_>, quality: u8) -> Result<Vec<u8>, EncodeError> {
    match bitmap.format {
        PixelFormat::Bgrx => {}
    }
    imp::encode_bgrx(bitmap, quality.clamp(1, 100))
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
    use crate::Bitmap;

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

    fn whole(bitmap: &Bitmap<'_>, quality: u8) -> Result<Vec<u8>, EncodeError> {
        let image = Image {
            pixels: bitmap.pixels,
            width: bitmap.width as usize,
            pitch: bitmap.stride,
            height: bitmap.height as usize,
            format: PixelFormat::BGRX,
        };
        compress(image, quality)
    }

    /// The bitmap in strips on the encoder threads, joined with restart
    /// markers (`jpeg_strips.rs`); one encode when it is too short to
    /// share or the strips cannot be joined.
    pub fn encode_bgrx(bitmap: &Bitmap<'_>, quality: u8) -> Result<Vec<u8>, EncodeError> {
        use crate::jpeg_strips::{join, rows_of, strip_heights};
        let pool = crate::png_parallel::encoder_pool();
        let threads = pool.map_or(1, |p| p.current_num_threads() + 1);
        let heights = strip_heights(bitmap.height as usize, threads);
        let Some(pool) = pool.filter(|_| heights.len() > 1) else {
            return whole(bitmap, quality);
        };
        let strips: Vec<Bitmap<'_>> = heights
            .iter()
            .scan(0, |y0, &h| {
                let strip = rows_of(bitmap, *y0, h);
                *y0 += h;
                Some(strip)
            })
            .collect();
        let mut encoded: Vec<Result<Vec<u8>, EncodeError>> =
            strips.iter().map(|_| Ok(Vec::new())).collect();
        let (first, rest) = encoded.split_at_mut(1);
        pool.in_place_scope(|scope| {
            for (strip, out) in strips[1..].iter().zip(rest) {
                scope.spawn(move |_| *out = whole(strip, quality));
            }
            first[0] = whole(&strips[0], quality);
        });
        let encoded: Vec<Vec<u8>> = encoded.into_iter().collect::<Result<_, _>>()?;
        match join(&encoded, bitmap.width as usize, &heights)? {
            Some(joined) => Ok(joined),
            None => whole(bitmap, quality),
        }
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

    #[cfg(test)]
    mod tests {
        use super::*;
        use crate::PixelFormat as Format;
        use crate::jpeg_strips::{join, rows_of, strip_heights};

        fn decoded(jpeg: &[u8]) -> turbojpeg::Image<Vec<u8>> {
            turbojpeg::decompress(jpeg, PixelFormat::RGB).expect("decodes")
        }

        #[test]
        fn joined_strips_decode_to_the_pixels_of_one_encode() {
            let (w, h) = (1000usize, 777usize);
            let pixels: Vec<u8> = (0..w * h)
                .flat_map(|i| {
                    let (x, y) = (i % w, i / w);
                    let noise = (x * 7919 + y * 104_729) % 251;
                    [(x % 256) as u8, (y % 256) as u8, noise as u8, 0]
                })
                .collect();
            let bitmap = Bitmap {
                width: w as u32,
                height: h as u32,
                stride: w * 4,
                format: Format::Bgrx,
                pixels: &pixels,
            };
            let heights = strip_heights(h, 3);
            assert_eq!(heights.len(), 3);
            let mut y0 = 0;
            let strips: Vec<Vec<u8>> = heights
                .iter()
                .map(|&rows| {
                    let s = whole(&rows_of(&bitmap, y0, rows), 75).expect("strip");
                    y0 += rows;
                    s
                })
                .collect();
            let joined = join(&strips, w, &heights)
                .expect("joins")
                .expect("same tables");
            assert!(
                joined.windows(2).any(|m| m == [0xFF, 0xDD]),
                "a restart interval"
            );
            let one = whole(&bitmap, 75).expect("whole");
            let (a, b) = (decoded(&joined), decoded(&one));
            assert_eq!((a.width, a.height), (w, h));
            assert!(a.pixels == b.pixels, "the same pixels as one encode");
        }
    }
}

#[cfg(not(feature = "turbojpeg"))]
mod imp {
    use jpeg_encoder::{ColorType, Encoder};

    use super::EncodeError;
    use crate::Bitmap;

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

    pub fn encode_bgrx(bitmap: &Bitmap<'_>, quality: u8) -> Result<Vec<u8>, EncodeError> {
        let row = bitmap.width as usize * 4;
        if bitmap.stride == row {
            return encode(
                bitmap.pixels,
                bitmap.width,
                bitmap.height,
                ColorType::Bgra,
                quality,
            );
        }
        let tight: Vec<u8> = bitmap
            .pixels
            .chunks(bitmap.stride)
            .take(bitmap.height as usize)
            .flat_map(|r| &r[..row])
            .copied()
            .collect();
        encode(
            &tight,
            bitmap.width,
            bitmap.height,
            ColorType::Bgra,
            quality,
        )
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
