//! Which windows of `CGWindowListCopyWindowInfo` are the desktop's
//! windows, from the dictionaries it returns: each read into a plain map
//! ([`Dict`]), then into a [`WindowInfo`], then filtered. The list comes
//! front to back; deskhand wants the apps' own windows (layer 0), on
//! screen, visible (alpha above 0), with an owner and an area, and never
//! the indicator's windows, bottom of the stack first.

use std::collections::BTreeMap;

use deskhand_backend::NativeWindow;

use crate::layout::{Layout, PointRect};

/// A value of a window's dictionary (a `CFNumber`, `CFBoolean`,
/// `CFString` or the bounds' `CFDictionary`).
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    /// An integer number.
    Int(i64),
    /// A floating-point number.
    Float(f64),
    /// A boolean.
    Bool(bool),
    /// A string.
    Str(String),
    /// A dictionary (the bounds: `X`, `Y`, `Width`, `Height`).
    Dict(Dict),
}

/// One window's dictionary, by key (`kCGWindowNumber`, …).
pub type Dict = BTreeMap<String, Value>;

/// The keys read.
pub mod key {
    /// `kCGWindowNumber`.
    pub const NUMBER: &str = "kCGWindowNumber";
    /// `kCGWindowLayer`.
    pub const LAYER: &str = "kCGWindowLayer";
    /// `kCGWindowBounds`.
    pub const BOUNDS: &str = "kCGWindowBounds";
    /// `kCGWindowAlpha`.
    pub const ALPHA: &str = "kCGWindowAlpha";
    /// `kCGWindowIsOnscreen`.
    pub const ON_SCREEN: &str = "kCGWindowIsOnscreen";
    /// `kCGWindowOwnerPID`.
    pub const OWNER_PID: &str = "kCGWindowOwnerPID";
    /// `kCGWindowOwnerName`.
    pub const OWNER_NAME: &str = "kCGWindowOwnerName";
    /// `kCGWindowName`: present only with the Screen Recording permission.
    pub const NAME: &str = "kCGWindowName";
    /// Every key read, for the reader of the real dictionaries.
    pub const ALL: [&str; 8] = [
        NUMBER, LAYER, BOUNDS, ALPHA, ON_SCREEN, OWNER_PID, OWNER_NAME, NAME,
    ];
}

fn number(d: &Dict, k: &str) -> Option<f64> {
    match d.get(k)? {
        Value::Int(i) => Some(*i as f64),
        Value::Float(f) => Some(*f),
        _ => None,
    }
}

fn int(d: &Dict, k: &str) -> Option<i64> {
    match d.get(k)? {
        Value::Int(i) => Some(*i),
        Value::Float(f) if f.fract() == 0.0 => Some(*f as i64),
        _ => None,
    }
}

fn string(d: &Dict, k: &str) -> Option<String> {
    match d.get(k)? {
        Value::Str(s) => Some(s.clone()),
        _ => None,
    }
}

/// What the list says of one window.
#[derive(Debug, Clone, PartialEq)]
pub struct WindowInfo {
    /// Its window number.
    pub number: u32,
    /// Its layer (0 for apps' windows; menus, the Dock and overlays sit
    /// higher).
    pub layer: i64,
    /// Its bounds in points.
    pub bounds: Option<PointRect>,
    /// Its alpha (0 is invisible).
    pub alpha: f64,
    /// On screen now (not minimized, not on another space).
    pub on_screen: bool,
    /// The owning process.
    pub owner_pid: Option<u32>,
    /// The owning app's name.
    pub owner_name: String,
    /// Its title, when the list gives it.
    pub title: String,
}

