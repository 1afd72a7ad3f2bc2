//! Accessibility on Windows: [`WinAccessibility`] answers the
//! accessibility trait from one thread of its own, in the multithreaded
//! apartment, that owns the COM objects (so callers on any thread never
//! touch COM). That thread creates UI Automation's client; where it
//! cannot (Wine 8: the class is not registered) it reads and acts through
//! MSAA (`IAccessible`) instead, and says why ([`Path`]). A window
//! UI Automation has no element for is read and acted on through MSAA
//! too ([`root_of`]; not run yet: under Wine UIA's client is missing). Either way the
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

use windows::Win32::UI::Accessibility::IUIAutomationElement;

use super::msaa;
use super::uia::{Cached, Client, Live};
use crate::uia::map::Props;
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

/// Where a window's elements come from: UI Automation, or MSAA (where
/// UIA's client is missing, or it has no element for the window).
enum Root<'a> {
    /// The window's UI Automation element, and the client.
    Uia(&'a Client, IUIAutomationElement, Props),
    /// The window's MSAA object.
    Msaa(msaa::Obj, Props),
}

/// The root of `window` on `path` (`light` and `subtree` as
/// [`Client::root`] takes them). Under UI Automation, a window whose
/// element cannot be had (a call failed, not a window gone) is read and
/// acted on through MSAA: every read and act of it asks the same way, so
/// its paths stay one API's.
fn root_of<'a>(
    path: &'a Path,
    window: &WindowRef,
    light: bool,
    subtree: bool,
) -> Result<Root<'a>, UiaError> {
    match path {
        Path::Uia(c) => match c.root(window, light, subtree) {
            Ok((e, p)) => Ok(Root::Uia(c, e, p)),
            Err(e @ UiaError::Call { .. }) => {
                tracing::info!(error = %e, "this window has no UI Automation element: MSAA answers for it");
                let (o, p) = msaa::root(window)?;
                Ok(Root::Msaa(o, p))
            }
            Err(e) => Err(e),
        },
        Path::Msaa(_) => {
            let (o, p) = msaa::root(window)?;
            Ok(Root::Msaa(o, p))
        }
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
        let read = self.run(limits.total_timeout, move |path| {
            if let Path::Uia(c) = path {
                c.bound_calls(limits.per_call_timeout);
            }
            let light = limits.structure_only;
            match root_of(path, &window, light, true)? {
                Root::Uia(_, e, p) => tree::read_tree(&Cached { light }, (e, p), &limits, started),
                Root::Msaa(o, p) => tree::read_tree(&msaa::Live, (o, p), &limits, started),
            }
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
        let read = self.run(limits.total_timeout, move |path| {
            match root_of(path, &window, false, false)? {
                Root::Uia(c, e, p) => {
                    c.bound_calls(limits.per_call_timeout);
                    tree::read_paths(&Live { client: c }, &(e, p), &paths)
                }
                Root::Msaa(o, p) => tree::read_paths(&msaa::Live, &(o, p), &paths),
            }
        })?;
        Ok(read)
    }

    fn press(&self, target: &NodeTarget, action: Option<&str>) -> Result<String, BackendError> {
        let (target, action) = (target.clone(), action.map(str::to_owned));
        let done = self.run(ACT_WAIT, move |path| {
            let action = action.as_deref();
            match root_of(path, &target.window, false, false)? {
                Root::Uia(c, e, p) => acts::press(&Live { client: c }, (e, p), &target, action),
                Root::Msaa(o, p) => acts::press(&msaa::Live, (o, p), &target, action),
            }
        })?;
        Ok(done)
    }

    fn set_text(&self, target: &NodeTarget, text: &str) -> Result<TextWrite, BackendError> {
        let (target, text) = (target.clone(), text.to_owned());
        let done = self.run(ACT_WAIT, move |path| {
            match root_of(path, &target.window, false, false)? {
                Root::Uia(c, e, p) => acts::set_text(&Live { client: c }, (e, p), &target, &text),
                Root::Msaa(o, p) => acts::set_text(&msaa::Live, (o, p), &target, &text),
            }
        })?;
        Ok(done)
    }

    fn read_text(&self, target: &NodeTarget) -> Result<TextRead, BackendError> {
        let target = target.clone();
        let read = self.run(ACT_WAIT, move |path| {
            match root_of(path, &target.window, false, false)? {
                Root::Uia(c, e, p) => acts::read_text(&Live { client: c }, (e, p), &target),
                Root::Msaa(o, p) => acts::read_text(&msaa::Live, (o, p), &target),
            }
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
