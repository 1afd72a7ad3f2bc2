//! The calls into Win32, one module per capability.

mod a11y;
mod apps;
mod capture;
mod capture_dxgi;
mod capture_wgc;
mod clipboard;
mod displays;
pub mod doctor;
mod frame_check;
mod input;
mod integrity;
mod msaa;
mod shortcuts;
#[cfg(test)]
mod tests;
mod uia;
mod version;
mod watcher;
pub(crate) mod window_list;
pub(crate) use watcher::chord_is_free;
pub(crate) use window_list::image_of;

use deskhand_backend::accessibility::Accessibility;
use deskhand_backend::overlay_process::{OverlayIndicator, find_overlay};
use deskhand_backend::{Backend, BackendError, KillSwitchHotkey};

use crate::{WindowsError, WindowsOptions};

/// A Win32 error as a backend error.
pub(crate) fn failed(call: &str, e: impl std::fmt::Display) -> BackendError {
    BackendError::Failed(format!("{call}: {e}"))
}

/// A message-only window of class `class` with `proc`, on this thread,
/// which must pump its messages.
pub(crate) fn message_window(
    class: ::windows::core::PCWSTR,
    proc: ::windows::Win32::UI::WindowsAndMessaging::WNDPROC,
) -> Result<::windows::Win32::Foundation::HWND, deskhand_backend::BackendError> {
    use ::windows::Win32::System::LibraryLoader::GetModuleHandleW;
    use ::windows::Win32::UI::WindowsAndMessaging::{
        CreateWindowExW, HWND_MESSAGE, RegisterClassW, WINDOW_EX_STYLE, WINDOW_STYLE, WNDCLASSW,
    };
    // SAFETY: a class of this module (registering it twice fails
    // harmlessly) and a window without a parent but the message queue.
    unsafe {
        let instance = GetModuleHandleW(None).ok().map(|m| m.into());
        let wc = WNDCLASSW {
            lpfnWndProc: proc,
            hInstance: instance.unwrap_or_default(),
            lpszClassName: class,
            ..Default::default()
        };
        RegisterClassW(&wc);
        CreateWindowExW(
            WINDOW_EX_STYLE(0),
            class,
            ::windows::core::PCWSTR::null(),
            WINDOW_STYLE(0),
            0,
            0,
            0,
            0,
            Some(HWND_MESSAGE),
            None,
            instance,
            None,
        )
        .map_err(|e| failed("CreateWindowExW", e))
    }
}

/// Whether this runs under Wine (its `ntdll` exports `wine_get_version`).
pub(crate) fn under_wine() -> bool {
    use ::windows::Win32::System::LibraryLoader::{GetModuleHandleW, GetProcAddress};
    use ::windows::core::{s, w};
    static WINE: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *WINE.get_or_init(|| {
        // SAFETY: ntdll is always loaded; the name is a static string.
        unsafe {
            GetModuleHandleW(w!("ntdll.dll"))
                .is_ok_and(|ntdll| GetProcAddress(ntdll, s!("wine_get_version")).is_some())
        }
    })
}

/// Makes this process per-monitor DPI aware, so that every coordinate is
/// in physical pixels: V2 where the system has it, else V1.
fn become_dpi_aware() -> &'static str {
    use ::windows::Win32::UI::HiDpi::{
        DPI_AWARENESS_CONTEXT_PER_MONITOR_AWARE_V2, PROCESS_PER_MONITOR_DPI_AWARE,
        SetProcessDpiAwareness, SetProcessDpiAwarenessContext,
    };
    // SAFETY: plain calls without pointers.
    unsafe {
        if SetProcessDpiAwarenessContext(DPI_AWARENESS_CONTEXT_PER_MONITOR_AWARE_V2).is_ok() {
            return "per-monitor v2";
        }
        if SetProcessDpiAwareness(PROCESS_PER_MONITOR_DPI_AWARE).is_ok() {
            return "per-monitor v1";
        }
    }
    "as the system set it"
}

pub(crate) fn open(options: &WindowsOptions) -> Result<Backend, WindowsError> {
    let dpi = become_dpi_aware();
    tracing::info!(dpi, "DPI awareness");
    let kill = match &options.kill_switch {
        Some(hotkey) => hotkey.clone(),
        None => KillSwitchHotkey::new(deskhand_backend::DEFAULT_KILL_SWITCH)
            .map_err(|e| WindowsError::Option(e.to_string()))?,
    };
    // The mouse hook's record of the person's real clicks: the only thing
    // that makes a click the overlay reports on Continue or Stop count.
    let clicks = std::sync::Arc::new(deskhand_backend::real_click::RealClicks::default());
    let indicator = match find_overlay() {
        Some(program) => Some(Box::new(
            OverlayIndicator::new(
                &program,
                Vec::new(),
                Box::<frame_check::WindowsFrameInspector>::default(),
            )
            .with_witness(clicks.clone()),
        ) as Box<dyn deskhand_backend::Indicator>),
        None => {
            tracing::warn!(
                "deskhand-overlay.exe not found (next to deskhand.exe, on PATH, or %DESKHAND_OVERLAY%): takeover is unavailable"
            );
            None
        }
    };
    let capture = capture::WinCapture::open();
    tracing::info!(capture = capture.method(), "capture method");
    Ok(Backend {
        name: "windows",
        policy: &crate::WINDOWS,
        displays: Box::new(displays::WinDisplays),
        capture: Some(Box::new(capture)),
        input: Some(Box::<input::WinInput>::default()),
        windows: Some(Box::new(window_list::WinWindows)),
        apps: Some(Box::new(apps::WinApps)),
        permissions: None,
        clipboard: match clipboard::WinClipboard::start() {
            Ok(c) => {
                Some(std::sync::Arc::new(c) as std::sync::Arc<dyn deskhand_backend::Clipboard>)
            }
            Err(e) => {
                tracing::warn!(error = %e, "the clipboard is unavailable");
                None
            }
        },
        indicator,
        watcher: Some(Box::new(watcher::HookWatcher::new(kill, clicks))),
        accessibility: match a11y::WinAccessibility::start() {
            Ok(a) => Some(std::sync::Arc::new(a) as std::sync::Arc<dyn Accessibility>),
            Err(e) => {
                tracing::warn!(error = %e, "accessibility is unavailable");
                None
            }
        },
        status_place: None,
    })
}
