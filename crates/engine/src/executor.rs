//! The serial executor: ONE thread owns the desktop, and every action from
//! every protocol runs on it, in order.
//!
//! A brief job (a few round trips to the display server, no sleeping) may
//! instead run on the caller's thread when the desktop is idle: nothing
//! queued, nothing running. The desk is behind a lock that the desktop
//! thread holds for each job, so that the desktop still does one thing at
//! a time; the saving is the hop to the desktop thread and back (on a
//! virtual machine, waking an idle CPU twice), which is most of a pointer
//! move's time.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError, TryLockError};
use std::thread::JoinHandle;

use tokio::sync::oneshot;

use crate::desk::Desk;
use crate::error::EngineError;

type Job = Box<dyn FnOnce(&mut Desk) + Send>;

/// Handle to the executor thread.
pub struct Executor {
    desk: Arc<Mutex<Desk>>,
    /// Jobs handed to the thread and not finished yet.
    pending: Arc<AtomicUsize>,
    tx: Mutex<Option<mpsc::Sender<Job>>>,
    /// Set at shutdown: jobs still queued are dropped, not run.
    stopping: Arc<AtomicBool>,
    thread: Mutex<Option<JoinHandle<()>>>,
}

/// The desk, locked. A job that panics is caught where it runs (and
/// everything held released), so a poisoned lock holds a consistent desk.
fn lock(desk: &Mutex<Desk>) -> MutexGuard<'_, Desk> {
    desk.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Runs `f`; if it panics, releases everything held and returns `None`.
fn run_caught<R>(desk: &mut Desk, f: impl FnOnce(&mut Desk) -> R) -> Option<R> {
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| f(desk))) {
        Ok(r) => Some(r),
        Err(_) => {
            tracing::error!("a desktop job panicked; releasing all held input");
            desk.release_all();
            None
        }
    }
}

impl Executor {
    /// Starts the thread that owns `desk`. When the queue closes, the thread
    /// releases everything still held before it exits.
    pub fn spawn(desk: Desk) -> Self {
        let (tx, rx) = mpsc::channel::<Job>();
        let desk = Arc::new(Mutex::new(desk));
        let pending = Arc::new(AtomicUsize::new(0));
        let stopping = Arc::new(AtomicBool::new(false));
        let (shared, left, stop) = (desk.clone(), pending.clone(), stopping.clone());
        let thread = std::thread::Builder::new()
            .name("deskhand-desktop".into())
            .spawn(move || {
                while let Ok(job) = rx.recv() {
                    // Once stopping, dropping the job drops its reply: the
                    // caller hears that deskhand is shutting down.
                    if !stop.load(Ordering::SeqCst) {
                        run_caught(&mut lock(&shared), job);
                    }
                    left.fetch_sub(1, Ordering::SeqCst);
                }
                lock(&shared).release_all();
                tracing::debug!("desktop executor stopped");
            })
            .ok();
        Self {
            desk,
            pending,
            tx: Mutex::new(Some(tx)),
            stopping,
            thread: Mutex::new(thread),
        }
    }

    /// Queues `job` for the desktop thread.
    fn submit(&self, job: Job) -> Result<(), EngineError> {
        let guard = self.tx.lock().map_err(|_| EngineError::ShuttingDown)?;
        let tx = guard.as_ref().ok_or(EngineError::ShuttingDown)?;
        self.pending.fetch_add(1, Ordering::SeqCst);
        tx.send(job).map_err(|_| {
            self.pending.fetch_sub(1, Ordering::SeqCst);
            EngineError::ShuttingDown
        })
    }

    /// Runs `f` on the desktop thread and waits for its result.
    pub async fn run<R, F>(&self, f: F) -> Result<R, EngineError>
    where
        R: Send + 'static,
        F: FnOnce(&mut Desk) -> R + Send + 'static,
    {
        let (reply_tx, reply_rx) = oneshot::channel();
        self.submit(Box::new(move |desk| {
            let _ = reply_tx.send(f(desk));
        }))?;
        reply_rx.await.map_err(|_| EngineError::ShuttingDown)
    }

    /// Runs a brief `f` (a few round trips to the display server, never a
    /// sleep) at once on the calling thread when the desktop is idle, and
    /// otherwise queues it as [`Executor::run`] does. It blocks the caller
    /// while it runs, so it is for nothing longer than a pointer move, a
    /// click or a query.
    pub async fn run_brief<R, F>(&self, f: F) -> Result<R, EngineError>
    where
        R: Send + 'static,
        F: FnOnce(&mut Desk) -> R + Send + 'static,
    {
        if self.pending.load(Ordering::SeqCst) == 0 {
            let guard = match self.desk.try_lock() {
                Ok(guard) => Some(guard),
                Err(TryLockError::Poisoned(e)) => Some(e.into_inner()),
                Err(TryLockError::WouldBlock) => None,
            };
            if let Some(mut desk) = guard {
                // Checked under the lock: shutdown's final release takes it
                // after setting the flag, so nothing runs after that release.
                if self.stopping.load(Ordering::SeqCst) {
                    return Err(EngineError::ShuttingDown);
                }
                return run_caught(&mut desk, f).ok_or(EngineError::ShuttingDown);
            }
        }
        self.run(f).await
    }

    /// [`Executor::run_brief`] when `brief`, else [`Executor::run`].
    pub async fn run_maybe_brief<R, F>(&self, brief: bool, f: F) -> Result<R, EngineError>
    where
        R: Send + 'static,
        F: FnOnce(&mut Desk) -> R + Send + 'static,
    {
        if brief {
            self.run_brief(f).await
        } else {
            self.run(f).await
        }
    }

