//! The AT-SPI implementation of [`Accessibility`]. Calls block their
//! caller: each runs as a task on the backend's own tokio runtime (one
//! worker thread, where zbus reads the bus) and is bounded in time as a
//! whole and per D-Bus call, so a hung app fails a call, never stalls it.

mod act;
mod bus;
mod calls;
mod error;
mod find;
mod map;
mod matched;
mod walk;

use std::collections::HashMap;
use std::future::Future;
use std::sync::Arc;
use std::time::{Duration, Instant};

use deskhand_backend::BackendError;
use deskhand_backend::accessibility::{
    A11yNode, A11yTree, Accessibility, BusProblem, BusStatus, NodePath, NodeTarget, TextRead,
    TextWrite, TreeLimits, WindowRef,
};

use crate::AtspiOptions;
use calls::{Caller, Obj};
use error::AtspiError;

/// The bound of connecting the bus (each of its steps).
const CONNECT_TIMEOUT: Duration = Duration::from_secs(3);
/// The bound of each call of an act.
const ACT_CALL_TIMEOUT: Duration = Duration::from_secs(2);
/// The bound of a whole act (finding the window, the element, acting).
const ACT_TOTAL_TIMEOUT: Duration = Duration::from_secs(6);
/// The bound of a bus check.
const STATUS_TIMEOUT: Duration = Duration::from_secs(8);

/// What the runtime's tasks share: the connection, opened on first use
/// and again after it is lost, and the apps' pids.
struct Shared {
    options: AtspiOptions,
    conn: tokio::sync::Mutex<Option<zbus::Connection>>,
    pids: find::PidCache,
    /// Direct connections to apps by bus name; `None` for an app that
    /// offers none (its calls go through the bus).
    peers: tokio::sync::Mutex<HashMap<String, Option<zbus::Connection>>>,
}

impl Shared {
    /// A caller on the accessibility bus whose calls are bounded by
    /// `per_call`, connecting the bus when it is not yet.
    async fn caller(&self, per_call: Duration) -> Result<Caller, AtspiError> {
        let mut conn = self.conn.lock().await;
        if let Some(c) = conn.as_ref() {
            return Ok(Caller {
                conn: c.clone(),
                timeout: per_call,
                peer: None,
                origin: None,
            });
        }
        let c = bus::connect(&self.options, CONNECT_TIMEOUT).await?;
        self.pids.clear();
        self.peers.lock().await.clear();
        *conn = Some(c.clone());
        Ok(Caller {
            conn: c,
            timeout: per_call,
            peer: None,
            origin: None,
        })
    }

    /// `caller`, reaching the app that serves `obj` directly when the app
    /// offers that (connected on first use, then kept).
    async fn direct(&self, mut caller: Caller, obj: &Obj) -> Caller {
        if self.options.bus_only {
            return caller;
        }
        let mut peers = self.peers.lock().await;
        let conn = match peers.get(&obj.bus) {
            Some(known) => known.clone(),
            None => match bus::open_peer(&caller, obj, CONNECT_TIMEOUT).await {
                Ok(conn) => {
                    peers.insert(obj.bus.clone(), Some(conn.clone()));
                    Some(conn)
                }
                // A busy app may offer one next time; one that said no won't.
                Err(e @ AtspiError::Timeout { .. }) => {
                    tracing::debug!(bus = %obj.bus, error = %e, "no direct connection yet");
                    None
                }
                Err(e) => {
                    tracing::debug!(bus = %obj.bus, error = %e, "no direct connection to the app");
                    peers.insert(obj.bus.clone(), None);
                    None
                }
            },
        };
        caller.peer = conn.map(|conn| calls::Peer {
            bus: obj.bus.clone(),
            conn,
        });
        caller
    }

    /// Drops the connections when `e` says they may be gone, so the next
    /// call connects again.
    async fn forget_if_lost(&self, e: &AtspiError) {
        if e.connection_suspect() {
            tracing::info!(error = %e, "accessibility connections dropped");
            *self.conn.lock().await = None;
            self.peers.lock().await.clear();
        }
    }
}

/// The AT-SPI backend.
pub(crate) struct AtspiBackend {
    /// Always `Some` until dropped.
    rt: Option<tokio::runtime::Runtime>,
    shared: Arc<Shared>,
}

impl AtspiBackend {
    /// Starts the backend's runtime; the bus is connected on first use.
    pub(crate) fn new(options: AtspiOptions) -> Result<Self, BackendError> {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .thread_name("deskhand-atspi")
            .enable_all()
            .build()
            .map_err(|e| BackendError::Failed(format!("accessibility runtime: {e}")))?;
        Ok(Self {
            rt: Some(rt),
            shared: Arc::new(Shared {
                options,
                conn: tokio::sync::Mutex::new(None),
                pids: find::PidCache::default(),
                peers: tokio::sync::Mutex::new(HashMap::new()),
            }),
        })
    }

