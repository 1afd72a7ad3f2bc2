//! What a program's version resource says its file is: a copy of
//! `cmd.exe` renamed `notes.exe` (and registered as an app) still says
//! `OriginalFilename: Cmd.Exe`, so the launch rules know it for a command
//! runner under any name.

use windows::Win32::Storage::FileSystem::{
    GetFileVersionInfoSizeW, GetFileVersionInfoW, VerQueryValueW,
};
use windows::core::HSTRING;

use crate::launch::{VERSION_NAMES, version_string_blocks};

/// The value at `sub` of the version block `data`: the bytes from where
/// it starts to the block's end, and its length as `VerQueryValueW` gives
/// it (bytes for a binary value, UTF-16 units for a string).
fn query<'a>(data: &'a [u8], sub: &str) -> Option<(&'a [u8], usize)> {
    let mut ptr = std::ptr::null_mut();
    let mut len = 0u32;
    // SAFETY: `data` is a whole version block read by
    // GetFileVersionInfoW; the pointer returned points inside it.
    let found = unsafe {
        VerQueryValueW(
            data.as_ptr().cast(),
            &HSTRING::from(sub),
            &mut ptr,
            &mut len,
        )
    };
    if !found.as_bool() || ptr.is_null() {
        return None;
    }
    let start = (ptr as usize).checked_sub(data.as_ptr() as usize)?;
    Some((data.get(start..)?, len as usize))
}

/// A string value of the block, without its ending NUL.
fn query_string(data: &[u8], sub: &str) -> Option<String> {
    let (bytes, units) = query(data, sub)?;
    let units: Vec<u16> = bytes
        .chunks_exact(2)
        .take(units)
        .map(|c| u16::from_le_bytes([c[0], c[1]]))
        .take_while(|&u| u != 0)
        .collect();
    let text = String::from_utf16_lossy(&units);
    (!text.trim().is_empty()).then(|| text.trim().to_owned())
}

/// The file names the version resource of the program at `path` gives
/// (`OriginalFilename`, `InternalName`), in every language it has; none
/// when it has no version resource.
pub(super) fn original_names(path: &str) -> Vec<String> {
    let wide = HSTRING::from(path);
    // SAFETY: a NUL-terminated path; no handle asked for.
    let size = unsafe { GetFileVersionInfoSizeW(&wide, None) };
    if size == 0 {
        return Vec::new();
    }
    let mut data = vec![0u8; size as usize];
    // SAFETY: `data` is `size` bytes long, as asked for.
    if unsafe { GetFileVersionInfoW(&wide, None, size, data.as_mut_ptr().cast()) }.is_err() {
        return Vec::new();
    }
    let translations = query(&data, r"\VarFileInfo\Translation")
        .map(|(bytes, len)| &bytes[..usize::min(len, bytes.len())])
        .unwrap_or_default();
    let mut out = Vec::new();
    for block in version_string_blocks(translations) {
        for name in VERSION_NAMES {
            if let Some(value) = query_string(&data, &format!(r"{block}\{name}"))
                && !out.contains(&value)
            {
                out.push(value);
            }
        }
    }
    out
}
