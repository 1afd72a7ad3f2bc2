//! The overlay on Windows, what winit does not do there: the extended
//! styles of an indicator (layered, no activation, no taskbar button),
//! the window region that leaves only the frame, label and button drawn,
//! click-through while no button is shown, topmost above every window,
//! and noticing when another program hides or destroys a window (polled:
//! Windows has no event for another process's window without a hook).

use std::sync::{Arc, Mutex};
use std::time::Duration;

use deskhand_overlay::desktop::{Desktop, WindowNews};
use deskhand_protocol::geometry::{Point, Rect};
use windows::Win32::Foundation::{COLORREF, HWND, POINT};
use windows::Win32::Graphics::Gdi::{
    CombineRgn, CreateRectRgn, DeleteObject, HRGN, RGN_OR, SetWindowRgn,
};
use windows::Win32::UI::WindowsAndMessaging::{
    GWL_EXSTYLE, GetCursorPos, GetWindowLongW, HWND_NOTOPMOST, HWND_TOPMOST, IsWindow,
    IsWindowVisible, LWA_ALPHA, SWP_NOACTIVATE, SWP_NOMOVE, SWP_NOSIZE, SetLayeredWindowAttributes,
    SetWindowLongW, SetWindowPos, WS_EX_LAYERED, WS_EX_NOACTIVATE, WS_EX_TOOLWINDOW, WS_EX_TOPMOST,
    WS_EX_TRANSPARENT,
};
use winit::raw_window_handle::{HasWindowHandle, RawWindowHandle};
use winit::window::{Window, WindowAttributes};

/// How often the windows' state is read for news.
const POLL: Duration = Duration::from_millis(15);

/// An adopted window: its handle and whether it was last seen shown.
#[derive(Debug, Clone, Copy)]
struct Watched {
    hwnd: isize,
    shown: bool,
    gone: bool,
}

/// The overlay's windows as this process watches them.
#[derive(Clone, Default)]
pub struct WindowsSide {
    watched: Arc<Mutex<Vec<Watched>>>,
}

fn hwnd(id: u32) -> HWND {
    HWND(id as usize as *mut _)
}

/// Sets the indicator's extended styles; `click_through` adds
/// `WS_EX_TRANSPARENT` (clicks go to the window beneath).
fn set_styles(h: HWND, click_through: bool) {
    // SAFETY: plain calls on a window of this process.
    unsafe {
        let ex = GetWindowLongW(h, GWL_EXSTYLE) as u32;
        let mut want = ex | (WS_EX_LAYERED | WS_EX_NOACTIVATE | WS_EX_TOOLWINDOW | WS_EX_TOPMOST).0;
        if click_through {
            want |= WS_EX_TRANSPARENT.0;
        } else {
            want &= !WS_EX_TRANSPARENT.0;
        }
        if want != ex {
            SetWindowLongW(h, GWL_EXSTYLE, want as i32);
        }
        // A layered window is drawn only once its attributes are set.
        let _ = SetLayeredWindowAttributes(h, COLORREF(0), 255, LWA_ALPHA);
    }
}

/// The union of `rects` as a region (an empty one for none).
fn region(rects: &[Rect]) -> HRGN {
    // SAFETY: regions made here; each added one is deleted after the union.
    unsafe {
        let all = CreateRectRgn(0, 0, 0, 0);
        for r in rects {
            let one = CreateRectRgn(r.x, r.y, r.x + r.width as i32, r.y + r.height as i32);
            CombineRgn(Some(all), Some(all), Some(one), RGN_OR);
            let _ = DeleteObject(one.into());
        }
        all
    }
}

impl Desktop for WindowsSide {
    fn attributes(&self, attrs: WindowAttributes) -> WindowAttributes {
        // Shown without taking the focus from the person's window.
        attrs.with_active(false)
    }

    fn adopt(&self, window: &Window) -> anyhow::Result<u32> {
        let h = match window.window_handle()?.as_raw() {
            RawWindowHandle::Win32(h) => h.hwnd.get(),
            other => anyhow::bail!("not a Win32 window: {other:?}"),
        };
        // Window handles are 32-bit significant on every Windows.
        let id = u32::try_from(h as usize)?;
        set_styles(hwnd(id), true);
        let mut watched = self.watched.lock().unwrap_or_else(|e| e.into_inner());
        watched.retain(|w| !w.gone);
        watched.push(Watched {
            hwnd: h,
            shown: false,
            gone: false,
        });
        Ok(id)
    }

    fn shape(
        &self,
        _window: &Window,
        id: u32,
        visible: &[Rect],
        input: &[Rect],
    ) -> anyhow::Result<()> {
        let h = hwnd(id);
        // Without input regions on Windows, the window takes clicks only
        // while it has a button (paused); else every click goes through.
        set_styles(h, input.is_empty());
        let mut drawn = visible.to_vec();
        drawn.extend_from_slice(input);
        // SAFETY: the system owns the region once it is set.
        let set = unsafe { SetWindowRgn(h, Some(region(&drawn)), true) };
        if set == 0 {
            anyhow::bail!("SetWindowRgn failed");
        }
        Ok(())
    }

    fn raise(&self, id: u32) -> anyhow::Result<()> {
        let h = hwnd(id);
        let click_through = {
            // SAFETY: a plain call.
            let ex = unsafe { GetWindowLongW(h, GWL_EXSTYLE) } as u32;
            ex & WS_EX_TRANSPARENT.0 != 0
        };
        set_styles(h, click_through);
        // SAFETY: plain calls on a window of this process. Out of the
        // topmost band and back in: a window the system already counts on
        // top is otherwise not restacked (Wine 8 leaves an app that a
        // click activated drawn above it).
        unsafe {
            SetWindowPos(
                h,
                Some(HWND_NOTOPMOST),
                0,
                0,
                0,
                0,
                SWP_NOMOVE | SWP_NOSIZE | SWP_NOACTIVATE,
            )?;
            SetWindowPos(
                h,
                Some(HWND_TOPMOST),
                0,
                0,
                0,
                0,
                SWP_NOMOVE | SWP_NOSIZE | SWP_NOACTIVATE,
            )?;
        }
        Ok(())
    }

    fn pointer(&self) -> Option<Point> {
        let mut p = POINT::default();
        // SAFETY: one out-parameter.
        unsafe { GetCursorPos(&mut p) }.ok()?;
        Some(Point::new(p.x, p.y))
    }

    fn next(&self) -> WindowNews {
        loop {
            std::thread::sleep(POLL);
            let mut watched = self.watched.lock().unwrap_or_else(|e| e.into_inner());
            for w in watched.iter_mut().filter(|w| !w.gone) {
                let h = HWND(w.hwnd as *mut _);
                let id = w.hwnd as u32;
                // SAFETY: IsWindow accepts any value.
                if !unsafe { IsWindow(Some(h)) }.as_bool() {
                    w.gone = true;
                    return WindowNews::Destroyed(id);
                }
                // SAFETY: a plain call.
                let shown = unsafe { IsWindowVisible(h) }.as_bool();
                if shown != w.shown {
                    w.shown = shown;
                    return if shown {
                        WindowNews::Mapped(id)
                    } else {
                        WindowNews::Unmapped(id)
                    };
                }
            }
        }
    }
}
