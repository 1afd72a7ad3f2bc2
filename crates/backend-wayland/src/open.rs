//! Opening the backend: the session bus, the extension, both portal
//! sessions asked for in the background, every capability wired to them;
//! and the one-engine-per-session claim.

use std::sync::{Arc, OnceLock};
use std::time::Duration;

use deskhand_backend::Backend;
use zbus::Connection;

use crate::capture::PortalCapture;
use crate::clipboard::PortalClipboard;
use crate::compositor::Offers;
use crate::displays::PortalDisplays;
use crate::idle_notify::IdleNotifyWatcher;
use crate::indicator::ShellIndicator;
use crate::input::PortalInput;
use crate::portal::Portals;
use crate::rt::Rt;
use crate::shell::ShellExt;
use crate::watcher::{IdleWatcher, LastInput};
use crate::windows::ShellWindows;
use crate::{WaylandError, WaylandOptions};

/// The bus name the engine driving this session holds.
pub(crate) const ENGINE_NAME: &str = "dev.deskhand.Engine";

/// The portals of the backend this process opened, for the doctor.
pub(crate) static LIVE: OnceLock<Arc<Portals>> = OnceLock::new();

/// This engine's hold on the session: the bus name `dev.deskhand.Engine`
/// on the session bus, let go when dropped. The backend speaks to the
/// shell extension and the idle monitor on this connection: the extension
/// answers only the name's holder.
pub struct EngineClaim {
    conn: Connection,
    _rt: Rt,
}

/// Takes the session for this engine; a name already held is refused,
/// naming its holder.
pub fn claim_engine() -> Result<EngineClaim, WaylandError> {
    let rt = Rt::new().map_err(|e| WaylandError::Connect(e.to_string()))?;
    let claimed = rt.run(Duration::from_secs(5), "claiming the session", async {
        let failed = |e: zbus::Error| deskhand_backend::BackendError::Failed(e.to_string());
        let conn = Connection::session().await.map_err(failed)?;
        let flags = zbus::fdo::RequestNameFlags::DoNotQueue.into();
        let reply = conn.request_name_with_flags(ENGINE_NAME, flags).await;
        let holder = match reply {
            Ok(zbus::fdo::RequestNameReply::PrimaryOwner) => None,
            _ => crate::shell_owner::holder(&conn, ENGINE_NAME)
                .await
                .ok()
                .flatten(),
        };
        Ok((conn, reply, holder))
    });
    match claimed {
        Ok((conn, Ok(zbus::fdo::RequestNameReply::PrimaryOwner), _)) => {
            Ok(EngineClaim { conn, _rt: rt })
        }
        Ok((_, Ok(_) | Err(zbus::Error::NameTaken), holder)) => {
            Err(WaylandError::Claimed(held_by(holder.as_ref())))
        }
        Ok((_, Err(e), _)) => Err(WaylandError::Connect(format!("claiming the session: {e}"))),
        Err(e) => Err(WaylandError::Connect(e.to_string())),
    }
}

/// Whether a process runs one of deskhand's programs (by its name; the
/// extension itself trusts only their installed paths).
pub(crate) fn is_deskhand(pid: u32) -> bool {
    let program = crate::shell_owner::program(pid);
    let name = std::path::Path::new(&program)
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    name == "deskhand" || name == "deskhand-app"
}

/// Who holds the engine's name, for the refusal: another deskhand, or a
/// program that is not deskhand (which the extension serves nothing).
pub(crate) fn held_by(holder: Option<&crate::shell_owner::Holder>) -> String {
    let Some(h) = holder else {
        return format!("another program holds {ENGINE_NAME}, which this session's engine needs");
    };
    if is_deskhand(h.pid) {
        format!(
            "another deskhand already drives this Wayland session: {}",
            h.describe()
        )
    } else {
        format!(
            "{ENGINE_NAME}, which this session's engine needs, is held by {}, which is not deskhand: stop that program (deskhand's GNOME Shell extension serves it nothing)",
            h.describe()
        )
    }
}