impl WindowInfo {
    /// Reads a window's dictionary; `None` without a window number.
    pub fn from_dict(d: &Dict) -> Option<Self> {
        let bounds = match d.get(key::BOUNDS) {
            Some(Value::Dict(b)) => Some(PointRect {
                x: number(b, "X")?,
                y: number(b, "Y")?,
                width: number(b, "Width")?,
                height: number(b, "Height")?,
            }),
            _ => None,
        };
        Some(Self {
            number: u32::try_from(int(d, key::NUMBER)?).ok()?,
            layer: int(d, key::LAYER).unwrap_or(0),
            bounds,
            alpha: number(d, key::ALPHA).unwrap_or(1.0),
            on_screen: matches!(d.get(key::ON_SCREEN), Some(Value::Bool(true))),
            owner_pid: int(d, key::OWNER_PID).and_then(|p| u32::try_from(p).ok()),
            owner_name: string(d, key::OWNER_NAME).unwrap_or_default(),
            title: string(d, key::NAME).unwrap_or_default(),
        })
    }
}

/// What the filter leaves out besides the rules: deskhand's own windows.
#[derive(Debug, Clone, Default)]
pub struct Exclude {
    /// Window numbers (the indicator's).
    pub windows: Vec<u32>,
    /// Processes (the overlay process's).
    pub pids: Vec<u32>,
}

/// Whether `w` is one of the desktop's windows as deskhand lists them.
pub fn keep(w: &WindowInfo, exclude: &Exclude) -> bool {
    w.layer == 0
        && w.on_screen
        && w.alpha > 0.0
        && w.owner_pid.is_some_and(|p| !exclude.pids.contains(&p))
        && w.bounds.is_some_and(|b| b.width > 0.0 && b.height > 0.0)
        && !exclude.windows.contains(&w.number)
}

/// The windows of `list` (front to back, as macOS gives it) deskhand
/// lists, bottom of the stack first: bounds in pixels through `layout`,
/// the class from `bundle_of(pid)` (the app's bundle id) else the
/// owner's name, and the front window of `frontmost` (the active app's
/// pid) focused.
pub fn windows(
    list: &[WindowInfo],
    exclude: &Exclude,
    layout: &Layout,
    frontmost: Option<u32>,
    bundle_of: &dyn Fn(u32) -> Option<String>,
) -> Vec<NativeWindow> {
    let mut focused_given = false;
    let mut out: Vec<NativeWindow> = list
        .iter()
        .filter(|w| keep(w, exclude))
        .filter_map(|w| {
            let pid = w.owner_pid?;
            let rect = layout.rect_to_pixels(w.bounds?)?;
            let focused = !focused_given && frontmost == Some(pid);
            focused_given |= focused;
            Some(NativeWindow {
                id: u64::from(w.number),
                pid: Some(pid),
                class: bundle_of(pid).unwrap_or_else(|| w.owner_name.clone()),
                instance: w.owner_name.clone(),
                title: w.title.clone(),
                rect,
                focused,
                minimized: false,
                fullscreen: false,
                surface_origin: None,
            })
        })
        .collect();
    out.reverse();
    out
}

/// Why a window cannot be focused by activating its app.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NotFocusable {
    /// It is not among the listed windows (closed, minimized, another
    /// space).
    Gone,
    /// Another window of its app is in front of it: activating the app
    /// would focus that one (raising it needs AX).
    Behind,
}

