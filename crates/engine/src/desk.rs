//! The desktop as the executor thread owns it: the backend, the cached
//! layout and the held-input ledger. Every input action runs here, one at
//! a time.

use std::ops::ControlFlow;
use std::sync::Arc;
use std::thread;
use std::time::Duration;

use crate::action::Action;
use crate::backend::NativeWindow;
use crate::backend::{Backend, Button, Input};
use crate::encode::StripeCache;
use crate::error::EngineError;
use crate::geometry::{Layout, Point, Rect};
use crate::handback::{HandBack, PausedReason};
use crate::keys::Key;
use crate::ledger::{Held, Ledger};
use crate::settings::DisplayChoice;
use crate::windows::WindowRegistry;

/// Pause between the clicks of a double or triple click: well inside any
/// toolkit's multi-click time, long enough to be seen as separate clicks.
const MULTI_CLICK_GAP: Duration = Duration::from_millis(20);

/// Pointer step while dragging: toolkits need motion events between press
/// and release to see a drag.
const DRAG_STEP_PX: f64 = 24.0;

/// Time step of a glide (`mouse_move` with `duration_ms`).
const GLIDE_STEP: Duration = Duration::from_millis(10);

/// The executor-owned desktop.
pub struct Desk {
    /// The backend.
    pub backend: Backend,
    /// What is held down.
    pub ledger: Ledger,
    /// Compressed PNG stripes of the last capture, for reuse.
    pub png_cache: StripeCache,
    /// Window handles minted since start.
    pub windows: WindowRegistry,
    /// Hand-back: what deskhand sends is logged here first, and every step
    /// checks whether the person took over.
    pub handback: Arc<HandBack>,
    /// The displays agents may see and act on (the person's settings).
    pub displays: DisplayChoice,
    /// The takeover indicator, checked before every act.
    pub(crate) indicator: Option<crate::takeover::SharedIndicator>,
    /// Thumbnails of what agents are shown, when the host keeps them.
    pub(crate) thumbnails: Arc<crate::thumbnails::Thumbnails>,
    /// Characters sent by the `type` under way (for `typed_characters`).
    typed: usize,
    /// The pointer was read by the check before the action and nothing was
    /// sent since: its first move need not read it again.
    pointer_fresh: bool,
    /// Nothing of the action under way was sent yet, and its first move
    /// makes the hand-back check (the person's input then refuses it).
    first_step: bool,
}

fn stopped(reason: PausedReason, typed_characters: Option<usize>) -> EngineError {
    EngineError::UserTookOver {
        effect: "stopped",
        reason,
        typed_characters,
    }
}

fn refused(reason: PausedReason, typed_characters: Option<usize>) -> EngineError {
    EngineError::UserTookOver {
        effect: "refused",
        reason,
        typed_characters,
    }
}

impl Desk {
    /// Wraps a backend.
    pub fn new(backend: Backend, handback: Arc<HandBack>) -> Self {
        Self {
            backend,
            ledger: Ledger::default(),
            png_cache: StripeCache::default(),
            windows: WindowRegistry::default(),
            handback,
            displays: DisplayChoice::All,
            indicator: None,
            thumbnails: Arc::default(),
            typed: 0,
            pointer_fresh: false,
            first_step: false,
        }
    }

    /// Whether the backend can send input now: while the desktop asks the
    /// person for it, `Pending`, before any check reads the pointer (the
    /// person's moves in the desktop's dialog are their answer, which the
    /// watcher says with [`WatchedInput::Answered`](crate::backend::WatchedInput)).
    fn input_ready(&mut self) -> Result<(), EngineError> {
        match self.backend.input.as_mut() {
            Some(input) => Ok(input.ready()?),
            None => Ok(()),
        }
    }

    /// The check before every synthetic call: has the person taken over,
    /// or has the takeover ended? (After it, the last pointer reading is
    /// not fresh any more.)
    fn step(&mut self) -> Result<(), EngineError> {
        self.pointer_fresh = false;
        self.first_step = false;
        if let Some(reason) = self.handback.tripped() {
            return Err(stopped(reason, None));
        }
        if self.handback.is_revoked() {
            return Err(EngineError::NotGranted {
                capability: "input",
                needed: "takeover",
            });
        }
        Ok(())
    }

