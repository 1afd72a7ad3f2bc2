//! Frames captured: every display of a [`FramePlan`] captured on the
//! desktop thread, scaled onto one canvas by `deskhand-encode` straight from
//! the captured buffer, and encoded; zooms the same way over a region.

use std::sync::Arc;
use std::time::Instant;

use deskhand_protocol::messages::ImageFormat;
use serde_json::json;

use crate::desk::Desk;
use crate::encode::{Canvas, EncodedImage, Placement, encode};
use crate::error::EngineError;
use crate::frame::{DisplaySelect, FrameLimits, FramePlan};
use crate::geometry::Point;
use crate::{Action, Engine, Session};

/// What frame to take.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FrameSpec {
    /// Which displays.
    pub select: DisplaySelect,
    /// How large at most.
    pub limits: FrameLimits,
    /// PNG or JPEG.
    pub format: ImageFormat,
    /// JPEG quality 1..=100.
    pub quality: u8,
}

/// An encoded frame and its geometry.
#[derive(Debug, Clone)]
pub struct FrameShot {
    /// The image bytes.
    pub bytes: EncodedImage,
    /// Their format.
    pub format: ImageFormat,
    /// Its geometry, for mapping later coordinates.
    pub plan: Arc<FramePlan>,
}

/// Captures every display of `plan` onto one canvas and encodes it.
fn render(
    desk: &mut Desk,
    plan: FramePlan,
    format: ImageFormat,
    quality: u8,
) -> Result<FrameShot, EngineError> {
    let started = Instant::now();
    let mut canvas = Canvas::new(plan.width, plan.height);
    let capture = desk
        .backend
        .capture
        .as_mut()
        .ok_or(EngineError::NotSupported {
            feature: "screenshot",
        })?;
    for d in &plan.displays {
        let at = Placement {
            x: d.pixel.x.max(0) as u32,
            y: d.pixel.y.max(0) as u32,
            width: d.pixel.width,
            height: d.pixel.height,
        };
        let mut drawn = Ok(());
        capture.capture(d.rect, &mut |frame| drawn = canvas.draw(frame, at))?;
        drawn?;
    }
    let composed = started.elapsed();
    let bytes = encode(
        &canvas.frame(),
        Point::new(0, 0),
        format,
        quality,
        None,
        &mut desk.png_cache,
    )?;
    tracing::debug!(
        compose_ms = composed.as_secs_f64() * 1000.0,
        total_ms = started.elapsed().as_secs_f64() * 1000.0,
        width = plan.width,
        height = plan.height,
        bytes = bytes.len(),
        "frame taken"
    );
    Ok(FrameShot {
        bytes,
        format,
        plan: Arc::new(plan),
    })
}

impl Engine {
    /// Takes a frame: the selected displays in one image within the limits.
    pub async fn frame(
        &self,
        session: &Session,
        spec: FrameSpec,
    ) -> Result<FrameShot, EngineError> {
        let job = move |desk: &mut Desk| {
            let plan = FramePlan::new(&desk.layout()?, spec.select, spec.limits)?;
            render(desk, plan, spec.format, spec.quality)
        };
        self.audited(
            session,
            "frame",
            false,
            job,
            |s| json!({"size": [s.plan.width, s.plan.height], "displays": s.plan.displays.len()}),
        )
        .await
    }

    /// Zooms into `region` (`[x1, y1, x2, y2]` in pixels of `frame`): that
    /// part of the desktop at up to full detail within `spec`'s limits.
    /// `frame` stays the frame later coordinates refer to.
    pub async fn zoom(
        &self,
        session: &Session,
        frame: Arc<FramePlan>,
        region: [i64; 4],
        spec: FrameSpec,
    ) -> Result<FrameShot, EngineError> {
        let job = move |desk: &mut Desk| {
            let layout = desk.layout()?;
            frame.check_layout(&layout)?;
            let rect = frame.region_to_global(region)?;
            let plan = frame.zoom(&layout, rect, spec.limits)?;
            render(desk, plan, spec.format, spec.quality)
        };
        self.audited(
            session,
            "zoom",
            false,
            job,
            |s| json!({"size": [s.plan.width, s.plan.height]}),
        )
        .await
    }

    /// Performs `action`, whose coordinates were mapped from `frame`'s
    /// pixels, refusing it (`DESKTOP_LAYOUT_CHANGED`) when the displays
    /// changed since that frame; otherwise as [`Engine::act`].
    pub async fn act_in_frame(
        &self,
        session: &Session,
        op: &str,
        frame: Arc<FramePlan>,
        action: Action,
    ) -> Result<(), EngineError> {
        let started = Instant::now();
        let target = crate::audit::action_target(&action);
        let result = self.act_inner(session, action, Some(frame)).await;
        self.record(session, op, target, result.as_ref().map(|_| ()), started);
        result
    }
}
