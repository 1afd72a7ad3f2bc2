//! Whether a click the overlay reports on one of its buttons is the
//! person's, by what the backend's own watcher saw: a left press and its
//! release, both from a real device (not injected), both on the button.
//! The overlay's word alone never counts: any program can post window
//! messages to its windows and put the cursor on a button first. Each real
//! click vouches for one button press at most.

use std::sync::Mutex;
use std::time::{Duration, Instant};

use crate::{Point, Rect};

/// The release of a click is at most this old when the overlay reports
/// the click (the overlay reports at its release; a loaded machine is slow).
pub const RELEASE_WITHIN: Duration = Duration::from_secs(2);
/// A press held longer than this before its release is not a click.
pub const HELD_AT_MOST: Duration = Duration::from_secs(10);
/// How long a reported click waits for the watcher's report of its release.
pub const WAIT_FOR_RELEASE: Duration = Duration::from_millis(300);

/// The person's last left press and its release, as a watcher saw them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SeenClick {
    /// The last real press: when and where.
    pub press: Option<(Instant, Point)>,
    /// Its release, once seen.
    pub release: Option<(Instant, Point)>,
    /// This click already vouched for a button press.
    pub spent: bool,
}

impl SeenClick {
    /// A real left press at `p`: a new click begins.
    pub fn pressed(&mut self, at: Instant, p: Point) {
        *self = Self {
            press: Some((at, p)),
            release: None,
            spent: false,
        };
    }

    /// A real left release at `p`: the click's end, when a press began it.
    pub fn released(&mut self, at: Instant, p: Point) {
        if self.press.is_some() && self.release.is_none() {
            self.release = Some((at, p));
        }
    }

    /// Whether this click is one on `button` the overlay may report at
    /// `now`: pressed and released there, released lately, not spent.
    pub fn is_click_on(&self, button: Rect, now: Instant) -> bool {
        let (Some((down, from)), Some((up, to))) = (self.press, self.release) else {
            return false;
        };
        !self.spent
            && button.contains(from)
            && button.contains(to)
            && up >= down
            && up.duration_since(down) <= HELD_AT_MOST
            && now.saturating_duration_since(up) <= RELEASE_WITHIN
    }
}

/// The real clicks a backend's watcher saw, shared with its indicator.
#[derive(Debug, Default)]
pub struct RealClicks {
    seen: Mutex<SeenClick>,
}

impl RealClicks {
    /// The watcher saw a real left press at `p`.
    pub fn pressed(&self, p: Point) {
        self.seen
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .pressed(Instant::now(), p);
    }

    /// The watcher saw a real left release at `p`.
    pub fn released(&self, p: Point) {
        self.seen
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .released(Instant::now(), p);
    }

    /// Whether the last real click was on `button` just now; it is spent
    /// when it was (one click, one press of a button).
    pub fn take_click_on(&self, button: Rect) -> bool {
        let mut seen = self.seen.lock().unwrap_or_else(|e| e.into_inner());
        let yes = seen.is_click_on(button, Instant::now());
        if yes {
            seen.spent = true;
        }
        yes
    }

    /// [`Self::take_click_on`], waiting up to [`WAIT_FOR_RELEASE`] for the
    /// watcher to report the release (its thread may run late).
    pub fn wait_for_click_on(&self, button: Rect) -> bool {
        let deadline = Instant::now() + WAIT_FOR_RELEASE;
        loop {
            if self.take_click_on(button) {
                return true;
            }
            if Instant::now() >= deadline {
                return false;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const CONTINUE: Rect = Rect::new(450, 54, 380, 32);

    fn click(from: Point, to: Point) -> (SeenClick, Instant) {
        let t = Instant::now();
        let mut s = SeenClick::default();
        s.pressed(t, from);
        s.released(t + Duration::from_millis(80), to);
        (s, t + Duration::from_millis(100))
    }

    #[test]
    fn a_real_press_and_release_on_the_button_is_a_click_on_it() {
        let on = Point::new(640, 62);
        let (s, now) = click(on, on);
        assert!(s.is_click_on(CONTINUE, now));
    }

    #[test]
    fn a_click_elsewhere_or_half_on_the_button_is_not() {
        // The person clicks into their own window: a program then posts
        // a click on Continue to the overlay. Nothing real was on it.
        let notepad = Point::new(300, 400);
        let (s, now) = click(notepad, notepad);
        assert!(!s.is_click_on(CONTINUE, now));
        let on = Point::new(640, 62);
        let (pressed_off, now) = click(notepad, on);
        assert!(!pressed_off.is_click_on(CONTINUE, now));
        let (released_off, now) = click(on, notepad);
        assert!(!released_off.is_click_on(CONTINUE, now));
    }

    #[test]
    fn a_press_without_its_release_and_a_stale_click_are_not_clicks() {
        let on = Point::new(640, 62);
        let t = Instant::now();
        let mut s = SeenClick::default();
        s.pressed(t, on);
        assert!(!s.is_click_on(CONTINUE, t + Duration::from_millis(50)));
        s.released(t + Duration::from_millis(50), on);
        assert!(!s.is_click_on(CONTINUE, t + RELEASE_WITHIN + Duration::from_secs(1)));
        // A release with no press before it begins nothing.
        let mut lone = SeenClick::default();
        lone.released(t, on);
        assert_eq!(lone, SeenClick::default());
        // Held too long: not a click.
        let mut held = SeenClick::default();
        held.pressed(t, on);
        held.released(t + HELD_AT_MOST + Duration::from_secs(1), on);
        assert!(!held.is_click_on(CONTINUE, t + HELD_AT_MOST + Duration::from_secs(1)));
    }

    #[test]
    fn one_real_click_vouches_for_one_press_of_a_button() {
        let clicks = RealClicks::default();
        clicks.pressed(Point::new(640, 62));
        clicks.released(Point::new(641, 63));
        assert!(clicks.take_click_on(CONTINUE));
        // The person paused again right away; a program posts a click on
        // Continue: the click the person made is spent.
        assert!(!clicks.take_click_on(CONTINUE));
        // A new press starts a new click.
        clicks.pressed(Point::new(640, 62));
        assert!(!clicks.take_click_on(CONTINUE), "not released yet");
        clicks.released(Point::new(640, 62));
        assert!(clicks.take_click_on(CONTINUE));
    }
}
