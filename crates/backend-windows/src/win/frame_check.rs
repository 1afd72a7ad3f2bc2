//! The frame check before every act: each overlay window still shown,
//! where it was put, as large, opaque and topmost; what another program
//! changed is put back (see [`crate::frame::verdict`]).

use deskhand_backend::overlay_process::FrameInspector;
use deskhand_backend::{BackendError, FrameCheck, Rect};
use windows::Win32::Foundation::{COLORREF, HWND, RECT};
use windows::Win32::UI::WindowsAndMessaging::{
    GWL_EXSTYLE, GetForegroundWindow, GetLayeredWindowAttributes, GetWindowLongW, GetWindowRect,
    HWND_NOTOPMOST, HWND_TOPMOST, IsWindow, IsWindowVisible, LAYERED_WINDOW_ATTRIBUTES_FLAGS,
    LWA_ALPHA, SWP_NOACTIVATE, SWP_NOMOVE, SWP_NOSIZE, SetLayeredWindowAttributes, SetWindowPos,
    WS_EX_TOPMOST,
};

use super::displays::rect_of;
use crate::frame::{Seen, verdict};

/// The frame check, with what it saw last: the foreground window (a
/// window activated since may be drawn over the frame: Wine 8 does that)
/// and the frame's windows (a new frame is put on top once).
#[derive(Default)]
pub(crate) struct WindowsFrameInspector {
    foreground: isize,
    windows: Vec<u64>,
}

fn hwnd(id: u64) -> HWND {
    HWND(id as usize as *mut _)
}

fn look(id: u64) -> Seen {
    let h = hwnd(id);
    // SAFETY: plain calls on a window handle; a vanished one fails them.
    unsafe {
        let visible = IsWindow(Some(h)).as_bool() && IsWindowVisible(h).as_bool();
        let mut r = RECT::default();
        let _ = GetWindowRect(h, &mut r);
        let ex = GetWindowLongW(h, GWL_EXSTYLE) as u32;
        let (mut key, mut alpha, mut flags) =
            (COLORREF(0), 255u8, LAYERED_WINDOW_ATTRIBUTES_FLAGS(0));
        let _ = GetLayeredWindowAttributes(h, Some(&mut key), Some(&mut alpha), Some(&mut flags));
        Seen {
            visible,
            rect: rect_of(&r),
            topmost: ex & WS_EX_TOPMOST.0 != 0,
            faded: flags.0 & LWA_ALPHA.0 != 0 && alpha < 255,
        }
    }
}

/// Puts window `id` back on `want`, opaque and above every other window,
/// without activating it.
fn put_back(id: u64, seen: &Seen, want: Rect) {
    let h = hwnd(id);
    // SAFETY: plain calls on a window handle.
    unsafe {
        if seen.faded {
            let (mut key, mut alpha, mut flags) =
                (COLORREF(0), 255u8, LAYERED_WINDOW_ATTRIBUTES_FLAGS(0));
            let _ =
                GetLayeredWindowAttributes(h, Some(&mut key), Some(&mut alpha), Some(&mut flags));
            let _ = SetLayeredWindowAttributes(h, key, 255, flags);
        }
        let keep = if seen.rect == want {
            SWP_NOMOVE | SWP_NOSIZE
        } else {
            Default::default()
        };
        // Out of the topmost band and back in: a window the system
        // already counts on top is otherwise not restacked (Wine 8 leaves
        // an app that a click activated drawn above it).
        let _ = SetWindowPos(
            h,
            Some(HWND_NOTOPMOST),
            0,
            0,
            0,
            0,
            SWP_NOMOVE | SWP_NOSIZE | SWP_NOACTIVATE,
        );
        let _ = SetWindowPos(
            h,
            Some(HWND_TOPMOST),
            want.x,
            want.y,
            want.width as i32,
            want.height as i32,
            keep | SWP_NOACTIVATE,
        );
    }
}

impl FrameInspector for WindowsFrameInspector {
    fn inspect(
        &mut self,
        windows: &[u64],
        monitors: &[Rect],
        _covered: &[Rect],
    ) -> Result<Option<FrameCheck>, BackendError> {
        let seen: Vec<Seen> = windows.iter().map(|&id| look(id)).collect();
        let found = verdict(&seen, monitors);
        // SAFETY: a plain call.
        let foreground = unsafe { GetForegroundWindow() }.0 as isize;
        let activated = foreground != self.foreground || windows != self.windows.as_slice();
        self.foreground = foreground;
        self.windows = windows.to_vec();
        if let Some(check) = found {
            for ((&id, s), &want) in windows.iter().zip(&seen).zip(monitors) {
                if activated || check != FrameCheck::Intact || !s.topmost {
                    put_back(id, s, want);
                }
            }
        }
        Ok(found)
    }
}
