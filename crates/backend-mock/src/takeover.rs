//! The mock takeover indicator and input watcher: the test plays the
//! person through [`MockDesktop::person`] and [`MockDesktop::click_continue`].

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use deskhand_backend::{
    BackendError, Indicator, IndicatorEvent, IndicatorShown, InputWatcher, Rect, WatchedInput,
};

use crate::MockDesktop;

/// What the mock indicator shows.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct MockIndicatorState {
    /// On screen.
    pub shown: bool,
    /// In the paused look.
    pub paused: bool,
    /// The monitors it frames.
    pub monitors: Vec<Rect>,
    /// When set, the next `show` fails (an indicator that cannot be shown).
    pub fail_show: bool,
}

type Sink<T> = Arc<dyn Fn(T) + Send + Sync>;

/// Where the mock's indicator and watcher report to.
#[derive(Default)]
pub(crate) struct Hooks {
    indicator_events: Option<Sink<IndicatorEvent>>,
    watcher: Option<(Sink<WatchedInput>, Arc<AtomicBool>)>,
}

/// The mock indicator.
pub struct MockIndicator(pub(crate) MockDesktop);

/// The mock watcher.
pub struct MockWatcher(pub(crate) MockDesktop);

impl MockDesktop {
    fn hooks(&self) -> std::sync::MutexGuard<'_, Hooks> {
        self.hooks.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The person's input, as the watcher would report it.
    pub fn person(&self, input: WatchedInput) {
        let sink = self.hooks().watcher.as_ref().map(|(s, _)| s.clone());
        if let Some(sink) = sink {
            sink(input);
        }
    }

    /// The person moves the pointer to `(x, y)` (the mock's pointer moves,
    /// and the watcher reports where it is).
    pub fn person_moves_pointer(&self, x: i32, y: i32) {
        let p = deskhand_backend::Point::new(x, y);
        self.state().pointer = p;
        self.person(WatchedInput::Pointer(p));
    }

    /// The person clicks Continue on the indicator with their mouse (the
    /// watcher sees a device's press, then the indicator the click).
    pub fn click_continue(&self) {
        self.click_continue_pressed_by(false);
    }

    /// Another program clicks Continue through the synthetic-input device
    /// (as `xdotool click` does): the watcher sees an XTEST press.
    pub fn click_continue_synthetic(&self) {
        self.click_continue_pressed_by(true);
    }

    fn click_continue_pressed_by(&self, synthetic: bool) {
        self.person(WatchedInput::ButtonPress { synthetic });
        let sink = self.hooks().indicator_events.clone();
        if let Some(sink) = sink {
            sink(IndicatorEvent::ContinueClicked(std::time::Instant::now()));
        }
    }

    /// The person clicks "Stop agents" on the paused indicator.
    pub fn click_stop(&self) {
        self.person(WatchedInput::ButtonPress { synthetic: false });
        let sink = self.hooks().indicator_events.clone();
        if let Some(sink) = sink {
            sink(IndicatorEvent::StopClicked);
        }
    }

    /// Someone else takes the indicator down.
    pub fn lose_indicator(&self) {
        self.state().indicator.shown = false;
        let sink = self.hooks().indicator_events.clone();
        if let Some(sink) = sink {
            sink(IndicatorEvent::Lost("unmapped".into()));
        }
    }

    /// Whether the watcher is polling (a takeover is on and not paused).
    pub fn watcher_armed(&self) -> bool {
        self.hooks()
            .watcher
            .as_ref()
            .is_some_and(|(_, armed)| armed.load(Ordering::SeqCst))
    }
}

impl MockIndicator {
    fn shown(&self) -> IndicatorShown {
        let s = self.0.state();
        IndicatorShown {
            windows: if s.indicator.shown {
                vec![0xdead]
            } else {
                Vec::new()
            },
            covered: s.indicator.monitors.clone(),
        }
    }
}

impl Indicator for MockIndicator {
    fn set_events(&mut self, sink: Arc<dyn Fn(IndicatorEvent) + Send + Sync>) {
        self.0.hooks().indicator_events = Some(sink);
    }

    fn show(&mut self, monitors: &[Rect], paused: bool) -> Result<IndicatorShown, BackendError> {
        {
            let mut s = self.0.state();
            if std::mem::take(&mut s.indicator.fail_show) {
                return Err(BackendError::Failed("the overlay cannot be shown".into()));
            }
            s.indicator.shown = true;
            s.indicator.paused = paused;
            s.indicator.monitors = monitors.to_vec();
        }
        Ok(self.shown())
    }

    fn set_paused(&mut self, paused: bool) -> Result<IndicatorShown, BackendError> {
        self.0.state().indicator.paused = paused;
        Ok(self.shown())
    }

    fn hide(&mut self) -> Result<(), BackendError> {
        let mut s = self.0.state();
        s.indicator.shown = false;
        s.indicator.paused = false;
        Ok(())
    }
}

impl InputWatcher for MockWatcher {
    fn start(
        self: Box<Self>,
        sink: Arc<dyn Fn(WatchedInput) + Send + Sync>,
        armed: Arc<AtomicBool>,
    ) -> Result<(), BackendError> {
        self.0.hooks().watcher = Some((sink, armed));
        Ok(())
    }
}

/// Keeps `Hooks` out of `Debug` output.
pub(crate) type SharedHooks = Arc<Mutex<Hooks>>;
