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

/// At most this many of a launch's arguments go into the audit log.
const AUDITED_ARGS: usize = 16;
/// The audit log keeps at most this many characters of a launch's program,
/// target and each argument.
const AUDITED_CHARS: usize = 256;

/// `text` as the audit log keeps it: a longer one is cut to
/// [`AUDITED_CHARS`] characters, with its length.
fn audited(text: &str) -> String {
    match text.char_indices().nth(AUDITED_CHARS) {
        None => text.to_owned(),
        Some((at, _)) => format!("{}… ({} characters)", &text[..at], text.chars().count()),
    }
}

/// A URL without what may carry a secret: its user and password, its
/// query and fragment (`https://u:pw@x.org/a?token=1` →
/// `https://x.org/a?…`). Anything else (a path, `C:\x`) is kept.
fn without_secrets(arg: &str) -> String {
    let Some((scheme, rest)) = arg.split_once(':') else {
        return arg.to_owned();
    };
    let is_scheme = scheme.len() > 1
        && scheme.starts_with(|c: char| c.is_ascii_alphabetic())
        && scheme
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'));
    if !is_scheme {
        return arg.to_owned();
    }
    let end = rest.find(['?', '#']).unwrap_or(rest.len());
    let body = &rest[..end];
    let body = match body.strip_prefix("//") {
        Some(authority) => {
            let host_end = authority.find('/').unwrap_or(authority.len());
            match authority[..host_end].rfind('@') {
                Some(at) => format!("//{}", &authority[at + 1..]),
                None => body.to_owned(),
            }
        }
        None => body.to_owned(),
    };
    let cut = if end < rest.len() { "?…" } else { "" };
    format!("{scheme}:{body}{cut}")
}

/// A launch's arguments as the audit log keeps them: URLs without their
/// secrets, each cut by [`audited`], at most [`AUDITED_ARGS`] of them and
/// then how many there were.
fn audited_args(args: &[String]) -> Vec<String> {
    let mut out: Vec<String> = args
        .iter()
        .take(AUDITED_ARGS)
        .map(|a| audited(&without_secrets(a)))
        .collect();
    if args.len() > AUDITED_ARGS {
        out.push(format!("… ({} arguments in all)", args.len()));
    }
    out
}

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
            LaunchTarget::Executable(p) => json!({"executable_path": audited(p)}),
            LaunchTarget::AppId(id) => json!({"bundle_id": audited(id)}),
        };
        audit_target["args"] = json!(audited_args(&args));
        let (program, result) = match self
            .input_granted(session)
            .and_then(|()| self.takeovers.require_input(&session.id))
        {
            Ok(()) => {
                let allowed = self.consent.launch_allow.clone();
                self.exec
                    .run(move |desk| {
                        let tables = &desk.backend.policy.launch;
                        let Some(apps) = desk.backend.apps.as_mut() else {
                            let none = EngineError::NotSupported {
                                feature: "app.launch",
                            };
                            return (None, Err(none));
                        };
                        let plan = match apps.resolve(&target, &args) {
                            Ok(plan) => plan,
                            Err(e) => return (None, Err(e.into())),
                        };
                        let allowed: Vec<_> =
                            allowed.iter().filter_map(|p| apps.file_id(p)).collect();
                        let result = crate::launch_policy::check(tables, &plan, &args, &allowed)
                            .and_then(|()| Ok(apps.launch(&plan)?));
                        (Some(plan.program), result)
                    })
                    .await
                    .unwrap_or_else(|e| (None, Err(e)))
            }
            Err(e) => (None, Err(e)),
        };
        if let Some(program) = &program {
            audit_target["program"] = json!(audited(program));
        }
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

#[cfg(test)]
mod tests {
    use super::*;

    fn strs(v: &[&str]) -> Vec<String> {
        v.iter().map(|a| (*a).to_owned()).collect()
    }

    #[test]
    fn the_audit_keeps_a_launchs_arguments_without_url_secrets() {
        assert_eq!(
            audited_args(&strs(&[
                r"C:\Users\me\report.txt",
                "/tmp/a:b.txt",
                "/gpu-launcher=cmd /c calc",
                "https://u:pw@x.org/a/b?token=1#k",
                "https://x.org/a@b",
                "file:///C:/a.txt",
                "mailto:p@x.org?subject=s",
            ])),
            strs(&[
                r"C:\Users\me\report.txt",
                "/tmp/a:b.txt",
                "/gpu-launcher=cmd /c calc",
                "https://x.org/a/b?…",
                "https://x.org/a@b",
                "file:///C:/a.txt",
                "mailto:p@x.org?…",
            ])
        );
    }

    #[test]
    fn the_audit_bounds_a_launchs_arguments() {
        let long = "x".repeat(10_000);
        let cut = audited(&long);
        assert!(cut.starts_with(&"x".repeat(AUDITED_CHARS)), "{cut}");
        assert!(cut.ends_with("… (10000 characters)"), "{cut}");
        assert_eq!(audited("ü 日本"), "ü 日本");
        let many: Vec<String> = (0..100).map(|i| format!("/tmp/{i}")).collect();
        let kept = audited_args(&many);
        assert_eq!(kept.len(), AUDITED_ARGS + 1);
        assert_eq!(kept[AUDITED_ARGS - 1], "/tmp/15");
        assert_eq!(kept[AUDITED_ARGS], "… (100 arguments in all)");
    }
}
