//! The act tools: synthetic input in a takeover session, each checked on
//! the desktop thread right before it is sent (an approved app's window,
//! not covered, keys only into a focused approved window), with per-step
//! timing and an optional observation that never turns the act into an
//! error.

use std::time::{Duration, Instant};

use deskhand_engine::keys::{parse_chord, parse_key, parse_modifier};
use deskhand_engine::{
    Action, AppScope, Button, EngineError, Key, ListedWindow, Point, ScopeCheck, ScreenshotTarget,
    ScrollDirection,
};
use deskhand_protocol::ErrorCode;
use deskhand_protocol::mcp::{
    ActResult, BringToFrontArgs, ClickArgs, ClipboardWriteArgs, ClipboardWritten, DragArgs,
    ErrorObject, HotkeyArgs, MoveCursorArgs, Observe, Observed, PressKeyArgs, ScrollArgs,
    ScrollWay, Step, Target, TypeTextArgs,
};
use deskhand_protocol::messages::ImageFormat;
use rmcp::model::CallToolResult;

use super::envelope::Fail;
use super::sessions::DriverSession;
use super::{Call, reads, targets};

/// Characters typed per act when the client follows progress.
const TYPE_CHUNK: usize = 200;
/// A glide followed by progress is sent in legs of this length.
const GLIDE_LEG: Duration = Duration::from_millis(250);

/// The timed steps of an act: each from the end of the one before.
pub(super) struct Steps {
    done: Vec<Step>,
    lap: Instant,
}

impl Steps {
    /// Starts timing now.
    pub(super) fn new() -> Self {
        Self {
            done: Vec::new(),
            lap: Instant::now(),
        }
    }

    /// Ends the step `name` now.
    pub(super) fn mark(&mut self, name: &str) {
        let now = Instant::now();
        self.done.push(Step {
            step: name.to_owned(),
            ms: (now - self.lap).as_secs_f64() * 1000.0,
        });
        self.lap = now;
    }

    /// The steps so far.
    pub(super) fn take(&mut self) -> Vec<Step> {
        std::mem::take(&mut self.done)
    }
}

/// An act being built: its session, window and timed steps.
struct Act<'a, 'c> {
    call: &'a Call<'c>,
    session: DriverSession,
    window: Option<ListedWindow>,
    steps: Steps,
}

impl<'a, 'c> Act<'a, 'c> {
    /// Resolves the session and the target; refuses at once when the
    /// session has no takeover (nothing is sent).
    async fn begin(call: &'a Call<'c>, target: &Target, required: bool) -> Result<Self, Fail> {
        let session = call.live_session(target.session_id.as_deref()).await?;
        let t = call.engine().takeover_state(&session.engine);
        if !t.on && !t.paused {
            return Err(EngineError::NotGranted {
                capability: "input",
                needed: "takeover",
            }
            .into());
        }
        let window = targets::resolve(call.engine(), &session, target, required).await?;
        let mut act = Self {
            call,
            session,
            window,
            steps: Steps::new(),
        };
        act.step("resolve");
        Ok(act)
    }

    fn step(&mut self, name: &str) {
        self.steps.mark(name);
    }

    fn scope(&self) -> ScopeCheck {
        ScopeCheck {
            apps: self.session.apps.clone(),
            window: self.window.as_ref().map(|w| w.handle.clone()),
        }
    }

    async fn send(&mut self, op: &str, action: Action) -> Result<(), Fail> {
        let scope = Some(self.scope());
        let result = self
            .call
            .engine()
            .act_scoped(&self.session.engine, op, action, scope)
            .await;
        self.step("input");
        result.map_err(Fail::from)
    }

