//! The MSAA calls: a window's `IAccessible` (`AccessibleObjectFromWindow`),
//! its children (`AccessibleChildren`), what each reports (`accRole`,
//! `accName`, `accState`, `accLocation`, `accValue`, `accDefaultAction`),
//! and the acts (`accDoDefaultAction`, `accSelect`, `put_accValue`). What
//! is decided from them is in `crate::msaa` and `crate::uia`: these are
//! the same [`Source`] and [`Actor`] the UI Automation client is.
//!
//! VARIANTs are read and made by their fields: Wine 8's
//! `VariantToInt32` aborts the process.

use std::mem::ManuallyDrop;

use deskhand_backend::accessibility::WindowRef;
use windows::Win32::Foundation::HWND;
use windows::Win32::System::Variant::{VARIANT, VT_BSTR, VT_DISPATCH, VT_I4};
use windows::Win32::UI::Accessibility::{
    AccessibleChildren, AccessibleObjectFromWindow, IAccessible, SELFLAG_TAKEFOCUS,
    SELFLAG_TAKESELECTION,
};
use windows::Win32::UI::WindowsAndMessaging::{
    GW_CHILD, GW_HWNDNEXT, GetWindow, OBJID_CLIENT, OBJID_WINDOW,
};
use windows::core::{BSTR, Interface};

use crate::msaa::{self, MsaaCall, MsaaProps, PROTECTED, ROLE_COMBOBOX, ROLE_DOCUMENT, ROLE_TEXT};
use crate::uia::acts::Actor;
use crate::uia::map::{Call, Props, rect_of};
use crate::uia::tree::Source;
use crate::uia::{UiaError, hresult_words};
use crate::win::uia::hwnd_of;

/// The most children one object lists.
const MAX_CHILDREN: usize = 10_000;

/// What an object made from a window stands for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// `OBJID_WINDOW` of the window: its frame, its client among its
    /// children.
    Window(isize),
    /// `OBJID_CLIENT` of the window: its child windows among its
    /// children.
    Client(isize),
    /// An object an object listed.
    Listed,
}

/// One MSAA element: an object, or a simple child of one (`child` > 0).
#[derive(Clone)]
pub(crate) struct Obj {
    acc: IAccessible,
    child: i32,
    kind: Kind,
}

/// The error of a failed call of `what`, with its code.
fn failed(what: &'static str) -> impl FnOnce(windows::core::Error) -> UiaError {
    move |e| UiaError::Call {
        what,
        message: hresult_words(e.code().0 as u32, &e.message()),
    }
}

/// A `VT_I4` VARIANT of `id` (a child id).
fn child_var(id: i32) -> VARIANT {
    let mut v = VARIANT::default();
    // SAFETY: the union's first member is written as a VT_I4.
    unsafe {
        let inner = &mut *v.Anonymous.Anonymous;
        inner.vt = VT_I4;
        inner.Anonymous.lVal = id;
    }
    v
}

/// The number a VARIANT holds when it is a `VT_I4`; a string (a role by
/// name) is freed.
fn var_i32(mut v: VARIANT) -> Option<i32> {
    // SAFETY: the member read is the one `vt` names; a BSTR is freed
    // once.
    unsafe {
        let inner = &mut *v.Anonymous.Anonymous;
        if inner.vt == VT_I4 {
            Some(inner.Anonymous.lVal)
        } else {
            if inner.vt == VT_BSTR {
                ManuallyDrop::drop(&mut inner.Anonymous.bstrVal);
            }
            None
        }
    }
}

/// The object of `hwnd` for `id` (`OBJID_WINDOW` or `OBJID_CLIENT`).
fn from_window(hwnd: isize, window: bool) -> Result<Obj, UiaError> {
    let id = if window { OBJID_WINDOW } else { OBJID_CLIENT };
    let mut raw = std::ptr::null_mut();
    // SAFETY: `raw` receives an IAccessible, owned by the wrapper below.
    let acc = unsafe {
        AccessibleObjectFromWindow(HWND(hwnd as _), id.0 as u32, &IAccessible::IID, &mut raw)
            .map_err(failed("AccessibleObjectFromWindow"))?;
        IAccessible::from_raw(raw)
    };
    Ok(Obj {
        acc,
        child: 0,
        kind: if window {
            Kind::Window(hwnd)
        } else {
            Kind::Client(hwnd)
        },
    })
}