    /// Where the pointer is now.
    pub fn pointer(&mut self) -> Result<crate::geometry::Point, EngineError> {
        Ok(self.backend.displays.cursor_position()?)
    }

    /// The displays agents may see and act on, read from the backend.
    pub fn layout(&mut self) -> Result<Layout, EngineError> {
        let all = self.backend.displays.monitors()?;
        Ok(Layout::new(self.displays.keep(all)))
    }

    /// Every display, the ones the person keeps private included (the
    /// takeover frame shows on all of them).
    pub fn full_layout(&mut self) -> Result<Layout, EngineError> {
        Ok(Layout::new(self.backend.displays.monitors()?))
    }

    /// Every top-level window as the backend reports it, bottom first,
    /// less those wholly on a display the person keeps private.
    fn native_windows(&mut self) -> Result<Vec<NativeWindow>, EngineError> {
        self.windows_listed(false)
    }

    /// The windows the refusal policy judges, topmost first: those of
    /// [`Self::list_windows`] and the ones a backend leaves out of that
    /// list but that can still take input (no handles: agents never see
    /// them).
    pub fn windows_for_refusal(&mut self) -> Result<Vec<(String, NativeWindow)>, EngineError> {
        let windows = self.windows_listed(true)?;
        Ok(windows
            .into_iter()
            .rev()
            .map(|w| (String::new(), w))
            .collect())
    }

    /// [`Self::native_windows`], of the backend's refusal list when
    /// `for_refusal`.
    fn windows_listed(&mut self, for_refusal: bool) -> Result<Vec<NativeWindow>, EngineError> {
        let windows = self
            .backend
            .windows
            .as_mut()
            .ok_or(EngineError::NotSupported {
                feature: "window.list",
            })?;
        let all = match for_refusal {
            true => windows.list_for_refusal()?,
            false => windows.list()?,
        };
        let listed: Vec<NativeWindow> = all.into_iter().map(crate::windows::bounded).collect();
        if self.displays == DisplayChoice::All {
            return Ok(listed);
        }
        // A window wholly on a private display does not exist for agents.
        let kept = self.layout()?;
        Ok(listed
            .into_iter()
            .filter(|w| {
                kept.monitors
                    .iter()
                    .any(|m| m.rect.overlap_area(&w.rect) > 0)
            })
            .collect())
    }

    /// Every top-level window, topmost first, with its handle.
    pub fn list_windows(&mut self) -> Result<Vec<(String, NativeWindow)>, EngineError> {
        let windows = self.native_windows()?;
        Ok(windows
            .into_iter()
            .rev()
            .map(|w| (self.windows.handle_for(&w), w))
            .collect())
    }

    /// The live window `handle` names, and the windows above it.
    pub(crate) fn resolve_window(
        &mut self,
        handle: &str,
    ) -> Result<(NativeWindow, Vec<NativeWindow>), EngineError> {
        let all = self.native_windows()?;
        let stale = || EngineError::WindowStale {
            window_id: handle.to_owned(),
        };
        let w = self
            .windows
            .resolve(handle, &all)
            .ok_or_else(stale)?
            .clone();
        let above = all
            .iter()
            .skip_while(|x| x.id != w.id)
            .skip(1)
            .filter(|x| !x.minimized)
            .cloned()
            .collect();
        Ok((w, above))
    }

    /// Focuses (and raises) the window `handle` names.
    pub fn focus_window(&mut self, handle: &str, raise: bool) -> Result<(), EngineError> {
        let (w, _) = self.resolve_window(handle)?;
        let windows = self
            .backend
            .windows
            .as_mut()
            .ok_or(EngineError::NotSupported {
                feature: "window.focus",
            })?;
        Ok(windows.focus(w.id, raise)?)
    }

    /// The on-screen rectangle of the window `handle` names, when its own
    /// content is what the screen shows there.
    pub fn visible_window_rect(
        &mut self,
        handle: &str,
        layout: &Layout,
    ) -> Result<Rect, EngineError> {
        let (_, above, rect) = self.on_desktop(handle, layout)?;
        if above.iter().any(|a| a.rect.overlap_area(&rect) > 0) {
            return Err(EngineError::WindowNotVisible {
                window_id: handle.to_owned(),
                reason: "covered",
            });
        }
        Ok(rect)
    }

