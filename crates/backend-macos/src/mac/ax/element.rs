//! One AX element and the attributes deskhand reads of it, through
//! `AXUIElementCopyAttributeValue` and friends, each call bounded by the
//! element's messaging timeout. A secure text field's `AXValue` is never
//! asked for: its role and subrole are read first.

use std::ffi::c_void;
use std::ptr::NonNull;

use deskhand_backend::{BackendError, Rect};
use objc2_application_services::{AXError, AXUIElement, AXValue, AXValueType};
use objc2_core_foundation::{
    CFArray, CFBoolean, CFNumber, CFRetained, CFString, CFType, CGPoint, CGSize,
};

use crate::ax::map::{AxProps, AxValue, may_read_value};
use crate::layout::{Layout, PointRect};

/// An element of an app's tree.
#[derive(Clone)]
pub(super) struct El(pub(super) CFRetained<AXUIElement>);

fn ax_failed(call: &str, e: AXError) -> BackendError {
    match e {
        AXError::InvalidUIElement => BackendError::Stale(format!("{call}: the element is gone")),
        AXError::APIDisabled => BackendError::Unsupported(
            "accessibility is not allowed: System Settings → Privacy & Security → Accessibility"
                .into(),
        ),
        other => BackendError::Failed(format!("{call}: AXError {}", other.0)),
    }
}

impl El {
    /// The application element of process `pid`, its calls bounded by
    /// `timeout` seconds.
    pub(super) fn application(pid: u32, timeout: f32) -> Option<Self> {
        let pid = i32::try_from(pid).ok()?;
        // SAFETY: creating an element for a pid has no preconditions.
        let app = Self(unsafe { AXUIElement::new_application(pid) });
        app.bound(timeout);
        Some(app)
    }

    /// Bounds every call on this element to `timeout` seconds.
    pub(super) fn bound(&self, timeout: f32) {
        // SAFETY: a plain setter on a valid element.
        let _ = unsafe { self.0.set_messaging_timeout(timeout) };
    }

    /// The attribute `name`, `None` when the element has none.
    pub(super) fn attr(&self, name: &str) -> Result<Option<CFRetained<CFType>>, BackendError> {
        let mut value: *const CFType = std::ptr::null();
        let attribute = CFString::from_str(name);
        // SAFETY: `value` is an out-parameter; on success it holds a +1
        // reference, taken over below.
        let err = unsafe {
            self.0
                .copy_attribute_value(&attribute, NonNull::from(&mut value))
        };
        match err {
            AXError::Success => Ok(NonNull::new(value.cast_mut())
                // SAFETY: a +1 reference from a Copy function.
                .map(|v| unsafe { CFRetained::from_raw(v) })),
            AXError::NoValue | AXError::AttributeUnsupported => Ok(None),
            e => Err(ax_failed(name, e)),
        }
    }

    pub(super) fn string(&self, name: &str) -> Result<String, BackendError> {
        Ok(self
            .attr(name)?
            .and_then(|v| v.downcast_ref::<CFString>().map(|s| s.to_string()))
            .unwrap_or_default())
    }

    pub(super) fn flag(&self, name: &str) -> Result<Option<bool>, BackendError> {
        Ok(self
            .attr(name)?
            .and_then(|v| v.downcast_ref::<CFBoolean>().map(CFBoolean::as_bool)))
    }

    /// Whether attribute `name` can be set.
    pub(super) fn settable(&self, name: &str) -> bool {
        let mut settable: u8 = 0;
        let attribute = CFString::from_str(name);
        // SAFETY: `settable` is an out-parameter.
        let err = unsafe {
            self.0
                .is_attribute_settable(&attribute, NonNull::from(&mut settable))
        };
        err == AXError::Success && settable != 0
    }

    /// The element's children, in order.
    pub(super) fn children(&self) -> Result<Vec<El>, BackendError> {
        self.elements("AXChildren")
    }

    /// The elements of an array attribute (`AXChildren`, `AXWindows`).
    pub(super) fn elements(&self, name: &str) -> Result<Vec<El>, BackendError> {
        let Some(value) = self.attr(name)? else {
            return Ok(Vec::new());
        };
        let Ok(array) = value.downcast::<CFArray>() else {
            return Ok(Vec::new());
        };
        // SAFETY: AX's element lists hold AXUIElements (checked below).
        let array: CFRetained<CFArray<CFType>> = unsafe { CFRetained::cast_unchecked(array) };
        Ok(array
            .iter()
            .filter_map(|e| e.downcast::<AXUIElement>().ok().map(El))
            .collect())
    }

