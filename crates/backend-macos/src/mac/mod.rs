//! The calls into macOS, one module per capability. Written against
//! Apple's documented APIs through objc2; type-checked for both Apple
//! targets, not yet run on a Mac.

mod apps;
mod ax;
mod capture;
mod clipboard;
mod displays;
pub mod doctor;
mod indicator;
mod input;
pub(crate) mod permissions;
pub(crate) mod process;
mod watcher;
mod window_list;

use std::sync::{Arc, Mutex};

use deskhand_backend::overlay_process::find_overlay;
use deskhand_backend::{Backend, BackendError, Clipboard, Indicator, KillSwitchHotkey};

use crate::layout::Layout;
use crate::{MacError, MacOptions};

/// A macOS call's failure as a backend error.
pub(crate) fn failed(call: &str, e: impl std::fmt::Debug) -> BackendError {
    BackendError::Failed(format!("{call}: {e:?}"))
}

/// The display layout as last read, shared by the capabilities that turn
/// pixels into points and back; [`displays::MacDisplays`] refreshes it
/// on every read of the monitors (the engine reads them before each input
/// action).
#[derive(Clone, Default)]
pub(crate) struct SharedLayout(Arc<Mutex<Option<Layout>>>);

impl SharedLayout {
    /// Reads the layout fresh and keeps it.
    pub(crate) fn refresh(&self) -> Result<Layout, BackendError> {
        let layout = displays::read_layout()?;
        if let Ok(mut kept) = self.0.lock() {
            *kept = Some(layout.clone());
        }
        Ok(layout)
    }

    /// The layout as last read, else read now.
    pub(crate) fn current(&self) -> Result<Layout, BackendError> {
        let kept = self.0.lock().ok().and_then(|k| k.clone());
        match kept {
            Some(layout) => Ok(layout),
            None => self.refresh(),
        }
    }
}

/// ScreenCaptureKit's screenshots, on macOS 14 and later.
fn capture(layout: &SharedLayout) -> Option<Box<dyn deskhand_backend::Capture>> {
    if objc2::available!(macos = 14.0) {
        Some(Box::new(capture::MacCapture::new(layout.clone())))
    } else {
        tracing::warn!("capture needs macOS 14 (ScreenCaptureKit's SCScreenshotManager)");
        None
    }
}

/// The red frame through `deskhand-overlay`, when it is found (next to
/// deskhand, on `PATH`, or `$DESKHAND_OVERLAY`); without it, no takeover.
fn indicator(layout: &SharedLayout) -> Option<Box<dyn Indicator>> {
    match find_overlay() {
        Some(program) => Some(Box::new(indicator::MacIndicator::new(
            &program,
            layout.clone(),
        ))),
        None => {
            tracing::warn!(
                "deskhand-overlay not found (next to deskhand, on PATH, or $DESKHAND_OVERLAY): takeover is unavailable"
            );
            None
        }
    }
}

pub(crate) fn open(options: &MacOptions) -> Result<Backend, MacError> {
    let kill = match &options.kill_switch {
        Some(hotkey) => hotkey.clone(),
        None => KillSwitchHotkey::new(deskhand_backend::DEFAULT_KILL_SWITCH)
            .map_err(|e| MacError::Option(e.to_string()))?,
    };
    // The event tap watches for the chord: it must be one a Mac keyboard
    // has.
    let text = kill.current();
    let chord =
        deskhand_backend::Chord::parse(&text).map_err(|e| MacError::Option(e.to_string()))?;
    if crate::keys::chord_of(&chord).is_none() {
        return Err(MacError::Option(format!(
            "the kill switch {text} has no key on a Mac keyboard"
        )));
    }
    let layout = SharedLayout::default();
    let found = layout.refresh().map_err(|e| MacError::Call {
        call: "CGGetActiveDisplayList",
        message: e.to_string(),
    })?;
    tracing::info!(displays = found.monitors().len(), "macOS displays read");
    let input = input::MacInput::new(layout.clone()).map_err(|e| MacError::Call {
        call: "CGEventSourceCreate",
        message: e.to_string(),
    })?;
    tracing::warn!("the macOS backend has not run on a Mac yet: see docs/macos.md");
    Ok(Backend {
        name: "macos",
        policy: &crate::MACOS,
        displays: Box::new(displays::MacDisplays::new(layout.clone())),
        capture: capture(&layout),
        input: Some(Box::new(input)),
        windows: Some(Box::new(window_list::MacWindows::new(layout.clone()))),
        apps: Some(Box::new(apps::MacApps)),
        permissions: Some(Box::new(permissions::MacPermissions)),
        clipboard: Some(Arc::new(clipboard::MacClipboard::default()) as Arc<dyn Clipboard>),
        indicator: indicator(&layout),
        watcher: Some(Box::new(watcher::TapWatcher::new(kill, layout.clone()))),
        accessibility: Some(std::sync::Arc::new(ax::MacAccessibility::new(layout))),
        status_place: None,
    })
}
