//! The clipboard: `CF_UNICODETEXT`, with `GetClipboardSequenceNumber` as
//! the change count. What deskhand writes is offered by delayed rendering
//! from a message-only window of its own, so that each fetch by another
//! app is seen (a paste taken) and the text stays pasteable while deskhand
//! runs. Another app's content is read only when asked for, and never
//! when its owner marked it for no monitoring or no history (what password
//! managers set).

use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use deskhand_backend::{BackendError, Clipboard, ClipboardContent, ClipboardRead};
use windows::Win32::Foundation::{
    GlobalFree, HANDLE, HGLOBAL, HWND, LPARAM, LRESULT, SetLastError, WIN32_ERROR, WPARAM,
};
use windows::Win32::System::DataExchange::{
    CloseClipboard, EmptyClipboard, GetClipboardData, GetClipboardOwner,
    GetClipboardSequenceNumber, IsClipboardFormatAvailable, OpenClipboard,
    RegisterClipboardFormatW, SetClipboardData,
};
use windows::Win32::System::Memory::{
    GMEM_MOVEABLE, GlobalAlloc, GlobalLock, GlobalSize, GlobalUnlock,
};
use windows::Win32::UI::WindowsAndMessaging::{
    DefWindowProcW, DispatchMessageW, GetMessageW, MSG, WM_DESTROYCLIPBOARD, WM_RENDERALLFORMATS,
    WM_RENDERFORMAT,
};
use windows::core::{PCWSTR, w};

use crate::clipboard::{CONCEALING_FORMATS, concealed_by};

/// `CF_UNICODETEXT`.
const CF_UNICODETEXT: u32 = 13;
/// How long another app may keep the clipboard open before a call fails.
const OPEN_FOR: Duration = Duration::from_millis(500);

/// What deskhand offers and how often it was fetched; shared with the
/// window's procedure, which has no other context.
#[derive(Default)]
struct Offered {
    text: Option<Vec<u16>>,
    fetches: u64,
}

fn offered() -> &'static Mutex<Offered> {
    static OFFERED: OnceLock<Mutex<Offered>> = OnceLock::new();
    OFFERED.get_or_init(Mutex::default)
}

fn lock() -> std::sync::MutexGuard<'static, Offered> {
    offered().lock().unwrap_or_else(|e| e.into_inner())
}

/// `units` (with a final NUL) in a movable global block, as the clipboard
/// takes it.
fn global_text(units: &[u16]) -> Result<HGLOBAL, BackendError> {
    let bytes = (units.len() + 1) * 2;
    // SAFETY: a fresh block of `bytes`, written within its size.
    unsafe {
        let block =
            GlobalAlloc(GMEM_MOVEABLE, bytes).map_err(|e| super::failed("GlobalAlloc", e))?;
        let p = GlobalLock(block).cast::<u16>();
        if p.is_null() {
            let _ = GlobalFree(Some(block));
            return Err(BackendError::Failed("GlobalLock failed".into()));
        }
        std::ptr::copy_nonoverlapping(units.as_ptr(), p, units.len());
        *p.add(units.len()) = 0;
        let _ = GlobalUnlock(block);
        Ok(block)
    }
}

/// Hands the offered text to the clipboard, which is open (by the app
/// that asked, or by `render_all`).
fn render() {
    let units = lock().text.clone();
    if let Some(units) = units
        && let Ok(block) = global_text(&units)
    {
        // SAFETY: the clipboard owns the block once it is set.
        if unsafe { SetClipboardData(CF_UNICODETEXT, Some(HANDLE(block.0))) }.is_err() {
            // SAFETY: not taken: still ours to free.
            let _ = unsafe { GlobalFree(Some(block)) };
        }
    }
}