    /// Its action names (`AXPress`, …).
    pub(super) fn actions(&self) -> Vec<String> {
        let mut names: *const CFArray = std::ptr::null();
        // SAFETY: an out-parameter holding a +1 reference on success.
        let err = unsafe { self.0.copy_action_names(NonNull::from(&mut names)) };
        let Some(names) = NonNull::new(names.cast_mut()).filter(|_| err == AXError::Success) else {
            return Vec::new();
        };
        // SAFETY: a +1 array of action names (CFStrings).
        let names: CFRetained<CFArray<CFString>> =
            unsafe { CFRetained::cast_unchecked(CFRetained::from_raw(names)) };
        names.iter().map(|n| n.to_string()).collect()
    }

    /// Does action `name`.
    pub(super) fn perform(&self, name: &str) -> Result<(), BackendError> {
        // SAFETY: a valid element and action name.
        match unsafe { self.0.perform_action(&CFString::from_str(name)) } {
            AXError::Success => Ok(()),
            e => Err(ax_failed(name, e)),
        }
    }

    /// Sets `AXValue` to `text`.
    pub(super) fn set_value(&self, text: &str) -> Result<(), BackendError> {
        let value = CFString::from_str(text);
        let attribute = CFString::from_str("AXValue");
        // SAFETY: a valid element, attribute and CFString value.
        match unsafe { self.0.set_attribute_value(&attribute, &value) } {
            AXError::Success => Ok(()),
            e => Err(ax_failed("AXValue", e)),
        }
    }

    /// Its frame in desktop pixels (`AXPosition` and `AXSize`, in points).
    pub(super) fn frame(&self, layout: &Layout) -> Result<Option<Rect>, BackendError> {
        let mut origin = CGPoint::default();
        let mut size = CGSize::default();
        let got = self.ax_value("AXPosition", AXValueType::CGPoint, (&raw mut origin).cast())?
            && self.ax_value("AXSize", AXValueType::CGSize, (&raw mut size).cast())?;
        Ok(got
            .then(|| {
                layout.rect_to_pixels(PointRect {
                    x: origin.x,
                    y: origin.y,
                    width: size.width,
                    height: size.height,
                })
            })
            .flatten())
    }

    /// Reads an `AXValue`-wrapped attribute of `kind` into `out`.
    fn ax_value(
        &self,
        name: &str,
        kind: AXValueType,
        out: *mut c_void,
    ) -> Result<bool, BackendError> {
        let Some(v) = self.attr(name)? else {
            return Ok(false);
        };
        let Some(value) = v.downcast_ref::<AXValue>() else {
            return Ok(false);
        };
        let Some(out) = NonNull::new(out) else {
            return Ok(false);
        };
        // SAFETY: `out` points to a value of the type `kind` names.
        Ok(unsafe { value.r#type() == kind && value.value(kind, out) })
    }

    /// `AXValue` as deskhand shows it: text or a number.
    fn value(&self) -> Result<AxValue, BackendError> {
        let Some(v) = self.attr("AXValue")? else {
            return Ok(AxValue::None);
        };
        if let Some(s) = v.downcast_ref::<CFString>() {
            return Ok(AxValue::Text(s.to_string()));
        }
        Ok(v.downcast_ref::<CFNumber>()
            .and_then(CFNumber::as_f64)
            .map_or(AxValue::None, AxValue::Number))
    }

    /// What deskhand reads of the element: its role, subrole, title and
    /// description alone when `structure_only`; the value only when the
    /// role and subrole say it is not a secure field.
    pub(super) fn props(
        &self,
        layout: &Layout,
        structure_only: bool,
    ) -> Result<AxProps, BackendError> {
        let mut p = AxProps {
            role: self.string("AXRole")?,
            subrole: self.string("AXSubrole")?,
            title: self.string("AXTitle")?,
            description: self.string("AXDescription")?,
            ..AxProps::default()
        };
        if structure_only {
            return Ok(p);
        }
        p.help = self.string("AXHelp")?;
        if may_read_value(&p.role, &p.subrole) {
            p.value = self.value()?;
        }
        p.value_settable = self.settable("AXValue");
        p.enabled = self.flag("AXEnabled")?.unwrap_or(true);
        p.focused = self.flag("AXFocused")?.unwrap_or(false);
        p.focusable = self.settable("AXFocused");
        p.selected = self.flag("AXSelected")?;
        p.expanded = self.flag("AXExpanded")?;
        p.modal = self.flag("AXModal")?.unwrap_or(false);
        p.bounds = self.frame(layout)?;
        p.actions = self.actions();
        Ok(p)
    }
}
