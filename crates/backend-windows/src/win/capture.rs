//! Screenshots with GDI: `BitBlt` from the screen's DC (with
//! `CAPTUREBLT`, so layered windows are included) into a top-down 32-bit
//! DIB section, read in place. It works on every Windows and under Wine;
//! Desktop Duplication and Windows.Graphics.Capture are not used yet.

use deskhand_backend::{BackendError, Bitmap, Capture, CursorImage, PixelFormat, Rect};
use windows::Win32::Graphics::Gdi::{
    BI_RGB, BITMAPINFO, BITMAPINFOHEADER, BitBlt, CAPTUREBLT, CreateCompatibleDC, CreateDIBSection,
    DIB_RGB_COLORS, DeleteDC, DeleteObject, GdiFlush, GetDC, HBITMAP, HDC, HGDIOBJ, ReleaseDC,
    SRCCOPY, SelectObject,
};

use super::failed;

/// The capture method, for the log and the doctor.
pub(crate) const METHOD: &str = "gdi";

#[derive(Default)]
pub(crate) struct GdiCapture;

/// The screen DC, a memory DC and a DIB section selected into it,
/// released when dropped.
struct Surface {
    screen: HDC,
    memory: HDC,
    bitmap: HBITMAP,
    old: HGDIOBJ,
    bits: *mut u8,
}

impl Surface {
    fn new(width: u32, height: u32) -> Result<Self, BackendError> {
        let info = BITMAPINFO {
            bmiHeader: BITMAPINFOHEADER {
                biSize: std::mem::size_of::<BITMAPINFOHEADER>() as u32,
                biWidth: width as i32,
                // Negative: rows top-down, as the encoder reads them.
                biHeight: -(height as i32),
                biPlanes: 1,
                biBitCount: 32,
                biCompression: BI_RGB.0,
                ..Default::default()
            },
            ..Default::default()
        };
        // SAFETY: each handle is checked and released in Drop; `bits` is
        // the DIB's memory, valid while `bitmap` lives.
        unsafe {
            let screen = GetDC(None);
            if screen.is_invalid() {
                return Err(BackendError::DisplayUnavailable(
                    "GetDC(NULL) failed".into(),
                ));
            }
            let memory = CreateCompatibleDC(Some(screen));
            let mut bits = std::ptr::null_mut();
            let bitmap =
                match CreateDIBSection(Some(memory), &info, DIB_RGB_COLORS, &mut bits, None, 0) {
                    Ok(b) => b,
                    Err(e) => {
                        let _ = DeleteDC(memory);
                        ReleaseDC(None, screen);
                        return Err(failed("CreateDIBSection", e));
                    }
                };
            let old = SelectObject(memory, bitmap.into());
            Ok(Self {
                screen,
                memory,
                bitmap,
                old,
                bits: bits.cast(),
            })
        }
    }
}

impl Drop for Surface {
    fn drop(&mut self) {
        // SAFETY: the handles made in `new`, released once.
        unsafe {
            SelectObject(self.memory, self.old);
            let _ = DeleteObject(self.bitmap.into());
            let _ = DeleteDC(self.memory);
            ReleaseDC(None, self.screen);
        }
    }
}

impl Capture for GdiCapture {
    fn capture(
        &mut self,
        rect: Rect,
        sink: &mut dyn FnMut(&Bitmap<'_>),
    ) -> Result<(), BackendError> {
        if rect.width == 0 || rect.height == 0 {
            return Err(BackendError::InvalidTarget("an empty rectangle".into()));
        }
        let surface = Surface::new(rect.width, rect.height)?;
        // SAFETY: both DCs are valid; the copy stays inside the DIB.
        unsafe {
            BitBlt(
                surface.memory,
                0,
                0,
                rect.width as i32,
                rect.height as i32,
                Some(surface.screen),
                rect.x,
                rect.y,
                SRCCOPY | CAPTUREBLT,
            )
            .map_err(|e| failed("BitBlt", e))?;
            let _ = GdiFlush();
        }
        let stride = rect.width as usize * 4;
        // SAFETY: the DIB holds `stride * height` bytes, alive with `surface`.
        let pixels =
            unsafe { std::slice::from_raw_parts(surface.bits, stride * rect.height as usize) };
        sink(&Bitmap {
            width: rect.width,
            height: rect.height,
            stride,
            format: PixelFormat::Bgrx,
            pixels,
        });
        Ok(())
    }

    fn cursor_image(&mut self) -> Result<Option<CursorImage>, BackendError> {
        Ok(None)
    }

    fn supports_cursor(&self) -> bool {
        false
    }
}