    /// The window `handle` names, and the part of it on the desktop, for a
    /// capture of its own image (covered or not).
    pub fn window_on_desktop(
        &mut self,
        handle: &str,
        layout: &Layout,
    ) -> Result<(u64, Rect), EngineError> {
        let (w, _, rect) = self.on_desktop(handle, layout)?;
        Ok((w.id, rect))
    }

    /// The window `handle` names, the windows above it, and its part of
    /// the desktop; not visible when minimized or off every display.
    fn on_desktop(
        &mut self,
        handle: &str,
        layout: &Layout,
    ) -> Result<(NativeWindow, Vec<NativeWindow>, Rect), EngineError> {
        let (w, above) = self.resolve_window(handle)?;
        let not_visible = |reason| EngineError::WindowNotVisible {
            window_id: handle.to_owned(),
            reason,
        };
        if w.minimized {
            return Err(not_visible("minimized"));
        }
        let bounds = layout.bounds().ok_or_else(|| not_visible("offscreen"))?;
        let rect = w
            .rect
            .intersection(&bounds)
            .ok_or_else(|| not_visible("offscreen"))?;
        Ok((w, above, rect))
    }

    /// Checks every coordinate of `action` against the displays. Nothing is
    /// sent when one is outside.
    pub fn check_bounds(&mut self, action: &Action) -> Result<(), EngineError> {
        let points = action.points();
        if points.is_empty() {
            return Ok(());
        }
        let all = self.backend.displays.monitors_for_input()?;
        let layout = Layout::new(self.displays.keep(all));
        match points.into_iter().find(|p| !layout.contains(*p)) {
            Some(point) => Err(EngineError::OutOfBounds {
                point,
                displays: layout.monitors,
            }),
            None => Ok(()),
        }
    }

    /// Performs `action` for `session`. On a backend failure everything the
    /// session holds is released before the error is returned.
    pub fn perform(&mut self, session: &str, action: &Action) -> Result<(), EngineError> {
        let typing = matches!(action, Action::Type { .. } | Action::Paste { .. });
        if let Some(reason) = self.handback.tripped() {
            return Err(refused(reason, typing.then_some(0)));
        }
        self.input_ready()?;
        if self.handback.is_armed() {
            if action.starts_with_move() {
                // The first move checks the pointer as it moves.
                self.first_step = true;
            } else {
                // Before anything is sent: where is the pointer now?
                let p = self.backend.displays.cursor_position()?;
                if let Err(reason) = self.handback.check_pointer(p) {
                    return Err(refused(reason, typing.then_some(0)));
                }
                self.pointer_fresh = true;
            }
        }
        if self.handback.is_revoked() {
            return Err(EngineError::NotGranted {
                capability: "input",
                needed: "takeover",
            });
        }
        if self.handback.is_armed() {
            self.check_frame()?;
        }
        self.typed = 0;
        let mut result = self.perform_input(session, action);
        self.pointer_fresh = false;
        self.first_step = false;
        if let Err(EngineError::UserTookOver {
            typed_characters, ..
        }) = &mut result
            && matches!(action, Action::Type { .. } | Action::Paste { .. })
        {
            *typed_characters = Some(self.typed);
        }
        if result.is_err() {
            self.release_session(session);
        }
        result
    }

    /// The frame must show the takeover as it was put up: when another
    /// program moved or resized it, it is put back and this act is
    /// refused (nothing sent), so that input never runs unseen.
    fn check_frame(&mut self) -> Result<(), EngineError> {
        let Some(indicator) = &self.indicator else {
            return Ok(());
        };
        let found = indicator
            .lock()
            .map_err(|_| EngineError::ShuttingDown)?
            .verify()?;
        match found {
            crate::backend::FrameCheck::Intact => Ok(()),
            crate::backend::FrameCheck::Restored(what) => {
                tracing::warn!(
                    what,
                    "the takeover frame was disturbed: put back, act refused"
                );
                Err(EngineError::FrameDisturbed { what })
            }
        }
    }

    fn input(&mut self) -> Result<&mut Box<dyn Input>, EngineError> {
        self.backend
            .input
            .as_mut()
            .ok_or(EngineError::NotSupported { feature: "input" })
    }

