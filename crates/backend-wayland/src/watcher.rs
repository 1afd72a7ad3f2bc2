//! Hand-back on GNOME: mutter's `org.gnome.Mutter.IdleMonitor` says how
//! long since the last input of any device; when that is clearly shorter
//! than the time since deskhand's own last event, someone else (the
//! person) sent input. Checked every few milliseconds between deskhand's
//! steps (during one of its own events it cannot tell). The pointer, read
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
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use deskhand_backend::{BackendError, Chord, InputWatcher, KillSwitchHotkey, Point, WatchedInput};
use zbus::Connection;

use crate::portal::Portals;
use crate::rt::Rt;
use crate::shell::ShellExt;

/// How often the idle time is read.
const TICK: Duration = Duration::from_millis(10);
/// How much earlier than deskhand's own last event other input must be to
/// count: the idle monitor learns of deskhand's events after they pass
/// through the portal's process and mutter's busy main loop (measured up
/// to ~100 ms with software rendering on two cores). A person's click or
/// key within this of deskhand's own is missed; their moves are still
/// seen by the engine's pointer check.
pub(crate) const MARGIN: Duration = Duration::from_millis(200);

/// A press within this of the last reported input, the pointer still,
/// is the same click's release (the idle monitor counts both).
const RELEASE: Duration = Duration::from_millis(200);

/// When deskhand last sent input, shared by the input and the watcher.
#[derive(Debug, Default)]
pub(crate) struct LastInput(Mutex<Option<Instant>>);

impl LastInput {
    pub(crate) fn mark(&self) {
        if let Ok(mut t) = self.0.lock() {
            *t = Some(Instant::now());
        }
    }

    pub(crate) fn get(&self) -> Option<Instant> {
        self.0.lock().ok().and_then(|t| *t)
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

async fn idle_time(conn: &Connection) -> zbus::Result<Duration> {
    let reply = conn
        .call_method(
            Some("org.gnome.Mutter.IdleMonitor"),
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
        if let Some(chord) = kill.and_then(|k| Chord::parse(&k.current()).ok()) {
            rt.spawn(crate::shortcuts::run(chord, portals, sink.clone()));
        }
        // The first read must work, or there is no hand-back at all.
        let first = conn.clone();
        let idle = rt.run(
            Duration::from_secs(3),
            "mutter's idle monitor",
            async move {
                idle_time(&first)
                    .await
                    .map_err(|e| BackendError::Unsupported(format!("mutter's idle monitor: {e}")))
            },
        )?;
        let mut was_idle = idle;
        rt.spawn(async move {
            let mut tick = tokio::time::interval(TICK);
            let mut pointer = None;
            let mut reported: Option<Instant> = None;
            let mut failures = 0;
            loop {
                tick.tick().await;
                let idle = match idle_time(&conn).await {
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
                        sink(WatchedInput::WatcherLost);
                        return;
                    }
                };
                // The pointer only while a takeover wants it (a move is
                // then told from a press); otherwise any input is a press.
                let armed_now = armed.load(Ordering::Relaxed);
                let now = if armed_now {
                    shell.pointer().await.ok().map(|(x, y, _)| Point::new(x, y))
                } else {
                    None
                };
                // The position first: a move the engine sees as one, not
                // as the press that comes with it.
                if let Some(p) = now {
                    sink(WatchedInput::Pointer(p));
                }
                // Idle time that fell means new input since the last read.
                let release = pointer == now && reported.is_some_and(|t| t.elapsed() < RELEASE);
                if idle < was_idle && someone_else(idle, last.get(), Instant::now()) && !release {
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
