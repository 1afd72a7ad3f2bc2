//! The cached answer to "does the accessibility bus answer?", for the
//! features a HELLO lists. The check itself can take seconds when a bus
//! hangs, so it never runs on a caller's path: it runs on its own thread
//! at engine start, again when the answer is older than [`RECHECK_UP`]
//! ([`RECHECK_DOWN`] while the bus did not answer: it may be starting),
//! and right away after a read failed with a bus error. Callers only read
//! the last answer.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::accessibility::{Accessibility, BusStatus};

/// How old a "the bus answers" may get before a call asks again.
pub const RECHECK_UP: Duration = Duration::from_secs(30);
/// How old a "the bus does not answer" may get before a call asks again
/// (a missing bus answers fast, a hanging one is checked off every path).
pub const RECHECK_DOWN: Duration = Duration::from_secs(5);

/// The last answer and whether a check is running.
#[derive(Debug, Default)]
struct Answer {
    /// The bus answered at the last check (or a read succeeded since).
    ready: bool,
    /// When that was known; `None`: never, or to be asked again now.
    at: Option<Instant>,
    /// A check is running (at most one at a time).
    checking: bool,
}

/// The bus watch of one engine: no backend, no bus.
#[derive(Clone, Default)]
pub(crate) struct BusWatch {
    a11y: Option<Arc<dyn Accessibility>>,
    answer: Arc<Mutex<Answer>>,
}

impl BusWatch {
    /// Watches `a11y`'s bus, starting the first check now.
    pub(crate) fn start(a11y: Option<Arc<dyn Accessibility>>) -> Self {
        let watch = Self {
            a11y,
            answer: Default::default(),
        };
        watch.check_if_due();
        watch
    }

    /// The last answer, without waiting; starts a check when it is due.
    pub(crate) fn ready(&self) -> bool {
        self.check_if_due();
        self.lock().ready
    }

    /// A read failed with a bus error: ask again now.
    pub(crate) fn bus_failed(&self) {
        self.lock().at = None;
        self.check_if_due();
    }

    /// A read succeeded: the bus answers.
    pub(crate) fn bus_answered(&self) {
        let mut a = self.lock();
        a.ready = true;
        a.at = Some(Instant::now());
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Answer> {
        self.answer.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Starts a check on its own thread unless one runs or the answer is
    /// fresh.
    fn check_if_due(&self) {
        let Some(a11y) = self.a11y.clone() else {
            return;
        };
        {
            let mut a = self.lock();
            let fresh = if a.ready { RECHECK_UP } else { RECHECK_DOWN };
            if a.checking || a.at.is_some_and(|t| t.elapsed() < fresh) {
                return;
            }
            a.checking = true;
        }
        let answer = self.answer.clone();
        let spawned = std::thread::Builder::new()
            .name("a11y-bus-check".into())
            .spawn(move || {
                let status = a11y.bus_status();
                if let BusStatus::Unavailable { problem, detail } = &status {
                    tracing::debug!(?problem, %detail, "the accessibility bus does not answer");
                }
                let mut a = answer.lock().unwrap_or_else(|p| p.into_inner());
                a.ready = status == BusStatus::Ok;
                a.at = Some(Instant::now());
                a.checking = false;
            });
        if let Err(e) = spawned {
            tracing::warn!(error = %e, "the accessibility bus check did not start");
            self.lock().checking = false;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_backend_is_never_ready() {
        let w = BusWatch::start(None);
        assert!(!w.ready());
        w.bus_failed();
        assert!(!w.ready());
    }
}