    fn perform_input(&mut self, session: &str, action: &Action) -> Result<(), EngineError> {
        match action {
            Action::MoveTo(p) => self.move_to(*p),
            Action::Glide { to, duration } => self.glide(*to, *duration),
            Action::Click {
                at,
                button,
                count,
                modifiers,
            } => {
                self.move_opt(*at)?;
                self.press_keys(session, modifiers)?;
                for i in 0..*count {
                    if i > 0 {
                        thread::sleep(MULTI_CLICK_GAP);
                    }
                    self.press_button(session, *button)?;
                    self.release_button(*button)?;
                }
                self.release_keys(modifiers)
            }
            Action::ButtonDown { at, button } => {
                self.move_opt(*at)?;
                self.press_button(session, *button)
            }
            Action::ButtonUp { at, button } => {
                self.move_opt(*at)?;
                self.release_button(*button)
            }
            Action::Drag {
                path,
                button,
                modifiers,
            } => self.drag(session, path, *button, modifiers),
            Action::Scroll {
                at,
                direction,
                amount,
                modifiers,
            } => {
                self.move_opt(*at)?;
                self.press_keys(session, modifiers)?;
                self.step()?;
                self.handback.will_press_buttons(*amount as usize);
                self.input()?.scroll(*direction, *amount)?;
                self.release_keys(modifiers)
            }
            Action::Key { keys } => {
                self.press_keys(session, keys)?;
                self.release_keys(keys)
            }
            Action::HoldKey { keys, duration } => {
                self.press_keys(session, keys)?;
                // Checked every 10 ms: the person taking over releases.
                let until = std::time::Instant::now() + *duration;
                while let Some(left) = until.checked_duration_since(std::time::Instant::now()) {
                    self.step()?;
                    thread::sleep(left.min(GLIDE_STEP));
                }
                self.release_keys(keys)
            }
            Action::Type { text } | Action::Paste { text, .. } => {
                // In the ledger while it types: a crash or an error
                // mid-character releases what it held.
                self.ledger.pressed(session, Held::Typing);
                self.type_text(text)?;
                self.ledger.released(Held::Typing);
                Ok(())
            }
            Action::Wait { .. } => Ok(()),
        }
    }

    /// Types `text`; the hand-back check runs before every character, and
    /// `typed` counts the characters sent (a CR of a CRLF counts with it).
    fn type_text(&mut self, text: &str) -> Result<(), EngineError> {
        self.pointer_fresh = false;
        self.first_step = false;
        let handback = self.handback.clone();
        let mut stop = None;
        let mut at = 0;
        let input = self.input()?;
        let result = input.type_text(text, &mut |index, presses| {
            at = index;
            if let Some(reason) = handback.tripped() {
                stop = Some(stopped(reason, None));
                return ControlFlow::Break(());
            }
            if handback.is_revoked() {
                stop = Some(EngineError::NotGranted {
                    capability: "input",
                    needed: "takeover",
                });
                return ControlFlow::Break(());
            }
            handback.will_press_keys(presses);
            ControlFlow::Continue(())
        });
        self.typed = match (&result, &stop) {
            (Ok(()), None) => text.chars().count(),
            _ => at,
        };
        result?;
        stop.map_or(Ok(()), Err)
    }

    fn drag(
        &mut self,
        session: &str,
        path: &[Point],
        button: Button,
        modifiers: &[Key],
    ) -> Result<(), EngineError> {
        let Some((first, rest)) = path.split_first() else {
            return Err(EngineError::invalid(
                "path",
                "a drag needs at least two points",
            ));
        };
        self.move_to(*first)?;
        self.press_keys(session, modifiers)?;
        self.press_button(session, button)?;
        let mut from = *first;
        for to in rest {
            let (dx, dy) = (f64::from(to.x - from.x), f64::from(to.y - from.y));
            let steps = ((dx.hypot(dy) / DRAG_STEP_PX).ceil() as u32).max(1);
            for s in 1..=steps {
                let t = f64::from(s) / f64::from(steps);
                let p = Point::new(
                    from.x + (dx * t).round() as i32,
                    from.y + (dy * t).round() as i32,
                );
                self.move_to(p)?;
            }
            from = *to;
        }
        self.release_button(button)?;
        self.release_keys(modifiers)
    }

    /// Moves in steps of [`GLIDE_STEP`] from where the pointer is.
    fn glide(&mut self, to: Point, duration: Duration) -> Result<(), EngineError> {
        let from = self.backend.displays.cursor_position()?;
        let steps = (duration.as_millis() / GLIDE_STEP.as_millis()).max(1) as u32;
        let (dx, dy) = (f64::from(to.x - from.x), f64::from(to.y - from.y));
        for s in 1..=steps {
            if s > 1 {
                thread::sleep(GLIDE_STEP);
            }
            let t = f64::from(s) / f64::from(steps);
            self.move_to(Point::new(
                from.x + (dx * t).round() as i32,
                from.y + (dy * t).round() as i32,
            ))?;
        }
        Ok(())
    }

