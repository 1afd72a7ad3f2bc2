//! Hand-back: a listen-only `CGEventTap` at the session tap, on a thread
//! of its own running a `CFRunLoop`, reports every press and move as the
//! person's or synthetic ([`crate::events::classify`]) and the kill
//! switch's chord; a second thread polls the pointer every 20 ms while
//! the engine arms it. A listen-only tap needs the Input Monitoring
//! permission: without it (`CGPreflightListenEventAccess`, checked first,
//! since making the tap would prompt) the watcher does not start and
//! says which pane to open.

use std::cell::{Cell, OnceCell};
use std::ffi::c_void;
use std::ptr::NonNull;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, mpsc};
use std::time::Duration;

use deskhand_backend::{BackendError, Chord, InputWatcher, KillSwitchHotkey, WatchedInput};
use objc2_core_foundation::{CFMachPort, CFRetained, CFRunLoop, kCFRunLoopCommonModes};
use objc2_core_graphics::{
    CGEvent, CGEventField, CGEventTapLocation, CGEventTapOptions, CGEventTapPlacement,
    CGEventTapProxy, CGEventType,
};

use super::SharedLayout;
use super::displays::pointer_points;
use super::permissions::require;
use crate::events::{
    EventFields, Seen, Source, classify, kind, modifier_pressed, source, tap_mask,
};
use crate::keys::{chord_of, is_chord};

type Sink = Arc<dyn Fn(WatchedInput) + Send + Sync>;

/// How often the pointer is read while armed.
const POLL: Duration = Duration::from_millis(20);

/// How long `start` waits for the tap to be made.
const TAP_WAIT: Duration = Duration::from_secs(3);

pub(crate) struct TapWatcher {
    kill: KillSwitchHotkey,
    layout: SharedLayout,
}

impl TapWatcher {
    pub(crate) fn new(kill: KillSwitchHotkey, layout: SharedLayout) -> Self {
        Self { kill, layout }
    }
}

/// What the tap's callback works with, on the tap's thread only.
struct TapState {
    sink: Sink,
    kill: KillSwitchHotkey,
    /// The modifier flags of the last `FlagsChanged`, to tell a press
    /// from a release.
    flags: Cell<u64>,
    /// The tap, to turn it on again when the system turns it off.
    port: OnceCell<CFRetained<CFMachPort>>,
}

impl TapState {
    fn seen(&self, event_type: u32, event: &CGEvent) {
        let fields = EventFields {
            user_data: CGEvent::integer_value_field(Some(event), CGEventField::EventSourceUserData),
            source_state: CGEvent::integer_value_field(
                Some(event),
                CGEventField::EventSourceStateID,
            ),
            source_pid: CGEvent::integer_value_field(
                Some(event),
                CGEventField::EventSourceUnixProcessID,
            ),
        };
        if event_type == kind::LEFT_MOUSE_DOWN {
            // The Continue rule counts on a real click naming no posting
            // process: the first run on a Mac checks it here.
            tracing::debug!(
                source_state = fields.source_state,
                source_pid = fields.source_pid,
                tagged = fields.user_data == crate::events::TAG,
                "left mouse down seen by the event tap"
            );
        }
        let flags = CGEvent::flags(Some(event)).0;
        let modifier_down =
            event_type == kind::FLAGS_CHANGED && modifier_pressed(self.flags.replace(flags), flags);
        if event_type == kind::KEY_DOWN
            && source(fields) != Source::Deskhand
            && self.is_kill_switch(event, flags)
        {
            (self.sink)(WatchedInput::KillSwitch);
        }
        match classify(event_type, fields, modifier_down) {
            Seen::Input(input) => (self.sink)(input),
            Seen::Reenable => {
                tracing::warn!("the event tap was turned off by the system: on again");
                if let Some(port) = self.port.get() {
                    CGEvent::tap_enable(port, true);
                }
            }
            Seen::Ignore => {}
        }
    }

    /// Whether a key-down is the kill switch's chord as it is now.
    fn is_kill_switch(&self, event: &CGEvent, flags: u64) -> bool {
        let code = CGEvent::integer_value_field(Some(event), CGEventField::KeyboardEventKeycode);
        let chord = Chord::parse(&self.kill.current())
            .ok()
            .and_then(|c| chord_of(&c));
        chord.is_some_and(|c| u16::try_from(code).is_ok_and(|code| is_chord(c, code, flags)))
    }
}

