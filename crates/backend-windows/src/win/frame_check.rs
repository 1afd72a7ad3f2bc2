//! The frame check before every act: each overlay window still shown,
//! where it was put, as large, opaque and topmost, with no colour key, its
//! window region holding every part it draws and no window stacked above
//! those parts; what another program changed is put back (see
//! [`crate::frame::verdict`]).

use deskhand_backend::overlay_process::FrameInspector;
use deskhand_backend::{BackendError, FrameCheck, Rect};
use windows::Win32::Foundation::{COLORREF, HWND, RECT};
use windows::Win32::Graphics::Gdi::{
    CombineRgn, CreateRectRgn, DeleteObject, GetRegionData, GetWindowRgn, HRGN, NULLREGION,
    RGN_ERROR, RGN_OR, RGNDATA, RGNDATAHEADER, SetWindowRgn,
};
use windows::Win32::UI::WindowsAndMessaging::{
    GW_HWNDNEXT, GWL_EXSTYLE, GetForegroundWindow, GetLayeredWindowAttributes, GetTopWindow,
    GetWindow, GetWindowLongW, GetWindowRect, HWND_NOTOPMOST, HWND_TOPMOST, IsIconic, IsWindow,
    IsWindowVisible, LAYERED_WINDOW_ATTRIBUTES_FLAGS, LWA_ALPHA, LWA_COLORKEY, SWP_NOACTIVATE,
    SWP_NOMOVE, SWP_NOSIZE, SetLayeredWindowAttributes, SetWindowPos, WS_EX_LAYERED, WS_EX_TOPMOST,
};

use super::displays::rect_of;
use crate::frame::{Seen, clipped, covered, drawn_on, verdict};

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

/// The layered attributes of `h`: colour key, alpha and which are set.
fn layered(h: HWND) -> (COLORREF, u8, LAYERED_WINDOW_ATTRIBUTES_FLAGS) {
    let (mut key, mut alpha, mut flags) = (COLORREF(0), 255u8, LAYERED_WINDOW_ATTRIBUTES_FLAGS(0));
    // SAFETY: three out-parameters; a window that is not layered fails it
    // and leaves them as they are.
    let _ = unsafe {
        GetLayeredWindowAttributes(h, Some(&mut key), Some(&mut alpha), Some(&mut flags))
    };
    (key, alpha, flags)
}

/// The rectangles of `h`'s window region (its own coordinates); `None`
/// when it has none (all of it is drawn).
fn region_of(h: HWND) -> Option<Vec<Rect>> {
    // SAFETY: a region made here and deleted before returning; the buffer
    // is as large as GetRegionData asked and read only as it filled it.
    unsafe {
        let rgn = CreateRectRgn(0, 0, 0, 0);
        let kind = GetWindowRgn(h, rgn);
        let rects = if kind == RGN_ERROR {
            None
        } else if kind == NULLREGION {
            Some(Vec::new())
        } else {
            Some(rects_of(rgn))
        };
        let _ = DeleteObject(rgn.into());
        rects
    }
}

/// The rectangles of region `rgn` (empty when it cannot be read: then the
/// frame counts as clipped and is reshaped).
fn rects_of(rgn: HRGN) -> Vec<Rect> {
    // SAFETY: the buffer (u32-aligned) holds the size GetRegionData asks
    // for; the header and the rectangles after it are read as it wrote them.
    unsafe {
        let size = GetRegionData(rgn, 0, None);
        let header = std::mem::size_of::<RGNDATAHEADER>();
        if (size as usize) < header {
            return Vec::new();
        }
        let mut buf = vec![0u32; (size as usize).div_ceil(4)];
        let data = buf.as_mut_ptr().cast::<RGNDATA>();
        if GetRegionData(rgn, size, Some(data)) == 0 {
            return Vec::new();
        }
        let head = &(*data).rdh;
        let first = buf
            .as_ptr()
            .cast::<u8>()
            .add(head.dwSize as usize)
            .cast::<RECT>();
        let room =
            (size as usize).saturating_sub(head.dwSize as usize) / std::mem::size_of::<RECT>();
        (0..(head.nCount as usize).min(room))
            .map(|i| rect_of(&first.add(i).read_unaligned()))
            .collect()
    }
}