    /// Runs `job` on the runtime and waits for it, at most `total`.
    fn run<R, F>(
        &self,
        total: Duration,
        what: &'static str,
        job: impl FnOnce(Arc<Shared>) -> F,
    ) -> Result<R, AtspiError>
    where
        R: Send + 'static,
        F: Future<Output = Result<R, AtspiError>> + Send + 'static,
    {
        let rt = self
            .rt
            .as_ref()
            .ok_or_else(|| AtspiError::Unable("the accessibility backend is shut down".into()))?;
        let shared = self.shared.clone();
        let fut = job(shared.clone());
        let (tx, rx) = std::sync::mpsc::channel();
        rt.spawn(async move {
            let result = match tokio::time::timeout(total, fut).await {
                Ok(r) => r,
                Err(_) => Err(AtspiError::Timeout { what, after: total }),
            };
            if let Err(e) = &result {
                shared.forget_if_lost(e).await;
            }
            let _ = tx.send(result);
        });
        // The task ends by `total`; the margin covers a busy runtime.
        rx.recv_timeout(total + Duration::from_secs(1))
            .unwrap_or(Err(AtspiError::Timeout { what, after: total }))
    }

    /// Runs an act on the element `target` names.
    fn act<R, F>(
        &self,
        target: &NodeTarget,
        what: &'static str,
        act: impl FnOnce(Caller, Obj, NodeTarget) -> F + Send + 'static,
    ) -> Result<R, BackendError>
    where
        R: Send + 'static,
        F: Future<Output = Result<R, AtspiError>> + Send + 'static,
    {
        let target = target.clone();
        self.run(ACT_TOTAL_TIMEOUT, what, move |s| async move {
            let caller = s.caller(ACT_CALL_TIMEOUT).await?.of(&target.window);
            let root = find::root_of(&caller, &s.pids, &target.window).await?;
            let caller = s.direct(caller, &root).await;
            let obj =
                find::follow(&caller, root, &target.path, &target.expect_child_counts).await?;
            act(caller, obj, target).await
        })
        .map_err(Into::into)
    }
}

impl Drop for AtspiBackend {
    fn drop(&mut self) {
        // Without blocking: a drop may happen inside another runtime.
        if let Some(rt) = self.rt.take() {
            rt.shutdown_background();
        }
    }
}

impl Accessibility for AtspiBackend {
    /// Finds the window's root, then reads its tree (see `walk`).
    fn read_window_tree(
        &self,
        window: &WindowRef,
        limits: &TreeLimits,
    ) -> Result<A11yTree, BackendError> {
        let (window, limits) = (window.clone(), *limits);
        let what = "the accessibility tree read";
        self.run(limits.total_timeout, what, move |s| async move {
            let caller = s.caller(limits.per_call_timeout).await?.of(&window);
            let root = find::root_of(&caller, &s.pids, &window).await?;
            let caller = s.direct(caller, &root).await;
            let started = Instant::now();
            let (tree, listed) = match matched::read_tree(&caller, root.clone(), &limits).await? {
                Some(tree) => (tree, true),
                None => (walk::read_tree(&caller, root, &limits).await?, false),
            };
            tracing::debug!(
                elements = tree.nodes.len(),
                listed,
                truncated = tree.truncated,
                ms = started.elapsed().as_secs_f64() * 1000.0,
                "accessibility tree read"
            );
            Ok(tree)
        })
        .map_err(Into::into)
    }

    /// Finds the window's root, then reads each path's element.
    fn read_nodes(
        &self,
        window: &WindowRef,
        paths: &[NodePath],
        limits: &TreeLimits,
    ) -> Result<Vec<Option<A11yNode>>, BackendError> {
        let (window, paths, limits) = (window.clone(), paths.to_vec(), *limits);
        let what = "the accessibility element reads";
        self.run(limits.total_timeout, what, move |s| async move {
            let caller = s.caller(limits.per_call_timeout).await?.of(&window);
            let root = find::root_of(&caller, &s.pids, &window).await?;
            let caller = s.direct(caller, &root).await;
            walk::read_paths(&caller, &root, &paths).await
        })
        .map_err(Into::into)
    }

    /// See [`act::press`].
    fn press(&self, target: &NodeTarget, action: Option<&str>) -> Result<String, BackendError> {
        let action = action.map(str::to_owned);
        self.act(
            target,
            "an accessibility action",
            move |c, obj, t| async move { act::press(&c, &obj, &t, action.as_deref()).await },
        )
    }

    /// See [`act::set_text`].
    fn set_text(&self, target: &NodeTarget, text: &str) -> Result<TextWrite, BackendError> {
        let text = text.to_owned();
        self.act(
            target,
            "an accessibility text write",
            move |c, obj, t| async move { act::set_text(&c, &obj, &t, &text).await },
        )
    }

    /// See [`act::read_text`].
    fn read_text(&self, target: &NodeTarget) -> Result<TextRead, BackendError> {
        self.act(
            target,
            "an accessibility text read",
            |c, obj, t| async move { act::read_text(&c, &obj, &t).await },
        )
    }

    /// Connects the bus when needed and asks the registry for its apps.
    fn bus_status(&self) -> BusStatus {
        let checked = self.run(
            STATUS_TIMEOUT,
            "the accessibility bus check",
            |s| async move {
                let caller = s.caller(ACT_CALL_TIMEOUT).await?;
                bus::check_registry(&caller).await
            },
        );
        match checked {
            Ok(apps) => {
                tracing::debug!(apps, "the accessibility bus answers");
                BusStatus::Ok
            }
            Err(AtspiError::Bus { problem, detail }) => BusStatus::Unavailable { problem, detail },
            Err(e) => BusStatus::Unavailable {
                problem: BusProblem::Unreachable,
                detail: e.to_string(),
            },
        }
    }
}