    /// Like [`Executor::run`], for threads outside the async runtime (never
    /// the desktop thread itself).
    pub fn run_blocking<R, F>(&self, f: F) -> Result<R, EngineError>
    where
        R: Send + 'static,
        F: FnOnce(&mut Desk) -> R + Send + 'static,
    {
        let (reply_tx, reply_rx) = std::sync::mpsc::sync_channel(1);
        self.submit(Box::new(move |desk| {
            let _ = reply_tx.send(f(desk));
        }))?;
        reply_rx.recv().map_err(|_| EngineError::ShuttingDown)
    }

    /// Closes the queue, drops the jobs still queued (the running one
    /// finishes), releases everything held and joins the thread. Idempotent.
    pub fn shutdown(&self) {
        self.stopping.store(true, Ordering::SeqCst);
        if let Ok(mut tx) = self.tx.lock() {
            tx.take();
        }
        let handle = self.thread.lock().ok().and_then(|mut t| t.take());
        if let Some(handle) = handle {
            let _ = handle.join();
        }
    }
}

impl Drop for Executor {
    fn drop(&mut self) {
        self.shutdown();
    }
}

#[cfg(test)]
mod tests {
    use std::sync::mpsc::sync_channel;
    use std::thread::{self, ThreadId};
    use std::time::Duration;

    use super::*;
    use crate::backend::{BackendError, Button, Displays, Input, ScrollDirection};
    use crate::geometry::{Monitor, Point};
    use crate::handback::HandBack;
    use crate::keys::Key;
    use crate::ledger::Held;

    /// Which buttons were released, in order.
    type Releases = Arc<Mutex<Vec<Button>>>;

    struct NoDisplays;

    impl Displays for NoDisplays {
        fn monitors(&mut self) -> Result<Vec<Monitor>, BackendError> {
            Ok(Vec::new())
        }
        fn cursor_position(&mut self) -> Result<Point, BackendError> {
            Ok(Point::new(0, 0))
        }
    }

    struct ButtonLog(Releases);

    impl Input for ButtonLog {
        fn move_pointer(&mut self, _: Point) -> Result<(), BackendError> {
            Ok(())
        }
        fn button(&mut self, button: Button, press: bool) -> Result<(), BackendError> {
            if !press && let Ok(mut log) = self.0.lock() {
                log.push(button);
            }
            Ok(())
        }
        fn key(&mut self, _: Key, _: bool) -> Result<(), BackendError> {
            Ok(())
        }
        fn text(&mut self, _: &str) -> Result<(), BackendError> {
            Ok(())
        }
        fn scroll(&mut self, _: ScrollDirection, _: u32) -> Result<(), BackendError> {
            Ok(())
        }
    }

    fn executor() -> (Executor, Releases) {
        let releases = Releases::default();
        let backend = crate::test_support::input_only_backend(
            Box::new(NoDisplays),
            Box::new(ButtonLog(releases.clone())),
        );
        let desk = Desk::new(backend, Arc::new(HandBack::new()));
        (Executor::spawn(desk), releases)
    }

    fn here() -> ThreadId {
        thread::current().id()
    }

    #[tokio::test]
    async fn a_brief_job_runs_on_the_callers_thread_when_the_desktop_is_idle() {
        let (exec, _) = executor();
        let caller = here();
        assert_eq!(exec.run_brief(|_| here()).await.ok(), Some(caller));
        // A job that is not brief still goes to the desktop thread.
        let queued = exec.run(|_| here()).await.ok();
        assert!(queued.is_some_and(|t| t != caller));
    }

    #[tokio::test]
    async fn a_brief_job_waits_for_the_job_running_on_the_desktop() {
        let exec = Arc::new(executor().0);
        let order = Arc::new(Mutex::new(Vec::new()));
        let (started_tx, started) = sync_channel(1);
        let long = {
            let (exec, order) = (exec.clone(), order.clone());
            thread::spawn(move || {
                exec.run_blocking(move |_| {
                    let _ = started_tx.send(());
                    thread::sleep(Duration::from_millis(100));
                    order.lock().map(|mut o| o.push("long")).ok();
                })
            })
        };
        started.recv().ok();
        let log = order.clone();
        let ran_on = exec
            .run_brief(move |_| {
                log.lock().map(|mut o| o.push("brief")).ok();
                here()
            })
            .await
            .ok();
        assert!(long.join().is_ok_and(|r| r.is_ok()));
        assert_eq!(
            *order.lock().unwrap_or_else(PoisonError::into_inner),
            ["long", "brief"]
        );
        assert!(
            ran_on.is_some_and(|t| t != here()),
            "it was queued, not run here"
        );
    }

    #[tokio::test]
    async fn nothing_runs_after_shutdown() {
        let (exec, _) = executor();
        exec.shutdown();
        let ran = Arc::new(AtomicBool::new(false));
        let flag = ran.clone();
        let result = exec
            .run_brief(move |_| flag.store(true, Ordering::SeqCst))
            .await;
        assert!(matches!(result, Err(EngineError::ShuttingDown)));
        assert!(!ran.load(Ordering::SeqCst));
    }

    #[tokio::test]
    async fn a_brief_job_that_panics_releases_what_is_held_and_the_desk_lives_on() {
        let (exec, releases) = executor();
        let result = exec
            .run_brief(|desk| {
                desk.ledger.pressed("s", Held::Button(Button::Left));
                panic!("job failed while the button was held");
            })
            .await;
        assert!(matches!(result, Err(EngineError::ShuttingDown)));
        assert_eq!(
            *releases.lock().unwrap_or_else(PoisonError::into_inner),
            [Button::Left]
        );
        let held = exec
            .run_brief(|desk| desk.ledger.is_held(Held::Button(Button::Left)))
            .await;
        assert_eq!(held.ok(), Some(false));
    }
}
