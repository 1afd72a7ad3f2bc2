//! Screenshots with GDI: `BitBlt` from the screen's DC (with
//! `CAPTUREBLT`, so layered windows are included) into a top-down 32-bit
//! DIB section, read in place. It works on every Windows and under Wine;
//! Desktop Duplication and Windows.Graphics.Capture are not used yet. A
//! window's screenshot is its own image (`PrintWindow`), covered or not;
//! the pointer's image is drawn by Windows itself (see `crate::cursor`).

use deskhand_backend::{BackendError, Bitmap, Capture, CursorImage, PixelFormat, Point, Rect};
use windows::Win32::Foundation::{HWND, RECT};
use windows::Win32::Graphics::Gdi::{
    BI_RGB, BITMAP, BITMAPINFO, BITMAPINFOHEADER, BLACKNESS, BitBlt, CAPTUREBLT,
    CreateCompatibleDC, CreateDIBSection, DIB_RGB_COLORS, DeleteDC, DeleteObject, GdiFlush, GetDC,
    GetObjectW, HBITMAP, HDC, HGDIOBJ, PatBlt, ROP_CODE, ReleaseDC, SRCCOPY, SelectObject,
    WHITENESS,
};
use windows::Win32::Storage::Xps::{PRINT_WINDOW_FLAGS, PrintWindow};
use windows::Win32::UI::WindowsAndMessaging::{
    CURSOR_SHOWING, CURSORINFO, DI_NORMAL, DrawIconEx, GetCursorInfo, GetIconInfo, GetWindowRect,
    HICON, ICONINFO, IDC_ARROW, LoadCursorW, PW_RENDERFULLCONTENT,
};

use super::failed;

