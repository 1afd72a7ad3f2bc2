//! The takeover indicator: the `deskhand-overlay` process, driven over
//! JSON lines (commands on its stdin, events on its stdout). It is started
//! at the first takeover and kept for the next; when deskhand dies its
//! stdin closes and it exits.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use deskhand_engine::{BackendError, Indicator, IndicatorEvent, IndicatorShown, Rect};
use serde_json::{Value, json};

/// How long the overlay gets to start and to answer a command.
const START_TIMEOUT: Duration = Duration::from_secs(5);
const ANSWER_TIMEOUT: Duration = Duration::from_secs(3);

type EventSink = Arc<dyn Fn(IndicatorEvent) + Send + Sync>;

/// Finds the overlay program: `$DESKHAND_OVERLAY`, next to this
/// executable, or on `PATH`.
pub(crate) fn find_overlay() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("DESKHAND_OVERLAY") {
        return Some(PathBuf::from(p));
    }
    let sibling = std::env::current_exe()
        .ok()
        .and_then(|exe| exe.parent().map(|d| d.join("deskhand-overlay")))
        .filter(|p| p.is_file());
    sibling.or_else(|| {
        std::env::var_os("PATH").and_then(|paths| {
            std::env::split_paths(&paths)
                .map(|d| d.join("deskhand-overlay"))
                .find(|p| p.is_file())
        })
    })
}

struct Running {
    child: Child,
    stdin: ChildStdin,
    replies: mpsc::Receiver<Value>,
}

/// The overlay process as the engine's [`Indicator`].
pub(crate) struct OverlayIndicator {
    program: PathBuf,
    display: String,
    running: Option<Running>,
    events: Arc<Mutex<Option<EventSink>>>,
    windows: Vec<u64>,
    /// Which overlay process is current: a replaced one's late events are
    /// not reported.
    generation: Arc<AtomicU64>,
}

fn failed(msg: impl Into<String>) -> BackendError {
    BackendError::Failed(msg.into())
}

fn rects_of(v: &Value) -> Vec<Rect> {
    v.get("rects")
        .and_then(Value::as_array)
        .map(|rs| {
            rs.iter()
                .filter_map(|r| {
                    Some(Rect::new(
                        i32::try_from(r.get("x")?.as_i64()?).ok()?,
                        i32::try_from(r.get("y")?.as_i64()?).ok()?,
                        u32::try_from(r.get("width")?.as_u64()?).ok()?,
                        u32::try_from(r.get("height")?.as_u64()?).ok()?,
                    ))
                })
                .collect()
        })
        .unwrap_or_default()
}

impl OverlayIndicator {
    pub(crate) fn new(program: &Path, display: &str) -> Self {
        Self {
            program: program.to_owned(),
            display: display.to_owned(),
            running: None,
            events: Arc::new(Mutex::new(None)),
            windows: Vec::new(),
            generation: Arc::new(AtomicU64::new(0)),
        }
    }

    fn spawn(&mut self) -> Result<(), BackendError> {
        let mut child = Command::new(&self.program)
            .env("DISPLAY", &self.display)
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
        std::thread::Builder::new()
            .name("deskhand-overlay-reader".into())
            .spawn(move || read_events(stdout, tx, events, current))
            .map_err(|e| failed(e.to_string()))?;
        let mut running = Running {
            child,
            stdin,
            replies,
        };
        match running.replies.recv_timeout(START_TIMEOUT) {
            Ok(v) if v["event"] == "ready" => {}
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

    /// Sends one command and waits for the answer it expects.
    fn command(&mut self, cmd: Value, expect: &str) -> Result<Value, BackendError> {
        if self.running.is_none() {
            self.spawn()?;
        }
        let Some(running) = self.running.as_mut() else {
            return Err(failed("the overlay is not running"));
        };
        // Answers to earlier commands that timed out are stale now.
        while running.replies.try_recv().is_ok() {}
        let sent = writeln!(running.stdin, "{cmd}").and_then(|()| running.stdin.flush());
        let answer = sent
            .map_err(|e| failed(format!("the overlay is gone: {e}")))
            .and_then(|()| {
                running
                    .replies
                    .recv_timeout(ANSWER_TIMEOUT)
                    .map_err(|_| failed("the overlay did not answer"))
            });
        match answer {
            Ok(v) if v["event"] == expect => Ok(v),
            Ok(v) => Err(failed(format!("the overlay answered {v}"))),
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
    replies: mpsc::Sender<Value>,
    events: Arc<Mutex<Option<EventSink>>>,
    current: impl Fn() -> bool,
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
        let Ok(v) = serde_json::from_str::<Value>(&line) else {
            tracing::warn!("unreadable line from the overlay");
            continue;
        };
        match v["event"].as_str() {
            Some("continue_clicked") => {
                report(IndicatorEvent::ContinueClicked(std::time::Instant::now()));
            }
            Some("lost") => report(IndicatorEvent::Lost(
                v["reason"].as_str().unwrap_or("lost").to_owned(),
            )),
            _ => {
                if replies.send(v).is_err() {
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
        let monitors: Vec<Value> = monitors
            .iter()
            .map(|m| json!({"x": m.x, "y": m.y, "width": m.width, "height": m.height}))
            .collect();
        let v = self.command(
            json!({"cmd": "show", "monitors": monitors, "paused": paused}),
            "shown",
        )?;
        self.windows = v["windows"]
            .as_array()
            .map(|ws| ws.iter().filter_map(Value::as_u64).collect())
            .unwrap_or_default();
        Ok(IndicatorShown {
            windows: self.windows.clone(),
            covered: rects_of(&v),
        })
    }

    fn set_paused(&mut self, paused: bool) -> Result<IndicatorShown, BackendError> {
        let cmd = if paused { "pause" } else { "resume" };
        let v = self.command(json!({ "cmd": cmd }), "changed")?;
        Ok(IndicatorShown {
            windows: self.windows.clone(),
            covered: rects_of(&v),
        })
    }

    fn hide(&mut self) -> Result<(), BackendError> {
        if self.running.is_none() {
            return Ok(());
        }
        self.command(json!({"cmd": "hide"}), "hidden")?;
        self.windows.clear();
        Ok(())
    }
}

impl Drop for OverlayIndicator {
    fn drop(&mut self) {
        if let Some(mut r) = self.running.take() {
            let _ = writeln!(r.stdin, "{}", json!({"cmd": "quit"}));
            drop(r.stdin);
            let _ = r.child.wait();
        }
    }
}
