//! Hand-back detection (driver contract §4.3): while a takeover is on, the
//! person's own input stops deskhand. The person's input is the pointer
//! more than 8 px (either axis) from where deskhand last put it, or a key
//! or button press deskhand did not send: one from real hardware, or a
//! synthetic one that is not in deskhand's press log (another tool acting
//! for the person). Every press is logged before it is sent; each
//! synthetic press the watcher reports takes one entry off the log.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::backend::WatchedInput;
use crate::geometry::{Point, Rect};

/// How far the pointer may be from where deskhand put it, in pixels.
pub const THRESHOLD_PX: i32 = 8;
/// How long a logged press waits for the watcher to report it (it comes
/// some microseconds late, far later on a loaded machine; one that never
/// comes must not excuse a later synthetic press of the person's).
const PRESS_LOG_TTL: Duration = Duration::from_secs(3);
/// How long a pointer target stays one the pointer may be at: the desktop (the
/// X server) queues synthetic motion and moves the pointer a little later, so during
/// a drag the pointer trails the targets sent.
const TRAIL: Duration = Duration::from_millis(500);

/// Why a takeover paused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PausedReason {
    /// The pointer moved away from where deskhand put it.
    PointerMoved,
    /// A key deskhand did not send.
    KeyPressed,
    /// A button deskhand did not send.
    ButtonPressed,
    /// The person pressed the kill switch.
    KillSwitch,
    /// The person chose "Pause agents" in the host's own UI.
    PausedByPerson,
}

impl PausedReason {
    /// The wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::PointerMoved => "pointer_moved",
            Self::KeyPressed => "key_pressed",
            Self::ButtonPressed => "button_pressed",
            Self::KillSwitch => "kill_switch",
            Self::PausedByPerson => "paused_by_person",
        }
    }
}

#[derive(Debug, Default)]
struct Marks {
    /// Where deskhand put the pointer lately, oldest first, each with when
    /// a newer target replaced it (the newest has none and is always kept).
    trail: std::collections::VecDeque<(Point, Option<Instant>)>,
    /// Key presses sent and not yet seen by the watcher.
    keys: VecDeque<Instant>,
    /// Button presses (wheel steps included) sent and not yet seen.
    buttons: VecDeque<Instant>,
    /// When deskhand last pressed a button (Continue ignores clicks right
    /// after one).
    button_pressed: Option<Instant>,
    /// The last button press the watcher saw, and whether a device other
    /// than the synthetic one (the person's mouse) made it: Continue takes
    /// a click only when its press was such a device's.
    last_press: Option<(Instant, bool)>,
}

/// The hand-back detector, shared by the desktop thread (which marks what
/// it sends and checks at every step) and the watcher (which reports what
/// it sees).
pub struct HandBack {
    /// Set while a takeover is on and not paused; the watcher polls the
    /// pointer only then.
    armed: Arc<AtomicBool>,
    tripped: Mutex<Option<PausedReason>>,
    /// Set when the takeover ended (end, kill switch, lost indicator): an
    /// act under way stops at its next step.
    revoked: AtomicBool,
    marks: Mutex<Marks>,
    on_trip: Mutex<Option<TripHook>>,
}

/// What runs when the person takes over.
type TripHook = Box<dyn Fn(PausedReason) + Send>;

impl std::fmt::Debug for HandBack {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HandBack")
            .field("armed", &self.armed.load(Ordering::SeqCst))
            .field("tripped", &self.tripped())
            .finish()
    }
}

fn far(a: Point, b: Point) -> bool {
    (a.x - b.x).abs() > THRESHOLD_PX || (a.y - b.y).abs() > THRESHOLD_PX
}

impl Marks {
    /// Whether `p` is away from every recent target (with no target yet,
    /// nothing is away).
    fn away(&mut self, p: Point) -> bool {
        while self
            .trail
            .front()
            .is_some_and(|(_, replaced)| replaced.is_some_and(|t| t.elapsed() > TRAIL))
        {
            self.trail.pop_front();
        }
        !self.trail.is_empty() && self.trail.iter().all(|(q, _)| far(p, *q))
    }
}

