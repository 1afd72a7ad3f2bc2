//! The MCP `computer` tool: OpenAI's computer actions run as one batch by
//! the computer adapters' runner (approval, screenshots, settle, halting at the
//! first failure), for a session granted the whole desktop. Each call
//! answers one fresh screenshot as an image block; later coordinates are its
//! pixels. With `marks` the screenshot is taken again with the focused window's
//! elements numbered on it.

use std::collections::HashMap;

use deskhand_engine::elements::MarkSet;
use deskhand_engine::shot::{DisplaySelect, ShotPlan, VendorCap};
use deskhand_engine::{AppScope, ListedWindow, Shot, ShotSpec, WindowFilter};
use deskhand_protocol::ErrorCode;
use deskhand_protocol::mcp::{
    Bounds, ComputerArgs, ComputerDisplay, ComputerMark, ComputerMarks, ComputerResult,
    ComputerShot, ErrorObject,
};
use rmcp::model::{CallToolResult, ContentBlock};

use super::envelope::{Fail, structured};
use super::sessions::DriverSession;
use super::{Call, Caller};
use crate::computer::batch::{Driver, Outcome};
use crate::computer::openai;

/// The largest encoded screenshot: some MCP clients refuse tool results over
/// 1 MB, and base64 makes 700 kB about 0.95 MB.
const MAX_SHOT_BYTES: usize = 700_000;

/// `computer`.
pub async fn computer(
    call: &Call<'_>,
    args: Result<ComputerArgs, Fail>,
) -> Result<CallToolResult, Fail> {
    let args = args?;
    let s = call.live_session(args.session_id.as_deref()).await?;
    if s.apps != AppScope::All {
        return Err(Fail::new(
            ErrorCode::CapabilityNotConsented,
            "the computer tool sees and drives the whole desktop, and this session was \
             granted only some apps: use screenshot and the other tools",
        ));
    }
    if args.action.is_some() == args.actions.is_some() {
        return Err(Fail::invalid("send action or actions, one of them"));
    }
    let spec = shot_spec(&args)?;
    let body = serde_json::to_value(&args).unwrap_or_default();
    let last = s.last_plan.clone();
    let driver = Driver {
        session: &s.engine,
        plan: &last,
        http: None,
    };
    let (mut out, _) = openai::run_call(call.engine(), &driver, &body, spec).await;
    let marks = if args.marks == Some(true) && out.failure.is_none() && out.shot.is_some() {
        Some(marked_shot(call, &s, spec).await.map(|(shot, marks)| {
            out.shot = Some(shot);
            marks
        }))
    } else {
        None
    };
    answer(call, &mut out, marks)
}

/// The focused window (else the topmost) of `s`'s desktop.
async fn window_to_mark(call: &Call<'_>, s: &DriverSession) -> Result<ListedWindow, Fail> {
    let windows = call
        .engine()
        .list_windows(&s.engine, WindowFilter::default())
        .await?;
    let focused = windows.iter().position(|w| w.window.focused).unwrap_or(0);
    windows
        .into_iter()
        .nth(focused)
        .ok_or_else(|| Fail::new(ErrorCode::Unsupported, "no window is open to mark"))
}

/// The screenshot taken again with the focused window's interactive elements
/// numbered on it (and its secure fields blacked out); it becomes the
/// session's screenshot.
async fn marked_shot(
    call: &Call<'_>,
    s: &DriverSession,
    spec: ShotSpec,
) -> Result<(Shot, ComputerMarks), ErrorObject> {
    let engine = call.engine();
    let run = async {
        let window = window_to_mark(call, s).await?;
        let set = engine.element_marks(&s.engine, &window).await?;
        let mut last = s.last_plan.lock().await;
        let shot = engine
            .shot_painted(&s.engine, spec, super::elements::mark_paint(&set))
            .await?;
        *last = Some(shot.plan.clone());
        let marks = shot_marks(&shot.plan, &set);
        Ok::<_, Fail>((
            shot,
            ComputerMarks {
                window_id: window.handle,
                snapshot_id: set.snapshot_id,
                marks,
            },
        ))
    };
    run.await.map_err(|Fail(e)| *e)
}

