//! The COM calls: UI Automation's client object, the cache requests that
//! fetch a window's whole control view in one cross-process call, the
//! properties read from that cache, and the pattern calls of acts. What is
//! decided from what they return is in `crate::uia`.

use std::time::Duration;

use deskhand_backend::Windows as _;
use deskhand_backend::accessibility::{Candidate, Role, WindowRef, choose_root};
use windows::Win32::Foundation::HWND;
use windows::Win32::System::Com::{
    CLSCTX_INPROC_SERVER, COINIT_MULTITHREADED, CoCreateInstance, CoInitializeEx,
};
use windows::Win32::System::Variant::{VARIANT, VariantToBoolean, VariantToDouble, VariantToInt32};
use windows::Win32::UI::Accessibility::*;
use windows::core::{BSTR, Interface};

use crate::uia::acts::Actor;
use crate::uia::map::{self, Call, Expand, MAX_VALUE_CHARS, Props, Toggle, ValueField};
use crate::uia::tree::Source;
use crate::uia::{UiaError, hresult_words};
use crate::win::window_list::WinWindows;

/// The properties a structure-only read asks for.
const LIGHT: [UIA_PROPERTY_ID; 4] = [
    UIA_ControlTypePropertyId,
    UIA_NamePropertyId,
    UIA_HelpTextPropertyId,
    UIA_IsPasswordPropertyId,
];

/// The properties a full read asks for besides [`LIGHT`]. A Value
/// pattern's value is not among them: it is read afterwards, and never
/// for a password field.
const FULL: [UIA_PROPERTY_ID; 22] = [
    UIA_IsEnabledPropertyId,
    UIA_HasKeyboardFocusPropertyId,
    UIA_IsKeyboardFocusablePropertyId,
    UIA_IsOffscreenPropertyId,
    UIA_IsRequiredForFormPropertyId,
    UIA_IsDialogPropertyId,
    UIA_WindowIsModalPropertyId,
    UIA_BoundingRectanglePropertyId,
    UIA_IsInvokePatternAvailablePropertyId,
    UIA_IsTogglePatternAvailablePropertyId,
    UIA_ToggleToggleStatePropertyId,
    UIA_IsSelectionItemPatternAvailablePropertyId,
    UIA_SelectionItemIsSelectedPropertyId,
    UIA_IsExpandCollapsePatternAvailablePropertyId,
    UIA_ExpandCollapseExpandCollapseStatePropertyId,
    UIA_IsValuePatternAvailablePropertyId,
    UIA_ValueIsReadOnlyPropertyId,
    UIA_IsRangeValuePatternAvailablePropertyId,
    UIA_RangeValueValuePropertyId,
    UIA_RangeValueIsReadOnlyPropertyId,
    UIA_IsTextPatternAvailablePropertyId,
    UIA_IsWindowPatternAvailablePropertyId,
];

/// The error of a failed call of `what`: an element gone is `NotFound`,
/// UIA's own timeout `Timeout`.
pub(crate) fn failed(what: &'static str) -> impl FnOnce(windows::core::Error) -> UiaError {
    move |e| {
        let code = e.code().0 as u32;
        if code == UIA_E_ELEMENTNOTAVAILABLE {
            UiaError::NotFound(format!("{what}: the element is gone"))
        } else {
            UiaError::Call {
                what,
                message: e.message(),
            }
        }
    }
}

/// UI Automation's client object and the control view's condition.
pub(crate) struct Client {
    automation: IUIAutomation,
    view: IUIAutomationCondition,
}

impl Client {
    /// Joins the multithreaded apartment and creates the client object
    /// (`CUIAutomation8`, else `CUIAutomation` before Windows 8).
    pub(crate) fn new() -> Result<Self, UiaError> {
        // SAFETY: plain COM calls on this thread, which stays in the MTA.
        unsafe {
            CoInitializeEx(None, COINIT_MULTITHREADED)
                .ok()
                .map_err(|e| {
                    UiaError::Unavailable(format!(
                        "CoInitializeEx failed: {}",
                        hresult_words(e.code().0 as u32, &e.message())
                    ))
                })?;
            let automation: IUIAutomation =
                CoCreateInstance(&CUIAutomation8, None, CLSCTX_INPROC_SERVER)
                    .or_else(|_| CoCreateInstance(&CUIAutomation, None, CLSCTX_INPROC_SERVER))
                    .map_err(|e| {
                        UiaError::Unavailable(format!(
                            "CoCreateInstance(CUIAutomation) failed: {}",
                            hresult_words(e.code().0 as u32, &e.message())
                        ))
                    })?;
            let view = automation
                .ControlViewCondition()
                .map_err(failed("ControlViewCondition"))?;
            Ok(Self { automation, view })
        }
    }

