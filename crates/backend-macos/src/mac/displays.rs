//! Displays: the active displays' bounds in global display coordinates
//! (`CGDisplayBounds`, points) and each one's backing scale, laid out in
//! pixels by [`Layout`]; the pointer from a null event's location. The
//! scale is the current display mode's pixel width over its width in
//! points, read from CoreGraphics rather than `NSScreen`, which AppKit
//! allows on the main thread only (the backend runs on the engine's).

use deskhand_backend::{BackendError, Displays, Monitor, Point};
use objc2_core_graphics::{
    CGDirectDisplayID, CGDisplayBounds, CGDisplayCopyDisplayMode, CGDisplayIsBuiltin,
    CGDisplayMirrorsDisplay, CGDisplayMode, CGError, CGEvent, CGGetActiveDisplayList,
    CGMainDisplayID, kCGNullDirectDisplay,
};

use super::{SharedLayout, failed};
use crate::layout::{Display, Layout, PointRect};

/// The most displays read (macOS supports far fewer).
const MAX_DISPLAYS: usize = 32;

/// The active displays' ids.
fn active_displays() -> Result<Vec<CGDirectDisplayID>, BackendError> {
    let mut ids = [0 as CGDirectDisplayID; MAX_DISPLAYS];
    let mut count = 0u32;
    // SAFETY: the buffer and its length are passed together; `count` is
    // an out-parameter.
    let err = unsafe { CGGetActiveDisplayList(MAX_DISPLAYS as u32, ids.as_mut_ptr(), &mut count) };
    if err != CGError::Success {
        return Err(failed("CGGetActiveDisplayList", err));
    }
    Ok(ids[..(count as usize).min(MAX_DISPLAYS)].to_vec())
}

/// Pixels per point of `id`'s current mode (1 when it cannot be read).
fn backing_scale(id: CGDirectDisplayID) -> f64 {
    let Some(mode) = CGDisplayCopyDisplayMode(id) else {
        tracing::warn!(display = id, "no display mode: scale 1 assumed");
        return 1.0;
    };
    let points = CGDisplayMode::width(Some(&mode));
    let pixels = CGDisplayMode::pixel_width(Some(&mode));
    if points == 0 || pixels == 0 {
        return 1.0;
    }
    pixels as f64 / points as f64
}

fn display(id: CGDirectDisplayID, main: CGDirectDisplayID) -> Display {
    let b = CGDisplayBounds(id);
    let name = if CGDisplayIsBuiltin(id) {
        "built-in".to_owned()
    } else {
        format!("display-{id}")
    };
    Display {
        id,
        name,
        main: id == main,
        bounds: PointRect {
            x: b.origin.x,
            y: b.origin.y,
            width: b.size.width,
            height: b.size.height,
        },
        scale: backing_scale(id),
    }
}

/// The displays as they are now, laid out in pixels.
pub(crate) fn read_layout() -> Result<Layout, BackendError> {
    let ids = active_displays()?;
    if ids.is_empty() {
        return Err(BackendError::DisplayUnavailable(
            "no active display (asleep, or the session is not on the console)".into(),
        ));
    }
    let main = CGMainDisplayID();
    // A display that mirrors another shows the same points: only the
    // one mirrored is laid out.
    let shown = ids
        .into_iter()
        .filter(|id| CGDisplayMirrorsDisplay(*id) == kCGNullDirectDisplay);
    Ok(Layout::new(shown.map(|id| display(id, main)).collect()))
}

/// Where the pointer is, in global points.
pub(crate) fn pointer_points() -> Result<(f64, f64), BackendError> {
    let event = CGEvent::new(None).ok_or_else(|| failed("CGEventCreate", "no event"))?;
    let p = CGEvent::location(Some(&event));
    Ok((p.x, p.y))
}

pub(crate) struct MacDisplays {
    layout: SharedLayout,
}

impl MacDisplays {
    pub(crate) fn new(layout: SharedLayout) -> Self {
        Self { layout }
    }
}

impl Displays for MacDisplays {
    fn monitors(&mut self) -> Result<Vec<Monitor>, BackendError> {
        Ok(self.layout.refresh()?.monitors())
    }

    fn cursor_position(&mut self) -> Result<Point, BackendError> {
        let (x, y) = pointer_points()?;
        self.layout
            .current()?
            .to_pixels(x, y)
            .ok_or_else(|| BackendError::DisplayUnavailable("no display".into()))
    }
}