    fn move_opt(&mut self, at: Option<Point>) -> Result<(), EngineError> {
        match at {
            Some(p) => self.move_to(p),
            None => Ok(()),
        }
    }

    fn move_to(&mut self, p: Point) -> Result<(), EngineError> {
        let (fresh, first) = (self.pointer_fresh, self.first_step);
        self.step()?;
        if self.handback.is_armed() && !fresh {
            // Every step of a move checks where the pointer is (unless the
            // check before the action just did): a warp between two steps
            // is the person's.
            let took_over = |reason| match first {
                true => refused(reason, None),
                false => stopped(reason, None),
            };
            if let Some(within) = self.handback.guard() {
                // Checked by the display server as it moves the pointer.
                self.handback.will_move(p);
                if let Some(at) = self.input()?.move_pointer_if_within(within, p) {
                    let at = at?;
                    if at == p {
                        return Ok(());
                    }
                    // Not moved: the pointer was away from deskhand's last
                    // target. Away from all its recent ones, it is the
                    // person's; near an older one (each counts as
                    // deskhand's for a while), move as usual.
                    self.handback.check_pointer(at).map_err(took_over)?;
                    return Ok(self.input()?.move_pointer(p)?);
                }
            }
            let now = self.backend.displays.cursor_position()?;
            self.handback.check_pointer(now).map_err(took_over)?;
        }
        self.handback.will_move(p);
        Ok(self.input()?.move_pointer(p)?)
    }

    fn press_button(&mut self, session: &str, button: Button) -> Result<(), EngineError> {
        self.step()?;
        self.handback.will_press_buttons(1);
        self.ledger.pressed(session, Held::Button(button));
        Ok(self.input()?.button(button, true)?)
    }

    fn release_button(&mut self, button: Button) -> Result<(), EngineError> {
        self.input()?.button(button, false)?;
        self.ledger.released(Held::Button(button));
        Ok(())
    }

    fn press_keys(&mut self, session: &str, keys: &[Key]) -> Result<(), EngineError> {
        for key in keys {
            self.step()?;
            self.handback.will_press_keys(1);
            self.ledger.pressed(session, Held::Key(*key));
            self.input()?.key(*key, true)?;
        }
        Ok(())
    }

    fn release_keys(&mut self, keys: &[Key]) -> Result<(), EngineError> {
        for key in keys.iter().rev() {
            self.input()?.key(*key, false)?;
            self.ledger.released(Held::Key(*key));
        }
        Ok(())
    }

    /// Releases what a previous run left held (its ledger file), then keeps
    /// this run's ledger in the same file. Returns what was released.
    pub fn adopt_ledger_file(&mut self, path: std::path::PathBuf) -> Vec<Held> {
        let left = crate::ledger::read_file(&path);
        self.release(left.iter().rev().copied().collect());
        self.ledger.keep_in(path);
        left
    }

    /// Releases what `session` holds (disconnect, error).
    pub fn release_session(&mut self, session: &str) {
        let held = self.ledger.take_session(session);
        self.release(held);
    }

    /// Releases everything and gives back what typing remapped
    /// (shutdown).
    pub fn release_all(&mut self) {
        let held = self.ledger.take_all();
        self.release(held);
        if let Some(input) = self.backend.input.as_mut()
            && let Err(e) = input.restore_keyboard()
        {
            tracing::error!(error = %e, "could not give back remapped keys");
        }
    }

    fn release(&mut self, held: Vec<Held>) {
        let Some(input) = self.backend.input.as_mut() else {
            return;
        };
        for h in held {
            let result = match h {
                Held::Button(b) => input.button(b, false),
                Held::Key(k) => input.key(k, false),
                Held::Typing => input.release_typing(),
            };
            match result {
                Ok(()) => tracing::info!(?h, "released held input"),
                Err(e) => tracing::error!(?h, error = %e, "could not release held input"),
            }
        }
    }
}

#[cfg(test)]
#[path = "desk_tests.rs"]
mod tests;