/// The process whose activation focuses window `id` of `list` (front to
/// back): its owner, when `id` is that app's front window.
pub fn focus_owner(list: &[WindowInfo], exclude: &Exclude, id: u64) -> Result<u32, NotFocusable> {
    let kept: Vec<&WindowInfo> = list.iter().filter(|w| keep(w, exclude)).collect();
    let window = kept
        .iter()
        .find(|w| u64::from(w.number) == id)
        .ok_or(NotFocusable::Gone)?;
    let pid = window.owner_pid.ok_or(NotFocusable::Gone)?;
    match kept.iter().find(|w| w.owner_pid == Some(pid)) {
        Some(front) if front.number == window.number => Ok(pid),
        _ => Err(NotFocusable::Behind),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::layout::Display;
    use deskhand_backend::Rect;

    /// A JSON value of the recording as a dictionary value.
    fn value(v: &serde_json::Value) -> Value {
        match v {
            serde_json::Value::Bool(b) => Value::Bool(*b),
            serde_json::Value::Number(n) => n
                .as_i64()
                .map_or_else(|| Value::Float(n.as_f64().unwrap_or(0.0)), Value::Int),
            serde_json::Value::String(s) => Value::Str(s.clone()),
            serde_json::Value::Object(o) => {
                Value::Dict(o.iter().map(|(k, v)| (k.clone(), value(v))).collect())
            }
            other => panic!("no such value in a window list: {other}"),
        }
    }

    /// The recorded list: a MacBook with Safari, TextEdit, the Dock, the
    /// menu bar, a minimized window, a transparent one and deskhand's
    /// indicator.
    fn recorded() -> Vec<WindowInfo> {
        let text = include_str!("fixtures/window_list.json");
        let list: Vec<serde_json::Value> = serde_json::from_str(text).expect("valid JSON");
        list.iter()
            .map(|w| match value(w) {
                Value::Dict(d) => WindowInfo::from_dict(&d).expect("a window number"),
                _ => panic!("a dictionary"),
            })
            .collect()
    }

    fn laptop() -> Layout {
        Layout::new(vec![Display {
            id: 1,
            name: "built-in".into(),
            main: true,
            bounds: PointRect {
                x: 0.0,
                y: 0.0,
                width: 1440.0,
                height: 900.0,
            },
            scale: 2.0,
        }])
    }

    fn bundle(pid: u32) -> Option<String> {
        match pid {
            501 => Some("com.apple.Safari".into()),
            502 => Some("com.apple.TextEdit".into()),
            _ => None,
        }
    }

    #[test]
    fn dictionaries_are_read_with_their_bounds() {
        let list = recorded();
        let safari = &list[0];
        assert_eq!(safari.number, 4211);
        assert_eq!(safari.owner_pid, Some(501));
        assert_eq!(safari.title, "Apple");
        assert_eq!(
            safari.bounds,
            Some(PointRect {
                x: 100.0,
                y: 25.0,
                width: 1200.0,
                height: 800.0
            })
        );
        let mut no_number = Dict::new();
        no_number.insert(key::LAYER.into(), Value::Int(0));
        assert_eq!(WindowInfo::from_dict(&no_number), None);
    }

    #[test]
    fn only_the_apps_visible_windows_are_listed_bottom_first() {
        let exclude = Exclude {
            windows: vec![9001],
            pids: Vec::new(),
        };
        let listed = windows(&recorded(), &exclude, &laptop(), Some(501), &bundle);
        let titles: Vec<_> = listed.iter().map(|w| w.title.as_str()).collect();
        assert_eq!(titles, ["notes.txt", "Apple"]);
        let safari = &listed[1];
        assert_eq!(safari.class, "com.apple.Safari");
        assert_eq!(safari.instance, "Safari");
        assert_eq!(safari.rect, Rect::new(200, 50, 2400, 1600));
        assert!(safari.focused && !listed[0].focused);
        assert_eq!(listed[0].class, "com.apple.TextEdit");
    }

    #[test]
    fn a_window_is_focused_through_its_app_only_when_in_front_of_it() {
        let list = recorded();
        let none = Exclude::default();
        assert_eq!(focus_owner(&list, &none, 4211), Ok(501));
        assert_eq!(focus_owner(&list, &none, 4220), Ok(502));
        assert_eq!(
            focus_owner(&list, &none, 4221),
            Err(NotFocusable::Gone),
            "minimized"
        );
        assert_eq!(
            focus_owner(&list, &none, 31),
            Err(NotFocusable::Gone),
            "the Dock"
        );
        // A second TextEdit window, in front of notes.txt.
        let mut front = list[3].clone();
        front.number = 4230;
        let mut two = vec![front];
        two.extend(list);
        assert_eq!(focus_owner(&two, &none, 4220), Err(NotFocusable::Behind));
        assert_eq!(focus_owner(&two, &none, 4230), Ok(502));
    }

    #[test]
    fn the_overlay_process_is_left_out_by_pid_and_unknown_bundles_use_the_owner() {
        let exclude = Exclude {
            windows: Vec::new(),
            pids: vec![777],
        };
        let listed = windows(&recorded(), &exclude, &laptop(), None, &|_| None);
        assert!(listed.iter().all(|w| w.pid != Some(777)));
        assert!(listed.iter().all(|w| !w.focused));
        assert_eq!(listed[0].class, "TextEdit");
    }
}