impl Default for HandBack {
    fn default() -> Self {
        Self::new()
    }
}

impl HandBack {
    /// A disarmed detector.
    pub fn new() -> Self {
        Self {
            armed: Arc::new(AtomicBool::new(false)),
            tripped: Mutex::new(None),
            revoked: AtomicBool::new(true),
            marks: Mutex::new(Marks::default()),
            on_trip: Mutex::new(None),
        }
    }

    /// The flag the watcher reads to know when to poll the pointer.
    pub fn armed_flag(&self) -> Arc<AtomicBool> {
        self.armed.clone()
    }

    /// Called (once per trip) when the person's input is detected.
    pub fn set_on_trip(&self, f: TripHook) {
        if let Ok(mut slot) = self.on_trip.lock() {
            *slot = Some(f);
        }
    }

    /// A takeover started or resumed with the pointer at `pointer`.
    pub fn arm(&self, pointer: Point) {
        if let Ok(mut m) = self.marks.lock() {
            m.trail.clear();
            m.trail.push_back((pointer, None));
            // Nothing deskhand sent before this point is still on its way.
            m.keys.clear();
            m.buttons.clear();
        }
        if let Ok(mut t) = self.tripped.lock() {
            *t = None;
        }
        self.revoked.store(false, Ordering::SeqCst);
        self.armed.store(true, Ordering::SeqCst);
    }

    /// deskhand's pointer trail starts again at `pointer`, where the person
    /// left it answering the desktop's question (nothing else changes).
    fn rebase(&self, pointer: Point) {
        if let Ok(mut m) = self.marks.lock() {
            m.trail.clear();
            m.trail.push_back((pointer, None));
        }
    }

    /// The takeover ended: nothing is watched, and an act under way stops
    /// at its next step.
    pub fn revoke(&self) {
        self.revoked.store(true, Ordering::SeqCst);
        self.armed.store(false, Ordering::SeqCst);
    }

    /// Whether the takeover ended since it was last armed.
    pub fn is_revoked(&self) -> bool {
        self.revoked.load(Ordering::SeqCst)
    }

    /// The takeover ended or paused: nothing is watched.
    pub fn disarm(&self) {
        self.armed.store(false, Ordering::SeqCst);
    }

    /// Whether a takeover is being watched.
    pub fn is_armed(&self) -> bool {
        self.armed.load(Ordering::SeqCst)
    }

    /// Why the person took over, once they did.
    pub fn tripped(&self) -> Option<PausedReason> {
        self.tripped.lock().ok().and_then(|t| *t)
    }

    fn trip(&self, reason: PausedReason) {
        if !self.armed.swap(false, Ordering::SeqCst) {
            return;
        }
        if let Ok(mut t) = self.tripped.lock() {
            if t.is_some() {
                return;
            }
            *t = Some(reason);
        }
        tracing::info!(reason = reason.as_str(), "the person took over");
        if let Ok(f) = self.on_trip.lock()
            && let Some(f) = f.as_ref()
        {
            f(reason);
        }
    }

    /// Takes one logged press of this kind off the log; false when there
    /// was none (the press was not deskhand's).
    fn consume(&self, button: bool) -> bool {
        let Ok(mut m) = self.marks.lock() else {
            return false;
        };
        let log = if button { &mut m.buttons } else { &mut m.keys };
        while let Some(t) = log.front().filter(|t| t.elapsed() > PRESS_LOG_TTL) {
            tracing::debug!(
                button,
                age_ms = t.elapsed().as_millis(),
                "a logged press expired unseen"
            );
            log.pop_front();
        }
        log.pop_front().is_some()
    }