    /// The result, with what `observe` asked for.
    async fn finish(
        mut self,
        observe: Observe,
        took_cursor: bool,
        typed: Option<usize>,
    ) -> CallToolResult {
        let observed = self.observe(observe).await;
        let (observed, image) = match observed {
            Some((o, image)) => (Some(o), image),
            None => (None, None),
        };
        let result = ActResult {
            element_token: None,
            action: None,
            readback: None,
            diff: None,
            ok: true,
            effect: "sent".into(),
            verified: false,
            path: "synthetic".into(),
            took_cursor,
            window_id: self.window.as_ref().map(|w| w.handle.clone()),
            typed_characters: typed,
            took_ms: self.call.elapsed_ms(),
            steps: self.steps.take(),
            observe: observed,
        };
        let mut out = super::envelope::structured(&result);
        out.content.extend(image);
        out
    }

    async fn observe(
        &mut self,
        observe: Observe,
    ) -> Option<(Observed, Option<rmcp::model::ContentBlock>)> {
        if !observe.screenshot && !observe.tree {
            return None;
        }
        let mut o = Observed {
            screenshot: None,
            screenshot_error: None,
            tree: None,
            error: None,
        };
        if observe.tree {
            match &self.window {
                Some(w) => {
                    let query = deskhand_engine::elements::TreeQuery::full();
                    match super::elements::read(self.call, &self.session, w, query).await {
                        Ok(view) => o.tree = Some(super::elements::tree_read(view)),
                        Err(Fail(e)) => o.error = Some(*e),
                    }
                }
                None => {
                    o.error = Some(ErrorObject::new(
                        ErrorCode::AmbiguousWindowTarget,
                        "name the window whose tree to observe (app, pid or window_id)",
                    ))
                }
            }
        }
        let mut image = None;
        if observe.screenshot {
            let target = match (&self.window, &self.session.apps) {
                (Some(w), _) => Some(ScreenshotTarget::Window(w.handle.clone())),
                (None, AppScope::All) => Some(ScreenshotTarget::Monitor(None)),
                (None, _) => None,
            };
            match target {
                Some(t) => {
                    let paint = match &self.window {
                        Some(w) => reads::blackouts(self.call, &self.session, w),
                        None => deskhand_engine::Paint::default(),
                    };
                    let shot =
                        reads::capture(self.call, &self.session, t, ImageFormat::Png, 80, paint);
                    match shot.await {
                        Ok(shot) => {
                            let (info, block) = reads::image_parts(self.call, shot);
                            o.screenshot = Some(info);
                            image = Some(block);
                        }
                        Err(Fail(e)) => o.screenshot_error = Some(*e),
                    }
                }
                None => {
                    o.screenshot_error = Some(ErrorObject::new(
                        ErrorCode::AmbiguousWindowTarget,
                        "name the window to observe (app, pid or window_id)",
                    ))
                }
            }
            self.step("observe");
        }
        Some((o, image))
    }
}

fn modifiers(names: &[String]) -> Result<Vec<Key>, Fail> {
    names
        .iter()
        .map(|n| {
            parse_modifier(n).ok_or_else(|| {
                Fail::invalid(format!(
                    "modifier {:?} is not shift, ctrl, alt or super",
                    deskhand_protocol::mcp::app_text(n, 32)
                ))
            })
        })
        .collect()
}

/// `click`, `double_click`, `right_click`.
pub async fn click(
    call: &Call<'_>,
    args: Result<ClickArgs, Fail>,
    count: u8,
    button: Button,
) -> Result<CallToolResult, Fail> {
    let args = args?;
    let mods = modifiers(&args.modifiers)?;
    let at = match (&args.element_token, args.x, args.y) {
        (Some(token), None, None) if count == 1 && button == Button::Left && mods.is_empty() => {
            let session = args.target.session_id.as_deref();
            return super::elements::click(call, session, token, args.observe).await;
        }
        (Some(_), None, None) => {
            return Err(Fail::invalid(
                "an element token takes a plain click: its action has no count, button or modifiers",
            ));
        }
        (None, Some(x), Some(y)) => Point::new(x, y),
        _ => return Err(Fail::invalid("give element_token, or x and y")),
    };
    let mut act = Act::begin(call, &args.target, false).await?;
    let op = match (count, button) {
        (2, _) => "double_click",
        (_, Button::Right) => "right_click",
        _ => "click",
    };
    let action = Action::Click {
        at: Some(at),
        button,
        count,
        modifiers: mods,
    };
    act.send(op, action).await?;
    Ok(act.finish(args.observe, true, None).await)
}

