//! Screenshots captured: every display of a [`ShotPlan`] captured on the
//! desktop thread, scaled onto one canvas by `deskhand-encode` straight from
//! the captured buffer, and encoded; zooms the same way over a region.

use std::sync::Arc;
use std::time::{Duration, Instant};

use deskhand_protocol::messages::ImageFormat;
use serde_json::{Value, json};

use crate::desk::Desk;
use crate::encode::{Canvas, EncodedImage, Mark, Paint, Placement, encode};
use crate::error::EngineError;
use crate::geometry::Point;
use crate::shot::{DisplaySelect, ShotLimits, ShotPlan};
use crate::{Action, Engine, Session};

/// What screenshot to take.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ShotSpec {
    /// Which displays.
    pub select: DisplaySelect,
    /// How large at most.
    pub limits: ShotLimits,
    /// PNG or JPEG.
    pub format: ImageFormat,
    /// JPEG quality 1..=100.
    pub quality: u8,
    /// The client's limit on the encoded image, if any.
    pub max_bytes: Option<usize>,
}

/// An encoded screenshot and its geometry.
#[derive(Debug, Clone)]
pub struct Shot {
    /// The image bytes.
    pub bytes: EncodedImage,
    /// Their format.
    pub format: ImageFormat,
    /// Its geometry, for mapping later coordinates.
    pub plan: Arc<ShotPlan>,
    /// How it was made smaller to fit the byte budget, when it was.
    pub budget_note: Option<String>,
    /// Its thumbnail for the person's timeline, when the host keeps them.
    pub(crate) thumbnail: Option<deskhand_encode::Thumbnail>,
}

/// The backend's capture, or why there is none.
fn capture_of(desk: &mut Desk) -> Result<&mut Box<dyn crate::backend::Capture>, EngineError> {
    desk.backend
        .capture
        .as_mut()
        .ok_or(EngineError::NotSupported {
            feature: "screenshot",
        })
}

/// Captures every display of `plan` onto one canvas and draws `paint`
/// (in global desktop pixels) onto it.
fn compose(desk: &mut Desk, plan: &ShotPlan, paint: &Paint) -> Result<Canvas, EngineError> {
    compose_hashed(desk, plan, paint, None)
}

/// [`compose`], feeding every captured display's rows to `hasher` too
/// (see [`hash_rows`]).
fn compose_hashed(
    desk: &mut Desk,
    plan: &ShotPlan,
    paint: &Paint,
    mut hasher: Option<&mut twox_hash::XxHash3_128>,
) -> Result<Canvas, EngineError> {
    let mut canvas = Canvas::new(plan.width, plan.height);
    let capture = capture_of(desk)?;
    for d in &plan.displays {
        let at = Placement {
            x: d.pixel.x.max(0) as u32,
            y: d.pixel.y.max(0) as u32,
            width: d.pixel.width,
            height: d.pixel.height,
        };
        let mut drawn = Ok(());
        capture.capture(d.rect, &mut |bitmap| {
            if let Some(h) = hasher.as_deref_mut() {
                hash_rows(h, bitmap);
            }
            drawn = canvas.draw(bitmap, at);
        })?;
        drawn?;
    }
    if !paint.is_empty() {
        canvas.paint(&in_shot_pixels(plan, paint));
    }
    Ok(canvas)
}

/// `paint` with its rectangles moved from global desktop pixels to the
/// screenshot's pixels (a rectangle across two displays in two parts).
fn in_shot_pixels(plan: &ShotPlan, paint: &Paint) -> Paint {
    Paint {
        blackouts: paint
            .blackouts
            .iter()
            .flat_map(|r| plan.rect_to_shot(*r))
            .collect(),
        marks: paint
            .marks
            .iter()
            .flat_map(|m| {
                let number = m.number;
                plan.rect_to_shot(m.rect)
                    .into_iter()
                    .map(move |rect| Mark { number, rect })
            })
            .collect(),
    }
}

/// How many times a screenshot over its byte budget is made smaller.
const BUDGET_TRIES: usize = 6;
/// Each smaller try scales the screenshot by this much.
const BUDGET_SHRINK: f64 = 0.75;
/// The JPEG quality of a screenshot re-encoded for its byte budget.
const BUDGET_JPEG_QUALITY: u8 = 75;

/// Captures and encodes the screenshot `replan` makes within `spec`'s limits;
/// over `spec.max_bytes`, re-encoded as JPEG, then at smaller scales, and
/// the shot says so.
fn render(
    desk: &mut Desk,
    spec: ShotSpec,
    paint: &Paint,
    replan: impl Fn(&mut Desk, ShotLimits) -> Result<ShotPlan, EngineError>,
) -> Result<Shot, EngineError> {
    render_from(desk, spec, paint, replan, None)
}

