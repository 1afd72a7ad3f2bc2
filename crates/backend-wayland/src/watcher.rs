//! Hand-back on GNOME: mutter's `org.gnome.Mutter.IdleMonitor` (asked of
//! the compositor's own connection) says how long since the last input of
//! any device, read every 10 ms. deskhand's device events are paced: each
//! waits until the watcher saw the one before arrive, so any other new
//! input is someone else's (the person's), however fast an agent acts.
//! What it cannot tell: an input of the person's that lands in the same
//! reading as deskhand's event (within ~10 ms of it). The pointer, read
//! from the shell extension at each check while a takeover is armed (only
//! then), tells a move (it moved) from a
//! press (it did not: a click or a key, which the idle time cannot tell
//! apart). Every such input also counts as a device's press, for the
//! Continue button. GNOME cannot tell the person's hand from a program's
//! input through mutter's own RemoteDesktop API (open to any program of
//! the session, no dialog), so such a program's click on Continue passes
//! for the person's, as an XTEST device event does on X11 (the doctor
//! says so); deskhand's own clicks never do.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use deskhand_backend::{BackendError, InputWatcher, KillSwitchHotkey, Point, WatchedInput};
use zbus::Connection;

use crate::portal::Portals;
use crate::rt::Rt;
use crate::shell::ShellExt;

/// How often the idle time is read.
const TICK: Duration = Duration::from_millis(10);
/// How much earlier than deskhand's own last event other input must be to
/// count where events are not paced (ext-idle-notify): the idle monitor
/// learns of deskhand's events after they pass through the portal's
/// process and mutter's busy main loop (measured up to ~100 ms with
/// software rendering on two cores). Also how long an event of deskhand's
/// may take to arrive before it is taken for lost.
pub(crate) const MARGIN: Duration = Duration::from_millis(200);

/// How much earlier than deskhand's send an input may seem to happen and
/// still be deskhand's (the idle time is read in whole milliseconds, and
/// "now" is taken after mutter answered).
const SLACK: Duration = Duration::from_millis(3);

/// How often the idle time is read while deskhand's event is on its way:
/// the next event waits for this reading.
const FAST_TICK: Duration = Duration::from_millis(1);

/// A press within this of the last reported input, the pointer still,
/// is the same click's release (the idle monitor counts both).
const RELEASE: Duration = Duration::from_millis(200);

/// deskhand's own input as the hand-back sees it: when it last sent any,
/// and, while mutter's idle monitor is watched, the one event of its
/// still on its way. Events are paced: the next waits until the watcher
/// saw the one before arrive, so every input the watcher sees is either
/// that one event or someone else's, however fast the agent acts.
#[derive(Debug, Default)]
pub(crate) struct LastInput {
    ledger: Mutex<Ledger>,
    /// Told when the event on its way was seen (or given up on).
    arrived: Condvar,
}

#[derive(Debug, Default)]
struct Ledger {
    /// When deskhand last acted on the desktop, by any means.
    last: Option<Instant>,
    /// When deskhand last sent a device event that was not paced.
    unpaced: Option<Instant>,
    /// When the event not yet seen arriving was sent.
    pending: Option<Instant>,
    /// Whether a watcher reads the idle monitor (only then are events
    /// paced).
    watched: bool,
}

impl LastInput {
    /// deskhand acts on the desktop now, by no device event (text
    /// committed through the input method).
    pub(crate) fn mark(&self) {
        if let Ok(mut t) = self.ledger.lock() {
            t.last = Some(Instant::now());
        }
    }

    /// deskhand sends device events now without pacing them (a session
    /// primed): input within [`MARGIN`] after may be theirs.
    pub(crate) fn unpaced(&self) {
        if let Ok(mut t) = self.ledger.lock() {
            let now = Instant::now();
            t.last = Some(now);
            t.unpaced = Some(now);
        }
    }

    pub(crate) fn get(&self) -> Option<Instant> {
        self.ledger.lock().ok().and_then(|t| t.last)
    }

    /// Before one device event is sent: waits until the watcher saw the
    /// one before arrive (at most [`MARGIN`]), then notes this one.
    pub(crate) fn pace(&self) {
        let Ok(mut t) = self.ledger.lock() else {
            return;
        };
        loop {
            let wait = match t.pending {
                Some(sent) if t.watched => MARGIN.saturating_sub(sent.elapsed()),
                _ => Duration::ZERO,
            };
            if wait.is_zero() {
                let now = Instant::now();
                t.pending = Some(now);
                t.last = Some(now);
                return;
            }
            t = match self.arrived.wait_timeout(t, wait) {
                Ok((t, _)) => t,
                Err(_) => return,
            };
        }
    }

    /// Whether deskhand's event is on its way (the watcher reads fast),
    /// for at most [`MARGIN`]: an event that made none (a move to where
    /// the pointer was) is not waited for longer.
    fn awaited(&self) -> bool {
        self.ledger
            .lock()
            .is_ok_and(|t| t.pending.is_some_and(|sent| sent.elapsed() <= MARGIN))
    }

