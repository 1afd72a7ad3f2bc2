//! JPEG on several threads: the image is cut into horizontal strips whose
//! heights are whole MCU rows, each strip is encoded on its own (same
//! quality, subsampling and standard Huffman tables, so the same headers),
//! and the strips' entropy-coded data are joined with restart markers
//! under one header that names the whole height and the restart interval.
//! Each strip starts with its DC predictors at zero, as a restart does, so
//! the result decodes to the same pixels as one encode of the whole image.

use super::EncodeError;
use crate::Bitmap;

/// Rows of one MCU with 4:2:0 subsampling.
const MCU_ROWS: usize = 16;
/// Pixels of one MCU's width with 4:2:0 subsampling.
const MCU_COLUMNS: usize = 16;
/// The shortest strip worth a thread of its own.
const MIN_STRIP_ROWS: usize = 128;

/// The strips' heights for `height` rows over at most `threads`: every
/// strip but the last a whole number of MCU rows; one strip when the image
/// is too short to share.
pub(crate) fn strip_heights(height: usize, threads: usize) -> Vec<usize> {
    let count = threads.min(height / MIN_STRIP_ROWS).max(1);
    if count == 1 {
        return vec![height];
    }
    let mcu_rows = height.div_ceil(MCU_ROWS);
    let per = mcu_rows.div_ceil(count) * MCU_ROWS;
    let mut heights = Vec::with_capacity(count);
    let mut left = height;
    while left > 0 {
        let h = per.min(left);
        heights.push(h);
        left -= h;
    }
    heights
}

/// The rows `y0..y0 + rows` of `bitmap`.
pub(crate) fn rows_of<'a>(bitmap: &Bitmap<'a>, y0: usize, rows: usize) -> Bitmap<'a> {
    let start = y0 * bitmap.stride;
    let end = ((y0 + rows) * bitmap.stride).min(bitmap.pixels.len());
    Bitmap {
        height: rows as u32,
        pixels: &bitmap.pixels[start..end],
        ..*bitmap
    }
}

/// A baseline JPEG's parts: its header (SOI up to and including the SOS
/// segment), where the SOF height field is, and its entropy-coded data.
struct Parts<'a> {
    header: &'a [u8],
    sof_height_at: usize,
    sos_at: usize,
    data: &'a [u8],
}

fn parts(jpeg: &[u8]) -> Result<Parts<'_>, EncodeError> {
    let bad = |what: &str| EncodeError(format!("JPEG strip: {what}"));
    if jpeg.get(..2) != Some(&[0xFF, 0xD8]) || jpeg.len() < 4 {
        return Err(bad("no SOI"));
    }
    let mut at = 2;
    let mut sof = None;
    loop {
        let marker = jpeg.get(at..at + 4).ok_or_else(|| bad("cut short"))?;
        if marker[0] != 0xFF {
            return Err(bad("not a marker"));
        }
        let len = usize::from(u16::from_be_bytes([marker[2], marker[3]]));
        match marker[1] {
            0xC0 => sof = Some(at + 5),
            0xC1..=0xCF if marker[1] != 0xC4 && marker[1] != 0xC8 && marker[1] != 0xCC => {
                return Err(bad("not baseline"));
            }
            0xDD => return Err(bad("already has restart markers")),
            0xDA => {
                let end = at + 2 + len;
                if jpeg.len() < end + 2 || jpeg[jpeg.len() - 2..] != [0xFF, 0xD9] {
                    return Err(bad("no EOI"));
                }
                return Ok(Parts {
                    header: &jpeg[..end],
                    sof_height_at: sof.ok_or_else(|| bad("no SOF0"))?,
                    sos_at: at,
                    data: &jpeg[end..jpeg.len() - 2],
                });
            }
            _ => {}
        }
        at += 2 + len;
    }
}

/// Joins strips encoded on their own (`heights` rows each, `width` wide)
/// into one JPEG; `None` when their headers differ (the encoder chose
/// other tables), and the caller encodes the whole image instead.
pub(crate) fn join(
    strips: &[Vec<u8>],
    width: usize,
    heights: &[usize],
) -> Result<Option<Vec<u8>>, EncodeError> {
    let parts: Vec<Parts<'_>> = strips.iter().map(|s| parts(s)).collect::<Result<_, _>>()?;
    let first = parts
        .first()
        .ok_or_else(|| EncodeError("no JPEG strips".into()))?;
    let same = |p: &Parts<'_>| {
        p.header.len() == first.header.len()
            && p.sof_height_at == first.sof_height_at
            && p.header[..p.sof_height_at] == first.header[..first.sof_height_at]
            && p.header[p.sof_height_at + 2..] == first.header[first.sof_height_at + 2..]
    };
    if !parts.iter().all(same) {
        return Ok(None);
    }
    let total: usize = heights.iter().sum();
    let interval = width.div_ceil(MCU_COLUMNS) * (heights[0] / MCU_ROWS);
    let (Ok(total), Ok(interval)) = (u16::try_from(total), u16::try_from(interval)) else {
        return Ok(None);
    };
    let size = first.header.len() + 6 + parts.iter().map(|p| p.data.len() + 2).sum::<usize>();
    let mut out = Vec::with_capacity(size);
    out.extend_from_slice(&first.header[..first.sos_at]);
    out[first.sof_height_at..first.sof_height_at + 2].copy_from_slice(&total.to_be_bytes());
    out.extend_from_slice(&[0xFF, 0xDD, 0x00, 0x04]);
    out.extend_from_slice(&interval.to_be_bytes());
    out.extend_from_slice(&first.header[first.sos_at..]);
    for (i, p) in parts.iter().enumerate() {
        if i > 0 {
            out.extend_from_slice(&[0xFF, 0xD0 + ((i - 1) % 8) as u8]);
        }
        out.extend_from_slice(p.data);
    }
    out.extend_from_slice(&[0xFF, 0xD9]);
    Ok(Some(out))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strips_are_whole_mcu_rows_but_the_last() {
        assert_eq!(strip_heights(1080, 2), [544, 536]);
        assert_eq!(strip_heights(2160, 4), [544, 544, 544, 528]);
        assert_eq!(strip_heights(200, 4), [200], "too short to share");
        assert_eq!(strip_heights(1080, 1), [1080]);
        for (h, t) in [(1081, 3), (768, 2), (999, 8)] {
            let s = strip_heights(h, t);
            assert_eq!(s.iter().sum::<usize>(), h);
            assert!(s[..s.len() - 1].iter().all(|x| x % MCU_ROWS == 0), "{s:?}");
        }
    }

    #[test]
    fn foreign_bytes_are_refused() {
        assert!(parts(b"not a jpeg").is_err());
        assert!(join(&[vec![0xFF, 0xD8, 0xFF, 0xD9]], 16, &[16]).is_err());
    }
}