/// A faster way to read the screen than GDI, tried first.
pub(crate) trait Grab: Send {
    /// The method's name, for the log and the doctor (`wgc`, `dxgi`).
    fn method(&self) -> &'static str;
    /// Captures `rect` into `sink`. `Ok(false)`, with nothing handed to
    /// `sink`, when the method cannot capture that rectangle now (it
    /// spans displays, the desktop switched): GDI captures it instead.
    fn grab(&mut self, rect: Rect, sink: &mut dyn FnMut(&Bitmap<'_>))
    -> Result<bool, BackendError>;
}

/// Screenshots: Windows.Graphics.Capture where the OS has it, else DXGI
/// Desktop Duplication, else GDI (and GDI for whatever the faster method
/// cannot capture).
pub(crate) struct WinCapture {
    fast: Option<Box<dyn Grab>>,
}

impl WinCapture {
    /// The best method this system offers.
    pub(crate) fn open() -> Self {
        let fast = super::capture_wgc::open()
            .map(|g| Box::new(g) as Box<dyn Grab>)
            .or_else(|why| {
                tracing::info!(%why, "Windows.Graphics.Capture is unavailable");
                super::capture_dxgi::open().map(|g| Box::new(g) as Box<dyn Grab>)
            })
            .map_err(|why| tracing::info!(%why, "DXGI Desktop Duplication is unavailable"))
            .ok();
        Self { fast }
    }

    /// The method screenshots use (`wgc`, `dxgi` or `gdi`).
    pub(crate) fn method(&self) -> &'static str {
        self.fast.as_ref().map_or("gdi", |f| f.method())
    }
}

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

impl Capture for WinCapture {
    fn capture(
        &mut self,
        rect: Rect,
        sink: &mut dyn FnMut(&Bitmap<'_>),
    ) -> Result<(), BackendError> {
        if rect.width == 0 || rect.height == 0 {
            return Err(BackendError::InvalidTarget("an empty rectangle".into()));
        }
        if let Some(fast) = self.fast.as_mut() {
            match fast.grab(rect, sink) {
                Ok(true) => return Ok(()),
                Ok(false) => {}
                Err(e) => {
                    tracing::warn!(method = fast.method(), error = %e, "capture failed: GDI from now on");
                    self.fast = None;
                }
            }
        }
        gdi_capture(rect, sink)
    }

    fn capture_window(
        &mut self,
        window: u64,
        rect: Rect,
        sink: &mut dyn FnMut(&Bitmap<'_>),
    ) -> Option<Result<(), BackendError>> {
        Some(print_window(HWND(window as _), rect, sink))
    }

    fn captures_windows(&self) -> bool {
        true
    }

    fn cursor_image(&mut self) -> Result<Option<CursorImage>, BackendError> {
        cursor_image()
    }

    fn supports_cursor(&self) -> bool {
        true
    }
}

/// `rect` of the screen with GDI: `BitBlt` into a DIB section.
fn gdi_capture(rect: Rect, sink: &mut dyn FnMut(&Bitmap<'_>)) -> Result<(), BackendError> {
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
    let pixels = unsafe { std::slice::from_raw_parts(surface.bits, stride * rect.height as usize) };
    sink(&Bitmap {
        width: rect.width,
        height: rect.height,
        stride,
        format: PixelFormat::Bgrx,
        pixels,
    });
    Ok(())
}

/// `rect` (desktop pixels, inside the window) of the window's own image:
/// `PrintWindow` with `PW_RENDERFULLCONTENT` draws it as it would look
/// uncovered (DirectX and composited content included on Windows 8.1 and
/// later).
fn print_window(
    hwnd: HWND,
    rect: Rect,
    sink: &mut dyn FnMut(&Bitmap<'_>),
) -> Result<(), BackendError> {
    let mut at = RECT::default();
    // SAFETY: an out-parameter.
    unsafe { GetWindowRect(hwnd, &mut at) }.map_err(|e| failed("GetWindowRect", e))?;
    let whole = super::displays::rect_of(&at);
    if rect.width == 0 || rect.height == 0 || !whole.contains_rect(&rect) {
        return Err(BackendError::InvalidTarget(format!(
            "{:?} is not inside the window {:?}",
            rect.corners(),
            whole.corners()
        )));
    }
    let surface = Surface::new(whole.width, whole.height)?;
    // SAFETY: the window handle and a DC with the DIB selected.
    let printed = unsafe {
        PrintWindow(
            hwnd,
            surface.memory,
            PRINT_WINDOW_FLAGS(PW_RENDERFULLCONTENT),
        )
    };
    if !printed.as_bool() {
        return Err(BackendError::Failed(
            "PrintWindow drew nothing: the window may have closed".into(),
        ));
    }
    // SAFETY: a plain flush.
    let _ = unsafe { GdiFlush() };
    let stride = whole.width as usize * 4;
    // SAFETY: the DIB holds `stride * height` bytes, alive with `surface`.
    let all = unsafe { std::slice::from_raw_parts(surface.bits, stride * whole.height as usize) };
    hand_over(all, stride, Point::new(whole.x, whole.y), rect, sink)
}

/// Hands `rect` (desktop pixels) of an image to `sink`, `origin` being
/// where the image's top-left pixel is on the desktop.
pub(super) fn hand_over(
    image: &[u8],
    stride: usize,
    origin: Point,
    rect: Rect,
    sink: &mut dyn FnMut(&Bitmap<'_>),
) -> Result<(), BackendError> {
    let at = (rect.x - origin.x, rect.y - origin.y);
    let at = (usize::try_from(at.0), usize::try_from(at.1));
    let size = (rect.width as usize, rect.height as usize);
    let cut = match at {
        (Ok(x), Ok(y)) => crate::pixels::crop(image, stride, (x, y), size),
        _ => None,
    };
    let (pixels, stride) = cut.ok_or_else(|| {
        BackendError::Failed(format!(
            "{:?} is not inside the image captured",
            rect.corners()
        ))
    })?;
    sink(&Bitmap {
        width: rect.width,
        height: rect.height,
        stride,
        format: PixelFormat::Bgrx,
        pixels: &pixels,
    });
    Ok(())
}

/// The pointer's image where it is, `None` while it is hidden.
pub(crate) fn cursor_image() -> Result<Option<CursorImage>, BackendError> {
    let mut info = CURSORINFO {
        cbSize: std::mem::size_of::<CURSORINFO>() as u32,
        ..Default::default()
    };
    // SAFETY: a sized out-parameter.
    unsafe { GetCursorInfo(&mut info) }.map_err(|e| failed("GetCursorInfo", e))?;
    if info.flags.0 & CURSOR_SHOWING.0 == 0 || info.hCursor.is_invalid() {
        return Ok(None);
    }
    let mut icon = HICON(info.hCursor.0);
    let (hot, width, height) = match icon_shape(icon) {
        Ok(shape) => shape,
        Err(e) => {
            // Wine cannot read another process's cursor: the arrow is
            // drawn where the pointer is.
            tracing::debug!(error = %e, "the cursor's shape cannot be read: drawing the arrow");
            // SAFETY: a system cursor, shared, never destroyed.
            icon = HICON(
                unsafe { LoadCursorW(None, IDC_ARROW) }
                    .map_err(|e| failed("LoadCursorW", e))?
                    .0,
            );
            icon_shape(icon)?
        }
    };
    let black = draw_cursor(icon, width, height, BLACKNESS)?;
    let white = draw_cursor(icon, width, height, WHITENESS)?;
    Ok(Some(CursorImage {
        origin: Point::new(info.ptScreenPos.x - hot.x, info.ptScreenPos.y - hot.y),
        width,
        height,
        argb: crate::cursor::unblend(&black, &white),
    }))
}

/// A cursor's hot spot and size (a monochrome cursor's mask holds its
/// AND and XOR halves one above the other).
fn icon_shape(icon: HICON) -> Result<(Point, u32, u32), BackendError> {
    let mut info = ICONINFO::default();
    // SAFETY: an out-parameter; the bitmaps it returns are deleted here.
    unsafe {
        GetIconInfo(icon, &mut info).map_err(|e| failed("GetIconInfo", e))?;
        let mut bitmap = BITMAP::default();
        let (of, halves) = match info.hbmColor.is_invalid() {
            true => (info.hbmMask, 2),
            false => (info.hbmColor, 1),
        };
        let read = GetObjectW(
            of.into(),
            std::mem::size_of::<BITMAP>() as i32,
            Some((&mut bitmap as *mut BITMAP).cast()),
        );
        for b in [info.hbmColor, info.hbmMask] {
            if !b.is_invalid() {
                let _ = DeleteObject(b.into());
            }
        }
        if read == 0 || bitmap.bmWidth <= 0 || bitmap.bmHeight <= 0 {
            return Err(BackendError::Failed(
                "the cursor's bitmap cannot be read".into(),
            ));
        }
        let hot = Point::new(info.xHotspot as i32, info.yHotspot as i32);
        Ok((
            hot,
            bitmap.bmWidth as u32,
            (bitmap.bmHeight / halves) as u32,
        ))
    }
}

/// The cursor drawn on a background of `fill` (black or white), as
/// 0x00RRGGBB pixels.
fn draw_cursor(
    icon: HICON,
    width: u32,
    height: u32,
    fill: ROP_CODE,
) -> Result<Vec<u32>, BackendError> {
    let surface = Surface::new(width, height)?;
    let (w, h) = (width as i32, height as i32);
    // SAFETY: the DIB is selected into the memory DC and holds w×h pixels.
    unsafe {
        let _ = PatBlt(surface.memory, 0, 0, w, h, fill);
        DrawIconEx(surface.memory, 0, 0, icon, w, h, 0, None, DI_NORMAL)
            .map_err(|e| failed("DrawIconEx", e))?;
        let _ = GdiFlush();
        let pixels =
            std::slice::from_raw_parts(surface.bits.cast::<u32>(), (width * height) as usize);
        Ok(pixels.to_vec())
    }
}