    /// Whether a watcher reads the idle monitor.
    fn watch(&self, on: bool) {
        if let Ok(mut t) = self.ledger.lock() {
            t.watched = on;
            t.pending = None;
        }
        self.arrived.notify_all();
    }

    /// The watcher saw new input, the last of it at `at`: whether it was
    /// someone else's. deskhand's event on its way takes the first input
    /// from its send on; any other input is someone else's.
    pub(crate) fn someone_elses(&self, at: Instant, now: Instant) -> bool {
        let Ok(mut t) = self.ledger.lock() else {
            return false;
        };
        let unpaced = someone_else(now.saturating_duration_since(at), t.unpaced, now);
        self.arrived.notify_all();
        match t.pending {
            Some(sent) if now.saturating_duration_since(sent) > MARGIN => {
                t.pending = None;
                unpaced
            }
            Some(sent) if at + SLACK >= sent => {
                t.pending = None;
                false
            }
            Some(_) => true,
            None => unpaced,
        }
    }
}

/// What someone else's input was: a move when the pointer moved since
/// the last check (the pause's reason), and a press either way.
pub(crate) fn kind(before: Option<Point>, now: Option<Point>) -> Vec<WatchedInput> {
    let press = WatchedInput::ButtonPress { synthetic: false };
    if before != now {
        vec![WatchedInput::Motion { synthetic: false }, press]
    } else {
        vec![press]
    }
}

/// Whether input came from someone else: the desktop was idle for `idle`,
/// and deskhand's own last event was at `ours` (none: never), seen `now`.
pub(crate) fn someone_else(idle: Duration, ours: Option<Instant>, now: Instant) -> bool {
    match ours {
        None => true,
        Some(t) => idle + MARGIN < now.saturating_duration_since(t),
    }
}

pub(crate) struct IdleWatcher {
    pub(crate) rt: Arc<Rt>,
    pub(crate) conn: Connection,
    pub(crate) shell: ShellExt,
    pub(crate) last: Arc<LastInput>,
    /// The portals, whose grants the kill switch's own dialog waits for.
    pub(crate) portals: Arc<Portals>,
    pub(crate) kill: Option<KillSwitchHotkey>,
}

/// mutter's idle time, asked of the compositor's own connection (the
/// name `org.gnome.Mutter.IdleMonitor` may be taken by any program).
async fn idle_time(conn: &Connection, shell: &ShellExt) -> zbus::Result<Duration> {
    if let Some(why) = shell.lost() {
        return Err(zbus::Error::Failure(why));
    }
    let idle = shell.pin().and_then(|p| p.idle.clone()).ok_or_else(|| {
        zbus::Error::Failure("no idle monitor in the compositor's connection".into())
    })?;
    let reply = conn
        .call_method(
            Some(zbus::names::BusName::Unique(idle.into_inner())),
            "/org/gnome/Mutter/IdleMonitor/Core",
            Some("org.gnome.Mutter.IdleMonitor"),
            "GetIdletime",
            &(),
        )
        .await?;
    Ok(Duration::from_millis(reply.body().deserialize::<u64>()?))
}

