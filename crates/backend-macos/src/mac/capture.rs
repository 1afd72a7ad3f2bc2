//! Capture with ScreenCaptureKit (`SCScreenshotManager`, macOS 14 and
//! later): each display a rectangle covers is captured at its own
//! backing scale with the indicator's windows left out by the content
//! filter, and the parts composed into one BGRX frame; a window's own
//! image (as it would look uncovered) through a filter of that window
//! alone. The pointer is not in the image and its own image is not read
//! yet. Without Screen Recording nothing is asked of ScreenCaptureKit
//! (which would prompt): the capture is refused with the pane to open.

use std::sync::mpsc;
use std::time::Duration;

use block2::RcBlock;
use deskhand_backend::{BackendError, Bitmap, Capture, CursorImage, PixelFormat, Rect};
use objc2::AnyThread;
use objc2::rc::Retained;
use objc2_core_foundation::{CFRetained, CGPoint, CGRect, CGSize};
use objc2_core_graphics::{CGDataProvider, CGImage};
use objc2_foundation::{NSArray, NSError};
use objc2_screen_capture_kit::{
    SCContentFilter, SCDisplay, SCScreenshotManager, SCShareableContent, SCStreamConfiguration,
    SCWindow,
};

use super::permissions::require;
use super::{SharedLayout, failed};
use crate::layout::{Part, PointRect};
use crate::pixels::{blit, channel_offsets, to_bgrx};

/// How long ScreenCaptureKit may take to answer.
const WAIT: Duration = Duration::from_secs(5);

/// `kCVPixelFormatType_32BGRA`.
const BGRA: u32 = u32::from_be_bytes(*b"BGRA");

/// An object handed from ScreenCaptureKit's completion queue to the
/// waiting thread.
struct Handed<T>(T);

// SAFETY: ScreenCaptureKit's content snapshots and the images it returns
// are immutable once handed over, and Objective-C and CoreFoundation
// reference counts are thread-safe; each is used by one thread at a time.
unsafe impl<T> Send for Handed<T> {}

fn error_text(e: *mut NSError) -> String {
    // SAFETY: ScreenCaptureKit passes a valid error or null.
    unsafe { e.as_ref() }.map_or_else(
        || "no answer".into(),
        |e| e.localizedDescription().to_string(),
    )
}

/// What may be captured now (displays and windows). Every capture path
/// (a screen's frame, a window's own image) starts here, so Screen
/// Recording is checked here first: ScreenCaptureKit would otherwise ask
/// the person on an agent's behalf.
fn shareable() -> Result<Retained<SCShareableContent>, BackendError> {
    require("screen_recording")?;
    let (tx, rx) = mpsc::channel();
    let done = RcBlock::new(
        move |content: *mut SCShareableContent, error: *mut NSError| {
            // SAFETY: a valid object or null, retained here to outlive the
            // handler.
            let content = unsafe { Retained::retain(content) };
            let _ = tx.send(Handed(content.ok_or_else(|| error_text(error))));
        },
    );
    // SAFETY: the handler matches the documented signature.
    unsafe { SCShareableContent::getShareableContentWithCompletionHandler(&done) };
    match rx.recv_timeout(WAIT) {
        Ok(Handed(Ok(content))) => Ok(content),
        Ok(Handed(Err(why))) => Err(BackendError::Failed(format!(
            "SCShareableContent: {why} (is Screen Recording allowed?)"
        ))),
        Err(_) => Err(failed("SCShareableContent", "no answer in time")),
    }
}

/// A configuration for an image of `width × height` pixels of `source`
/// (points, in the captured content's own coordinates), in BGRA, without
/// the pointer.
fn config_for(source: PointRect, width: u32, height: u32) -> Retained<SCStreamConfiguration> {
    // SAFETY: documented setters of a new configuration.
    unsafe {
        let config = SCStreamConfiguration::new();
        config.setSourceRect(CGRect {
            origin: CGPoint {
                x: source.x,
                y: source.y,
            },
            size: CGSize {
                width: source.width,
                height: source.height,
            },
        });
        config.setWidth(width as usize);
        config.setHeight(height as usize);
        config.setPixelFormat(BGRA);
        config.setShowsCursor(false);
        config
    }
}

