//! Click counts for posted mouse events. macOS apps read a double click
//! from the event's click state (`MouseEventClickState`), not from the
//! timing of two clicks, so deskhand counts them itself: a press of the
//! same button at the same place within the double-click interval of the
//! last one counts one more, anything else starts again at 1.

use std::time::{Duration, Instant};

use deskhand_backend::{Button, Point};

/// The double-click interval when the system's cannot be read
/// (`NSEvent.doubleClickInterval` defaults to 0.5 s).
pub const DEFAULT_INTERVAL: Duration = Duration::from_millis(500);

/// How far, in pixels, a press may be from the last one and still count
/// as the same click.
const SLOP: i32 = 4;

/// The clicks counted so far.
#[derive(Debug, Clone)]
pub struct Clicks {
    interval: Duration,
    last: Option<(Button, Point, Instant, i64)>,
}

impl Clicks {
    /// A counter with this double-click `interval`.
    pub fn new(interval: Duration) -> Self {
        Self {
            interval,
            last: None,
        }
    }

    /// The click state of a press of `button` at `at` at time `now`.
    pub fn press(&mut self, button: Button, at: Point, now: Instant) -> i64 {
        let count = match self.last {
            Some((b, p, t, n))
                if b == button
                    && (p.x - at.x).abs() <= SLOP
                    && (p.y - at.y).abs() <= SLOP
                    && now.saturating_duration_since(t) <= self.interval =>
            {
                n + 1
            }
            _ => 1,
        };
        self.last = Some((button, at, now, count));
        count
    }

    /// The click state of the release that follows: the press's.
    pub fn release(&self, button: Button) -> i64 {
        match self.last {
            Some((b, _, _, n)) if b == button => n,
            _ => 1,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quick_presses_at_one_place_count_up() {
        let mut c = Clicks::new(DEFAULT_INTERVAL);
        let t = Instant::now();
        let p = Point::new(100, 100);
        assert_eq!(c.press(Button::Left, p, t), 1);
        assert_eq!(c.release(Button::Left), 1);
        assert_eq!(
            c.press(
                Button::Left,
                Point::new(102, 99),
                t + Duration::from_millis(200)
            ),
            2
        );
        assert_eq!(c.release(Button::Left), 2);
        assert_eq!(c.press(Button::Left, p, t + Duration::from_millis(400)), 3);
    }

    #[test]
    fn another_button_place_or_a_pause_starts_again() {
        let mut c = Clicks::new(DEFAULT_INTERVAL);
        let t = Instant::now();
        let p = Point::new(100, 100);
        c.press(Button::Left, p, t);
        assert_eq!(c.press(Button::Right, p, t), 1);
        assert_eq!(c.press(Button::Right, Point::new(110, 100), t), 1);
        assert_eq!(
            c.press(
                Button::Right,
                Point::new(110, 100),
                t + Duration::from_secs(1)
            ),
            1
        );
        assert_eq!(c.release(Button::Left), 1, "not the last press's button");
    }
}