    /// What the watcher saw.
    pub fn observe(&self, input: WatchedInput) {
        // deskhand's own presses come off the log even when nobody watches,
        // so that the log never runs ahead of what was sent.
        let ours = match input {
            WatchedInput::KeyPress { synthetic: true } => self.consume(false),
            WatchedInput::ButtonPress { synthetic } => {
                if let Ok(mut m) = self.marks.lock() {
                    m.last_press = Some((Instant::now(), !synthetic));
                }
                synthetic && self.consume(true)
            }
            WatchedInput::WheelTurn { synthetic } => synthetic && self.consume(true),
            _ => false,
        };
        if !self.is_armed() {
            return;
        }
        match input {
            WatchedInput::Answered(p) => {
                tracing::info!(
                    ?p,
                    "the person answered the desktop's question: hand-back starts from here"
                );
                self.rebase(p);
            }
            WatchedInput::Pointer(p) => {
                // deskhand's moves warp exactly to their targets, so the
                // pointer is at one of the recent ones; anywhere else is
                // the person.
                if self.marks.lock().ok().is_some_and(|mut m| m.away(p)) {
                    if let Ok(m) = self.marks.lock() {
                        tracing::debug!(?p, trail = ?m.trail, "pointer away from deskhand's targets (watcher)");
                    }
                    self.trip(PausedReason::PointerMoved);
                }
            }
            WatchedInput::KeyPress { .. } if !ours => self.trip(PausedReason::KeyPressed),
            WatchedInput::ButtonPress { .. } | WatchedInput::WheelTurn { .. } if !ours => {
                self.trip(PausedReason::ButtonPressed)
            }
            WatchedInput::KeyPress { .. }
            | WatchedInput::ButtonPress { .. }
            | WatchedInput::WheelTurn { .. } => {}
            // Motion alone proves nothing (a nudge of a pixel); the
            // position check decides. The kill switch is the engine's.
            WatchedInput::Motion { .. } | WatchedInput::KillSwitch | WatchedInput::WatcherLost => {}
        }
    }

    /// While armed, the square the pointer must still be in for deskhand to
    /// move it on: within [`THRESHOLD_PX`] of where deskhand last put it.
    pub fn guard(&self) -> Option<Rect> {
        if !self.is_armed() {
            return None;
        }
        let m = self.marks.lock().ok()?;
        let (newest, _) = m.trail.back()?;
        let side = 2 * THRESHOLD_PX.unsigned_abs() + 1;
        Some(Rect {
            x: newest.x - THRESHOLD_PX,
            y: newest.y - THRESHOLD_PX,
            width: side,
            height: side,
        })
    }

    /// Checks the pointer against where deskhand put it (before every
    /// synthetic call).
    pub fn check_pointer(&self, p: Point) -> Result<(), PausedReason> {
        if let Some(reason) = self.tripped() {
            return Err(reason);
        }
        if !self.is_armed() {
            return Ok(());
        }
        if self.marks.lock().ok().is_some_and(|mut m| m.away(p)) {
            if let Ok(m) = self.marks.lock() {
                tracing::debug!(?p, trail = ?m.trail, "pointer away from deskhand's targets (check)");
            }
            self.trip(PausedReason::PointerMoved);
            return Err(PausedReason::PointerMoved);
        }
        Ok(())
    }

    /// Logs `n` key presses before they are sent.
    pub fn will_press_keys(&self, n: usize) {
        if let Ok(mut m) = self.marks.lock() {
            let now = Instant::now();
            m.keys.extend(std::iter::repeat_n(now, n));
        }
    }

    /// Logs a pointer target before it is sent (once: the newest target
    /// logged again stays as it is).
    pub fn will_move(&self, to: Point) {
        if let Ok(mut m) = self.marks.lock() {
            if m.trail.back().is_some_and(|(q, _)| *q == to) {
                return;
            }
            let now = Instant::now();
            if let Some(newest) = m.trail.back_mut() {
                newest.1 = Some(now);
            }
            m.trail.push_back((to, None));
        }
    }

    /// Logs `n` button presses (wheel steps are presses too) before they
    /// are sent.
    pub fn will_press_buttons(&self, n: usize) {
        if let Ok(mut m) = self.marks.lock() {
            let now = Instant::now();
            m.buttons.extend(std::iter::repeat_n(now, n));
            m.button_pressed = Some(now);
        }
    }

    /// Whether deskhand pressed a button within `window` before `at`.
    pub fn pressed_button_before(&self, at: Instant, window: Duration) -> bool {
        self.marks
            .lock()
            .ok()
            .and_then(|m| m.button_pressed)
            .is_some_and(|t| t <= at && at.duration_since(t) < window)
    }
}