    /// Bounds every cross-process call (`IUIAutomation2`, Windows 8 and
    /// later): an app that does not answer fails the call with
    /// `UIA_E_TIMEOUT` instead of stalling the read.
    pub(crate) fn bound_calls(&self, per_call: Duration) {
        let ms = u32::try_from(per_call.as_millis()).unwrap_or(u32::MAX);
        if let Ok(two) = self.automation.cast::<IUIAutomation2>() {
            // SAFETY: plain setters.
            let set = unsafe {
                two.SetConnectionTimeout(ms)
                    .and_then(|()| two.SetTransactionTimeout(ms))
            };
            if let Err(e) = set {
                tracing::debug!(error = %e, "UI Automation's timeouts were not set");
            }
        }
    }

    /// A cache request for the properties of a full or `light` read, over
    /// `scope`, in the control view.
    fn request(
        &self,
        light: bool,
        scope: TreeScope,
    ) -> Result<IUIAutomationCacheRequest, UiaError> {
        // SAFETY: plain COM calls on objects this thread owns.
        unsafe {
            let request = self
                .automation
                .CreateCacheRequest()
                .map_err(failed("CreateCacheRequest"))?;
            let extra: &[UIA_PROPERTY_ID] = if light { &[] } else { &FULL };
            for id in LIGHT.iter().chain(extra) {
                request.AddProperty(*id).map_err(failed("AddProperty"))?;
            }
            request
                .SetTreeScope(scope)
                .map_err(failed("SetTreeScope"))?;
            request
                .SetTreeFilter(&self.view)
                .map_err(failed("SetTreeFilter"))?;
            Ok(request)
        }
    }

    /// The root element of `window` (found among its process's top-level
    /// windows by title, then bounds), with its whole control view cached
    /// when `subtree`.
    pub(crate) fn root(
        &self,
        window: &WindowRef,
        light: bool,
        subtree: bool,
    ) -> Result<(IUIAutomationElement, Props), UiaError> {
        let hwnd = hwnd_of(window)?;
        let scope = if subtree {
            TreeScope_Subtree
        } else {
            TreeScope_Element
        };
        let request = self.request(light, scope)?;
        // SAFETY: a window handle and a cache request.
        let element = unsafe {
            self.automation
                .ElementFromHandleBuildCache(HWND(hwnd as _), &request)
                .map_err(failed("ElementFromHandleBuildCache"))?
        };
        let props = props(&element, light)?;
        Ok((element, props))
    }
}

/// The window handle of `window`: its process's top-level windows, the
/// one with its title (closest bounds first), else the same bounds.
pub(crate) fn hwnd_of(window: &WindowRef) -> Result<u64, UiaError> {
    let listed = WinWindows.list().map_err(|e| UiaError::Call {
        what: "EnumWindows",
        message: e.to_string(),
    })?;
    let candidates = listed
        .into_iter()
        .filter(|w| w.pid == Some(window.pid))
        .map(|w| Candidate {
            item: w.id,
            name: w.title,
            bounds: Some(w.rect),
        })
        .collect();
    choose_root(candidates, window).ok_or_else(|| {
        UiaError::NotFound(format!(
            "process {} has no window titled {:?}",
            window.pid, window.title
        ))
    })
}

/// A cached property as a flag (`false` when not cached or not a flag).
fn cached_bool(e: &IUIAutomationElement, id: UIA_PROPERTY_ID) -> bool {
    // SAFETY: the VARIANT is read by its own helper; it holds no
    // allocation for flags and numbers.
    unsafe {
        e.GetCachedPropertyValue(id)
            .and_then(|v: VARIANT| VariantToBoolean(&v))
            .is_ok_and(|b| b.as_bool())
    }
}

/// A cached property as an integer.
fn cached_i32(e: &IUIAutomationElement, id: UIA_PROPERTY_ID) -> Option<i32> {
    // SAFETY: as in `cached_bool`.
    unsafe {
        e.GetCachedPropertyValue(id)
            .and_then(|v: VARIANT| VariantToInt32(&v))
            .ok()
    }
}

/// A cached property as a number.
fn cached_f64(e: &IUIAutomationElement, id: UIA_PROPERTY_ID) -> Option<f64> {
    // SAFETY: as in `cached_bool`.
    unsafe {
        e.GetCachedPropertyValue(id)
            .and_then(|v: VARIANT| VariantToDouble(&v))
            .ok()
    }
}