/// The tap's callback: reports the event and passes it on unchanged.
unsafe extern "C-unwind" fn on_event(
    _proxy: CGEventTapProxy,
    event_type: CGEventType,
    event: NonNull<CGEvent>,
    state: *mut c_void,
) -> *mut CGEvent {
    // SAFETY: `state` is the `TapState` `run_tap` keeps alive for as long
    // as its run loop runs, which is the only time this is called.
    let state = unsafe { &*state.cast::<TapState>() };
    // SAFETY: the event is valid for the duration of the callback.
    let event_ref = unsafe { event.as_ref() };
    // A panic must not unwind through CoreGraphics' frames.
    let seen = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        state.seen(event_type.0, event_ref);
    }));
    if seen.is_err() {
        tracing::error!("the event tap's handler panicked; the event passes on");
    }
    event.as_ptr()
}

/// Makes the tap on this thread and runs its run loop; says on `ready`
/// whether the tap could be made.
fn run_tap(sink: Sink, kill: KillSwitchHotkey, ready: mpsc::Sender<Result<(), String>>) {
    let state = TapState {
        sink: sink.clone(),
        kill,
        flags: Cell::new(0),
        port: OnceCell::new(),
    };
    let user: *const TapState = &state;
    // SAFETY: the callback matches `CGEventTapCallBack`; `state` outlives
    // the tap's run loop, which runs on this thread until it ends.
    let port = unsafe {
        CGEvent::tap_create(
            CGEventTapLocation::SessionEventTap,
            CGEventTapPlacement::HeadInsertEventTap,
            CGEventTapOptions::ListenOnly,
            tap_mask(),
            Some(on_event),
            user.cast_mut().cast(),
        )
    };
    let Some(port) = port else {
        let _ = ready.send(Err("the event tap could not be made: allow deskhand in System Settings → Privacy & Security → Input Monitoring".into()));
        return;
    };
    let source = CFMachPort::new_run_loop_source(None, Some(&port), 0);
    let (Some(run_loop), Some(source)) = (CFRunLoop::current(), source) else {
        let _ = ready.send(Err("no run loop for the event tap".into()));
        return;
    };
    // SAFETY: a constant of CoreFoundation.
    let common = unsafe { kCFRunLoopCommonModes };
    run_loop.add_source(Some(&source), common);
    CGEvent::tap_enable(&port, true);
    let _ = state.port.set(port);
    let _ = ready.send(Ok(()));
    CFRunLoop::run();
    tracing::error!("the event tap's run loop ended: no hand-back from now on");
    sink(WatchedInput::WatcherLost);
}

/// Reports the pointer every [`POLL`] while `armed`.
fn poll_pointer(sink: Sink, armed: Arc<AtomicBool>, layout: SharedLayout) {
    loop {
        std::thread::sleep(POLL);
        if !armed.load(Ordering::SeqCst) {
            continue;
        }
        let at = pointer_points()
            .ok()
            .and_then(|(x, y)| layout.current().ok()?.to_pixels(x, y));
        if let Some(p) = at {
            sink(WatchedInput::Pointer(p));
        }
    }
}

impl InputWatcher for TapWatcher {
    fn start(self: Box<Self>, sink: Sink, armed: Arc<AtomicBool>) -> Result<(), BackendError> {
        // Making the tap without the permission would prompt the person.
        require("input_monitoring")?;
        let (ready, answer) = mpsc::channel();
        let tap_sink = sink.clone();
        let kill = self.kill.clone();
        std::thread::Builder::new()
            .name("deskhand-event-tap".into())
            .spawn(move || run_tap(tap_sink, kill, ready))
            .map_err(|e| BackendError::Failed(format!("no event tap thread: {e}")))?;
        match answer.recv_timeout(TAP_WAIT) {
            Ok(Ok(())) => {}
            Ok(Err(why)) => return Err(BackendError::Unsupported(why)),
            Err(_) => {
                return Err(BackendError::Failed(
                    "the event tap did not start in time".into(),
                ));
            }
        }
        let layout = self.layout.clone();
        std::thread::Builder::new()
            .name("deskhand-pointer".into())
            .spawn(move || poll_pointer(sink, armed, layout))
            .map_err(|e| BackendError::Failed(format!("no pointer thread: {e}")))?;
        Ok(())
    }
}
