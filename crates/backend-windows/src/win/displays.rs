//! Monitors in virtual-desktop physical pixels with their scale
//! (`GetDpiForMonitor`), and the pointer.

use deskhand_backend::{BackendError, Displays, Monitor, Point, Rect};
use windows::Win32::Foundation::{LPARAM, POINT, RECT};
use windows::Win32::Graphics::Gdi::{
    EnumDisplayMonitors, GetMonitorInfoW, HDC, HMONITOR, MONITORINFOEXW,
};
use windows::Win32::UI::HiDpi::{GetDpiForMonitor, MDT_EFFECTIVE_DPI};
use windows::Win32::UI::WindowsAndMessaging::{
    GetCursorPos, GetSystemMetrics, MONITORINFOF_PRIMARY, SM_CXVIRTUALSCREEN, SM_CYVIRTUALSCREEN,
    SM_XVIRTUALSCREEN, SM_YVIRTUALSCREEN,
};
use windows::core::BOOL;

use super::failed;

pub(crate) struct WinDisplays;

pub(crate) fn rect_of(r: &RECT) -> Rect {
    Rect {
        x: r.left,
        y: r.top,
        width: (r.right - r.left).max(0) as u32,
        height: (r.bottom - r.top).max(0) as u32,
    }
}

/// The virtual desktop: the rectangle round every monitor.
pub(crate) fn virtual_desktop() -> Rect {
    // SAFETY: plain calls.
    unsafe {
        Rect {
            x: GetSystemMetrics(SM_XVIRTUALSCREEN),
            y: GetSystemMetrics(SM_YVIRTUALSCREEN),
            width: GetSystemMetrics(SM_CXVIRTUALSCREEN).max(1) as u32,
            height: GetSystemMetrics(SM_CYVIRTUALSCREEN).max(1) as u32,
        }
    }
}

unsafe extern "system" fn collect(monitor: HMONITOR, _: HDC, _: *mut RECT, out: LPARAM) -> BOOL {
    // SAFETY: `out` is the Vec that `all_monitors` passed, alive for the call.
    let out = unsafe { &mut *(out.0 as *mut Vec<HMONITOR>) };
    out.push(monitor);
    true.into()
}

fn describe(index: u32, monitor: HMONITOR) -> Option<Monitor> {
    let mut info = MONITORINFOEXW::default();
    info.monitorInfo.cbSize = std::mem::size_of::<MONITORINFOEXW>() as u32;
    // SAFETY: `info` is a MONITORINFOEXW with its size set.
    let ok = unsafe { GetMonitorInfoW(monitor, &mut info.monitorInfo) };
    if !ok.as_bool() {
        return None;
    }
    let (mut dpi_x, mut dpi_y) = (96u32, 96u32);
    // SAFETY: two out-parameters.
    let dpi = unsafe { GetDpiForMonitor(monitor, MDT_EFFECTIVE_DPI, &mut dpi_x, &mut dpi_y) };
    if dpi.is_err() {
        dpi_x = 96;
    }
    let name_len = info.szDevice.iter().position(|&c| c == 0).unwrap_or(32);
    let name = String::from_utf16_lossy(&info.szDevice[..name_len]);
    Some(Monitor {
        index,
        name: name.trim_start_matches(r"\\.\").to_owned(),
        primary: info.monitorInfo.dwFlags & MONITORINFOF_PRIMARY != 0,
        rect: rect_of(&info.monitorInfo.rcMonitor),
        scale: f64::from(dpi_x) / 96.0,
    })
}

/// Every monitor, the primary first.
pub(crate) fn all_monitors() -> Result<Vec<Monitor>, BackendError> {
    let mut handles: Vec<HMONITOR> = Vec::new();
    // SAFETY: the callback only pushes onto `handles`, which outlives the call.
    let ok = unsafe {
        EnumDisplayMonitors(
            None,
            None,
            Some(collect),
            LPARAM(&mut handles as *mut Vec<HMONITOR> as isize),
        )
    };
    if !ok.as_bool() {
        return Err(failed(
            "EnumDisplayMonitors",
            windows::core::Error::from_thread(),
        ));
    }
    let mut monitors: Vec<Monitor> = handles.into_iter().filter_map(|m| describe(0, m)).collect();
    monitors.sort_by_key(|m| (!m.primary, m.rect.x, m.rect.y));
    for (i, m) in monitors.iter_mut().enumerate() {
        m.index = i as u32;
    }
    if monitors.is_empty() {
        return Err(BackendError::DisplayUnavailable("no monitor".into()));
    }
    Ok(monitors)
}

pub(crate) fn cursor() -> Result<Point, BackendError> {
    let mut p = POINT::default();
    // SAFETY: one out-parameter.
    unsafe { GetCursorPos(&mut p) }.map_err(|e| failed("GetCursorPos", e))?;
    Ok(Point { x: p.x, y: p.y })
}

impl Displays for WinDisplays {
    fn monitors(&mut self) -> Result<Vec<Monitor>, BackendError> {
        all_monitors()
    }

    fn cursor_position(&mut self) -> Result<Point, BackendError> {
        cursor()
    }
}
