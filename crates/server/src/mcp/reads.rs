//! The tools that only read: `health_report`, `list_windows`,
//! `get_window_state`, `screenshot`, `clipboard_read`, and the
//! notification tools no backend offers yet.

use deskhand_engine::{ListedWindow, Paint, Screenshot, ScreenshotSpec, ScreenshotTarget};
use deskhand_protocol::ErrorCode;
use deskhand_protocol::doctor::Reader;
use deskhand_protocol::mcp::{
    Bounds, ClipboardText, ImageInfo, ImageKind, ListWindowsArgs, ScreenshotArgs, ScreenshotResult,
    SessionArgs, WindowList, WindowState, WindowStateArgs,
};
use deskhand_protocol::messages::ImageFormat;
use rmcp::model::{CallToolResult, ContentBlock};

use super::envelope::{Fail, structured};
use super::sessions::DriverSession;
use super::{Call, HealthSource, targets};

/// `health_report`: the doctor registry's report, with the clipboard as
/// the person's settings have it now.
pub fn health(call: &Call<'_>, source: &HealthSource) -> Result<CallToolResult, Fail> {
    let on = call.engine().clipboard_policy().enabled;
    Ok(structured(&source().for_reader(on, Reader::Command)))
}

/// The notification tools: no backend yet reads other apps'
/// notifications (X11 and the portals have no API for it).
pub fn no_notifications(backend: &str) -> Fail {
    let mut fail = Fail::new(
        ErrorCode::Unsupported,
        format!("the {backend} backend offers no API to other apps' notifications"),
    );
    fail.0.reason = Some("no_platform_api".into());
    fail
}

/// `list_windows`.
pub async fn list_windows(
    call: &Call<'_>,
    args: Result<ListWindowsArgs, Fail>,
) -> Result<CallToolResult, Fail> {
    let args = args?;
    let s = call.live_session(args.session_id.as_deref()).await?;
    let windows = targets::approved_windows(call.engine(), &s, args.include_minimized).await?;
    let rows = windows
        .iter()
        .filter(|w| {
            args.app
                .as_deref()
                .is_none_or(|a| targets::matches_app(&w.window, a))
        })
        .map(targets::info)
        .collect();
    Ok(structured(&WindowList {
        ok: true,
        windows: rows,
    }))
}

/// An image as result metadata and its content block: over HTTP the block
/// holds a slot the answer's bytes are written into (`images.rs`).
pub fn image_parts(call: &Call<'_>, shot: Screenshot) -> (ImageInfo, ContentBlock) {
    let r = shot.rect;
    let mime = shot.format.mime_type();
    let bytes = shot.bytes.len() as u64;
    let data: String = match &call.caller {
        super::Caller::Stdio => shot.bytes.base64_pieces().concat(),
        super::Caller::Token(_) | super::Caller::Connection(..) => {
            super::images::slot_for(shot.bytes)
        }
    };
    let info = ImageInfo {
        mime_type: mime.to_owned(),
        width: r.width,
        height: r.height,
        frame: Bounds {
            x: r.x,
            y: r.y,
            width: r.width,
            height: r.height,
        },
        bytes,
    };
    (info, ContentBlock::image(data, mime))
}

/// An image of `target` for `s`, with `paint` drawn on it.
pub async fn capture(
    call: &Call<'_>,
    s: &DriverSession,
    target: ScreenshotTarget,
    format: ImageFormat,
    quality: u8,
    paint: Paint,
) -> Result<Screenshot, Fail> {
    let spec = ScreenshotSpec {
        target,
        format,
        quality,
        include_cursor: false,
        paint,
    };
    Ok(call.engine().screenshot(&s.engine, spec).await?)
}

/// The secure fields of `w` known from `s`'s latest read of it, to black
/// out.
pub fn blackouts(call: &Call<'_>, s: &DriverSession, w: &ListedWindow) -> Paint {
    Paint {
        blackouts: call.engine().known_secure_bounds(&s.engine, w),
        marks: Vec::new(),
    }
}

