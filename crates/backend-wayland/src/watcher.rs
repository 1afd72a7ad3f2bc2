//! Hand-back on GNOME: mutter's `org.gnome.Mutter.IdleMonitor` says how
//! long since the last input of any device; when that is clearly shorter
//! than the time since deskhand's own last event, someone else (the
//! person) sent input. Checked every few milliseconds between deskhand's
//! steps (during one of its own events it cannot tell), with the pointer
//! read from the shell extension while the engine asks for it.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use deskhand_backend::{BackendError, InputWatcher, Point, WatchedInput};
use zbus::Connection;

use crate::rt::Rt;
use crate::shell::ShellExt;

/// How often the idle time is read.
const TICK: Duration = Duration::from_millis(10);
/// How much earlier than deskhand's own last event other input must be to
/// count: the idle monitor learns of deskhand's events a little after it
/// sends them.
pub(crate) const MARGIN: Duration = Duration::from_millis(30);

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
        } = *self;
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
            let mut last_poll = Instant::now();
            loop {
                tick.tick().await;
                let Ok(idle) = idle_time(&conn).await else {
                    sink(WatchedInput::WatcherLost);
                    return;
                };
                // Idle time that fell means new input since the last read.
                if idle < was_idle && someone_else(idle, last.get(), Instant::now()) {
                    sink(WatchedInput::Motion { synthetic: false });
                }
                was_idle = idle;
                if armed.load(Ordering::Relaxed) && last_poll.elapsed() >= Duration::from_millis(20)
                {
                    last_poll = Instant::now();
                    if let Ok((x, y, _)) = shell.pointer().await {
                        sink(WatchedInput::Pointer(Point::new(x, y)));
                    }
                }
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
        let ours = now.checked_sub(ms(100));
        assert!(
            someone_else(ms(10), ours, now),
            "input 10 ms ago, ours 100 ms ago"
        );
        assert!(!someone_else(ms(95), ours, now), "that was ours");
        assert!(!someone_else(ms(80), ours, now), "within the margin");
        assert!(someone_else(ms(5), None, now), "deskhand never sent any");
    }
}
