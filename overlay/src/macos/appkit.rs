//! The AppKit and CoreGraphics calls of the macOS overlay. AppKit objects
//! are touched on the main thread only (where winit calls the desktop);
//! the watcher's thread reads CoreGraphics, which any thread may, and
//! hands the one AppKit change it needs (click-through on or off) to the
//! main run loop.

use std::cell::RefCell;

use anyhow::Context;
use block2::RcBlock;
use objc2::MainThreadMarker;
use objc2::rc::{Retained, Weak};
use objc2_app_kit::{
    NSApplication, NSScreenSaverWindowLevel, NSView, NSWindow, NSWindowCollectionBehavior,
    NSWindowSharingType,
};
use objc2_core_foundation::{
    CFArray, CFBoolean, CFDictionary, CFRetained, CFRunLoop, CFString, CFType, CGPoint, CGRect,
    CGSize, kCFRunLoopCommonModes,
};
use objc2_core_graphics::{CGColor, CGEvent, CGWindowListCopyWindowInfo, CGWindowListOption};
use objc2_quartz_core::{CALayer, CATransaction};
use winit::raw_window_handle::{HasWindowHandle, RawWindowHandle};
use winit::window::Window;

use deskhand_protocol::geometry::PointRect;

thread_local! {
    /// The overlay's windows by window number, on the main thread.
    static WINDOWS: RefCell<Vec<(u32, Weak<NSWindow>)>> = const { RefCell::new(Vec::new()) };
}

/// The main thread's marker, or an error off it.
fn main_thread() -> anyhow::Result<MainThreadMarker> {
    MainThreadMarker::new().context("AppKit is called on the main thread only")
}

/// The `NSView` winit made for `window`.
fn view_of(window: &Window) -> anyhow::Result<Retained<NSView>> {
    let _mtm = main_thread()?;
    let RawWindowHandle::AppKit(handle) = window.window_handle()?.as_raw() else {
        anyhow::bail!("not an AppKit window");
    };
    // SAFETY: winit's handle holds its window's live NSView; it is
    // retained here and used on the main thread.
    unsafe { Retained::retain(handle.ns_view.as_ptr().cast::<NSView>()) }
        .context("winit's window has no view")
}

/// Runs `f` on the overlay window numbered `number`, if it still exists.
fn with_window(number: u32, f: impl FnOnce(&NSWindow)) {
    let found = WINDOWS.with(|w| {
        w.borrow()
            .iter()
            .find(|(n, _)| *n == number)
            .and_then(|(_, weak)| weak.load())
    });
    if let Some(window) = found {
        f(&window);
    }
}

/// Makes `window` an indicator: above full-screen apps and the menu bar
/// (screen-saver level), on every Space and beside full-screen apps,
/// never in the window cycle, left out of screen sharing and captures,
/// click-through until a button is under the pointer, and kept when the
/// app is hidden or inactive.
fn configure(window: &NSWindow) {
    window.setLevel(NSScreenSaverWindowLevel);
    window.setCollectionBehavior(
        NSWindowCollectionBehavior::CanJoinAllSpaces
            | NSWindowCollectionBehavior::Stationary
            | NSWindowCollectionBehavior::FullScreenAuxiliary
            | NSWindowCollectionBehavior::IgnoresCycle,
    );
    window.setSharingType(NSWindowSharingType::None);
    window.setIgnoresMouseEvents(true);
    window.setHidesOnDeactivate(false);
    window.setCanHide(false);
    window.setHasShadow(false);
}

/// Configures winit's `window` and answers its window number (the
/// `CGWindowID` the backend and ScreenCaptureKit know it by).
pub fn adopt(window: &Window) -> anyhow::Result<u32> {
    let view = view_of(window)?;
    let ns_window = view.window().context("the view is in no window")?;
    configure(&ns_window);
    // winit makes its windows undeferred: the number exists already.
    let number = u32::try_from(ns_window.windowNumber())
        .ok()
        .filter(|n| *n > 0)
        .context("the window has no window number")?;
    WINDOWS.with(|w| {
        let mut w = w.borrow_mut();
        w.retain(|(_, weak)| weak.load().is_some());
        w.push((number, Weak::from_retained(&ns_window)));
    });
    Ok(number)
}

fn cg_rect(p: &PointRect) -> CGRect {
    CGRect {
        origin: CGPoint { x: p.x, y: p.y },
        size: CGSize {
            width: p.width,
            height: p.height,
        },
    }
}

