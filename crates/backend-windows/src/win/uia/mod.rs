//! Accessibility through UI Automation: [`UiaAccessibility`] answers the
//! accessibility trait from one thread of its own, in the multithreaded
//! apartment, that owns the COM client (so callers on any thread never
//! touch COM). A read caches the window's whole control view in one
//! cross-process call and walks it; an act follows its path live.
//!
//! Written against the documented API and type-checked; not run yet:
//! Wine has no UI Automation (its client object is not registered), and
//! there the backend says so in `bus_status` and the doctor.

mod client;

use std::sync::Mutex;
use std::sync::mpsc::{self, Receiver, Sender};
use std::time::{Duration, Instant};

use deskhand_backend::BackendError;
use deskhand_backend::accessibility::{
    A11yNode, A11yTree, Accessibility, BusProblem, BusStatus, NodePath, NodeTarget, TextRead,
    TextWrite, TreeLimits, WindowRef,
};

use crate::uia::{UiaError, acts, tree};
use client::{Cached, Client, Live};

/// A job for the UI Automation thread.
type Job = Box<dyn FnOnce(&Result<Client, String>) + Send>;

/// How long an act or a check may take in all: UIA's own timeout bounds
/// each call, this bounds the wait for the thread.
const ACT_WAIT: Duration = Duration::from_secs(10);

/// The accessibility backend over UI Automation.
pub(crate) struct UiaAccessibility {
    jobs: Mutex<Sender<Job>>,
}

impl UiaAccessibility {
    /// Starts the UI Automation thread (it creates the client there).
    pub(crate) fn start() -> Result<Self, UiaError> {
        let (jobs, queue) = mpsc::channel::<Job>();
        std::thread::Builder::new()
            .name("deskhand-uia".into())
            .spawn(move || serve(queue))
            .map_err(|e| UiaError::Unavailable(format!("the UI Automation thread: {e}")))?;
        Ok(Self {
            jobs: Mutex::new(jobs),
        })
    }

    /// Runs `f` on the UI Automation thread and waits at most `wait`.
    fn run<T: Send + 'static>(
        &self,
        wait: Duration,
        f: impl FnOnce(&Client) -> Result<T, UiaError> + Send + 'static,
    ) -> Result<T, UiaError> {
        let (tx, rx) = mpsc::sync_channel(1);
        let job: Job = Box::new(move |client| {
            let out = match client {
                Ok(c) => f(c),
                Err(why) => Err(UiaError::Unavailable(why.clone())),
            };
            let _ = tx.send(out);
        });
        self.jobs
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .send(job)
            .map_err(|_| UiaError::Unavailable("the UI Automation thread ended".into()))?;
        rx.recv_timeout(wait).map_err(|_| UiaError::Timeout(wait))?
    }
}

/// The UI Automation thread: creates the client, then runs jobs until
/// the backend is dropped.
fn serve(queue: Receiver<Job>) {
    let client = Client::new().map_err(|e| match e {
        UiaError::Unavailable(why) => why,
        other => other.to_string(),
    });
    match &client {
        Ok(_) => tracing::info!("accessibility: UI Automation"),
        Err(e) => tracing::info!(error = %e, "accessibility: UI Automation is unavailable"),
    }
    for job in queue {
        job(&client);
    }
}

impl Accessibility for UiaAccessibility {
    fn read_window_tree(
        &self,
        window: &WindowRef,
        limits: &TreeLimits,
    ) -> Result<A11yTree, BackendError> {
        let (window, limits) = (window.clone(), *limits);
        let started = Instant::now();
        let read = self.run(limits.total_timeout, move |c| {
            c.bound_calls(limits.per_call_timeout);
            let light = limits.structure_only;
            let root = c.root(&window, light, true)?;
            tree::read_tree(&Cached { light }, root, &limits, started)
        })?;
        Ok(read)
    }

    fn read_nodes(
        &self,
        window: &WindowRef,
        paths: &[NodePath],
        limits: &TreeLimits,
    ) -> Result<Vec<Option<A11yNode>>, BackendError> {
        let (window, paths, limits) = (window.clone(), paths.to_vec(), *limits);
        let read = self.run(limits.total_timeout, move |c| {
            c.bound_calls(limits.per_call_timeout);
            let root = c.root(&window, false, false)?;
            tree::read_paths(&Live { client: c }, &root, &paths)
        })?;
        Ok(read)
    }

    fn press(&self, target: &NodeTarget, action: Option<&str>) -> Result<String, BackendError> {
        let (target, action) = (target.clone(), action.map(str::to_owned));
        let done = self.run(ACT_WAIT, move |c| {
            let root = c.root(&target.window, false, false)?;
            acts::press(&Live { client: c }, root, &target, action.as_deref())
        })?;
        Ok(done)
    }

    fn set_text(&self, target: &NodeTarget, text: &str) -> Result<TextWrite, BackendError> {
        let (target, text) = (target.clone(), text.to_owned());
        let done = self.run(ACT_WAIT, move |c| {
            let root = c.root(&target.window, false, false)?;
            acts::set_text(&Live { client: c }, root, &target, &text)
        })?;
        Ok(done)
    }

    fn read_text(&self, target: &NodeTarget) -> Result<TextRead, BackendError> {
        let target = target.clone();
        let read = self.run(ACT_WAIT, move |c| {
            let root = c.root(&target.window, false, false)?;
            acts::read_text(&Live { client: c }, root, &target)
        })?;
        Ok(read)
    }

    fn bus_status(&self) -> BusStatus {
        match self.run(ACT_WAIT, |_| Ok(())) {
            Ok(()) => BusStatus::Ok,
            Err(e) => BusStatus::Unavailable {
                problem: BusProblem::Unreachable,
                detail: e.to_string(),
            },
        }
    }
}

/// Whether UI Automation's client object can be created here, and what
/// failed when not (for the doctor, on a thread of its own).
pub(crate) fn check() -> Result<(), String> {
    UiaAccessibility::start()
        .and_then(|a| a.run(ACT_WAIT, |_| Ok(())))
        .map_err(|e| e.to_string())
}