/// The visible, uncloaked, not fully transparent windows stacked above
/// `target` that are topmost (only those can be above a topmost frame:
/// Wine lists a just activated app above it for a while, which the
/// raise after an activation deals with), top first, as rectangles.
fn topmost_above(target: HWND, ours: &[u64]) -> Vec<Rect> {
    let mut above = Vec::new();
    // SAFETY: plain calls walking the top-level z-order; a window that
    // vanished meanwhile fails them and ends the walk.
    unsafe {
        let mut next = GetTopWindow(None).ok();
        while let Some(h) = next {
            if h == target {
                break;
            }
            next = GetWindow(h, GW_HWNDNEXT).ok();
            if ours.contains(&(h.0 as usize as u64))
                || !IsWindowVisible(h).as_bool()
                || IsIconic(h).as_bool()
                || super::window_list::cloaked(h)
            {
                continue;
            }
            let ex = GetWindowLongW(h, GWL_EXSTYLE) as u32;
            if ex & WS_EX_TOPMOST.0 == 0 {
                continue;
            }
            if ex & WS_EX_LAYERED.0 != 0 {
                let (_, alpha, flags) = layered(h);
                if flags.0 & LWA_ALPHA.0 != 0 && alpha == 0 {
                    continue;
                }
            }
            let mut r = RECT::default();
            if GetWindowRect(h, &mut r).is_ok() {
                above.push(rect_of(&r));
            }
        }
    }
    above
}

/// What Windows says of overlay window `id` on `monitor`, which draws
/// `drawn` (global); `ours` are every overlay window.
fn look(id: u64, monitor: Rect, drawn: &[Rect], ours: &[u64]) -> Seen {
    let h = hwnd(id);
    // SAFETY: plain calls on a window handle; a vanished one fails them.
    unsafe {
        let visible = IsWindow(Some(h)).as_bool() && IsWindowVisible(h).as_bool();
        let mut r = RECT::default();
        let _ = GetWindowRect(h, &mut r);
        let ex = GetWindowLongW(h, GWL_EXSTYLE) as u32;
        let (_, alpha, flags) = layered(h);
        let local = drawn_on(monitor, drawn, true);
        Seen {
            visible,
            rect: rect_of(&r),
            topmost: ex & WS_EX_TOPMOST.0 != 0,
            faded: flags.0 & LWA_ALPHA.0 != 0 && alpha < 255,
            keyed: flags.0 & LWA_COLORKEY.0 != 0,
            clipped: clipped(&local, region_of(h).as_deref()),
            covered: visible && covered(drawn, &topmost_above(h, ours)),
        }
    }
}

/// The union of `rects` as a region.
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

/// Puts window `id` back on `want`, opaque, with no colour key, its region
/// holding `local` (what it draws, in its own coordinates) and above every
/// other window, without activating it.
fn put_back(id: u64, seen: &Seen, want: Rect, local: &[Rect]) {
    let h = hwnd(id);
    // SAFETY: plain calls on a window handle; the system owns the region
    // once it is set.
    unsafe {
        if seen.faded || seen.keyed {
            let _ = SetLayeredWindowAttributes(h, COLORREF(0), 255, LWA_ALPHA);
        }
        if seen.clipped {
            let _ = SetWindowRgn(h, Some(region(local)), true);
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
        drawn: &[Rect],
    ) -> Result<Option<FrameCheck>, BackendError> {
        let seen: Vec<Seen> = windows
            .iter()
            .zip(monitors)
            .map(|(&id, &m)| look(id, m, &drawn_on(m, drawn, false), windows))
            .collect();
        let found = verdict(&seen, monitors);
        // SAFETY: a plain call.
        let foreground = unsafe { GetForegroundWindow() }.0 as isize;
        let activated = foreground != self.foreground || windows != self.windows.as_slice();
        self.foreground = foreground;
        self.windows = windows.to_vec();
        if let Some(check) = found {
            if let FrameCheck::Restored(what) = check {
                tracing::warn!(what, "another program changed the takeover frame");
            }
            for ((&id, s), &want) in windows.iter().zip(&seen).zip(monitors) {
                if activated || check != FrameCheck::Intact || !s.topmost {
                    put_back(id, s, want, &drawn_on(want, drawn, true));
                }
            }
        }
        Ok(found)
    }
}
