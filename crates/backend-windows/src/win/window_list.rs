//! Top-level windows in z-order (visible, not cloaked; no tool windows in
//! the list agents see, deskhand's overlay is one, but in the one the
//! refusal policy judges: see [`crate::listing`]), each with its process,
//! class, title and bounds; focus with `SetForegroundWindow`, made to work
//! against the foreground lock and checked afterwards.

use deskhand_backend::{BackendError, NativeWindow, Rect, Windows};
use windows::Win32::Foundation::{CloseHandle, HWND, LPARAM, RECT};
use windows::Win32::Graphics::Dwm::{
    DWMWA_CLOAKED, DWMWA_EXTENDED_FRAME_BOUNDS, DwmGetWindowAttribute,
};
use windows::Win32::System::Threading::{
    AttachThreadInput, GetCurrentThreadId, OpenProcess, PROCESS_NAME_WIN32,
    PROCESS_QUERY_LIMITED_INFORMATION, QueryFullProcessImageNameW,
};
use windows::Win32::UI::WindowsAndMessaging::{
    BringWindowToTop, EnumWindows, GWL_EXSTYLE, GetClassNameW, GetForegroundWindow, GetWindowLongW,
    GetWindowRect, GetWindowTextW, GetWindowThreadProcessId, IsIconic, IsWindow, IsWindowVisible,
    SW_RESTORE, SetForegroundWindow, ShowWindow,
};
use windows::core::{BOOL, PWSTR};

use super::displays::{all_monitors, rect_of};
use crate::launch::program_name;

pub(crate) struct WinWindows;

unsafe extern "system" fn collect(hwnd: HWND, out: LPARAM) -> BOOL {
    // SAFETY: `out` is the Vec that `stack` passed, alive for the call.
    let out = unsafe { &mut *(out.0 as *mut Vec<HWND>) };
    out.push(hwnd);
    true.into()
}

/// Every top-level window, top of the stack first.
fn stack() -> Result<Vec<HWND>, BackendError> {
    let mut out: Vec<HWND> = Vec::new();
    // SAFETY: the callback only pushes onto `out`, which outlives the call.
    unsafe { EnumWindows(Some(collect), LPARAM(&mut out as *mut Vec<HWND> as isize)) }
        .map_err(|e| super::failed("EnumWindows", e))?;
    Ok(out)
}

fn text_of(hwnd: HWND) -> String {
    let mut buf = [0u16; 512];
    // SAFETY: a buffer and its length.
    let n = unsafe { GetWindowTextW(hwnd, &mut buf) }.max(0) as usize;
    String::from_utf16_lossy(&buf[..n.min(buf.len())])
}

fn class_of(hwnd: HWND) -> String {
    let mut buf = [0u16; 256];
    // SAFETY: a buffer and its length.
    let n = unsafe { GetClassNameW(hwnd, &mut buf) }.max(0) as usize;
    String::from_utf16_lossy(&buf[..n.min(buf.len())])
}

/// The full path of the program process `pid` runs, when readable.
pub(crate) fn image_of(pid: u32) -> Option<String> {
    // SAFETY: the handle is closed before returning; the buffer and its
    // length are passed together.
    unsafe {
        let process = OpenProcess(PROCESS_QUERY_LIMITED_INFORMATION, false, pid).ok()?;
        let mut buf = [0u16; 1024];
        let mut len = buf.len() as u32;
        let read = QueryFullProcessImageNameW(
            process,
            PROCESS_NAME_WIN32,
            PWSTR(buf.as_mut_ptr()),
            &mut len,
        );
        let _ = CloseHandle(process);
        read.ok()?;
        Some(String::from_utf16_lossy(&buf[..len as usize]))
    }
}

pub(crate) fn cloaked(hwnd: HWND) -> bool {
    let mut value = 0u32;
    // SAFETY: a u32 out-parameter and its size.
    let read = unsafe {
        DwmGetWindowAttribute(
            hwnd,
            DWMWA_CLOAKED,
            (&mut value as *mut u32).cast(),
            std::mem::size_of::<u32>() as u32,
        )
    };
    read.is_ok() && value != 0
}

/// The window's bounds without the invisible resize borders where the
/// system says them (DWM), else its window rectangle.
fn bounds_of(hwnd: HWND) -> Option<Rect> {
    let mut r = RECT::default();
    // SAFETY: a RECT out-parameter and its size.
    let dwm = unsafe {
        DwmGetWindowAttribute(
            hwnd,
            DWMWA_EXTENDED_FRAME_BOUNDS,
            (&mut r as *mut RECT).cast(),
            std::mem::size_of::<RECT>() as u32,
        )
    };
    if dwm.is_err() {
        // SAFETY: a RECT out-parameter.
        unsafe { GetWindowRect(hwnd, &mut r) }.ok()?;
    }
    Some(rect_of(&r))
}