/// `get_window_state`: the window, its accessibility tree (full,
/// skeleton or a region) and its screenshot. A tree that cannot be read
/// is reported in `tree_error`; a drill-down from a stale token fails the
/// call.
pub async fn window_state(
    call: &Call<'_>,
    args: Result<WindowStateArgs, Fail>,
) -> Result<CallToolResult, Fail> {
    let args = args?;
    let query = super::elements::query_of(&args)?;
    let skeleton = query.kind == deskhand_engine::elements::TreeKind::Skeleton;
    let s = call.live_session(args.target.session_id.as_deref()).await?;
    let w = targets::resolve(call.engine(), &s, &args.target, true)
        .await?
        .ok_or_else(|| Fail::invalid("no window named"))?;
    let mut state = WindowState {
        ok: true,
        window: targets::info(&w),
        screenshot: None,
        screenshot_error: None,
        tree: None,
        skeleton,
        root: args.root.clone(),
        window_elements: None,
        tree_error: None,
    };
    match super::elements::read(call, &s, &w, query).await {
        Ok(view) => {
            state.window_elements = Some(view.window_elements);
            state.tree = Some(super::elements::tree_read(view));
        }
        Err(e) if args.root.is_some() => return Err(e),
        Err(Fail(e)) => state.tree_error = Some(*e),
    }
    let mut content = Vec::new();
    if args.include_screenshot.unwrap_or(!skeleton) {
        let target = ScreenshotTarget::Window(w.handle.clone());
        match capture(
            call,
            &s,
            target,
            ImageFormat::Png,
            80,
            blackouts(call, &s, &w),
        )
        .await
        {
            Ok(shot) => {
                let (info, block) = image_parts(call, shot);
                state.screenshot = Some(info);
                content.push(block);
            }
            Err(Fail(e)) => state.screenshot_error = Some(*e),
        }
    }
    let mut result = structured(&state);
    result.content.extend(content);
    Ok(result)
}

/// `screenshot`: a window, or a display for a session granted the whole
/// desktop.
pub async fn screenshot(
    call: &Call<'_>,
    args: Result<ScreenshotArgs, Fail>,
) -> Result<CallToolResult, Fail> {
    let args = args?;
    let s = call.live_session(args.target.session_id.as_deref()).await?;
    let whole_desktop = s.apps == deskhand_engine::AppScope::All;
    let window = if args.target.is_given() || !whole_desktop {
        if args.display.is_some() {
            return Err(Fail::invalid("give a window or a display, not both"));
        }
        let w = targets::resolve(call.engine(), &s, &args.target, true)
            .await?
            .ok_or_else(|| Fail::invalid("no window named"))?;
        Some(w)
    } else {
        None
    };
    let marked = match (&window, args.marks.unwrap_or(false)) {
        (Some(w), true) => Some(call.engine().element_marks(&s.engine, w).await?),
        (None, true) => return Err(Fail::invalid("marks need a window target")),
        (_, false) => None,
    };
    let paint = match (&window, &marked) {
        (_, Some(m)) => super::elements::mark_paint(m),
        (Some(w), None) => blackouts(call, &s, w),
        (None, None) => Paint::default(),
    };
    let target = match &window {
        Some(w) => ScreenshotTarget::Window(w.handle.clone()),
        None => ScreenshotTarget::Monitor(args.display),
    };
    let quality = args.quality.unwrap_or(80);
    if !(1..=100).contains(&quality) {
        return Err(Fail::invalid("quality must be 1..=100"));
    }
    let format = match args.format.unwrap_or_default() {
        ImageKind::Png => ImageFormat::Png,
        ImageKind::Jpeg => ImageFormat::Jpeg,
    };
    let shot = capture(call, &s, target, format, quality, paint).await?;
    let (image, block) = image_parts(call, shot);
    let mut result = structured(&ScreenshotResult {
        ok: true,
        image,
        took_ms: call.elapsed_ms(),
        snapshot_id: marked.as_ref().map(|m| m.snapshot_id.clone()),
        marks: marked.map(super::elements::mark_rows),
    });
    result.content.push(block);
    Ok(result)
}

/// `clipboard_read`: only in a session granted clipboard reading; the
/// engine's policy (foreign reads approved by the host, concealed and
/// credential-looking text refused) applies on top.
pub async fn clipboard_read(
    call: &Call<'_>,
    args: Result<SessionArgs, Fail>,
) -> Result<CallToolResult, Fail> {
    let s = call.live_session(args?.session_id.as_deref()).await?;
    if !s.clipboard_read {
        return Err(Fail::new(
            ErrorCode::CapabilityNotConsented,
            "this session was not granted clipboard reading (start_session with clipboard_read)",
        ));
    }
    let text = call
        .engine()
        .clipboard_read(&s.engine, deskhand_engine::clipboard::DEFAULT_MAX_BYTES)
        .await?;
    Ok(structured(&ClipboardText { ok: true, text }))
}