/// Whether `layer`'s sublayers are laid out from the top left: each
/// flipped layer on the way up to the window flips them once more.
fn flipped(layer: &CALayer) -> bool {
    let mut flipped = layer.isGeometryFlipped();
    let mut up = layer.superlayer();
    while let Some(l) = up {
        flipped ^= l.isGeometryFlipped();
        up = l.superlayer();
    }
    flipped
}

/// Shows only `parts` (the view's own points, from its top left) of
/// `window`: softbuffer's image is opaque, so a mask layer of opaque
/// rectangles leaves the rest of the transparent window see-through (the
/// SHAPE bounding region of X11, the window region of Windows).
pub fn mask(window: &Window, parts: &[PointRect]) -> anyhow::Result<()> {
    let view = view_of(window)?;
    let root = view
        .layer()
        .context("the view has no layer (softbuffer makes it layer-backed)")?;
    let mask = CALayer::new();
    mask.setFrame(root.bounds());
    // The mask's rectangles count from the top left: flipped unless the
    // layers it sits in already are (winit's view is flipped, and AppKit
    // flips a flipped view's layer).
    mask.setGeometryFlipped(!flipped(&root));
    let opaque = CGColor::new_generic_gray(0.0, 1.0);
    for part in parts {
        let rect = CALayer::new();
        rect.setFrame(cg_rect(part));
        rect.setBackgroundColor(Some(&opaque));
        mask.addSublayer(&rect);
    }
    CATransaction::begin();
    CATransaction::setDisableActions(true);
    // SAFETY: a fresh layer with no superlayer, as a mask must be.
    unsafe { root.setMask(Some(&mask)) };
    CATransaction::commit();
    Ok(())
}

/// Makes window `number` click-through (`ignore`) or not, now; on the
/// main thread.
pub fn set_click_through(number: u32, ignore: bool) {
    with_window(number, |w| w.setIgnoresMouseEvents(ignore));
}

/// Asks the main run loop to make window `number` click-through or not
/// (from the watcher's thread).
pub fn set_click_through_later(number: u32, ignore: bool) {
    on_main(move || set_click_through(number, ignore));
}

/// Asks the main run loop to give the keyboard back (from the watcher's
/// thread, once the frame is off screen: after a click on Stop).
pub fn give_back_focus_later() {
    on_main(give_back_focus);
}

/// Runs `f` on the main thread's run loop, which winit runs.
fn on_main(f: impl Fn() + 'static) {
    let Some(main) = CFRunLoop::main() else {
        return;
    };
    let block = RcBlock::new(f);
    // SAFETY: a constant of CoreFoundation.
    let Some(common) = (unsafe { kCFRunLoopCommonModes }) else {
        return;
    };
    let mode: &CFType = common;
    // SAFETY: the block takes no arguments and returns nothing, as
    // CFRunLoopPerformBlock wants; CoreFoundation copies it.
    unsafe { main.perform_block(Some(mode), Some(&block)) };
    main.wake_up();
}

/// Puts window `number` in front of every other window of its level.
pub fn raise(number: u32) {
    with_window(number, |w| {
        w.setLevel(NSScreenSaverWindowLevel);
        w.orderFrontRegardless();
    });
}

/// A click on Continue or Stop made the overlay the active app; once the
/// buttons are gone the person's app gets the keyboard back.
pub fn give_back_focus() {
    if let Ok(mtm) = main_thread() {
        let app = NSApplication::sharedApplication(mtm);
        if app.isActive() {
            app.deactivate();
        }
    }
}

/// What the window list says of one window.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Listed {
    /// Not in the list: destroyed.
    Gone,
    /// In the list, on screen or not.
    OnScreen(bool),
}

/// What the window list says of window `number` now; `None` when the
/// list could not be read (no news rather than a lost frame).
pub fn listed(number: u32) -> Option<Listed> {
    let list = CGWindowListCopyWindowInfo(CGWindowListOption::OptionIncludingWindow, number)?;
    // SAFETY: documented as an array of dictionaries with string keys.
    let list: CFRetained<CFArray<CFDictionary<CFString, CFType>>> =
        unsafe { CFRetained::cast_unchecked(list) };
    let Some(info) = list.iter().next() else {
        return Some(Listed::Gone);
    };
    let key = CFString::from_static_str("kCGWindowIsOnscreen");
    let on = info
        .get(&key)
        .and_then(|v| v.downcast_ref::<CFBoolean>().map(CFBoolean::as_bool))
        .unwrap_or(false);
    Some(Listed::OnScreen(on))
}

/// The pointer in global display points.
pub fn pointer_points() -> Option<(f64, f64)> {
    let event = CGEvent::new(None)?;
    let p = CGEvent::location(Some(&event));
    Some((p.x, p.y))
}
