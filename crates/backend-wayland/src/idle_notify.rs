//! Hand-back where the compositor has ext-idle-notify but no mutter (KDE
//! Plasma 5.27 on, sway 1.8 on, other wlroots desktops): a notification
//! that idles after [`IDLE_MS`] without input and resumes at the next
//! input of any device. A resume that comes clearly after deskhand's own
//! last event ([`crate::watcher::someone_else`]) is the person's. The
//! protocol does not say what the input was nor where the pointer is, so
//! every such input counts as a press (the pause says `button_pressed`),
//! and input within [`IDLE_MS`] of other input is not seen apart from it.

use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use deskhand_backend::{BackendError, InputWatcher, WatchedInput};
use wayland_client::globals::{GlobalListContents, registry_queue_init};
use wayland_client::protocol::{wl_registry, wl_seat};
use wayland_client::{Connection, Dispatch, EventQueue, Proxy, QueueHandle};
use wayland_protocols::ext::idle_notify::v1::client::{
    ext_idle_notification_v1::{self, ExtIdleNotificationV1},
    ext_idle_notifier_v1::ExtIdleNotifierV1,
};

use crate::watcher::{LastInput, someone_else};

/// How long without input the notification idles: short, so that the
/// next input after a pause this short is seen.
pub(crate) const IDLE_MS: u32 = 50;

type Sink = Arc<dyn Fn(WatchedInput) + Send + Sync>;

/// Whether a resume at `now` is someone else's input, deskhand's own last
/// event being at `ours`.
pub(crate) fn persons(ours: Option<Instant>, now: Instant) -> bool {
    someone_else(Duration::ZERO, ours, now)
}

struct Watch {
    sink: Sink,
    last: Arc<LastInput>,
}

/// The watcher: its connection is made, and the notifier bound, when it
/// is opened, so that a compositor without one is known at once; the
/// notification itself is asked for when it starts, so that no input
/// from before is taken for the person's.
pub(crate) struct IdleNotifyWatcher {
    conn: Connection,
    queue: Mutex<EventQueue<Watch>>,
    notifier: ExtIdleNotifierV1,
    seat: wl_seat::WlSeat,
    last: Arc<LastInput>,
}

/// Whether a notifier of `version` ignores idle inhibitors (a video
/// playing, a fullscreen app): version 2's input notification does;
/// version 1's never idles while one is active, so input then goes
/// unseen.
pub(crate) fn ignores_inhibitors(version: u32) -> bool {
    version >= 2
}

impl IdleNotifyWatcher {
    /// Binds ext-idle-notify on this session's compositor.
    pub(crate) fn open(last: Arc<LastInput>) -> Result<Self, String> {
        let conn = Connection::connect_to_env().map_err(|e| format!("the compositor: {e}"))?;
        let (globals, queue) =
            registry_queue_init::<Watch>(&conn).map_err(|e| format!("its globals: {e}"))?;
        let qh = queue.handle();
        let notifier: ExtIdleNotifierV1 = globals
            .bind(&qh, 1..=2, ())
            .map_err(|e| format!("no ext-idle-notify: {e}"))?;
        let seat: wl_seat::WlSeat = globals
            .bind(&qh, 1..=1, ())
            .map_err(|e| format!("no seat: {e}"))?;
        Ok(Self {
            conn,
            queue: Mutex::new(queue),
            notifier,
            seat,
            last,
        })
    }
}

impl InputWatcher for IdleNotifyWatcher {
    fn start(self: Box<Self>, sink: Sink, _armed: Arc<AtomicBool>) -> Result<(), BackendError> {
        let IdleNotifyWatcher {
            conn,
            queue,
            notifier,
            seat,
            last,
        } = *self;
        let mut queue = queue
            .into_inner()
            .map_err(|_| BackendError::Failed("the idle watcher's queue".into()))?;
        let qh = queue.handle();
        let notification = if ignores_inhibitors(notifier.version()) {
            notifier.get_input_idle_notification(IDLE_MS, &seat, &qh, ())
        } else {
            tracing::warn!(
                "ext-idle-notify version 1: while an app inhibits idling (a video, a fullscreen app) the person's input is not seen"
            );
            notifier.get_idle_notification(IDLE_MS, &seat, &qh, ())
        };
        let mut watch = Watch {
            sink: sink.clone(),
            last,
        };
        queue
            .roundtrip(&mut watch)
            .map_err(|e| BackendError::Unsupported(format!("ext-idle-notify: {e}")))?;
        std::thread::Builder::new()
            .name("deskhand-idle-notify".into())
            .spawn(move || {
                let _keep = (notification, notifier, seat, conn);
                loop {
                    if let Err(e) = queue.blocking_dispatch(&mut watch) {
                        tracing::error!(error = %e, "the compositor's idle notifications ended");
                        sink(WatchedInput::WatcherLost);
                        return;
                    }
                }
            })
            .map_err(|e| BackendError::Failed(format!("the idle watcher's thread: {e}")))?;
        Ok(())
    }
}

impl Dispatch<ExtIdleNotificationV1, ()> for Watch {
    fn event(
        state: &mut Self,
        _: &ExtIdleNotificationV1,
        event: ext_idle_notification_v1::Event,
        _: &(),
        _: &Connection,
        _: &QueueHandle<Self>,
    ) {
        if matches!(event, ext_idle_notification_v1::Event::Resumed)
            && persons(state.last.get(), Instant::now())
        {
            (state.sink)(WatchedInput::ButtonPress { synthetic: false });
        }
    }
}

impl Dispatch<ExtIdleNotifierV1, ()> for Watch {
    fn event(
        _: &mut Self,
        _: &ExtIdleNotifierV1,
        _: <ExtIdleNotifierV1 as Proxy>::Event,
        _: &(),
        _: &Connection,
        _: &QueueHandle<Self>,
    ) {
    }
}

impl Dispatch<wl_seat::WlSeat, ()> for Watch {
    fn event(
        _: &mut Self,
        _: &wl_seat::WlSeat,
        _: wl_seat::Event,
        _: &(),
        _: &Connection,
        _: &QueueHandle<Self>,
    ) {
    }
}

impl Dispatch<wl_registry::WlRegistry, GlobalListContents> for Watch {
    fn event(
        _: &mut Self,
        _: &wl_registry::WlRegistry,
        _: wl_registry::Event,
        _: &GlobalListContents,
        _: &Connection,
        _: &QueueHandle<Self>,
    ) {
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_resume_is_the_persons_only_clearly_after_deskhands_own_input() {
        let now = Instant::now();
        let ms = Duration::from_millis;
        assert!(persons(None, now), "deskhand never sent any");
        assert!(persons(now.checked_sub(ms(500)), now));
        assert!(!persons(now.checked_sub(ms(60)), now), "that was ours");
    }

    #[test]
    fn only_version_2_sees_input_while_an_app_inhibits_idling() {
        assert!(!ignores_inhibitors(1));
        assert!(ignores_inhibitors(2));
    }
}