/// [`render`], its first try from `first` (a plan and its canvas already
/// captured) when given.
fn render_from(
    desk: &mut Desk,
    spec: ShotSpec,
    paint: &Paint,
    replan: impl Fn(&mut Desk, ShotLimits) -> Result<ShotPlan, EngineError>,
    mut first: Option<(ShotPlan, Canvas)>,
) -> Result<Shot, EngineError> {
    let started = Instant::now();
    let mut limits = spec.limits;
    let (mut format, mut quality) = (spec.format, spec.quality);
    let mut note = None;
    for _ in 0..BUDGET_TRIES {
        let (plan, canvas) = match first.take() {
            Some(captured) => captured,
            None => {
                let plan = replan(desk, limits)?;
                let canvas = compose(desk, &plan, paint)?;
                (plan, canvas)
            }
        };
        let bytes = encode(
            &canvas.bitmap(),
            Point::new(0, 0),
            format,
            quality,
            None,
            &mut desk.png_cache,
        )?;
        let over = spec.max_bytes.is_some_and(|max| bytes.len() > max);
        tracing::debug!(
            ms = started.elapsed().as_secs_f64() * 1000.0,
            width = plan.width,
            height = plan.height,
            bytes = bytes.len(),
            over,
            "screenshot taken"
        );
        if !over {
            return Ok(Shot {
                bytes,
                format,
                plan: Arc::new(plan),
                budget_note: note,
                thumbnail: desk.thumbnails.of(&canvas.bitmap()),
            });
        }
        let max = spec.max_bytes.unwrap_or(usize::MAX);
        if format == ImageFormat::Png {
            let q = BUDGET_JPEG_QUALITY;
            note = Some(format!(
                "the PNG was {} bytes, over the {max}-byte budget: sent as JPEG q{q}",
                bytes.len()
            ));
            (format, quality) = (ImageFormat::Jpeg, q);
        } else {
            let shrink = |v: u32| ((f64::from(v) * BUDGET_SHRINK) as u32).max(16);
            limits.max_width = shrink(plan.width);
            limits.max_height = shrink(plan.height);
            note = Some(format!(
                "over the {max}-byte budget: sent as JPEG q{quality} at {}x{} at most",
                limits.max_width, limits.max_height
            ));
        }
    }
    Err(EngineError::TooLarge {
        what: "the screenshot",
        bytes: None,
        max_bytes: spec.max_bytes.unwrap_or_default() as u64,
    })
}

/// Time between the captures compared while waiting for the screen to
/// settle.
const SETTLE_INTERVAL: Duration = Duration::from_millis(10);

/// Feeds every fourth row of a captured display to `hasher`: a cheap
/// fingerprint of what it shows (a change of a few rows is caught by the
/// next comparison or the one after).
fn hash_rows(hasher: &mut twox_hash::XxHash3_128, f: &crate::encode::Bitmap<'_>) {
    let row = f.width as usize * 4;
    for r in f.pixels.chunks(f.stride).take(f.height as usize).step_by(4) {
        hasher.write(&r[..row.min(r.len())]);
    }
}

/// The fingerprint of what the displays of `plan` show (captured, not
/// scaled).
fn plan_fingerprint(desk: &mut Desk, plan: &ShotPlan) -> Result<u128, EngineError> {
    let capture = capture_of(desk)?;
    let mut hasher = twox_hash::XxHash3_128::new();
    for d in &plan.displays {
        capture.capture(d.rect, &mut |f| hash_rows(&mut hasher, f))?;
    }
    Ok(hasher.finish_128())
}

/// The fingerprint of what the displays of `select` show.
fn screen_fingerprint(desk: &mut Desk, select: DisplaySelect) -> Result<u128, EngineError> {
    let full = ShotLimits {
        max_width: u32::MAX,
        max_height: u32::MAX,
        vendor: crate::shot::VendorCap::None,
    };
    let plan = ShotPlan::new(&desk.layout()?, select, full)?;
    plan_fingerprint(desk, &plan)
}

/// One look of [`Engine::settled_shot`].
enum Settle {
    /// The screen differs from the last look: its fingerprint.
    Changed(u128),
    /// It did not (or time is up): the screenshot.
    Taken(Shot),
}

/// Looks at the screenshot's displays: the first look only fingerprints them
/// (it is compared, never sent); a later one also captures the canvas and
/// encodes it when it matches `prior` or the wait is over, else returns
/// its fingerprint.
fn settle_step(
    desk: &mut Desk,
    spec: ShotSpec,
    prior: Option<u128>,
    late: bool,
) -> Result<Settle, EngineError> {
    let plan = ShotPlan::new(&desk.layout()?, spec.select, spec.limits)?;
    if prior.is_none() && !late {
        return plan_fingerprint(desk, &plan).map(Settle::Changed);
    }
    let mut hasher = twox_hash::XxHash3_128::new();
    let canvas = compose_hashed(desk, &plan, &Paint::default(), Some(&mut hasher))?;
    let print = hasher.finish_128();
    if prior != Some(print) && !late {
        return Ok(Settle::Changed(print));
    }
    let replan = |desk: &mut Desk, limits| ShotPlan::new(&desk.layout()?, spec.select, limits);
    let paint = Paint::default();
    render_from(desk, spec, &paint, replan, Some((plan, canvas))).map(Settle::Taken)
}