/// What the cache holds of `e` (a full read also reads its value live).
fn props(e: &IUIAutomationElement, light: bool) -> Result<Props, UiaError> {
    // SAFETY: cached reads of an element this thread holds.
    let mut p = unsafe {
        Props {
            control_type: e.CachedControlType().map_err(failed("ControlType"))?.0,
            name: e.CachedName().map(|b| b.to_string()).unwrap_or_default(),
            help_text: e
                .CachedHelpText()
                .map(|b| b.to_string())
                .unwrap_or_default(),
            password: e.CachedIsPassword().is_ok_and(|b| b.as_bool()),
            ..Props::default()
        }
    };
    if light {
        return Ok(p);
    }
    // SAFETY: as above.
    let rect = unsafe { e.CachedBoundingRectangle() };
    p.bounds = rect
        .ok()
        .and_then(|r| map::rect_of(r.left, r.top, r.right, r.bottom));
    p.enabled = cached_bool(e, UIA_IsEnabledPropertyId);
    p.focused = cached_bool(e, UIA_HasKeyboardFocusPropertyId);
    p.focusable = cached_bool(e, UIA_IsKeyboardFocusablePropertyId);
    p.offscreen = cached_bool(e, UIA_IsOffscreenPropertyId);
    p.required = cached_bool(e, UIA_IsRequiredForFormPropertyId);
    p.dialog = cached_bool(e, UIA_IsDialogPropertyId);
    p.modal = cached_bool(e, UIA_IsWindowPatternAvailablePropertyId)
        && cached_bool(e, UIA_WindowIsModalPropertyId);
    patterns(e, &mut p);
    values(e, &mut p);
    Ok(p)
}

/// The patterns `e` offers, from the cache.
fn patterns(e: &IUIAutomationElement, p: &mut Props) {
    let has = |id| cached_bool(e, id);
    let pat = &mut p.patterns;
    pat.invoke = has(UIA_IsInvokePatternAvailablePropertyId);
    if has(UIA_IsTogglePatternAvailablePropertyId) {
        pat.toggle = cached_i32(e, UIA_ToggleToggleStatePropertyId).and_then(Toggle::from_raw);
    }
    if has(UIA_IsSelectionItemPatternAvailablePropertyId) {
        pat.selection_item = Some(has(UIA_SelectionItemIsSelectedPropertyId));
    }
    if has(UIA_IsExpandCollapsePatternAvailablePropertyId) {
        pat.expand_collapse = cached_i32(e, UIA_ExpandCollapseExpandCollapseStatePropertyId)
            .and_then(Expand::from_raw);
    }
    if has(UIA_IsValuePatternAvailablePropertyId) {
        pat.value = Some(ValueField {
            value: String::new(),
            read_only: has(UIA_ValueIsReadOnlyPropertyId),
        });
    }
    if has(UIA_IsRangeValuePatternAvailablePropertyId) {
        pat.range = cached_f64(e, UIA_RangeValueValuePropertyId)
            .map(|v| (v, has(UIA_RangeValueIsReadOnlyPropertyId)));
    }
    pat.text = has(UIA_IsTextPatternAvailablePropertyId);
}

/// Reads the value of a field live: its Value pattern's, else the first
/// characters of a text field's or document's Text pattern. Never of a
/// password field.
fn values(e: &IUIAutomationElement, p: &mut Props) {
    if p.password {
        return;
    }
    let role = map::role(p);
    if let Some(field) = p.patterns.value.as_mut() {
        field.value = value_now(e).unwrap_or_default();
    } else if p.patterns.text && matches!(role, Role::TextField | Role::Document) {
        p.text = text_now(e, MAX_VALUE_CHARS).ok();
    }
}

/// The Value pattern's value now.
fn value_now(e: &IUIAutomationElement) -> Result<String, UiaError> {
    // SAFETY: a pattern of an element this thread holds.
    unsafe {
        let pattern: IUIAutomationValuePattern = e
            .GetCurrentPatternAs(UIA_ValuePatternId)
            .map_err(failed("ValuePattern"))?;
        Ok(pattern
            .CurrentValue()
            .map_err(failed("Value.CurrentValue"))?
            .to_string())
    }
}

/// The first `max` characters of the Text pattern's document (all when
/// `max` is `usize::MAX`).
fn text_now(e: &IUIAutomationElement, max: usize) -> Result<String, UiaError> {
    let max = i32::try_from(max).unwrap_or(-1);
    // SAFETY: a pattern of an element this thread holds.
    unsafe {
        let pattern: IUIAutomationTextPattern = e
            .GetCurrentPatternAs(UIA_TextPatternId)
            .map_err(failed("TextPattern"))?;
        let range = pattern
            .DocumentRange()
            .map_err(failed("Text.DocumentRange"))?;
        Ok(range
            .GetText(max)
            .map_err(failed("Text.GetText"))?
            .to_string())
    }
}

