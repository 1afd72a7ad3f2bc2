//! The takeover indicator as every backend runs it: the `deskhand-overlay`
//! process, driven over JSON lines (commands on its stdin, events on its
//! stdout). It is started at the first takeover and kept for the next;
//! when deskhand dies its stdin closes and it exits. What differs per
//! desktop is only how the drawn frame is checked before an act: a
//! [`FrameInspector`] of the backend's.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use deskhand_protocol::overlay::{Command as OverlayCommand, Event as OverlayEvent};
use deskhand_protocol::overlay_layout::{Layout, Press};

use crate::real_click::RealClicks;
use crate::{BackendError, FrameCheck, Indicator, IndicatorEvent, IndicatorShown, Rect};

/// How long the overlay gets to start and to answer a command.
const START_TIMEOUT: Duration = Duration::from_secs(5);
const ANSWER_TIMEOUT: Duration = Duration::from_secs(3);

type EventSink = Arc<dyn Fn(IndicatorEvent) + Send + Sync>;

/// What the overlay shows now (its buttons' places), and the backend's
/// own record of the person's clicks, when it keeps one: then a click the
/// overlay reports counts only when that record has a real click on the
/// button (see [`crate::real_click`]).
#[derive(Default)]
struct Buttons {
    layout: Mutex<Option<Layout>>,
    witness: Option<Arc<RealClicks>>,
}

impl Buttons {
    /// Whether the overlay's report of a click on `press` stands: with no
    /// witness, the overlay's word; with one, a real click on the button.
    fn confirmed(&self, press: Press) -> bool {
        let Some(witness) = &self.witness else {
            return true;
        };
        let layout = self
            .layout
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone();
        let button = layout.and_then(|l| {
            l.buttons()
                .into_iter()
                .find_map(|(p, r)| (p == press).then_some(r))
        });
        let Some(button) = button else {
            tracing::warn!(
                ?press,
                "a click reported on a button that is not shown: ignored"
            );
            return false;
        };
        let real = witness.wait_for_click_on(button);
        if !real {
            tracing::warn!(
                ?press,
                "a click the overlay reported that no real press and release on the button made (posted messages, injected input): ignored"
            );
        }
        real
    }
}

/// How a backend checks the overlay's windows, on a connection of its own
/// to the desktop (never the overlay's word for it).
pub trait FrameInspector: Send {
    /// Checks `windows` (window `i` was put on `monitors[i]`) against what
    /// they draw (`covered`), puts back what another program changed and
    /// says what that was; `None` when the frame is not on screen at all.
    fn inspect(
        &mut self,
        windows: &[u64],
        monitors: &[Rect],
        covered: &[Rect],
    ) -> Result<Option<FrameCheck>, BackendError>;
}

/// Finds the overlay program: `$DESKHAND_OVERLAY`, next to this
/// executable, or on `PATH`.
pub fn find_overlay() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("DESKHAND_OVERLAY") {
        return Some(PathBuf::from(p));
    }
    let name = format!("deskhand-overlay{}", std::env::consts::EXE_SUFFIX);
    let sibling = std::env::current_exe()
        .ok()
        .and_then(|exe| exe.parent().map(|d| d.join(&name)))
        .filter(|p| p.is_file());
    sibling.or_else(|| {
        std::env::var_os("PATH").and_then(|paths| {
            std::env::split_paths(&paths)
                .map(|d| d.join(&name))
                .find(|p| p.is_file())
        })
    })
}

struct Running {
    child: Child,
    stdin: ChildStdin,
    replies: mpsc::Receiver<OverlayEvent>,
}

/// The overlay process as the engine's [`Indicator`].
pub struct OverlayIndicator {
    program: PathBuf,
    /// The variables that name the desktop to the overlay (`DISPLAY`).
    env: Vec<(String, String)>,
    running: Option<Running>,
    events: Arc<Mutex<Option<EventSink>>>,
    windows: Vec<u64>,
    /// The monitors the windows were put on (window `i` on monitor `i`)
    /// and what the frame draws: checked before every act.
    monitors: Vec<Rect>,
    covered: Vec<Rect>,
    inspector: Box<dyn FrameInspector>,
    /// Which overlay process is current: a replaced one's late events are
    /// not reported.
    generation: Arc<AtomicU64>,
    /// The buttons shown and what vouches for a click on them.
    buttons: Arc<Buttons>,
}

fn failed(msg: impl Into<String>) -> BackendError {
    BackendError::Failed(msg.into())
}

impl OverlayIndicator {
    /// The overlay `program`, started with `env` and checked by
    /// `inspector`.
    pub fn new(
        program: &Path,
        env: Vec<(String, String)>,
        inspector: Box<dyn FrameInspector>,
    ) -> Self {
        Self {
            program: program.to_owned(),
            env,
            running: None,
            events: Arc::new(Mutex::new(None)),
            windows: Vec::new(),
            monitors: Vec::new(),
            covered: Vec::new(),
            inspector,
            generation: Arc::new(AtomicU64::new(0)),
            buttons: Arc::new(Buttons::default()),
        }
    }