impl HandBack {
    /// Who made the last button press seen, if it came less than
    /// `within` before `at` (or after it: the watcher and the indicator
    /// report on different paths): `Some(true)` for a real device,
    /// `Some(false)` for the synthetic one.
    pub fn last_press_by_device(&self, at: Instant, within: Duration) -> Option<bool> {
        let (t, device) = self.marks.lock().ok()?.last_press?;
        (t + within >= at).then_some(device)
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::AtomicUsize;

    use super::*;

    fn armed_at(x: i32, y: i32) -> (Arc<HandBack>, Arc<AtomicUsize>) {
        let hb = Arc::new(HandBack::new());
        let trips = Arc::new(AtomicUsize::new(0));
        let t = trips.clone();
        hb.set_on_trip(Box::new(move |_| {
            t.fetch_add(1, Ordering::SeqCst);
        }));
        hb.arm(Point::new(x, y));
        (hb, trips)
    }

    #[test]
    fn pointer_within_eight_pixels_is_not_the_person() {
        let (hb, trips) = armed_at(100, 100);
        hb.observe(WatchedInput::Pointer(Point::new(108, 92)));
        assert_eq!(hb.tripped(), None);
        hb.observe(WatchedInput::Pointer(Point::new(109, 100)));
        assert_eq!(hb.tripped(), Some(PausedReason::PointerMoved));
        hb.observe(WatchedInput::KeyPress { synthetic: false });
        assert_eq!(trips.load(Ordering::SeqCst), 1, "one trip, one report");
        assert!(!hb.is_armed());
    }

    #[test]
    fn the_persons_answer_to_the_desktops_question_is_no_takeover() {
        let (hb, trips) = armed_at(0, 0);
        // They left the pointer on the dialog's button: from there on.
        hb.observe(WatchedInput::Answered(Point::new(700, 420)));
        assert_eq!(hb.check_pointer(Point::new(700, 420)), Ok(()));
        assert_eq!(trips.load(Ordering::SeqCst), 0);
        // A move away from there afterwards is theirs.
        hb.observe(WatchedInput::Pointer(Point::new(100, 100)));
        assert_eq!(hb.tripped(), Some(PausedReason::PointerMoved));
    }

    #[test]
    fn deskhand_moves_are_not_the_person() {
        let (hb, _) = armed_at(0, 0);
        hb.will_move(Point::new(500, 500));
        // The watcher polls while the move is under way.
        hb.observe(WatchedInput::Pointer(Point::new(0, 0)));
        hb.observe(WatchedInput::Pointer(Point::new(500, 500)));
        assert_eq!(hb.check_pointer(Point::new(500, 500)), Ok(()));
        assert_eq!(hb.tripped(), None);
    }

    #[test]
    fn a_target_set_long_ago_holds_until_the_queued_move_lands() {
        let (hb, _) = armed_at(146, 92);
        std::thread::sleep(TRAIL + Duration::from_millis(50));
        hb.will_move(Point::new(46, 92));
        // The desktop has not moved the pointer yet.
        hb.observe(WatchedInput::Pointer(Point::new(146, 92)));
        assert_eq!(hb.tripped(), None);
        hb.observe(WatchedInput::Pointer(Point::new(46, 92)));
        assert_eq!(hb.tripped(), None);
    }

    #[test]
    fn presses_deskhand_did_not_send_are_the_person() {
        let (hb, _) = armed_at(0, 0);
        hb.will_press_keys(2);
        hb.observe(WatchedInput::KeyPress { synthetic: true });
        hb.observe(WatchedInput::KeyPress { synthetic: true });
        assert_eq!(hb.tripped(), None, "deskhand's own synthetic keys");
        hb.observe(WatchedInput::KeyPress { synthetic: true });
        assert_eq!(
            hb.tripped(),
            Some(PausedReason::KeyPressed),
            "a third press was not in the log"
        );
        let (hb, _) = armed_at(0, 0);
        hb.will_press_buttons(1);
        hb.observe(WatchedInput::ButtonPress { synthetic: false });
        assert_eq!(
            hb.tripped(),
            Some(PausedReason::ButtonPressed),
            "real hardware, even while deskhand sends"
        );
    }

    #[test]
    fn continue_ignores_clicks_right_after_deskhands_own() {
        let hb = HandBack::new();
        hb.will_press_buttons(1);
        let click = Instant::now();
        assert!(hb.pressed_button_before(click, Duration::from_millis(1500)));
        assert!(
            !hb.pressed_button_before(click + Duration::from_secs(2), Duration::from_millis(1500))
        );
    }

    #[test]
    fn only_a_devices_press_counts_for_continue() {
        let hb = HandBack::new();
        let within = Duration::from_millis(500);
        assert_eq!(hb.last_press_by_device(Instant::now(), within), None);
        hb.observe(WatchedInput::ButtonPress { synthetic: false });
        let now = Instant::now();
        assert_eq!(hb.last_press_by_device(now, within), Some(true));
        assert_eq!(
            hb.last_press_by_device(now + Duration::from_secs(2), within),
            None
        );
        // Another program's click right after the person's: its press is
        // the one that counts.
        hb.observe(WatchedInput::ButtonPress { synthetic: true });
        assert_eq!(hb.last_press_by_device(Instant::now(), within), Some(false));
        // The person scrolling vouches for no click.
        hb.observe(WatchedInput::WheelTurn { synthetic: false });
        assert_eq!(hb.last_press_by_device(Instant::now(), within), Some(false));
    }

    #[test]
    fn the_guard_is_the_square_within_eight_pixels_of_the_newest_target() {
        let (hb, _) = armed_at(100, 50);
        hb.will_move(Point::new(300, 200));
        let guard = hb.guard().expect("armed");
        assert_eq!(
            (guard.x, guard.y, guard.width, guard.height),
            (292, 192, 17, 17)
        );
        for inside in [Point::new(292, 192), Point::new(308, 208)] {
            assert!(guard.contains(inside) && hb.check_pointer(inside).is_ok());
        }
        assert!(!guard.contains(Point::new(309, 200)));
        assert!(!guard.contains(Point::new(300, 191)));
        hb.disarm();
        assert_eq!(hb.guard(), None, "nothing is guarded while disarmed");
    }

    #[test]
    fn a_target_logged_twice_is_one_target() {
        let (hb, _) = armed_at(0, 0);
        hb.will_move(Point::new(40, 40));
        hb.will_move(Point::new(40, 40));
        let m = hb.marks.lock().expect("marks");
        let trail: Vec<_> = m.trail.iter().map(|(p, _)| *p).collect();
        assert_eq!(trail, [Point::new(0, 0), Point::new(40, 40)]);
        assert_eq!(m.trail.back().and_then(|(_, replaced)| *replaced), None);
    }

    #[test]
    fn revoking_ends_until_armed_again() {
        let (hb, _) = armed_at(0, 0);
        assert!(!hb.is_revoked());
        hb.revoke();
        assert!(hb.is_revoked() && !hb.is_armed());
        hb.arm(Point::new(0, 0));
        assert!(!hb.is_revoked());
    }

    #[test]
    fn an_unlogged_synthetic_key_is_the_person() {
        let (hb, _) = armed_at(0, 0);
        hb.observe(WatchedInput::KeyPress { synthetic: true });
        assert_eq!(hb.tripped(), Some(PausedReason::KeyPressed));
    }

    #[test]
    fn disarmed_sees_nothing_and_arming_clears() {
        let hb = HandBack::new();
        hb.observe(WatchedInput::KeyPress { synthetic: false });
        assert_eq!(hb.tripped(), None);
        hb.arm(Point::new(0, 0));
        hb.observe(WatchedInput::KeyPress { synthetic: false });
        assert!(hb.tripped().is_some());
        hb.arm(Point::new(0, 0));
        assert_eq!(hb.tripped(), None);
        assert_eq!(
            hb.check_pointer(Point::new(50, 0)),
            Err(PausedReason::PointerMoved)
        );
    }
}