/// `type_text`: typed exactly; in pieces with progress notifications when
/// the client asked for progress.
pub async fn type_text(
    call: &Call<'_>,
    args: Result<TypeTextArgs, Fail>,
) -> Result<CallToolResult, Fail> {
    let args = args?;
    if args.text.is_empty() {
        return Err(Fail::invalid("text is empty"));
    }
    if let Some(token) = &args.element_token {
        let session = args.target.session_id.as_deref();
        return super::elements::type_text(call, session, token, args.text, args.observe).await;
    }
    let mut act = Act::begin(call, &args.target, false).await?;
    let chars: Vec<char> = args.text.chars().collect();
    let total = chars.len();
    let chunk = if call.progress().is_some() {
        TYPE_CHUNK
    } else {
        total
    };
    let mut typed = 0;
    for piece in chars.chunks(chunk) {
        let text: String = piece.iter().collect();
        if let Err(Fail(mut e)) = act.send("type_text", Action::Type { text }).await {
            if let Some(n) = e.typed_characters {
                e.typed_characters = Some(typed + n);
            } else if typed > 0 {
                e.typed_characters = Some(typed);
            }
            return Err(Fail(e));
        }
        typed += piece.len();
        if chunk < total {
            call.notify_progress(typed as f64, total as f64).await;
        }
    }
    Ok(act.finish(args.observe, false, Some(typed)).await)
}

/// `press_key`: a key or a chord.
pub async fn press_key(
    call: &Call<'_>,
    args: Result<PressKeyArgs, Fail>,
) -> Result<CallToolResult, Fail> {
    let args = args?;
    let keys = parse_chord(&args.key)
        .map_err(|e| Fail::invalid(format!("key: {}", deskhand_protocol::mcp::app_text(&e, 80))))?;
    let mut act = Act::begin(call, &args.target, false).await?;
    act.send("press_key", Action::Key { keys }).await?;
    Ok(act.finish(args.observe, false, None).await)
}

/// `hotkey`: keys pressed together.
pub async fn hotkey(
    call: &Call<'_>,
    args: Result<HotkeyArgs, Fail>,
) -> Result<CallToolResult, Fail> {
    let args = args?;
    if args.keys.is_empty() || args.keys.len() > 8 {
        return Err(Fail::invalid("keys must list 1 to 8 key names"));
    }
    let keys = args
        .keys
        .iter()
        .map(|k| {
            parse_key(k).ok_or_else(|| {
                Fail::invalid(format!(
                    "{:?} is not a key name",
                    deskhand_protocol::mcp::app_text(k, 32)
                ))
            })
        })
        .collect::<Result<Vec<_>, _>>()?;
    let mut act = Act::begin(call, &args.target, false).await?;
    act.send("hotkey", Action::Key { keys }).await?;
    Ok(act.finish(args.observe, false, None).await)
}

/// `scroll`.
pub async fn scroll(
    call: &Call<'_>,
    args: Result<ScrollArgs, Fail>,
) -> Result<CallToolResult, Fail> {
    let args = args?;
    let amount = args.amount.unwrap_or(3);
    if !(1..=50).contains(&amount) {
        return Err(Fail::invalid("amount must be 1..=50"));
    }
    let direction = match args.direction {
        ScrollWay::Up => ScrollDirection::Up,
        ScrollWay::Down => ScrollDirection::Down,
        ScrollWay::Left => ScrollDirection::Left,
        ScrollWay::Right => ScrollDirection::Right,
    };
    let mut act = Act::begin(call, &args.target, false).await?;
    let action = Action::Scroll {
        at: Some(Point::new(args.x, args.y)),
        direction,
        amount,
        modifiers: Vec::new(),
    };
    act.send("scroll", action).await?;
    Ok(act.finish(args.observe, true, None).await)
}

