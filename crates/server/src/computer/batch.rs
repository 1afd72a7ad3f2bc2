//! One batch of steps for one session: run in order, halted at the first
//! failure; `screenshot` markers are deferred; exactly one fresh image is
//! taken at the end (also after a failure), which becomes the session's
//! screenshot. A batch with any input step is an input batch: its first input
//! starts the session's takeover when it is off, and a batch that fails
//! before any input of it was sent ends the takeover it started (no red
//! frame stays up for an act that never happened).

use std::sync::Arc;
use std::time::Instant;

use deskhand_engine::approval::{ApprovalMode, Needs, SafetyCheck};
use deskhand_engine::shot::ShotPlan;
use deskhand_engine::{EngineError, Shot, ShotSpec};

use deskhand_engine::{Engine, Session};

use super::session::HttpSession;
use super::step::Step;

/// What a step cost.
#[derive(Debug, Clone, Copy, serde::Serialize)]
pub(crate) struct Timing {
    /// The step's index in the batch.
    pub index: usize,
    /// Milliseconds it took.
    pub ms: f64,
}

/// The step that failed and why.
#[derive(Debug)]
pub(crate) struct Failure {
    /// Its index in the batch.
    pub index: usize,
    /// What went wrong.
    pub error: EngineError,
}

/// Which image the batch answers with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Image {
    /// Always a fresh screenshot.
    Shot,
    /// A fresh screenshot unless the batch zoomed or read the cursor (the
    /// Anthropic tool answers those with the crop or the text alone).
    ShotUnlessAnswered,
}

/// What a batch did.
#[derive(Debug, Default)]
pub(crate) struct Outcome {
    /// Per executed step.
    pub timings: Vec<Timing>,
    /// The first failure, after which nothing ran.
    pub failure: Option<Failure>,
    /// The fresh screenshot.
    pub shot: Option<Shot>,
    /// Why no fresh screenshot could be taken.
    pub shot_error: Option<EngineError>,
    /// Milliseconds the fresh screenshot took.
    pub shot_ms: f64,
    /// The last zoom's crop.
    pub zoom: Option<Shot>,
    /// The last cursor position, in screenshot pixels.
    pub cursor: Option<[i64; 2]>,
    /// Milliseconds waited for the screen to settle after input.
    pub settle_ms: Option<f64>,
}

/// Longest wait for the screen to settle after an input batch.
const SETTLE_MAX: std::time::Duration = std::time::Duration::from_secs(1);

impl Outcome {
    /// How the image was made to fit its byte budget, when it was.
    pub fn note(&self) -> Option<&str> {
        self.zoom
            .iter()
            .chain(&self.shot)
            .find_map(|s| s.budget_note.as_deref())
    }
}

/// Whose batch it is: the engine's session and its last screenshot. An HTTP
/// session also starts its takeover with its first input and notes input
/// for the takeover's idle end; an MCP session must hold its takeover.
pub(crate) struct Driver<'a> {
    /// The engine's session.
    pub session: &'a Session,
    /// The last screenshot it was sent; the lock runs one batch at a time.
    pub plan: &'a tokio::sync::Mutex<Option<Arc<ShotPlan>>>,
    /// The HTTP session, for the computer endpoints.
    pub http: Option<&'a HttpSession>,
}

impl<'a> Driver<'a> {
    /// The driver of an HTTP session.
    pub fn http(hs: &'a HttpSession) -> Self {
        Self {
            session: &hs.session,
            plan: &hs.last_plan,
            http: Some(hs),
        }
    }
}

/// Ends the session's takeover when dropped armed: the request's future
/// was dropped mid-batch (the client went away), so its act stops at the
/// next step and what it holds is released.
struct Abandon<'a> {
    engine: &'a Arc<Engine>,
    session: &'a Session,
    armed: bool,
}

impl Drop for Abandon<'_> {
    fn drop(&mut self) {
        if self.armed {
            tracing::info!(session = %self.session.id, "client gone mid-batch: takeover ended");
            let engine = self.engine.clone();
            let session = self.session.clone();
            tokio::spawn(async move { engine.abandon_session(&session).await });
        }
    }
}

