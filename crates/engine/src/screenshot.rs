//! Screenshot requests resolved against the layout, captured and encoded on
//! the desktop thread.

use deskhand_protocol::messages::ImageFormat;

use crate::desk::Desk;
use crate::encode::{EncodedImage, encode};
use crate::error::EngineError;
use crate::geometry::{Layout, Monitor, Point, Rect};

/// What to capture.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ScreenshotTarget {
    /// A whole display; the primary one when `None`.
    Monitor(Option<u32>),
    /// A rectangle in global desktop pixels.
    Region(Rect),
    /// A window by its `win_…` handle: its on-screen content area.
    Window(String),
}

/// A validated screenshot request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScreenshotSpec {
    /// What to capture.
    pub target: ScreenshotTarget,
    /// Encoding.
    pub format: ImageFormat,
    /// JPEG quality 1..=100.
    pub quality: u8,
    /// Draw the pointer in.
    pub include_cursor: bool,
    /// Rectangles to black out (secure fields) and numbered boxes to draw
    /// (set-of-mark), in global desktop pixels.
    pub paint: deskhand_encode::Paint,
}

/// An encoded screenshot.
#[derive(Debug, Clone)]
pub struct Screenshot {
    /// PNG or JPEG bytes.
    pub bytes: EncodedImage,
    /// Their format.
    pub format: ImageFormat,
    /// The captured rectangle in global desktop pixels.
    pub rect: Rect,
    /// The display it came from.
    pub monitor: Monitor,
    /// Whether a region (rather than a whole display) was asked for.
    pub is_region: bool,
    /// Its thumbnail for the person's timeline, when the host keeps them.
    pub(crate) thumbnail: Option<deskhand_encode::Thumbnail>,
}

/// Resolves the target to a rectangle and its display.
pub fn resolve(
    layout: &Layout,
    target: ScreenshotTarget,
) -> Result<(Rect, Monitor, bool), EngineError> {
    match target {
        ScreenshotTarget::Window(_) => Err(EngineError::invalid(
            "window_id",
            "windows are resolved by the desk",
        )),
        ScreenshotTarget::Monitor(index) => {
            let monitor = match index {
                Some(i) => layout.get(i).ok_or_else(|| {
                    EngineError::invalid(
                        "monitor",
                        format!(
                            "no display {i}; DISPLAY_INFO lists {}",
                            layout.monitors.len()
                        ),
                    )
                })?,
                None => layout
                    .primary()
                    .ok_or_else(|| EngineError::invalid("monitor", "no display is connected"))?,
            };
            Ok((monitor.rect, monitor.clone(), false))
        }
        ScreenshotTarget::Region(rect) => {
            let bounds = layout
                .bounds()
                .ok_or_else(|| EngineError::invalid("region", "no display is connected"))?;
            if !bounds.contains_rect(&rect) {
                return Err(EngineError::invalid(
                    "region",
                    format!(
                        "region {:?} is outside the desktop {:?}",
                        rect.corners(),
                        bounds.corners()
                    ),
                ));
            }
            let monitor = layout
                .best_for(&rect)
                .ok_or_else(|| EngineError::invalid("region", "region covers no display"))?;
            Ok((rect, monitor.clone(), true))
        }
    }
}

/// Captures and encodes on the desktop thread.
pub fn take(desk: &mut Desk, spec: ScreenshotSpec) -> Result<Screenshot, EngineError> {
    let layout = desk.layout()?;
    let own_images = desk
        .backend
        .capture
        .as_ref()
        .is_some_and(|c| c.captures_windows());
    // A window's own image where the OS keeps one, else its uncovered part
    // of the desktop.
    let (target, window) = match &spec.target {
        ScreenshotTarget::Window(handle) => {
            crate::windows::check_handle(handle)?;
            if own_images {
                let (id, rect) = desk.window_on_desktop(handle, &layout)?;
                (ScreenshotTarget::Region(rect), Some(id))
            } else {
                let rect = desk.visible_window_rect(handle, &layout)?;
                (ScreenshotTarget::Region(rect), None)
            }
        }
        other => (other.clone(), None),
    };
    let (rect, monitor, is_region) = resolve(&layout, target)?;
    let thumbnails = desk.thumbnails.clone();
    let mut thumbnail = None;
    let png_cache = &mut desk.png_cache;
    let capture = desk
        .backend
        .capture
        .as_mut()
        .ok_or(EngineError::NotSupported {
            feature: "screenshot",
        })?;
    let cursor = if spec.include_cursor {
        if !capture.supports_cursor() {
            return Err(EngineError::NotSupported {
                feature: "screenshot.cursor",
            });
        }
        capture.cursor_image()?
    } else {
        None
    };
    let started = std::time::Instant::now();
    let mut captured_at = started;
    let mut encoded = None;
    let origin = Point::new(rect.x, rect.y);
    let mut sink = |bitmap: &deskhand_encode::Bitmap<'_>| {
        captured_at = std::time::Instant::now();
        let owned;
        let bitmap = match spec.paint.is_empty() {
            true => bitmap,
            false => {
                owned = deskhand_encode::painted(bitmap, origin, &spec.paint);
                &deskhand_encode::Bitmap {
                    pixels: &owned,
                    ..*bitmap
                }
            }
        };
        thumbnail = thumbnails.of(bitmap);
        encoded = Some(encode(
            bitmap,
            origin,
            spec.format,
            spec.quality,
            cursor.as_ref(),
            png_cache,
        ));
    };
    match window.and_then(|id| capture.capture_window(id, rect, &mut sink)) {
        Some(done) => done?,
        None => capture.capture(rect, &mut sink)?,
    }
    let bytes = encoded.ok_or_else(|| {
        EngineError::Backend(crate::backend::BackendError::Failed(
            "capture produced no image".into(),
        ))
    })??;
    tracing::debug!(
        capture_ms = (captured_at - started).as_secs_f64() * 1000.0,
        encode_ms = captured_at.elapsed().as_secs_f64() * 1000.0,
        bytes = bytes.len(),
        "screenshot taken"
    );
    Ok(Screenshot {
        bytes,
        format: spec.format,
        rect,
        monitor,
        is_region,
        thumbnail,
    })
}