impl Engine {
    /// Waits until the displays of `select` stopped changing (two captures
    /// 10 ms apart look the same), at most `max`; returns how
    /// long it waited. Used after input, instead of a fixed sleep.
    pub async fn settle(
        &self,
        select: DisplaySelect,
        max: Duration,
    ) -> Result<Duration, EngineError> {
        let started = Instant::now();
        let mut last = None;
        loop {
            let print = self
                .exec
                .run(move |desk| screen_fingerprint(desk, select))
                .await??;
            if last == Some(print) || started.elapsed() >= max {
                return Ok(started.elapsed());
            }
            last = Some(print);
            tokio::time::sleep(SETTLE_INTERVAL.min(max.saturating_sub(started.elapsed()))).await;
        }
    }

    /// Waits until the screenshot's displays stopped changing (two captures
    /// 10 ms apart look the same), at most `max`, and answers the last
    /// capture as the screenshot: one capture fewer than [`Self::settle`] then
    /// [`Self::shot`]. Returns the screenshot and how long it waited before
    /// the look that became the screenshot.
    pub async fn settled_shot(
        &self,
        session: &Session,
        spec: ShotSpec,
        max: Duration,
    ) -> Result<(Shot, Duration), EngineError> {
        let started = Instant::now();
        let mut last = None;
        loop {
            let looking = started.elapsed();
            let (prior, late) = (last, looking >= max);
            let step = self
                .exec
                .run(move |desk| settle_step(desk, spec, prior, late))
                .await
                .and_then(|r| r);
            match step {
                Ok(Settle::Changed(print)) => last = Some(print),
                Ok(Settle::Taken(mut shot)) => {
                    let target = json!({"size": [shot.plan.width, shot.plan.height],
                                        "displays": shot.plan.displays.len()});
                    self.record(session, "frame", target, Ok(()), started);
                    self.thumbnails.keep(&session.id, shot.thumbnail.take());
                    return Ok((shot, looking));
                }
                Err(e) => {
                    self.record(session, "frame", Value::Null, Err(&e), started);
                    return Err(e);
                }
            }
            tokio::time::sleep(SETTLE_INTERVAL.min(max.saturating_sub(started.elapsed()))).await;
        }
    }

    /// Takes a screenshot: the selected displays in one image within the limits.
    pub async fn shot(&self, session: &Session, spec: ShotSpec) -> Result<Shot, EngineError> {
        self.shot_painted(session, spec, Paint::default()).await
    }

    /// Takes a screenshot with `paint` (in global desktop pixels: blackouts,
    /// set-of-mark boxes) drawn onto it before it is encoded.
    pub async fn shot_painted(
        &self,
        session: &Session,
        spec: ShotSpec,
        paint: Paint,
    ) -> Result<Shot, EngineError> {
        let job = move |desk: &mut Desk| {
            render(desk, spec, &paint, |desk, limits| {
                ShotPlan::new(&desk.layout()?, spec.select, limits)
            })
        };
        let mut shot = self
            .audited(
                session,
                "frame",
                false,
                job,
                |s| json!({"size": [s.plan.width, s.plan.height], "displays": s.plan.displays.len()}),
            )
            .await?;
        self.thumbnails.keep(&session.id, shot.thumbnail.take());
        Ok(shot)
    }

    /// Zooms into `region` (`[x1, y1, x2, y2]` in pixels of `plan`'s screenshot): that
    /// part of the desktop at up to full detail within `spec`'s limits.
    /// `plan` stays the one later coordinates refer to.
    pub async fn zoom(
        &self,
        session: &Session,
        plan: Arc<ShotPlan>,
        region: [i64; 4],
        spec: ShotSpec,
    ) -> Result<Shot, EngineError> {
        let job = move |desk: &mut Desk| {
            let layout = desk.layout()?;
            plan.check_layout(&layout)?;
            let rect = plan.region_to_global(region)?;
            let paint = Paint::default();
            render(desk, spec, &paint, |_, limits| {
                plan.zoom(&layout, rect, limits)
            })
        };
        let mut shot = self
            .audited(
                session,
                "zoom",
                false,
                job,
                |s| json!({"size": [s.plan.width, s.plan.height]}),
            )
            .await?;
        self.thumbnails.keep(&session.id, shot.thumbnail.take());
        Ok(shot)
    }

    /// Performs `action`, whose coordinates were mapped from `plan`'s
    /// pixels, refusing it (`DESKTOP_LAYOUT_CHANGED`) when the displays
    /// changed since that screenshot; otherwise as [`Engine::act`].
    pub async fn act_in_shot(
        &self,
        session: &Session,
        op: &str,
        plan: Arc<ShotPlan>,
        action: Action,
    ) -> Result<(), EngineError> {
        let started = Instant::now();
        let target = crate::audit::action_target(&action);
        let result = self.act_inner(session, action, None, Some(plan)).await;
        self.record(session, op, target, result.as_ref().map(|_| ()), started);
        result
    }
}