/// Runs `steps` for `d`, screenshots taken with `spec`, once approved (with
/// the provider's safety `checks`, which only the person can acknowledge).
pub(crate) async fn run(
    engine: &Arc<Engine>,
    d: &Driver<'_>,
    (steps, checks): (&[Step], &[SafetyCheck]),
    spec: ShotSpec,
    image: Image,
) -> Outcome {
    let mut last = d.plan.lock().await;
    let mut out = Outcome::default();
    if let Err(error) = approve(engine, d, steps, checks).await {
        out.failure = Some(Failure { index: 0, error });
        // A read the mode lets through unasked may still show the screen.
        if matches!(
            engine.approval_mode(),
            ApprovalMode::Allow | ApprovalMode::Write
        ) {
            take_shot(engine, d, spec, &mut last, &mut out).await;
        }
        return out;
    }
    let mut abandon = Abandon {
        engine,
        session: d.session,
        armed: steps.iter().any(|s| !s.is_read()),
    };
    let mut takeover_checked = false;
    let mut started_here = false;
    let mut sent = false;
    for (index, step) in steps.iter().enumerate() {
        let started = Instant::now();
        if !step.is_read() && !takeover_checked {
            takeover_checked = true;
            match ensure_takeover(engine, d).await {
                Ok(started) => started_here = started,
                Err(error) => {
                    out.failure = Some(Failure { index, error });
                    break;
                }
            }
        }
        let result = run_step(engine, d, step, last.clone(), spec, &mut out).await;
        sent |= result.is_ok() && !step.is_read();
        out.timings.push(Timing {
            index,
            ms: started.elapsed().as_secs_f64() * 1000.0,
        });
        if let Err(error) = result {
            if matches!(error, EngineError::LayoutChanged) {
                *last = None;
            }
            out.failure = Some(Failure { index, error });
            break;
        }
    }
    abandon.armed = false;
    if started_here && !sent {
        end_unused_takeover(engine, d, out.failure.as_ref()).await;
    }
    let answered = out.zoom.is_some() || out.cursor.is_some();
    let wants_shot = image == Image::Shot || !answered || out.failure.is_some();
    // Input was sent: the image is taken once the screen stopped changing,
    // not after a fixed delay (the last look is the screenshot itself).
    match (takeover_checked, wants_shot) {
        (true, true) => {
            let started = Instant::now();
            match engine.settled_shot(d.session, spec, SETTLE_MAX).await {
                Ok((shot, waited)) => {
                    out.settle_ms = Some(waited.as_secs_f64() * 1000.0);
                    out.shot_ms = started.elapsed().saturating_sub(waited).as_secs_f64() * 1000.0;
                    *last = Some(shot.plan.clone());
                    out.shot = Some(shot);
                }
                Err(e) => out.shot_error = Some(e),
            }
        }
        (true, false) => {
            if let Ok(waited) = engine.settle(spec.select, SETTLE_MAX).await {
                out.settle_ms = Some(waited.as_secs_f64() * 1000.0);
            }
        }
        (false, true) => take_shot(engine, d, spec, &mut last, &mut out).await,
        (false, false) => {}
    }
    out
}

/// The batch's approval: a read or an input call, its steps by name.
async fn approve(
    engine: &Engine,
    d: &Driver<'_>,
    steps: &[Step],
    checks: &[SafetyCheck],
) -> Result<(), EngineError> {
    let needs = if steps.iter().all(Step::is_read) {
        Needs::Read
    } else {
        Needs::Input
    };
    let names: Vec<&str> = steps.iter().map(Step::name).collect();
    engine.approve(d.session, needs, &names, checks).await
}

/// Takes the batch's fresh screenshot, which becomes the session's.
async fn take_shot(
    engine: &Engine,
    d: &Driver<'_>,
    spec: ShotSpec,
    last: &mut Option<Arc<ShotPlan>>,
    out: &mut Outcome,
) {
    let started = Instant::now();
    match engine.shot(d.session, spec).await {
        Ok(shot) => {
            *last = Some(shot.plan.clone());
            out.shot = Some(shot);
        }
        Err(e) => out.shot_error = Some(e),
    }
    out.shot_ms = started.elapsed().as_secs_f64() * 1000.0;
}

/// Ends the takeover this batch started when no input of it was sent: the
/// act failed first. A takeover the person paused stays (Continue shows)
/// until its idle end.
async fn end_unused_takeover(engine: &Engine, d: &Driver<'_>, failure: Option<&Failure>) {
    let paused = matches!(
        failure.map(|f| &f.error),
        Some(EngineError::UserTookOver { .. })
    );
    if failure.is_some() && !paused {
        tracing::debug!(session = %d.session.id, "the first act failed: its takeover ended");
        let _ = engine.takeover(d.session, false).await;
    }
}

/// Starts the session's takeover when it is off (its first input): the
/// indicator shows before anything is sent. True when it started now; its
/// idle time counts from now.
async fn ensure_takeover(engine: &Engine, d: &Driver<'_>) -> Result<bool, EngineError> {
    if engine.takeover_state(d.session).on {
        return Ok(false);
    }
    if d.http.is_none() {
        return Err(EngineError::NotGranted {
            capability: "input",
            needed: "takeover",
        });
    }
    let s = engine.takeover(d.session, true).await?;
    if s.on {
        if let Some(hs) = d.http {
            hs.touched_input(engine);
        }
        Ok(true)
    } else {
        // Refused without an error: say why (no indicator, no watcher).
        Err(EngineError::NotGranted {
            capability: "input",
            needed: "takeover",
        })
    }
}

async fn run_step(
    engine: &Engine,
    d: &Driver<'_>,
    step: &Step,
    last: Option<Arc<ShotPlan>>,
    spec: ShotSpec,
    out: &mut Outcome,
) -> Result<(), EngineError> {
    match step {
        Step::Screenshot => return Ok(()),
        Step::CursorPosition => {
            let plan = match last {
                Some(f) => f,
                None => Arc::new(ShotPlan::new(
                    &engine.layout(d.session).await?,
                    spec.select,
                    spec.limits,
                )?),
            };
            let (p, _) = engine.cursor(d.session).await?;
            out.cursor = Some(plan.to_shot(p).ok_or(EngineError::CoordinateOutOfBounds {
                point: [i64::from(p.x), i64::from(p.y)],
                shot_size: [plan.width, plan.height],
                why: "the pointer is on no display of the last screenshot",
            })?);
            return Ok(());
        }
        Step::Zoom(region) => {
            let last = last.ok_or_else(|| EngineError::NoShot {
                session: d.session.id.clone(),
            })?;
            out.zoom = Some(engine.zoom(d.session, last, *region, spec).await?);
            return Ok(());
        }
        _ => {}
    }
    let (actions, mapped) = step.actions(last.as_deref(), &d.session.id)?;
    for action in actions {
        let op = "computer.act";
        let result = match (&last, mapped) {
            (Some(f), true) => engine.act_in_shot(d.session, op, f.clone(), action).await,
            _ => engine.act(d.session, op, action).await,
        };
        if let Some(hs) = d.http.filter(|_| !step.is_read()) {
            hs.touched_input(engine);
        }
        result?;
    }
    Ok(())
}