/// One screenshot of what `filter` shows, as `config` says.
fn screenshot(
    filter: &SCContentFilter,
    config: &SCStreamConfiguration,
) -> Result<CFRetained<CGImage>, BackendError> {
    let (tx, rx) = mpsc::channel();
    let done = RcBlock::new(move |image: *mut CGImage, error: *mut NSError| {
        let image = std::ptr::NonNull::new(image).map(|i| {
            // SAFETY: a valid image for the handler's duration, retained.
            unsafe { CFRetained::retain(i) }
        });
        let _ = tx.send(Handed(image.ok_or_else(|| error_text(error))));
    });
    // SAFETY: the filter, configuration and handler are valid.
    unsafe {
        SCScreenshotManager::captureImageWithFilter_configuration_completionHandler(
            filter,
            config,
            Some(&done),
        );
    }
    match rx.recv_timeout(WAIT) {
        Ok(Handed(Ok(image))) => Ok(image),
        Ok(Handed(Err(why))) => Err(failed("captureImageWithFilter", why)),
        Err(_) => Err(failed("captureImageWithFilter", "no answer in time")),
    }
}

/// One display's part as a CGImage, `excluded` left out.
fn shoot(
    display: &SCDisplay,
    excluded: &NSArray<SCWindow>,
    part: &Part,
) -> Result<CFRetained<CGImage>, BackendError> {
    // SAFETY: the documented initializer, with a display of the content.
    let filter = unsafe {
        SCContentFilter::initWithDisplay_excludingWindows(
            SCContentFilter::alloc(),
            display,
            excluded,
        )
    };
    let config = config_for(part.points, part.pixels.width, part.pixels.height);
    screenshot(&filter, &config)
}

/// Part `source` (the window's own points) of `window`'s own image, as
/// it would look uncovered, `width × height` pixels, without its shadow.
fn shoot_window(
    window: &SCWindow,
    source: PointRect,
    width: u32,
    height: u32,
) -> Result<CFRetained<CGImage>, BackendError> {
    // SAFETY: the documented initializer, with a window of the content.
    let filter = unsafe {
        SCContentFilter::initWithDesktopIndependentWindow(SCContentFilter::alloc(), window)
    };
    let config = config_for(source, width, height);
    // SAFETY: a documented setter (macOS 14, as the capture itself).
    unsafe { config.setIgnoreShadowsSingleWindow(true) };
    screenshot(&filter, &config)
}

/// A CGImage's pixels as BGRX rows of `width × 4` bytes.
fn bgrx_of(image: &CGImage) -> Result<(Vec<u8>, usize, usize), BackendError> {
    let (w, h) = (CGImage::width(Some(image)), CGImage::height(Some(image)));
    let stride = CGImage::bytes_per_row(Some(image));
    if CGImage::bits_per_pixel(Some(image)) != 32 {
        return Err(failed("CGImage", "not 32 bits per pixel"));
    }
    let offsets = channel_offsets(
        CGImage::alpha_info(Some(image)).0,
        CGImage::byte_order_info(Some(image)).0,
    )
    .ok_or_else(|| failed("CGImage", "no 4-byte pixel layout"))?;
    let data = CGImage::data_provider(Some(image))
        .and_then(|p| CGDataProvider::data(Some(&p)))
        .ok_or_else(|| failed("CGDataProviderCopyData", "no data"))?;
    let bytes = data.to_vec();
    if bytes.len() < stride * h.saturating_sub(1) + w * 4 {
        return Err(failed("CGImage", "fewer bytes than its size"));
    }
    Ok((to_bgrx(&bytes, stride, w, h, offsets), w, h))
}

pub(crate) struct MacCapture {
    layout: SharedLayout,
    excluded: Vec<u32>,
}

impl MacCapture {
    pub(crate) fn new(layout: SharedLayout) -> Self {
        Self {
            layout,
            excluded: Vec::new(),
        }
    }