    /// Clicks on Continue and Stop count only when `witness` (filled by the
    /// backend's watcher) saw a real press and release on the button.
    pub fn with_witness(mut self, witness: Arc<RealClicks>) -> Self {
        self.buttons = Arc::new(Buttons {
            layout: Mutex::new(None),
            witness: Some(witness),
        });
        self
    }

    /// Notes what the overlay shows now, for judging clicks on its buttons.
    fn note_layout(&self, layout: Option<Layout>) {
        *self
            .buttons
            .layout
            .lock()
            .unwrap_or_else(|e| e.into_inner()) = layout;
    }

    fn spawn(&mut self) -> Result<(), BackendError> {
        let mut child = Command::new(&self.program)
            .envs(self.env.iter().map(|(k, v)| (k, v)))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .map_err(|e| failed(format!("starting {}: {e}", self.program.display())))?;
        let stdin = child
            .stdin
            .take()
            .ok_or_else(|| failed("overlay without stdin"))?;
        let stdout = child
            .stdout
            .take()
            .ok_or_else(|| failed("overlay without stdout"))?;
        let (tx, replies) = mpsc::channel();
        let events = self.events.clone();
        let generation = self.generation.clone();
        let mine = generation.fetch_add(1, Ordering::SeqCst) + 1;
        let current = move || generation.load(Ordering::SeqCst) == mine;
        let buttons = self.buttons.clone();
        std::thread::Builder::new()
            .name("deskhand-overlay-reader".into())
            .spawn(move || read_events(stdout, tx, events, current, &buttons))
            .map_err(|e| failed(e.to_string()))?;
        let mut running = Running {
            child,
            stdin,
            replies,
        };
        match running.replies.recv_timeout(START_TIMEOUT) {
            Ok(OverlayEvent::Ready) => {}
            other => {
                let _ = running.child.kill();
                let _ = running.child.wait();
                return Err(failed(format!("the overlay did not start: {other:?}")));
            }
        }
        tracing::info!(pid = running.child.id(), "takeover overlay started");
        self.running = Some(running);
        Ok(())
    }

    /// Sends one command and waits for its answer; `expected` takes what
    /// it needs from the answer, or says it is not the one expected.
    fn command<T>(
        &mut self,
        cmd: &OverlayCommand,
        expected: impl FnOnce(OverlayEvent) -> Result<T, OverlayEvent>,
    ) -> Result<T, BackendError> {
        if self.running.is_none() {
            self.spawn()?;
        }
        let Some(running) = self.running.as_mut() else {
            return Err(failed("the overlay is not running"));
        };
        // Answers to earlier commands that timed out are stale now.
        while running.replies.try_recv().is_ok() {}
        let line = serde_json::to_string(cmd).map_err(|e| failed(e.to_string()))?;
        let sent = writeln!(running.stdin, "{line}").and_then(|()| running.stdin.flush());
        let answer = sent
            .map_err(|e| failed(format!("the overlay is gone: {e}")))
            .and_then(|()| {
                running
                    .replies
                    .recv_timeout(ANSWER_TIMEOUT)
                    .map_err(|_| failed("the overlay did not answer"))
            });
        match answer.map(expected) {
            Ok(Ok(wanted)) => Ok(wanted),
            Ok(Err(other)) => Err(failed(format!("the overlay answered {other:?}"))),
            Err(e) => {
                // A stuck or dead overlay is replaced at the next command.
                if let Some(mut r) = self.running.take() {
                    let _ = r.child.kill();
                    let _ = r.child.wait();
                }
                Err(e)
            }
        }
    }
}

fn read_events(
    stdout: std::process::ChildStdout,
    replies: mpsc::Sender<OverlayEvent>,
    events: Arc<Mutex<Option<EventSink>>>,
    current: impl Fn() -> bool,
    buttons: &Buttons,
) {
    let report = |e: IndicatorEvent| {
        if !current() {
            return;
        }
        let sink = events.lock().ok().and_then(|s| s.clone());
        if let Some(sink) = sink {
            sink(e);
        }
    };
    for line in BufReader::new(stdout).lines() {
        let Ok(line) = line else { break };
        let Ok(event) = serde_json::from_str::<OverlayEvent>(&line) else {
            tracing::warn!("unreadable line from the overlay");
            continue;
        };
        match event {
            OverlayEvent::ContinueClicked => {
                let at = std::time::Instant::now();
                if buttons.confirmed(Press::Continue) {
                    report(IndicatorEvent::ContinueClicked(at));
                }
            }
            OverlayEvent::StopClicked => {
                if buttons.confirmed(Press::Stop) {
                    report(IndicatorEvent::StopClicked);
                }
            }
            OverlayEvent::Lost { reason } => report(IndicatorEvent::Lost(reason)),
            answer => {
                if replies.send(answer).is_err() {
                    break;
                }
            }
        }
    }
    report(IndicatorEvent::Lost("exited".into()));
}

impl Indicator for OverlayIndicator {
    fn set_events(&mut self, sink: Arc<dyn Fn(IndicatorEvent) + Send + Sync>) {
        if let Ok(mut s) = self.events.lock() {
            *s = Some(sink);
        }
    }

