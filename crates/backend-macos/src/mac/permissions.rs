//! Permissions: the TCC probes, none of which prompts. Screen Recording
//! from `CGPreflightScreenCaptureAccess`, Accessibility from
//! `AXIsProcessTrustedWithOptions` with the prompt option off, Input
//! Monitoring from `CGPreflightListenEventAccess`; Automation cannot be
//! probed without naming an app (and may prompt), so it is unknown.
//! [`require`] lets a capability check its permission before a call that
//! would prompt (ScreenCaptureKit, the event tap). [`ask`] is the one
//! place that prompts: the app calls it on the person's click.

use deskhand_backend::{BackendError, Permissions};
use deskhand_protocol::messages::PermissionStatus;
use objc2_app_kit::NSWorkspace;
use objc2_application_services::{AXIsProcessTrustedWithOptions, kAXTrustedCheckOptionPrompt};
use objc2_core_foundation::{CFBoolean, CFDictionary, CFString};
use objc2_core_graphics::{
    CGPreflightListenEventAccess, CGPreflightScreenCaptureAccess, CGRequestListenEventAccess,
    CGRequestScreenCaptureAccess,
};
use objc2_foundation::{NSString, NSURL};

use crate::MacError;
use crate::tcc::{Asked, PERMISSIONS, Prompt, named, not_granted, opens_pane, status, to_ask};

/// Whether this process is trusted for Accessibility, asked without the
/// prompt.
pub(crate) fn accessibility_trusted() -> bool {
    ax_trusted(false)
}

/// Whether this process is trusted for Accessibility; with `prompt`,
/// macOS asks the person when it is not.
fn ax_trusted(prompt: bool) -> bool {
    // SAFETY: a static CFString constant of the framework.
    let key: &CFString = unsafe { kAXTrustedCheckOptionPrompt };
    let options =
        CFDictionary::<CFString, CFBoolean>::from_slices(&[key], &[CFBoolean::new(prompt)]);
    let opaque: &CFDictionary = AsRef::<CFDictionary>::as_ref(&*options);
    // SAFETY: a dictionary of the documented key and a CFBoolean.
    unsafe { AXIsProcessTrustedWithOptions(Some(opaque)) }
}

/// The probe of permission `name`: `None` when it cannot be told.
pub(crate) fn probe(name: &str) -> Option<bool> {
    match name {
        "screen_recording" => Some(CGPreflightScreenCaptureAccess()),
        "accessibility" => Some(accessibility_trusted()),
        "input_monitoring" => Some(CGPreflightListenEventAccess()),
        _ => None,
    }
}

/// Ok when permission `name` is granted; else the refusal naming its
/// System Settings pane, so that no call prompts from an agent's request.
pub(crate) fn require(name: &str) -> Result<(), BackendError> {
    let Some(p) = named(name) else {
        return Err(BackendError::Failed(format!("no permission named {name}")));
    };
    if probe(name) == Some(true) {
        return Ok(());
    }
    tracing::warn!(permission = name, "not granted: the call is not made");
    Err(BackendError::Unsupported(not_granted(p)))
}

/// Makes macOS show `prompt`'s dialog; true when it is granted already.
fn request(prompt: Prompt) -> bool {
    match prompt {
        Prompt::ScreenCapture => CGRequestScreenCaptureAccess(),
        Prompt::Accessibility => ax_trusted(true),
        Prompt::ListenEvent => CGRequestListenEventAccess(),
    }
}

/// Opens System Settings at `pane`; false when macOS refused the URL.
fn open_pane(pane: &str) -> bool {
    match NSURL::URLWithString(&NSString::from_str(pane)) {
        Some(url) => NSWorkspace::sharedWorkspace().openURL(&url),
        None => false,
    }
}

/// Asks macOS for permission `name`: its prompt, then its System
/// Settings pane unless it is granted already. The app's Doctor window
/// calls it on the person's click only.
pub(crate) fn ask(name: &str) -> Result<Asked, MacError> {
    let permission = to_ask(name)?;
    let granted = match permission.prompt {
        Some(prompt) => {
            tracing::info!(permission = name, call = prompt.call(), "asking macOS");
            Some(request(prompt))
        }
        None => probe(name),
    };
    let pane_opened = opens_pane(granted) && open_pane(permission.pane);
    tracing::info!(permission = name, ?granted, pane_opened, "macOS asked");
    Ok(Asked {
        permission,
        granted,
        pane_opened,
    })
}

pub(crate) struct MacPermissions;

impl Permissions for MacPermissions {
    fn known(&self) -> Vec<&'static str> {
        PERMISSIONS.iter().map(|p| p.name).collect()
    }

    fn check(&mut self, name: &str) -> PermissionStatus {
        if !PERMISSIONS.iter().any(|p| p.name == name) {
            return PermissionStatus::Unknown;
        }
        status(probe(name))
    }
}