/// `drag`: both ends in one approved window (the one under `from` when
/// the call names none).
pub async fn drag(call: &Call<'_>, args: Result<DragArgs, Fail>) -> Result<CallToolResult, Fail> {
    let args = args?;
    let mut act = Act::begin(call, &args.target, false).await?;
    let from = Point::new(args.from.x, args.from.y);
    if act.window.is_none() {
        let windows = targets::approved_windows(call.engine(), &act.session, false).await?;
        act.window = windows.into_iter().find(|w| w.window.rect.contains(from));
    }
    let action = Action::Drag {
        path: vec![from, Point::new(args.to.x, args.to.y)],
        button: Button::Left,
        modifiers: Vec::new(),
    };
    act.send("drag", action).await?;
    Ok(act.finish(args.observe, true, None).await)
}

/// `move_cursor`: a jump, or a glide over `duration_ms` (in legs with
/// progress when the client asked for progress).
pub async fn move_cursor(
    call: &Call<'_>,
    args: Result<MoveCursorArgs, Fail>,
) -> Result<CallToolResult, Fail> {
    let args = args?;
    let to = Point::new(args.x, args.y);
    let duration = Duration::from_millis(u64::from(args.duration_ms.unwrap_or(0)));
    if duration > deskhand_engine::action::MAX_WAIT {
        return Err(Fail::invalid("duration_ms must be at most 5000"));
    }
    let mut act = Act::begin(call, &args.target, false).await?;
    if duration.is_zero() {
        act.send("move_cursor", Action::MoveTo(to)).await?;
        return Ok(act.finish(Observe::default(), true, None).await);
    }
    let legs = if call.progress().is_some() {
        duration.as_millis().div_ceil(GLIDE_LEG.as_millis()).max(1) as u32
    } else {
        1
    };
    let (start, _) = call.engine().cursor(&act.session.engine).await?;
    for leg in 1..=legs {
        let f = f64::from(leg) / f64::from(legs);
        let lerp = |a: i32, b: i32| a + ((f64::from(b - a)) * f).round() as i32;
        let point = Point::new(lerp(start.x, to.x), lerp(start.y, to.y));
        let action = Action::Glide {
            to: point,
            duration: duration / legs,
        };
        act.send("move_cursor", action).await?;
        if legs > 1 {
            call.notify_progress(f64::from(leg), f64::from(legs)).await;
        }
    }
    Ok(act.finish(Observe::default(), true, None).await)
}

/// `bring_to_front`: raises and focuses an approved app's window.
pub async fn bring_to_front(
    call: &Call<'_>,
    args: Result<BringToFrontArgs, Fail>,
) -> Result<CallToolResult, Fail> {
    let args = args?;
    let mut act = Act::begin(call, &args.target, true).await?;
    let handle = act
        .window
        .as_ref()
        .map(|w| w.handle.clone())
        .ok_or_else(|| Fail::invalid("no window named"))?;
    call.engine()
        .focus_window(&act.session.engine, handle, true)
        .await?;
    act.step("input");
    Ok(act.finish(Observe::default(), false, None).await)
}

/// `clipboard_write`: the engine's size limits and policy apply.
pub async fn clipboard_write(
    call: &Call<'_>,
    args: Result<ClipboardWriteArgs, Fail>,
) -> Result<CallToolResult, Fail> {
    let args = args?;
    let s = call.live_session(args.session_id.as_deref()).await?;
    let length = args.text.chars().count();
    call.engine()
        .clipboard_write(
            &s.engine,
            args.text,
            deskhand_engine::clipboard::DEFAULT_MAX_BYTES,
        )
        .await?;
    Ok(super::envelope::structured(&ClipboardWritten {
        ok: true,
        length,
    }))
}