/// Opens the backend on this process's Wayland session, which `claim`
/// holds for this engine.
pub fn open(options: &WaylandOptions, claim: &EngineClaim) -> Result<Backend, WaylandError> {
    let rt = Arc::new(Rt::new().map_err(|e| WaylandError::Connect(e.to_string()))?);
    let conn = claim.conn.clone();
    let found = conn.clone();
    let shell = rt
        .run(Duration::from_secs(5), "GNOME Shell", async move {
            Ok(ShellExt::find(found).await)
        })
        .map_err(|e| WaylandError::Connect(e.to_string()))?;
    if let Some(pin) = shell.pin() {
        crate::shell_owner::watch(&rt, &conn, pin)
            .map_err(|e| WaylandError::Connect(e.to_string()))?;
    }
    let probe = shell.clone();
    let extension = rt.run(Duration::from_secs(3), "the extension", async move {
        probe.version().await
    });
    if let Err(e) = &extension {
        tracing::warn!(error = %e, "no frame and no window list: takeover is unavailable");
    }
    let last = Arc::new(LastInput::default());
    let portals = Arc::new(Portals {
        last: last.clone(),
        ..Portals::default()
    });
    let _ = LIVE.set(portals.clone());
    rt.spawn(portals.clone().start(options.grants.clone()));
    let with_extension = extension.is_ok();
    let status_place = extension
        .as_ref()
        .is_ok_and(|v| *v >= crate::top_bar::SINCE_VERSION)
        .then(|| {
            Arc::new(crate::top_bar::TopBar {
                rt: rt.clone(),
                shell: shell.clone(),
            }) as Arc<dyn deskhand_backend::StatusPlace>
        });
    // Without GNOME's extension, what the compositor itself offers.
    let offers = if with_extension {
        Offers::default()
    } else {
        crate::compositor::probe().unwrap_or_else(|e| {
            tracing::warn!(error = %e, "the compositor's globals were not read");
            Offers::default()
        })
    };
    let notify = offers
        .idle_notifier
        .then(|| IdleNotifyWatcher::open(last.clone()))
        .and_then(|opened| {
            opened
                .map_err(|e| tracing::warn!(error = %e, "no ext-idle-notify"))
                .ok()
        });
    tracing::info!(
        backend = "wayland",
        extension = with_extension,
        layer_shell = offers.layer_shell,
        idle_notify = notify.is_some(),
        "picked the Wayland backend"
    );
    let indicator: Option<Box<dyn deskhand_backend::Indicator>> = if with_extension {
        Some(Box::new(ShellIndicator {
            rt: rt.clone(),
            shell: shell.clone(),
            layout: None,
            inset: None,
            placed: Vec::new(),
        }))
    } else if offers.layer_shell {
        crate::layer_frame::indicator(portals.clone())
    } else {
        None
    };
    Ok(Backend {
        name: "wayland",
        policy: &deskhand_backend_linux::LINUX,
        displays: Box::new(PortalDisplays {
            rt: rt.clone(),
            portals: portals.clone(),
            shell: shell.clone(),
        }),
        capture: Some(Box::new(PortalCapture {
            rt: rt.clone(),
            portals: portals.clone(),
            last: last.clone(),
            clean: None,
            covered: Vec::new(),
            hidden_at: None,
        })),
        input: Some(Box::new(PortalInput {
            rt: rt.clone(),
            portals: portals.clone(),
            shell: shell.clone(),
            last: last.clone(),
            moved_to: None,
        })),
        windows: windows(with_extension, &rt, &shell, &conn),
        apps: Some(Box::new(deskhand_backend_linux::LinuxApps::new(
            wayland_env(),
        ))),
        permissions: None,
        clipboard: Some(Arc::new(PortalClipboard {
            rt: rt.clone(),
            portals: portals.clone(),
        })),
        indicator,
        watcher: Some(Box::new(HandBack {
            gnome: IdleWatcher {
                rt,
                conn,
                shell,
                last,
                portals: portals.clone(),
                kill: options.kill_switch.clone(),
            },
            other: notify,
        })),
        accessibility: None,
        status_place,
    })
}

/// The window list: the GNOME extension's, else KWin's scripting or
/// sway's own IPC, whichever this compositor is; none elsewhere.
fn windows(
    extension: bool,
    rt: &Arc<Rt>,
    shell: &ShellExt,
    conn: &Connection,
) -> Option<Box<dyn deskhand_backend::Windows>> {
    if extension {
        return Some(Box::new(ShellWindows {
            rt: rt.clone(),
            shell: shell.clone(),
        }));
    }
    if let Some(kwin) = crate::kwin_windows::KwinWindows::open(rt.clone(), conn.clone()) {
        return Some(Box::new(kwin));
    }
    crate::sway_windows::SwayWindows::from_env()
        .map(|w| Box::new(w) as Box<dyn deskhand_backend::Windows>)
}

/// What names this session to an app deskhand launches (XWayland's
/// display too, for X11-only apps).
fn wayland_env() -> Vec<(std::ffi::OsString, std::ffi::OsString)> {
    ["WAYLAND_DISPLAY", "XDG_RUNTIME_DIR", "DISPLAY"]
        .into_iter()
        .filter_map(|k| std::env::var_os(k).map(|v| (k.into(), v)))
        .collect()
}

/// Hand-back's watcher: mutter's idle monitor where it answers (GNOME),
/// else the compositor's ext-idle-notify where it has one.
struct HandBack {
    gnome: IdleWatcher,
    other: Option<IdleNotifyWatcher>,
}

impl deskhand_backend::InputWatcher for HandBack {
    fn start(
        self: Box<Self>,
        sink: Arc<dyn Fn(deskhand_backend::WatchedInput) + Send + Sync>,
        armed: Arc<std::sync::atomic::AtomicBool>,
    ) -> Result<(), deskhand_backend::BackendError> {
        let HandBack { gnome, other } = *self;
        match Box::new(gnome).start(sink.clone(), armed.clone()) {
            Err(e) if other.is_some() => {
                tracing::info!(gnome = %e, "hand-back through ext-idle-notify");
                other.map_or(Err(e), |w| Box::new(w).start(sink, armed))
            }
            started => started,
        }
    }
}