fn describe(
    hwnd: HWND,
    foreground: HWND,
    screens: &[Rect],
    for_refusal: bool,
) -> Option<NativeWindow> {
    // SAFETY: plain calls on a window handle (a vanished one fails them).
    unsafe {
        if !IsWindowVisible(hwnd).as_bool() || cloaked(hwnd) {
            return None;
        }
        let ex = GetWindowLongW(hwnd, GWL_EXSTYLE) as u32;
        let mut pid = 0u32;
        GetWindowThreadProcessId(hwnd, Some(&mut pid));
        let image = image_of(pid);
        let seen = crate::listing::Listed {
            ex,
            focused: hwnd == foreground,
            own_overlay: image.as_deref().is_some_and(is_own_overlay),
        };
        if !crate::listing::listed(seen, for_refusal) {
            return None;
        }
        let rect = bounds_of(hwnd)?;
        if rect.width == 0 || rect.height == 0 {
            return None;
        }
        let program = image.map(|p| program_name(&p)).unwrap_or_default();
        Some(NativeWindow {
            id: hwnd.0 as usize as u64,
            pid: (pid != 0).then_some(pid),
            class: program,
            instance: class_of(hwnd),
            title: text_of(hwnd),
            rect,
            focused: hwnd == foreground,
            minimized: IsIconic(hwnd).as_bool(),
            fullscreen: screens.contains(&rect),
            surface_origin: None,
        })
    }
}

/// Whether `image` (a process's program, its full path) is the overlay
/// program deskhand starts.
fn is_own_overlay(image: &str) -> bool {
    static OVERLAY: std::sync::OnceLock<Option<String>> = std::sync::OnceLock::new();
    let overlay = OVERLAY.get_or_init(|| {
        let program = deskhand_backend::overlay_process::find_overlay()?;
        let program = std::path::absolute(&program).unwrap_or(program);
        Some(program.to_string_lossy().to_lowercase())
    });
    overlay
        .as_deref()
        .is_some_and(|o| o == image.to_lowercase())
}

fn hwnd_of(id: u64) -> Result<HWND, BackendError> {
    let hwnd = HWND(id as usize as *mut _);
    // SAFETY: IsWindow accepts any value.
    if id == 0 || !unsafe { IsWindow(Some(hwnd)) }.as_bool() {
        return Err(BackendError::InvalidTarget(format!("no window {id:#x}")));
    }
    Ok(hwnd)
}

/// Makes `hwnd` the foreground window. Windows lets only the process
/// that has the last input do that (the foreground lock): when the plain
/// call is refused, this thread's input is joined to the foreground
/// window's thread for the call.
fn bring_to_front(hwnd: HWND) -> bool {
    // SAFETY: plain calls on valid handles; the threads are detached again.
    unsafe {
        if SetForegroundWindow(hwnd).as_bool() && GetForegroundWindow() == hwnd {
            return true;
        }
        let foreground = GetForegroundWindow();
        let theirs = GetWindowThreadProcessId(foreground, None);
        let ours = GetCurrentThreadId();
        let joined =
            theirs != 0 && theirs != ours && AttachThreadInput(ours, theirs, true).as_bool();
        let _ = BringWindowToTop(hwnd);
        let _ = SetForegroundWindow(hwnd);
        if joined {
            let _ = AttachThreadInput(ours, theirs, false);
        }
        GetForegroundWindow() == hwnd
    }
}

/// The windows of one list, bottom of the stack first.
fn listed(for_refusal: bool) -> Result<Vec<NativeWindow>, BackendError> {
    let screens: Vec<Rect> = all_monitors()?.into_iter().map(|m| m.rect).collect();
    // SAFETY: plain calls.
    let foreground = unsafe { GetForegroundWindow() };
    let mut windows: Vec<NativeWindow> = stack()?
        .into_iter()
        .filter_map(|h| describe(h, foreground, &screens, for_refusal))
        .collect();
    windows.reverse();
    Ok(windows)
}

impl Windows for WinWindows {
    fn list(&mut self) -> Result<Vec<NativeWindow>, BackendError> {
        listed(false)
    }

    fn list_for_refusal(&mut self) -> Result<Vec<NativeWindow>, BackendError> {
        listed(true)
    }

    fn focus(&mut self, id: u64, raise: bool) -> Result<(), BackendError> {
        let hwnd = hwnd_of(id)?;
        // SAFETY: plain calls on a valid window.
        unsafe {
            if IsIconic(hwnd).as_bool() {
                let _ = ShowWindow(hwnd, SW_RESTORE);
            }
            if raise {
                let _ = BringWindowToTop(hwnd);
            }
        }
        if bring_to_front(hwnd) {
            Ok(())
        } else {
            Err(BackendError::Failed(format!(
                "window {id:#x} did not become the foreground window (Windows' foreground lock)"
            )))
        }
    }
}
