//! The MCP `computer` tool: OpenAI's computer actions run as one batch by
//! the computer adapters' runner (approval, frames, settle, halting at the
//! first failure), for a session granted the whole desktop. Each call
//! answers one fresh frame as an image block; later coordinates are its
//! pixels.

use std::collections::HashMap;

use deskhand_engine::frame::{DisplaySelect, VendorCap};
use deskhand_engine::{AppScope, FrameShot};
use deskhand_protocol::ErrorCode;
use deskhand_protocol::mcp::{ComputerArgs, ComputerDisplay, ComputerFrame, ComputerResult, Frame};
use rmcp::model::{CallToolResult, ContentBlock};

use super::envelope::{Fail, structured};
use super::{Call, Caller};
use crate::computer::batch::{Driver, Outcome};
use crate::computer::openai;

/// The largest encoded frame: some MCP clients refuse tool results over
/// 1 MB, and base64 makes 700 kB about 0.95 MB.
const MAX_FRAME_BYTES: usize = 700_000;

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
    let spec = frame_spec(&args)?;
    let body = serde_json::to_value(&args).unwrap_or_default();
    let frame = s.frame.clone();
    let driver = Driver {
        session: &s.engine,
        frame: &frame,
        http: None,
    };
    let (mut out, _) = openai::run_call(call.engine(), &driver, &body, spec).await;
    answer(call, &mut out)
}

/// The frame options of a call, as the computer endpoints take them.
fn frame_spec(args: &ComputerArgs) -> Result<deskhand_engine::FrameSpec, Fail> {
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
    query.insert("max_bytes".to_owned(), MAX_FRAME_BYTES.to_string());
    Ok(crate::computer::frame_spec(
        &query,
        VendorCap::None,
        DisplaySelect::All,
    )?)
}

/// The result: the frame's metadata and image, or the first failure (with
/// the image when one was taken).
fn answer(call: &Call<'_>, out: &mut Outcome) -> Result<CallToolResult, Fail> {
    let shot = out.frame.take();
    let image = shot.as_ref().map(|s| frame_info(s, out.note()));
    let block = shot.map(|s| image_block(call, s));
    let failure = out.failure.take().map(|f| (f.index, f.error));
    let error = failure.or_else(|| out.frame_error.take().map(|e| (usize::MAX, e)));
    let mut result = match (error, image) {
        (None, Some(frame)) => structured(&ComputerResult {
            ok: true,
            frame,
            timings_ms: out
                .timings
                .iter()
                .map(|t| (t.ms * 1000.0).round() / 1000.0)
                .collect(),
            settle_ms: out.settle_ms,
        }),
        (Some((index, error)), _) => {
            let mut fail = Fail::from(error);
            fail.0.failed_action_index = (index != usize::MAX).then_some(index);
            fail.into_result()
        }
        (None, None) => return Err(Fail::new(ErrorCode::Internal, "no frame was taken")),
    };
    result.content.extend(block);
    Ok(result)
}

fn frame_info(shot: &FrameShot, note: Option<&str>) -> ComputerFrame {
    let rect = |r: deskhand_engine::Rect| Frame {
        x: r.x,
        y: r.y,
        width: r.width,
        height: r.height,
    };
    ComputerFrame {
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

/// The frame as an image block: over HTTP a slot the answer's bytes are
/// written into as it leaves (`images.rs`), on stdio the data itself.
fn image_block(call: &Call<'_>, shot: FrameShot) -> ContentBlock {
    let mime = shot.format.mime_type();
    let data = match call.caller {
        Caller::Stdio => shot.bytes.base64_pieces().concat(),
        Caller::Token(_) => super::images::slot_for(shot.bytes),
    };
    ContentBlock::image(data, mime)
}