unsafe extern "system" fn window_proc(hwnd: HWND, msg: u32, w: WPARAM, l: LPARAM) -> LRESULT {
    match msg {
        WM_RENDERFORMAT if w.0 as u32 == CF_UNICODETEXT => {
            render();
            lock().fetches += 1;
            LRESULT(0)
        }
        WM_RENDERALLFORMATS => {
            // deskhand goes: what it wrote stays on the clipboard.
            // SAFETY: opened and closed here, by the owner.
            unsafe {
                if OpenClipboard(Some(hwnd)).is_ok() {
                    if GetClipboardOwner().is_ok_and(|o| o == hwnd) {
                        render();
                    }
                    let _ = CloseClipboard();
                }
            }
            LRESULT(0)
        }
        WM_DESTROYCLIPBOARD => {
            lock().text = None;
            LRESULT(0)
        }
        // SAFETY: every other message as Windows handles it.
        _ => unsafe { DefWindowProcW(hwnd, msg, w, l) },
    }
}

/// The clipboard through deskhand's own message-only window.
pub(crate) struct WinClipboard {
    window: isize,
    /// Registered formats whose presence conceals a copy, with their names.
    concealing: Arc<Vec<(u32, &'static str)>>,
}

/// Creates the window on a thread of its own that pumps its messages.
fn start_window() -> Result<isize, BackendError> {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::Builder::new()
        .name("deskhand-clipboard".into())
        .spawn(move || {
            let hwnd = match super::message_window(w!("deskhand-clipboard"), Some(window_proc)) {
                Ok(h) => h,
                Err(e) => {
                    let _ = tx.send(Err(e));
                    return;
                }
            };
            // SAFETY: this thread pumps the window's messages while it runs.
            unsafe {
                let _ = tx.send(Ok(hwnd.0 as isize));
                let mut msg = MSG::default();
                while GetMessageW(&mut msg, None, 0, 0).0 > 0 {
                    DispatchMessageW(&msg);
                }
            }
        })
        .map_err(|e| BackendError::Failed(format!("clipboard thread: {e}")))?;
    rx.recv()
        .map_err(|_| BackendError::Failed("the clipboard thread ended".into()))?
}

/// The clipboard, open for `owner` while this lives.
struct Open;

impl Open {
    fn new(owner: HWND) -> Result<Self, BackendError> {
        let deadline = std::time::Instant::now() + OPEN_FOR;
        loop {
            // SAFETY: a plain call; closed in Drop.
            if unsafe { OpenClipboard(Some(owner)) }.is_ok() {
                return Ok(Self);
            }
            if std::time::Instant::now() >= deadline {
                return Err(BackendError::Failed(
                    "another app keeps the clipboard open".into(),
                ));
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }
}

impl Drop for Open {
    fn drop(&mut self) {
        // SAFETY: opened in `new`.
        let _ = unsafe { CloseClipboard() };
    }
}

fn sequence() -> u64 {
    // SAFETY: a plain call.
    u64::from(unsafe { GetClipboardSequenceNumber() })
}

/// The clipboard's text, read while it is open.
fn read_open(max_bytes: u64) -> ClipboardContent {
    // SAFETY: the clipboard is open; the block is locked while read.
    unsafe {
        let Ok(handle) = GetClipboardData(CF_UNICODETEXT) else {
            return ClipboardContent::NoText;
        };
        let block = HGLOBAL(handle.0);
        let size = GlobalSize(block);
        let p = GlobalLock(block).cast::<u16>();
        if p.is_null() {
            return ClipboardContent::NoText;
        }
        let units = std::slice::from_raw_parts(p, size / 2);
        let len = units.iter().position(|&u| u == 0).unwrap_or(units.len());
        let text = String::from_utf16_lossy(&units[..len]);
        let _ = GlobalUnlock(block);
        if text.len() as u64 > max_bytes {
            return ClipboardContent::TooLarge {
                bytes: Some(text.len() as u64),
            };
        }
        ClipboardContent::Text(text)
    }
}

impl WinClipboard {
    pub(crate) fn start() -> Result<Self, BackendError> {
        let window = start_window()?;
        let concealing = CONCEALING_FORMATS
            .iter()
            .filter_map(|&name| {
                let wide: Vec<u16> = name.encode_utf16().chain([0]).collect();
                // SAFETY: a NUL-terminated name.
                let id = unsafe { RegisterClipboardFormatW(PCWSTR(wide.as_ptr())) };
                (id != 0).then_some((id, name))
            })
            .collect();
        Ok(Self {
            window,
            concealing: Arc::new(concealing),
        })
    }

    fn hwnd(&self) -> HWND {
        HWND(self.window as *mut _)
    }

    /// Puts `units` on the clipboard (open for our window), offered by
    /// delayed rendering.
    fn offer(&self, units: Vec<u16>) -> Result<(), BackendError> {
        // SAFETY: the clipboard is open for our window. EmptyClipboard
        // tells the old owner (our window too) first, and waits for it.
        unsafe { EmptyClipboard() }.map_err(|e| super::failed("EmptyClipboard", e))?;
        lock().text = Some(units);
        // SAFETY: a plain call. SetClipboardData answers NULL below, which
        // is no error while the last error is 0: cleared first, since
        // EmptyClipboard leaves one when the old owner's window is gone.
        unsafe { SetLastError(WIN32_ERROR(0)) };
        // SAFETY: as above; no data: it is rendered when fetched.
        match unsafe { SetClipboardData(CF_UNICODETEXT, None) } {
            Err(e) if e.code().is_err() => Err(super::failed("SetClipboardData", e)),
            _ => Ok(()),
        }
    }

    /// A 32-bit value of format `id` on the (open) clipboard.
    fn dword(id: u32) -> Option<u32> {
        // SAFETY: the clipboard is open; the block is locked while read.
        unsafe {
            let block = HGLOBAL(GetClipboardData(id).ok()?.0);
            if GlobalSize(block) < 4 {
                return None;
            }
            let p = GlobalLock(block).cast::<u32>();
            if p.is_null() {
                return None;
            }
            let v = p.read_unaligned();
            let _ = GlobalUnlock(block);
            Some(v)
        }
    }
}

impl Clipboard for WinClipboard {
    fn read_text(&self, max_bytes: u64, foreign: bool) -> Result<ClipboardRead, BackendError> {
        let _open = Open::new(self.hwnd())?;
        let change_count = sequence();
        // SAFETY: the clipboard is open.
        let owner = unsafe { GetClipboardOwner() }.ok();
        let content = if owner == Some(self.hwnd()) {
            match lock().text.as_deref().map(String::from_utf16_lossy) {
                Some(text) if text.len() as u64 > max_bytes => ClipboardContent::TooLarge {
                    bytes: Some(text.len() as u64),
                },
                Some(text) => ClipboardContent::Text(text),
                None => ClipboardContent::NoText,
            }
        } else if !foreign {
            ClipboardContent::Foreign
        } else {
            let present = |id: u32| {
                // SAFETY: a plain call while the clipboard is open.
                unsafe { IsClipboardFormatAvailable(id) }.is_ok()
            };
            match concealed_by(&self.concealing, present, Self::dword) {
                Some(marker) => ClipboardContent::Concealed { marker },
                None => read_open(max_bytes),
            }
        };
        Ok(ClipboardRead {
            content,
            change_count,
        })
    }

    fn write_text(&self, text: &str) -> Result<u64, BackendError> {
        let units: Vec<u16> = text.encode_utf16().collect();
        {
            let _open = Open::new(self.hwnd())?;
            self.offer(units)?;
        }
        Ok(sequence())
    }

    fn write_if_unchanged(&self, change_count: u64, text: &str) -> Result<bool, BackendError> {
        let units: Vec<u16> = text.encode_utf16().collect();
        let _open = Open::new(self.hwnd())?;
        if sequence() != change_count {
            return Ok(false);
        }
        self.offer(units)?;
        Ok(true)
    }

    fn fetches(&self) -> u64 {
        lock().fetches
    }
}
