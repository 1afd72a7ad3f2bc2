//! Windows: `CGWindowListCopyWindowInfo` of the windows on screen, each
//! dictionary read into the plain [`Dict`] the filter of
//! [`crate::window_list`] takes; the class from the owner's bundle id
//! (`NSRunningApplication`). Focus activates the owning app, which
//! brings its front window forward; another window of the app is raised
//! within it through AX (`AXRaise`) first.

use deskhand_backend::accessibility::WindowRef;
use deskhand_backend::{BackendError, NativeWindow, Windows};
use objc2_app_kit::{NSApplicationActivationOptions, NSRunningApplication, NSWorkspace};
use objc2_core_foundation::{
    CFArray, CFBoolean, CFDictionary, CFNumber, CFRetained, CFString, CFType, CGRect,
};
use objc2_core_graphics::{
    CGRectMakeWithDictionaryRepresentation, CGWindowListCopyWindowInfo, CGWindowListOption,
    kCGNullWindowID,
};

use super::{SharedLayout, failed};
use crate::window_list::{
    Dict, Exclude, NotFocusable, Value, WindowInfo, focus_owner, key, windows,
};

/// A window's bounds dictionary as `X`, `Y`, `Width`, `Height`.
fn bounds_of(d: &CFDictionary) -> Option<Value> {
    let mut r = CGRect::default();
    // SAFETY: `d` is the window's bounds dictionary, as documented; `r`
    // is an out-parameter.
    let ok = unsafe { CGRectMakeWithDictionaryRepresentation(Some(d), &mut r) };
    let fields = [
        ("X", r.origin.x),
        ("Y", r.origin.y),
        ("Width", r.size.width),
        ("Height", r.size.height),
    ];
    ok.then(|| {
        Value::Dict(
            fields
                .into_iter()
                .map(|(k, v)| (k.to_owned(), Value::Float(v)))
                .collect(),
        )
    })
}

/// One value of a window's dictionary.
fn value_of(v: &CFType) -> Option<Value> {
    if let Some(b) = v.downcast_ref::<CFBoolean>() {
        return Some(Value::Bool(b.as_bool()));
    }
    if let Some(n) = v.downcast_ref::<CFNumber>() {
        return n
            .as_i64()
            .map(Value::Int)
            .or_else(|| n.as_f64().map(Value::Float));
    }
    if let Some(s) = v.downcast_ref::<CFString>() {
        return Some(Value::Str(s.to_string()));
    }
    v.downcast_ref::<CFDictionary>().and_then(bounds_of)
}

/// The keys deskhand reads of a window's dictionary.
fn dict_of(d: &CFDictionary<CFString, CFType>) -> Dict {
    key::ALL
        .iter()
        .filter_map(|k| {
            let v = d.get(&CFString::from_static_str(k))?;
            Some(((*k).to_owned(), value_of(&v)?))
        })
        .collect()
}

/// The windows on screen, front to back.
fn on_screen() -> Result<Vec<WindowInfo>, BackendError> {
    let options =
        CGWindowListOption::OptionOnScreenOnly | CGWindowListOption::ExcludeDesktopElements;
    let list = CGWindowListCopyWindowInfo(options, kCGNullWindowID)
        .ok_or_else(|| failed("CGWindowListCopyWindowInfo", "no list"))?;
    // SAFETY: documented as an array of dictionaries with string keys.
    let list: CFRetained<CFArray<CFDictionary<CFString, CFType>>> =
        unsafe { CFRetained::cast_unchecked(list) };
    Ok(list
        .iter()
        .filter_map(|d| WindowInfo::from_dict(&dict_of(&d)))
        .collect())
}

/// What the list says of window `id` alone, on screen or not; `None`
/// when it is gone (the frame check reads the overlay's windows so).
pub(crate) fn one(id: u32) -> Option<WindowInfo> {
    let list = CGWindowListCopyWindowInfo(CGWindowListOption::OptionIncludingWindow, id)?;
    // SAFETY: documented as an array of dictionaries with string keys.
    let list: CFRetained<CFArray<CFDictionary<CFString, CFType>>> =
        unsafe { CFRetained::cast_unchecked(list) };
    let info = list.iter().next()?;
    WindowInfo::from_dict(&dict_of(&info)).filter(|w| w.number == id)
}

/// The running app of process `pid`.
fn app(pid: u32) -> Option<objc2::rc::Retained<NSRunningApplication>> {
    NSRunningApplication::runningApplicationWithProcessIdentifier(i32::try_from(pid).ok()?)
}

fn bundle_of(pid: u32) -> Option<String> {
    app(pid)?.bundleIdentifier().map(|id| id.to_string())
}

fn frontmost() -> Option<u32> {
    let app = NSWorkspace::sharedWorkspace().frontmostApplication()?;
    u32::try_from(app.processIdentifier()).ok()
}

/// deskhand's own windows (the tray app's) are never listed.
fn own() -> Exclude {
    Exclude {
        windows: Vec::new(),
        pids: vec![std::process::id()],
    }
}

pub(crate) struct MacWindows {
    layout: SharedLayout,
}

impl MacWindows {
    pub(crate) fn new(layout: SharedLayout) -> Self {
        Self { layout }
    }
}

impl Windows for MacWindows {
    fn list(&mut self) -> Result<Vec<NativeWindow>, BackendError> {
        let layout = self.layout.current()?;
        Ok(windows(
            &on_screen()?,
            &own(),
            &layout,
            frontmost(),
            &bundle_of,
        ))
    }

    fn focus(&mut self, id: u64, _raise: bool) -> Result<(), BackendError> {
        let list = on_screen()?;
        let pid = match focus_owner(&list, &own(), id) {
            Ok(pid) => pid,
            Err(NotFocusable::Gone) => {
                return Err(BackendError::Stale(format!("window {id} is not on screen")));
            }
            // Another window of the app is in front: this one is raised
            // within its app first (AX), then the app activated.
            Err(NotFocusable::Behind) => self.raise(&list, id)?,
        };
        activate(pid)
    }
}

impl MacWindows {
    /// Raises window `id` of `list` within its app (`AXRaise`); returns
    /// its owner.
    fn raise(&self, list: &[WindowInfo], id: u64) -> Result<u32, BackendError> {
        let w = list
            .iter()
            .find(|w| u64::from(w.number) == id)
            .ok_or_else(|| BackendError::Stale(format!("window {id} is gone")))?;
        let pid = w.owner_pid.unwrap_or_default();
        let layout = self.layout.current()?;
        let window = WindowRef {
            pid,
            title: w.title.clone(),
            bounds: w.bounds.and_then(|b| layout.rect_to_pixels(b)),
            surface_origin: None,
        };
        super::ax::raise(&window, &layout)?;
        Ok(pid)
    }
}

/// Activates the app of process `pid`, which brings its front window
/// forward (a Mac cannot focus a window without raising it). With no
/// options macOS activates an app only when none is active, so deskhand,
/// a background process, asks to ignore the other apps (before macOS 14;
/// from 14 on activation is cooperative and the flag is ignored).
fn activate(pid: u32) -> Result<(), BackendError> {
    let app = app(pid).ok_or_else(|| BackendError::Stale(format!("process {pid} is gone")))?;
    #[allow(deprecated)]
    let options = NSApplicationActivationOptions::ActivateIgnoringOtherApps
        | NSApplicationActivationOptions::ActivateAllWindows;
    if app.activateWithOptions(options) {
        Ok(())
    } else {
        Err(failed(
            "activateWithOptions",
            "macOS declined to activate the app",
        ))
    }
}