/// The marks of `set` in the screenshot's pixels: the largest part of each
/// box the screenshot shows, and where its centre shows.
fn shot_marks(plan: &ShotPlan, set: &MarkSet) -> Vec<ComputerMark> {
    let area = |r: &deskhand_engine::Rect| u64::from(r.width) * u64::from(r.height);
    set.marks
        .iter()
        .filter_map(|m| {
            let b = plan.rect_to_shot(m.rect).into_iter().max_by_key(area)?;
            let center = plan
                .to_shot(m.rect.center())
                .unwrap_or_else(|| [i64::from(b.center().x), i64::from(b.center().y)]);
            Some(ComputerMark {
                mark: m.number,
                element_token: m.token.clone(),
                role: m.role.clone(),
                label: m.label.clone(),
                shot_box: wire_bounds(b),
                center,
            })
        })
        .collect()
}

fn wire_bounds(r: deskhand_engine::Rect) -> Bounds {
    Bounds {
        x: r.x,
        y: r.y,
        width: r.width,
        height: r.height,
    }
}

/// The screenshot options of a call, as the computer endpoints take them.
fn shot_spec(args: &ComputerArgs) -> Result<deskhand_engine::ShotSpec, Fail> {
    let mut query = HashMap::new();
    if let Some(d) = &args.display {
        query.insert("display".to_owned(), d.clone());
    }
    for (name, v) in [
        ("max_width", args.max_width),
        ("max_height", args.max_height),
    ] {
        if let Some(v) = v {
            query.insert(name.to_owned(), v.to_string());
        }
    }
    query.insert("max_bytes".to_owned(), MAX_SHOT_BYTES.to_string());
    Ok(crate::computer::shot_spec(
        &query,
        VendorCap::None,
        DisplaySelect::All,
    )?)
}

/// The result: the screenshot's metadata and image (and its marks, when asked
/// for), or the first failure (with the image when one was taken).
fn answer(
    call: &Call<'_>,
    out: &mut Outcome,
    marks: Option<Result<ComputerMarks, ErrorObject>>,
) -> Result<CallToolResult, Fail> {
    let shot = out.shot.take();
    let image = shot.as_ref().map(|s| shot_info(s, out.note()));
    let block = shot.map(|s| image_block(call, s));
    let failure = out.failure.take().map(|f| (f.index, f.error));
    let error = failure.or_else(|| out.shot_error.take().map(|e| (usize::MAX, e)));
    let mut result = match (error, image) {
        (None, Some(image)) => structured(&ComputerResult {
            ok: true,
            shot: image,
            timings_ms: out
                .timings
                .iter()
                .map(|t| (t.ms * 1000.0).round() / 1000.0)
                .collect(),
            settle_ms: out.settle_ms,
            marks: marks.as_ref().and_then(|m| m.as_ref().ok().cloned()),
            marks_error: marks.and_then(Result::err),
        }),
        (Some((index, error)), _) => {
            let mut fail = Fail::from(error);
            fail.0.failed_action_index = (index != usize::MAX).then_some(index);
            fail.into_result()
        }
        (None, None) => return Err(Fail::new(ErrorCode::Internal, "no screenshot was taken")),
    };
    result.content.extend(block);
    Ok(result)
}

fn shot_info(shot: &Shot, note: Option<&str>) -> ComputerShot {
    let rect = wire_bounds;
    ComputerShot {
        mime_type: shot.format.mime_type().to_owned(),
        width: shot.plan.width,
        height: shot.plan.height,
        displays: shot
            .plan
            .displays
            .iter()
            .map(|d| ComputerDisplay {
                index: d.index,
                name: d.name.clone(),
                primary: d.primary,
                rect: rect(d.rect),
                pixel: rect(d.pixel),
                scale: d.scale,
            })
            .collect(),
        note: note.map(str::to_owned),
    }
}

/// The screenshot as an image block: over HTTP a slot the answer's bytes are
/// written into as it leaves (`images.rs`), on stdio the data itself.
fn image_block(call: &Call<'_>, shot: Shot) -> ContentBlock {
    let mime = shot.format.mime_type();
    let data = match &call.caller {
        Caller::Stdio => shot.bytes.base64_pieces().concat(),
        Caller::Token(_) | Caller::Connection(..) => super::images::slot_for(shot.bytes),
    };
    ContentBlock::image(data, mime)
}