impl InputWatcher for IdleWatcher {
    fn start(
        self: Box<Self>,
        sink: Arc<dyn Fn(WatchedInput) + Send + Sync>,
        armed: Arc<AtomicBool>,
    ) -> Result<(), BackendError> {
        let IdleWatcher {
            rt,
            conn,
            shell,
            last,
            portals,
            kill,
        } = *self;
        if let Some(hotkey) = kill {
            rt.spawn(crate::shortcuts::run(hotkey, portals.clone(), sink.clone()));
        }
        // The first read must work, or there is no hand-back at all.
        let (first, first_shell) = (conn.clone(), shell.clone());
        let idle = rt.run(
            Duration::from_secs(3),
            "mutter's idle monitor",
            async move {
                idle_time(&first, &first_shell)
                    .await
                    .map_err(|e| BackendError::Unsupported(format!("mutter's idle monitor: {e}")))
            },
        )?;
        let mut was_idle = idle;
        last.watch(true);
        rt.spawn(async move {
            let mut pointer = None;
            let mut pointer_read = Instant::now();
            let mut reported: Option<Instant> = None;
            let mut failures = 0;
            let mut was_asking = false;
            loop {
                let fast = last.awaited();
                tokio::time::sleep(if fast { FAST_TICK } else { TICK }).await;
                if let Some(why) = shell.lost() {
                    tracing::error!(why, "hand-back has no word it can trust");
                    last.watch(false);
                    sink(WatchedInput::WatcherLost);
                    return;
                }
                let idle = match idle_time(&conn, &shell).await {
                    Ok(idle) => {
                        failures = 0;
                        idle
                    }
                    Err(e) if failures < 5 => {
                        failures += 1;
                        tracing::debug!(error = %e, "mutter's idle monitor did not answer");
                        continue;
                    }
                    Err(e) => {
                        tracing::error!(error = %e, "mutter's idle monitor is gone");
                        last.watch(false);
                        sink(WatchedInput::WatcherLost);
                        return;
                    }
                };
                let seen = Instant::now();
                let at = seen.checked_sub(idle).unwrap_or(seen);
                // Idle time that fell means new input since the last read.
                let new_input = idle < was_idle;
                // While the desktop asks the person for input (the Remote
                // Desktop dialog), what they do is their answer: not seen;
                // once answered, hand-back starts from the pointer's place.
                let asking = portals.remote_grant() == crate::portal::Grant::Pending;
                if asking || was_asking {
                    was_asking = asking;
                    was_idle = idle;
                    pointer = None;
                    if !asking && let Ok((x, y, _)) = shell.pointer().await {
                        sink(WatchedInput::Answered(Point::new(x, y)));
                    }
                    continue;
                }
                // The pointer only while a takeover wants it (a move is
                // then told from a press; otherwise any input is a press),
                // at the slow pace or on new input: gnome-shell answers it.
                let now = if !armed.load(Ordering::Relaxed) {
                    None
                } else if new_input || pointer_read.elapsed() >= TICK {
                    pointer_read = Instant::now();
                    shell.pointer().await.ok().map(|(x, y, _)| Point::new(x, y))
                } else {
                    pointer
                };
                // The position first: a move the engine sees as one, not
                // as the press that comes with it.
                if let Some(p) = now {
                    sink(WatchedInput::Pointer(p));
                }
                // The release of the click just reported (Continue's own,
                // whose press resumed the takeover): the pointer did not
                // move, or was not read while paused.
                let still = pointer.is_none() || pointer == now;
                let release = still && reported.is_some_and(|t| t.elapsed() < RELEASE);
                let others = new_input && last.someone_elses(at, seen);
                if new_input {
                    tracing::trace!(
                        idle_ms = idle.as_millis() as u64,
                        others,
                        release,
                        "new input"
                    );
                }
                if others && !release {
                    reported = Some(Instant::now());
                    for input in kind(pointer, now) {
                        sink(input);
                    }
                }
                was_idle = idle;
                pointer = now;
            }
        });
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn input_counts_as_the_persons_only_clearly_after_deskhands_own() {
        let now = Instant::now();
        let ms = Duration::from_millis;
        let ours = now.checked_sub(ms(300));
        assert!(
            someone_else(ms(10), ours, now),
            "input 10 ms ago, ours 300 ms ago"
        );
        assert!(!someone_else(ms(295), ours, now), "that was ours");
        assert!(!someone_else(ms(150), ours, now), "within the margin");
        assert!(someone_else(ms(5), None, now), "deskhand never sent any");
    }

    #[test]
    fn with_paced_events_any_input_but_the_one_on_its_way_is_someone_elses() {
        let ms = Duration::from_millis;
        let last = LastInput::default();
        last.watch(true);
        last.pace();
        let sent = last.get().expect("sent");
        // deskhand's event arrives 40 ms after it was sent: its own.
        assert!(!last.someone_elses(sent + ms(40), sent + ms(45)));
        // The person's key 50 ms after deskhand's: someone else's, though
        // deskhand acted within the old 200 ms margin.
        assert!(last.someone_elses(sent + ms(50), sent + ms(55)));
        // Input from before deskhand's send is never deskhand's.
        last.pace();
        let second = last.get().expect("sent");
        assert!(last.someone_elses(second - ms(20), second + ms(5)));
        // A session primed without pacing: input right after it may be its.
        let fresh = LastInput::default();
        fresh.watch(true);
        fresh.unpaced();
        let primed = fresh.get().expect("primed");
        assert!(!fresh.someone_elses(primed + ms(30), primed + ms(35)));
        assert!(fresh.someone_elses(primed + ms(300), primed + ms(305)));
    }

    #[test]
    fn a_send_waits_for_the_event_before_it_at_most_the_margin() {
        let last = LastInput::default();
        last.watch(true);
        last.pace();
        let started = Instant::now();
        // Nobody reports the first event's arrival: the next goes after
        // the margin, not never.
        last.pace();
        assert!(started.elapsed() >= MARGIN);
        // Unwatched (no idle monitor), nothing waits.
        let free = LastInput::default();
        free.pace();
        let started = Instant::now();
        free.pace();
        assert!(started.elapsed() < MARGIN);
    }

    #[test]
    fn a_move_is_a_moved_pointer_and_anything_else_a_press() {
        let (a, b) = (Some(Point::new(1, 2)), Some(Point::new(3, 2)));
        let press = WatchedInput::ButtonPress { synthetic: false };
        assert_eq!(
            kind(a, b),
            vec![WatchedInput::Motion { synthetic: false }, press]
        );
        assert_eq!(kind(a, a), vec![press]);
    }
}
