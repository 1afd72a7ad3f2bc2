//! The serial executor: ONE thread owns the desktop, and every action from
//! every protocol runs on it, in order.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

use tokio::sync::oneshot;

use crate::desk::Desk;
use crate::error::EngineError;

type Job = Box<dyn FnOnce(&mut Desk) + Send>;

/// Handle to the executor thread.
pub struct Executor {
    tx: Mutex<Option<mpsc::Sender<Job>>>,
    /// Set at shutdown: jobs still queued are dropped, not run.
    stopping: Arc<AtomicBool>,
    thread: Mutex<Option<JoinHandle<()>>>,
}

impl Executor {
    /// Starts the thread that owns `desk`. When the queue closes, the thread
    /// releases everything still held before it exits.
    pub fn spawn(mut desk: Desk) -> Self {
        let (tx, rx) = mpsc::channel::<Job>();
        let stopping = Arc::new(AtomicBool::new(false));
        let stop = stopping.clone();
        let thread = std::thread::Builder::new()
            .name("deskhand-desktop".into())
            .spawn(move || {
                while let Ok(job) = rx.recv() {
                    if stop.load(Ordering::SeqCst) {
                        // Dropping the job drops its reply: the caller hears
                        // that deskhand is shutting down.
                        continue;
                    }
                    let run = std::panic::AssertUnwindSafe(|| job(&mut desk));
                    if std::panic::catch_unwind(run).is_err() {
                        tracing::error!("a desktop job panicked; releasing all held input");
                        desk.release_all();
                    }
                }
                desk.release_all();
                tracing::debug!("desktop executor stopped");
            })
            .ok();
        Self {
            tx: Mutex::new(Some(tx)),
            stopping,
            thread: Mutex::new(thread),
        }
    }

    /// Queues `job` for the desktop thread.
    fn submit(&self, job: Job) -> Result<(), EngineError> {
        let guard = self.tx.lock().map_err(|_| EngineError::ShuttingDown)?;
        let tx = guard.as_ref().ok_or(EngineError::ShuttingDown)?;
        tx.send(job).map_err(|_| EngineError::ShuttingDown)
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