/// The elements of an element array, each with what the cache holds.
fn listed(
    array: windows::core::Result<IUIAutomationElementArray>,
    light: bool,
) -> Result<Vec<(IUIAutomationElement, Props)>, UiaError> {
    // An element with no children gives no array.
    let Ok(array) = array else {
        return Ok(Vec::new());
    };
    // SAFETY: reads of an array this thread holds, by index below its
    // length.
    unsafe {
        let n = array.Length().map_err(failed("ElementArray.Length"))?;
        (0..n)
            .map(|i| {
                let e = array
                    .GetElement(i)
                    .map_err(failed("ElementArray.GetElement"))?;
                let p = props(&e, light)?;
                Ok((e, p))
            })
            .collect()
    }
}

/// A window's control view as cached by one `BuildUpdatedCache`: reads
/// walk it with no further calls but for fields' values.
pub(crate) struct Cached {
    pub(crate) light: bool,
}

impl Source for Cached {
    type Element = IUIAutomationElement;

    fn children(
        &self,
        of: &IUIAutomationElement,
    ) -> Result<Vec<(IUIAutomationElement, Props)>, UiaError> {
        // SAFETY: a cached read of an element this thread holds.
        listed(unsafe { of.GetCachedChildren() }, self.light)
    }
}

/// The window as it is now: each level asked for afresh (acts and the
/// reads of single elements).
pub(crate) struct Live<'a> {
    pub(crate) client: &'a Client,
}

impl Source for Live<'_> {
    type Element = IUIAutomationElement;

    fn children(
        &self,
        of: &IUIAutomationElement,
    ) -> Result<Vec<(IUIAutomationElement, Props)>, UiaError> {
        let request = self.client.request(false, TreeScope_Element)?;
        // SAFETY: a condition and a cache request this thread holds.
        let found =
            unsafe { of.FindAllBuildCache(TreeScope_Children, &self.client.view, &request) };
        listed(found, false)
    }
}

impl Actor for Live<'_> {
    fn now(&self, element: &IUIAutomationElement) -> Result<Props, UiaError> {
        let request = self.client.request(false, TreeScope_Element)?;
        // SAFETY: a cache request this thread holds.
        let fresh = unsafe {
            element
                .BuildUpdatedCache(&request)
                .map_err(failed("BuildUpdatedCache"))?
        };
        props(&fresh, false)
    }

    fn call(&self, e: &IUIAutomationElement, call: Call) -> Result<(), UiaError> {
        // SAFETY: pattern calls on an element this thread holds.
        unsafe {
            match call {
                Call::Invoke => pattern::<IUIAutomationInvokePattern>(e, UIA_InvokePatternId)?
                    .Invoke()
                    .map_err(failed("Invoke")),
                Call::Toggle => pattern::<IUIAutomationTogglePattern>(e, UIA_TogglePatternId)?
                    .Toggle()
                    .map_err(failed("Toggle")),
                Call::Select => {
                    pattern::<IUIAutomationSelectionItemPattern>(e, UIA_SelectionItemPatternId)?
                        .Select()
                        .map_err(failed("SelectionItem.Select"))
                }
                Call::Expand => expand_collapse(e)?.Expand().map_err(failed("Expand")),
                Call::Collapse => expand_collapse(e)?.Collapse().map_err(failed("Collapse")),
            }
        }
    }

    fn set_value(&self, e: &IUIAutomationElement, text: &str) -> Result<(), UiaError> {
        // SAFETY: a pattern call on an element this thread holds.
        unsafe {
            pattern::<IUIAutomationValuePattern>(e, UIA_ValuePatternId)?
                .SetValue(&BSTR::from(text))
                .map_err(failed("Value.SetValue"))
        }
    }

    fn text(&self, e: &IUIAutomationElement) -> Result<String, UiaError> {
        value_now(e).or_else(|_| text_now(e, usize::MAX))
    }
}

/// The element's pattern `id` as `T`.
///
/// # Safety
/// `T` must be the interface of pattern `id`.
unsafe fn pattern<T: Interface>(
    e: &IUIAutomationElement,
    id: UIA_PATTERN_ID,
) -> Result<T, UiaError> {
    // SAFETY: the caller names the pattern's own interface.
    unsafe {
        e.GetCurrentPatternAs(id)
            .map_err(failed("GetCurrentPattern"))
    }
}

/// The element's ExpandCollapse pattern.
fn expand_collapse(
    e: &IUIAutomationElement,
) -> Result<IUIAutomationExpandCollapsePattern, UiaError> {
    // SAFETY: the pattern's own interface.
    unsafe { pattern(e, UIA_ExpandCollapsePatternId) }
}