    fn show(&mut self, monitors: &[Rect], paused: bool) -> Result<IndicatorShown, BackendError> {
        let cmd = OverlayCommand::Show {
            monitors: monitors.to_vec(),
            paused,
        };
        let (windows, covered) = self.command(&cmd, |e| match e {
            OverlayEvent::Shown { windows, rects } => Ok((windows, rects)),
            other => Err(other),
        })?;
        self.windows = windows.into_iter().map(u64::from).collect();
        self.monitors = monitors.to_vec();
        self.covered = covered.clone();
        self.note_layout(Some(Layout {
            monitors: monitors.to_vec(),
            paused,
        }));
        self.put_back("shown");
        Ok(IndicatorShown {
            windows: self.windows.clone(),
            covered,
        })
    }

    fn set_paused(&mut self, paused: bool) -> Result<IndicatorShown, BackendError> {
        let cmd = if paused {
            OverlayCommand::Pause
        } else {
            OverlayCommand::Resume
        };
        let covered = self.command(&cmd, |e| match e {
            OverlayEvent::Changed { rects, .. } => Ok(rects),
            other => Err(other),
        })?;
        self.covered = covered.clone();
        self.note_layout(Some(Layout {
            monitors: self.monitors.clone(),
            paused,
        }));
        self.put_back("look changed");
        Ok(IndicatorShown {
            windows: self.windows.clone(),
            covered,
        })
    }

    fn verify(&mut self) -> Result<FrameCheck, BackendError> {
        self.check_frame()?
            .ok_or_else(|| failed("the takeover frame is not on screen"))
    }

    fn hide(&mut self) -> Result<(), BackendError> {
        if self.running.is_none() {
            return Ok(());
        }
        self.command(&OverlayCommand::Hide, |e| match e {
            OverlayEvent::Hidden => Ok(()),
            other => Err(other),
        })?;
        self.windows.clear();
        self.monitors.clear();
        self.covered.clear();
        self.note_layout(None);
        Ok(())
    }
}

impl OverlayIndicator {
    /// Checks the frame through the backend's inspector.
    fn check_frame(&mut self) -> Result<Option<FrameCheck>, BackendError> {
        if self.windows.is_empty() {
            return Ok(Some(FrameCheck::Intact));
        }
        self.inspector
            .inspect(&self.windows, &self.monitors, &self.covered)
    }

    /// After the frame is shown or changes look: where another program
    /// moved or hid it while no act was checking (a frame left off screen
    /// by an earlier takeover), it is put back now.
    fn put_back(&mut self, when: &'static str) {
        match self.check_frame() {
            Ok(Some(FrameCheck::Intact) | None) => {}
            Ok(Some(FrameCheck::Restored(what))) => {
                tracing::warn!(when, what, "the takeover frame had been changed: put back");
            }
            Err(e) => tracing::warn!(error = %e, when, "the takeover frame could not be checked"),
        }
    }
}

impl Drop for OverlayIndicator {
    fn drop(&mut self) {
        if let Some(mut r) = self.running.take() {
            if let Ok(line) = serde_json::to_string(&OverlayCommand::Quit) {
                let _ = writeln!(r.stdin, "{line}");
            }
            drop(r.stdin);
            let _ = r.child.wait();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Point;

    fn paused_on_one_monitor(witness: &Arc<RealClicks>) -> Buttons {
        Buttons {
            layout: Mutex::new(Some(Layout {
                monitors: vec![Rect::new(0, 0, 1280, 800)],
                paused: true,
            })),
            witness: Some(witness.clone()),
        }
    }

    #[test]
    fn with_a_witness_only_a_real_click_on_the_button_confirms_it() {
        let witness = Arc::new(RealClicks::default());
        let buttons = paused_on_one_monitor(&witness);
        // The person clicks into their own window; a program posts a
        // click on Continue to the overlay, which reports it.
        witness.pressed(Point::new(300, 400));
        witness.released(Point::new(300, 400));
        assert!(!buttons.confirmed(Press::Continue));
        // The person's own click on Continue (the top centre, where the
        // end-to-end tests click it).
        witness.pressed(Point::new(640, 62));
        witness.released(Point::new(640, 62));
        assert!(
            !buttons.confirmed(Press::Stop),
            "a click on Continue is not one on Stop"
        );
        assert!(buttons.confirmed(Press::Continue));
        assert!(!buttons.confirmed(Press::Continue), "spent");
    }

    #[test]
    fn without_buttons_shown_nothing_is_confirmed_and_without_a_witness_the_overlay_is_believed() {
        let witness = Arc::new(RealClicks::default());
        let buttons = paused_on_one_monitor(&witness);
        *buttons.layout.lock().unwrap_or_else(|e| e.into_inner()) = Some(Layout {
            monitors: vec![Rect::new(0, 0, 1280, 800)],
            paused: false,
        });
        witness.pressed(Point::new(640, 62));
        witness.released(Point::new(640, 62));
        assert!(
            !buttons.confirmed(Press::Continue),
            "no Continue while active"
        );
        assert!(Buttons::default().confirmed(Press::Continue));
    }
}