/// The object of window `hwnd`: its `OBJID_WINDOW` object, else (where
/// that answers no role: Wine 8's) its `OBJID_CLIENT` object.
fn window_object(hwnd: isize) -> Result<(Obj, MsaaProps), UiaError> {
    let frame = from_window(hwnd, true).and_then(|o| read(&o).map(|p| (o, p)));
    match frame {
        Ok(found) => Ok(found),
        Err(e) => {
            tracing::debug!(error = %e, "MSAA: the window object answers no role; its client stands in");
            let client = from_window(hwnd, false)?;
            let props = read(&client)?;
            Ok((client, props))
        }
    }
}

/// The root of `window`: its object ([`window_object`]), with what it
/// reports.
pub(crate) fn root(window: &WindowRef) -> Result<(Obj, Props), UiaError> {
    let (obj, props) = window_object(hwnd_of(window)? as isize)?;
    Ok((obj, msaa::props(&props)))
}

/// What `o` reports now. Its value is read only for fields, and never
/// for a protected (password) one.
pub(crate) fn read(o: &Obj) -> Result<MsaaProps, UiaError> {
    let var = child_var(o.child);
    let text = |b: windows::core::Result<BSTR>| b.map(|b| b.to_string()).unwrap_or_default();
    // SAFETY: property reads of an object this thread holds.
    unsafe {
        let role = o
            .acc
            .get_accRole(&var)
            .map_err(failed("accRole"))
            .map(var_i32)?
            .map_or(0, |r| r as u32);
        let state = o
            .acc
            .get_accState(&var)
            .ok()
            .and_then(var_i32)
            .map_or(0, |s| s as u32);
        let (mut x, mut y, mut w, mut h) = (0, 0, 0, 0);
        let bounds = o
            .acc
            .accLocation(&mut x, &mut y, &mut w, &mut h, &var)
            .ok()
            .and_then(|()| rect_of(x, y, x.saturating_add(w), y.saturating_add(h)));
        let field = matches!(role, ROLE_TEXT | ROLE_DOCUMENT | ROLE_COMBOBOX);
        let value = if field && state & PROTECTED == 0 {
            o.acc.get_accValue(&var).ok().map(|b| b.to_string())
        } else {
            None
        };
        Ok(MsaaProps {
            role,
            name: text(o.acc.get_accName(&var)),
            description: text(o.acc.get_accDescription(&var)),
            state,
            bounds,
            value,
            default_action: text(o.acc.get_accDefaultAction(&var)),
        })
    }
}

/// The children `AccessibleChildren` lists of `o`; `None` when it fails
/// or lists fewer than `accChildCount` says.
fn listed(o: &Obj) -> Option<Vec<Obj>> {
    // SAFETY: the VARIANTs are filled by oleacc; each IDispatch is taken
    // out of its VARIANT once.
    unsafe {
        let count = usize::try_from(o.acc.accChildCount().ok()?).ok()?;
        if count == 0 {
            return Some(Vec::new());
        }
        let mut vars: Vec<VARIANT> = (0..count.min(MAX_CHILDREN))
            .map(|_| VARIANT::default())
            .collect();
        let mut got = 0i32;
        let done = AccessibleChildren(&o.acc, 0, &mut vars, &mut got);
        let got = usize::try_from(got).unwrap_or(0).min(vars.len());
        let mut out = Vec::with_capacity(got);
        for v in vars.iter_mut().take(got) {
            let inner = &mut *v.Anonymous.Anonymous;
            if inner.vt == VT_DISPATCH {
                let dispatch = ManuallyDrop::take(&mut inner.Anonymous.pdispVal);
                if let Some(acc) = dispatch.and_then(|d| d.cast::<IAccessible>().ok()) {
                    out.push(Obj {
                        acc,
                        child: 0,
                        kind: Kind::Listed,
                    });
                }
            } else if inner.vt == VT_I4 {
                out.push(Obj {
                    acc: o.acc.clone(),
                    child: inner.Anonymous.lVal,
                    kind: Kind::Listed,
                });
            }
        }
        (done.is_ok() && out.len() == count).then_some(out)
    }
}

