//! Running apps (processes joined with their windows), launching apps
//! without a shell (each launch audited as its own kind of record), and the
//! OS permissions those need.

use std::sync::Arc;
use std::time::{Duration, Instant};

use deskhand_protocol::messages::PermissionStatus;
use serde_json::json;

use crate::backend::LaunchTarget;
use crate::error::EngineError;
use crate::{Engine, Session};

/// How long APP_LAUNCH's `activate` waits for the app's first window.
const ACTIVATE_WITHIN: Duration = Duration::from_secs(10);

/// A running app.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunningApp {
    /// Process id.
    pub pid: u32,
    /// Process name.
    pub name: String,
    /// Executable, when readable.
    pub exe: Option<String>,
    /// The app's identifier as the desktop names it (macOS: its bundle id;
    /// X11: the WM_CLASS instance of its first window).
    pub app_id: Option<String>,
    /// Owns the focused window.
    pub frontmost: bool,
    /// Its top-level windows.
    pub window_count: u32,
}

impl Engine {
    /// The person's running apps: processes with windows, and with
    /// `include_background` those without too. Frontmost first.
    pub async fn list_apps(
        &self,
        session: &Session,
        include_background: bool,
    ) -> Result<Vec<RunningApp>, EngineError> {
        let job = move |desk: &mut crate::desk::Desk| {
            let processes = desk
                .backend
                .apps
                .as_mut()
                .ok_or(EngineError::NotSupported {
                    feature: "app.list",
                })?
                .processes()?;
            let windows = match desk.backend.windows.as_mut() {
                Some(w) => w.list()?,
                None => Vec::new(),
            };
            let mut apps: Vec<RunningApp> = processes
                .into_iter()
                .map(|p| {
                    let own: Vec<_> = windows.iter().filter(|w| w.pid == Some(p.pid)).collect();
                    RunningApp {
                        pid: p.pid,
                        name: p.name,
                        exe: p.exe,
                        app_id: p.app_id.or_else(|| {
                            own.first()
                                .map(|w| w.instance.clone())
                                .filter(|i| !i.is_empty())
                        }),
                        frontmost: own.iter().any(|w| w.focused),
                        window_count: own.len() as u32,
                    }
                })
                .filter(|a| include_background || a.window_count > 0)
                .collect();
            apps.sort_by_key(|a| (!a.frontmost, a.pid));
            Ok(apps)
        };
        self.audited(session, "app.list", false, job, |apps: &Vec<RunningApp>| {
            json!({"apps": apps.len(), "include_background": include_background})
        })
        .await
    }

    /// Launches an installed app (no program no application entry names,
    /// no shell, no command runner: see [`crate::launch_policy`]) and, with `activate`, brings its first
    /// window to the front when it appears. It changes what the person
    /// sees, so it needs the session's takeover, as input does.
    pub async fn launch_app(
        self: &Arc<Self>,
        session: &Session,
        target: LaunchTarget,
        args: Vec<String>,
        activate: bool,
    ) -> Result<u32, EngineError> {
        let started = Instant::now();
        let mut audit_target = match &target {
            LaunchTarget::Executable(p) => json!({"executable_path": p, "args": args.len()}),
            LaunchTarget::AppId(id) => json!({"bundle_id": id, "args": args.len()}),
        };
        let result = match self
            .input_granted(session)
            .and_then(|()| self.takeovers.require_input(&session.id))
        {
            Ok(()) => {
                let allowed = self.consent.launch_allow.clone();
                self.exec
                    .run(move |desk| {
                        let tables = &desk.backend.policy.launch;
                        let apps = desk
                            .backend
                            .apps
                            .as_mut()
                            .ok_or(EngineError::NotSupported {
                                feature: "app.launch",
                            })?;
                        let plan = apps.resolve(&target, &args)?;
                        let allowed: Vec<_> =
                            allowed.iter().filter_map(|p| apps.file_id(p)).collect();
                        crate::launch_policy::check(tables, &plan, &args, &allowed)?;
                        Ok(apps.launch(&plan)?)
                    })
                    .await
                    .and_then(|r| r)
            }
            Err(e) => Err(e),
        };
        if let Ok(pid) = &result {
            audit_target["pid"] = json!(pid);
        }
        self.record(
            session,
            "app.launch",
            audit_target,
            result.as_ref().map(|_| ()),
            started,
        );
        if let (Ok(pid), true) = (&result, activate) {
            let engine = Arc::clone(self);
            let (pid, session) = (*pid, session.clone());
            tokio::spawn(async move { engine.activate_when_shown(&session, pid).await });
        }
        result
    }

    /// The state of each named permission (every known one when `names`
    /// is empty). A read: no grant needed, nothing prompted.
    pub async fn check_permissions(
        &self,
        session: &Session,
        names: Vec<String>,
    ) -> Result<std::collections::BTreeMap<String, PermissionStatus>, EngineError> {
        let job = move |desk: &mut crate::desk::Desk| {
            let perms = desk
                .backend
                .permissions
                .as_mut()
                .ok_or(EngineError::NotSupported {
                    feature: "permissions.check",
                })?;
            let names = if names.is_empty() {
                perms.known().into_iter().map(str::to_owned).collect()
            } else {
                names
            };
            Ok(names
                .into_iter()
                .map(|n| {
                    let status = perms.check(&n);
                    (n, status)
                })
                .collect())
        };
        self.audited(session, "permissions.check", false, job, |_| {
            serde_json::Value::Null
        })
        .await
    }

    /// Focuses and raises the first window of `pid` once it appears, while
    /// `session` still holds its takeover.
    async fn activate_when_shown(&self, session: &Session, pid: u32) {
        let deadline = Instant::now() + ACTIVATE_WITHIN;
        while Instant::now() < deadline {
            if self.takeovers.require_input(&session.id).is_err() {
                tracing::info!(pid, "the takeover ended before the launched app showed");
                return;
            }
            let focused = self
                .exec
                .run(move |desk| {
                    let windows = desk.backend.windows.as_mut()?;
                    let w = windows
                        .list()
                        .ok()?
                        .into_iter()
                        .rev()
                        .find(|w| w.pid == Some(pid))?;
                    windows.focus(w.id, true).ok()
                })
                .await;
            if matches!(focused, Ok(Some(()))) {
                tracing::debug!(pid, "activated the launched app's window");
                return;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        tracing::info!(pid, "the launched app showed no window to activate");
    }
}
