//! Accessibility on Windows: [`WinAccessibility`] answers the
//! accessibility trait from one thread of its own, in the multithreaded
//! apartment, that owns the COM objects (so callers on any thread never
//! touch COM). That thread creates UI Automation's client; where it
//! cannot (Wine 8: the class is not registered) it reads and acts through
//! MSAA (`IAccessible`) instead, and says why ([`Path`]). Either way the
//! walk, the paths, the act checks and the secure-field rules are
//! `crate::uia`'s.
//!
//! Under UI Automation a read caches the window's whole control view in
//! one cross-process call and walks it; an act follows its path live.
//! Under MSAA every read asks the app.

use std::sync::Mutex;
use std::sync::mpsc::{self, Receiver, Sender};
use std::time::{Duration, Instant};

use deskhand_backend::BackendError;
use deskhand_backend::accessibility::{
    A11yNode, A11yTree, Accessibility, BusProblem, BusStatus, NodePath, NodeTarget, TextRead,
    TextWrite, TreeLimits, WindowRef,
};

use super::msaa;
use super::uia::{Cached, Client, Live};
use crate::uia::{UiaError, acts, tree};

/// The accessibility API the thread reads and acts through.
pub(crate) enum Path {
    /// UI Automation's client object.
    Uia(Client),
    /// MSAA, because UI Automation's client could not be created (why).
    Msaa(String),
}

impl Path {
    /// What the doctor says of it.
    pub(crate) fn words(&self) -> String {
        match self {
            Path::Uia(_) => "UI Automation".into(),
            Path::Msaa(why) => format!("MSAA (IAccessible), because {why}"),
        }
    }
}

/// A job for the accessibility thread.
type Job = Box<dyn FnOnce(&Path) + Send>;

/// How long an act or a check may take in all: UIA's own timeout bounds
/// each call, this bounds the wait for the thread.
const ACT_WAIT: Duration = Duration::from_secs(10);

/// The accessibility backend over UI Automation, else MSAA.
pub(crate) struct WinAccessibility {
    jobs: Mutex<Sender<Job>>,
}

impl WinAccessibility {
    /// Starts the accessibility thread (it creates the client there).
    pub(crate) fn start() -> Result<Self, UiaError> {
        let (jobs, queue) = mpsc::channel::<Job>();
        std::thread::Builder::new()
            .name("deskhand-a11y".into())
            .spawn(move || serve(queue))
            .map_err(|e| UiaError::Unavailable(format!("the accessibility thread: {e}")))?;
        Ok(Self {
            jobs: Mutex::new(jobs),
        })
    }

    /// Runs `f` on the accessibility thread and waits at most `wait`.
    fn run<T: Send + 'static>(
        &self,
        wait: Duration,
        f: impl FnOnce(&Path) -> Result<T, UiaError> + Send + 'static,
    ) -> Result<T, UiaError> {
        let (tx, rx) = mpsc::sync_channel(1);
        let job: Job = Box::new(move |path| {
            let _ = tx.send(f(path));
        });
        self.jobs
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .send(job)
            .map_err(|_| UiaError::Unavailable("the accessibility thread ended".into()))?;
        rx.recv_timeout(wait).map_err(|_| UiaError::Timeout(wait))?
    }
}

/// The accessibility thread: creates UI Automation's client (else notes
/// why MSAA is used), then runs jobs until the backend is dropped.
fn serve(queue: Receiver<Job>) {
    let path = match Client::new() {
        Ok(c) => Path::Uia(c),
        Err(UiaError::Unavailable(why)) => Path::Msaa(why),
        Err(other) => Path::Msaa(other.to_string()),
    };
    tracing::info!(path = %path.words(), "accessibility");
    for job in queue {
        job(&path);
    }
}

impl Accessibility for WinAccessibility {
    fn read_window_tree(
        &self,
        window: &WindowRef,
        limits: &TreeLimits,
    ) -> Result<A11yTree, BackendError> {
        let (window, limits) = (window.clone(), *limits);
        let started = Instant::now();
        let read = self.run(limits.total_timeout, move |path| match path {
            Path::Uia(c) => {
                c.bound_calls(limits.per_call_timeout);
                let light = limits.structure_only;
                let root = c.root(&window, light, true)?;
                tree::read_tree(&Cached { light }, root, &limits, started)
            }
            Path::Msaa(_) => tree::read_tree(&msaa::Live, msaa::root(&window)?, &limits, started),
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
        let read = self.run(limits.total_timeout, move |path| match path {
            Path::Uia(c) => {
                c.bound_calls(limits.per_call_timeout);
                let root = c.root(&window, false, false)?;
                tree::read_paths(&Live { client: c }, &root, &paths)
            }
            Path::Msaa(_) => tree::read_paths(&msaa::Live, &msaa::root(&window)?, &paths),
        })?;
        Ok(read)
    }

    fn press(&self, target: &NodeTarget, action: Option<&str>) -> Result<String, BackendError> {
        let (target, action) = (target.clone(), action.map(str::to_owned));
        let done = self.run(ACT_WAIT, move |path| match path {
            Path::Uia(c) => {
                let root = c.root(&target.window, false, false)?;
                acts::press(&Live { client: c }, root, &target, action.as_deref())
            }
            Path::Msaa(_) => {
                let root = msaa::root(&target.window)?;
                acts::press(&msaa::Live, root, &target, action.as_deref())
            }
        })?;
        Ok(done)
    }

    fn set_text(&self, target: &NodeTarget, text: &str) -> Result<TextWrite, BackendError> {
        let (target, text) = (target.clone(), text.to_owned());
        let done = self.run(ACT_WAIT, move |path| match path {
            Path::Uia(c) => {
                let root = c.root(&target.window, false, false)?;
                acts::set_text(&Live { client: c }, root, &target, &text)
            }
            Path::Msaa(_) => {
                acts::set_text(&msaa::Live, msaa::root(&target.window)?, &target, &text)
            }
        })?;
        Ok(done)
    }

    fn read_text(&self, target: &NodeTarget) -> Result<TextRead, BackendError> {
        let target = target.clone();
        let read = self.run(ACT_WAIT, move |path| match path {
            Path::Uia(c) => {
                let root = c.root(&target.window, false, false)?;
                acts::read_text(&Live { client: c }, root, &target)
            }
            Path::Msaa(_) => acts::read_text(&msaa::Live, msaa::root(&target.window)?, &target),
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

/// The path accessibility takes here (UI Automation, else MSAA and why),
/// for the doctor, from a thread of its own; an error when neither
/// answers.
pub(crate) fn check() -> Result<String, String> {
    WinAccessibility::start()
        .and_then(|a| a.run(ACT_WAIT, |path| Ok(path.words())))
        .map_err(|e| e.to_string())
}