/// The child windows of `hwnd`, in z-order.
fn child_windows(hwnd: isize) -> Vec<isize> {
    let mut out = Vec::new();
    // SAFETY: plain window queries.
    let mut next = unsafe { GetWindow(HWND(hwnd as _), GW_CHILD) };
    while let Ok(h) = next {
        if h.is_invalid() || out.len() >= MAX_CHILDREN {
            break;
        }
        out.push(h.0 as isize);
        // SAFETY: as above.
        next = unsafe { GetWindow(h, GW_HWNDNEXT) };
    }
    out
}

/// The children of `o`. A window's client object with child windows has
/// those (each as its window's object): what Windows' own client object
/// lists, asked of the windows themselves, because Wine 8's lists them
/// as objects that crash the caller when used. Otherwise those
/// `AccessibleChildren` lists; where that fails for a window's frame
/// object, its client.
fn children_of(o: &Obj) -> Result<Vec<Obj>, UiaError> {
    if o.child != 0 {
        return Ok(Vec::new());
    }
    if let Kind::Client(hwnd) = o.kind {
        let windows = child_windows(hwnd);
        if !windows.is_empty() {
            return windows
                .into_iter()
                .map(|h| window_object(h).map(|(o, _)| o))
                .collect();
        }
    }
    if let Some(found) = listed(o) {
        return Ok(found);
    }
    match o.kind {
        Kind::Window(hwnd) => Ok(vec![from_window(hwnd, false)?]),
        Kind::Client(_) | Kind::Listed => Ok(Vec::new()),
    }
}

/// A window's objects as they are now: every read asks the app.
pub(crate) struct Live;

impl Source for Live {
    type Element = Obj;

    fn children(&self, of: &Obj) -> Result<Vec<(Obj, Props)>, UiaError> {
        children_of(of)?
            .into_iter()
            .map(|c| {
                let p = msaa::props(&read(&c)?);
                Ok((c, p))
            })
            .collect()
    }
}

impl Actor for Live {
    fn now(&self, o: &Obj) -> Result<Props, UiaError> {
        Ok(msaa::props(&read(o)?))
    }

    fn call(&self, o: &Obj, call: Call) -> Result<(), UiaError> {
        let var = child_var(o.child);
        // SAFETY: act calls on an object this thread holds.
        unsafe {
            match msaa::how(call, &read(o)?) {
                MsaaCall::DefaultAction => o
                    .acc
                    .accDoDefaultAction(&var)
                    .map_err(failed("accDoDefaultAction")),
                MsaaCall::Select => o
                    .acc
                    .accSelect((SELFLAG_TAKEFOCUS | SELFLAG_TAKESELECTION) as i32, &var)
                    .map_err(failed("accSelect")),
                MsaaCall::Nothing => Ok(()),
            }
        }
    }

    fn set_value(&self, o: &Obj, text: &str) -> Result<(), UiaError> {
        // SAFETY: a property write on an object this thread holds.
        unsafe {
            o.acc
                .put_accValue(&child_var(o.child), &BSTR::from(text))
                .map_err(failed("put_accValue"))
        }
    }

    fn text(&self, o: &Obj) -> Result<String, UiaError> {
        // SAFETY: a property read of an object this thread holds.
        unsafe {
            o.acc
                .get_accValue(&child_var(o.child))
                .map(|b| b.to_string())
                .map_err(failed("accValue"))
        }
    }
}