    fn frame(&self, rect: Rect) -> Result<Vec<u8>, BackendError> {
        let content = shareable()?;
        // SAFETY: reading a content snapshot's lists.
        let (displays, windows) = unsafe { (content.displays(), content.windows()) };
        // SAFETY: reading a window's id.
        let excluded: Vec<Retained<SCWindow>> = windows
            .iter()
            .filter(|w| self.excluded.contains(&unsafe { w.windowID() }))
            .collect();
        let excluded = NSArray::from_retained_slice(&excluded);
        let mut out = vec![0u8; rect.width as usize * rect.height as usize * 4];
        for part in self.layout.current()?.parts(rect) {
            // SAFETY: reading a display's id.
            let display = displays
                .iter()
                .find(|d| unsafe { d.displayID() } == part.display)
                .ok_or_else(|| BackendError::Stale(format!("display {} is gone", part.display)))?;
            let image = shoot(&display, &excluded, &part)?;
            let (pixels, w, h) = bgrx_of(&image)?;
            let got = Rect::new(part.pixels.x, part.pixels.y, w as u32, h as u32);
            blit(&mut out, rect, &pixels, w * 4, got);
        }
        Ok(out)
    }
}

impl MacCapture {
    /// Part `rect` (desktop pixels) of window `id`'s own image.
    fn window_frame(&self, id: u64, rect: Rect) -> Result<(Vec<u8>, usize, usize), BackendError> {
        let content = shareable()?;
        // SAFETY: reading a content snapshot's windows and their ids.
        let window = unsafe { content.windows() }
            .iter()
            .find(|w| u64::from(unsafe { w.windowID() }) == id)
            .ok_or_else(|| BackendError::Stale(format!("window {id} is gone")))?;
        // SAFETY: reading a window's frame (global points).
        let f = unsafe { window.frame() };
        let frame = PointRect {
            x: f.origin.x,
            y: f.origin.y,
            width: f.size.width,
            height: f.size.height,
        };
        let source = self
            .layout
            .current()?
            .in_window(frame, rect)
            .ok_or_else(|| {
                BackendError::InvalidTarget(format!("{rect:?} is not inside window {id}"))
            })?;
        let image = shoot_window(&window, source, rect.width, rect.height)?;
        bgrx_of(&image)
    }
}

impl Capture for MacCapture {
    fn capture(
        &mut self,
        rect: Rect,
        sink: &mut dyn FnMut(&Bitmap<'_>),
    ) -> Result<(), BackendError> {
        let pixels = self.frame(rect)?;
        sink(&Bitmap {
            width: rect.width,
            height: rect.height,
            stride: rect.width as usize * 4,
            format: PixelFormat::Bgrx,
            pixels: &pixels,
        });
        Ok(())
    }

    fn capture_window(
        &mut self,
        window: u64,
        rect: Rect,
        sink: &mut dyn FnMut(&Bitmap<'_>),
    ) -> Option<Result<(), BackendError>> {
        Some(self.window_frame(window, rect).map(|(pixels, w, h)| {
            // Exactly `rect`'s size, whatever size the image came in.
            let frame = Rect::new(0, 0, rect.width, rect.height);
            let mut out = vec![0u8; rect.width as usize * rect.height as usize * 4];
            blit(
                &mut out,
                frame,
                &pixels,
                w * 4,
                Rect::new(0, 0, w as u32, h as u32),
            );
            sink(&Bitmap {
                width: rect.width,
                height: rect.height,
                stride: rect.width as usize * 4,
                format: PixelFormat::Bgrx,
                pixels: &out,
            });
        }))
    }

    fn captures_windows(&self) -> bool {
        true
    }

    fn cursor_image(&mut self) -> Result<Option<CursorImage>, BackendError> {
        Ok(None)
    }

    fn supports_cursor(&self) -> bool {
        false
    }

    fn exclude(&mut self, windows: &[u64], _covered: &[Rect]) {
        self.excluded = windows
            .iter()
            .filter_map(|w| u32::try_from(*w).ok())
            .collect();
    }
}
