//! Who GNOME Shell is on the session bus. gnome-shell owns
//! `org.gnome.Shell` and `org.gnome.Mutter.IdleMonitor` with
//! `ALLOW_REPLACEMENT`, so any program of the session may take either name
//! with no dialog. deskhand therefore speaks to the connection that holds
//! them when it starts, and only after checking that this connection's
//! process is the compositor (the peer of the Wayland socket); every call
//! goes to that unique connection and every signal is matched to it. When
//! either name changes hands later, the shell is taken for lost: the frame
//! and the watcher with it.

use std::os::unix::net::UnixStream;
use std::path::PathBuf;
use std::sync::Arc;

use deskhand_backend::BackendError;
use futures_util::StreamExt;
use tokio::sync::watch;
use zbus::Connection;
use zbus::fdo::DBusProxy;
use zbus::names::{BusName, OwnedUniqueName};

use crate::rt::Rt;

/// GNOME Shell's name, which its extension's object is reached through.
pub(crate) const SHELL: &str = "org.gnome.Shell";
/// mutter's idle monitor, the hand-back's word on input.
pub(crate) const IDLE_MONITOR: &str = "org.gnome.Mutter.IdleMonitor";

/// The compositor's connections, found once, and whether either name has
/// changed hands since.
#[derive(Debug)]
pub(crate) struct Pin {
    /// The connection holding `org.gnome.Shell`: the compositor's.
    pub(crate) shell: OwnedUniqueName,
    /// The connection holding `org.gnome.Mutter.IdleMonitor`, when one
    /// does and it is the compositor's.
    pub(crate) idle: Option<OwnedUniqueName>,
    lost: watch::Receiver<Option<String>>,
    lost_tx: Arc<watch::Sender<Option<String>>>,
}

impl Pin {
    /// Why the shell is no longer the one pinned, once a name moved.
    pub(crate) fn lost(&self) -> Option<String> {
        self.lost.borrow().clone()
    }

    /// Waits until a name moves; the reason.
    pub(crate) async fn until_lost(&self) -> String {
        let mut rx = self.lost.clone();
        match rx.wait_for(Option::is_some).await {
            Ok(why) => why.clone().unwrap_or_default(),
            Err(_) => "the watch of GNOME Shell's names ended".into(),
        }
    }
}

/// The compositor's process: the peer of this session's Wayland socket.
pub(crate) fn compositor_pid() -> Result<u32, String> {
    let display = std::env::var_os("WAYLAND_DISPLAY").ok_or("WAYLAND_DISPLAY is not set")?;
    let mut path = PathBuf::from(&display);
    if path.is_relative() {
        let runtime = std::env::var_os("XDG_RUNTIME_DIR").ok_or("XDG_RUNTIME_DIR is not set")?;
        path = PathBuf::from(runtime).join(display);
    }
    peer_pid(&path)
}

/// The process listening on the Unix socket at `path`.
fn peer_pid(path: &std::path::Path) -> Result<u32, String> {
    let socket =
        UnixStream::connect(path).map_err(|e| format!("the Wayland socket {path:?}: {e}"))?;
    let cred = rustix::net::sockopt::socket_peercred(&socket)
        .map_err(|e| format!("the Wayland socket's peer: {e}"))?;
    u32::try_from(cred.pid.as_raw_nonzero().get()).map_err(|e| e.to_string())
}

/// The program a process runs, for messages (`?` when it cannot be read).
pub(crate) fn program(pid: u32) -> String {
    std::fs::read_link(format!("/proc/{pid}/exe"))
        .map(|p| p.display().to_string())
        .unwrap_or_else(|_| "?".into())
}

/// Who holds a name: its connection and process.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Holder {
    pub(crate) unique: OwnedUniqueName,
    pub(crate) pid: u32,
}

impl Holder {
    /// "pid 123 (/usr/bin/x)".
    pub(crate) fn describe(&self) -> String {
        format!("pid {} ({})", self.pid, program(self.pid))
    }
}

fn failed(what: &str) -> impl Fn(zbus::Error) -> BackendError + '_ {
    move |e| BackendError::Failed(format!("{what}: {e}"))
}

/// Who holds `name` now; `None` when no one does.
pub(crate) async fn holder(conn: &Connection, name: &str) -> Result<Option<Holder>, BackendError> {
    let dbus = DBusProxy::new(conn).await.map_err(failed("the bus"))?;
    let bus_name = BusName::try_from(name).map_err(|e| failed(name)(e.into()))?;
    let unique = match dbus.get_name_owner(bus_name).await {
        Ok(u) => u,
        Err(zbus::fdo::Error::NameHasNoOwner(_)) => return Ok(None),
        Err(e) => return Err(failed(name)(e.into())),
    };
    let pid = dbus
        .get_connection_unix_process_id(BusName::Unique(unique.as_ref()))
        .await
        .map_err(|e| failed(name)(e.into()))?;
    Ok(Some(Holder { unique, pid }))
}

/// Whether `holder` of `name` is the compositor `compositor`; the refusal
/// names who holds it otherwise.
pub(crate) fn judge(
    name: &str,
    holder: Option<&Holder>,
    compositor: u32,
) -> Result<OwnedUniqueName, String> {
    match holder {
        None => Err(format!(
            "no one holds {name}: GNOME Shell is not running here"
        )),
        Some(h) if h.pid == compositor => Ok(h.unique.clone()),
        Some(h) => Err(format!(
            "{name} is held by {}, not by the compositor (pid {compositor}, {}): another program took GNOME Shell's name, so deskhand will not draw its frame or send its text there",
            h.describe(),
            program(compositor)
        )),
    }
}

/// Finds the compositor's connections behind GNOME Shell's names: `None`
/// where no one holds `org.gnome.Shell` (not GNOME); an error naming the
/// holder where another program does.
pub(crate) async fn pin(conn: &Connection) -> Result<Option<Arc<Pin>>, BackendError> {
    let Some(shell) = holder(conn, SHELL).await? else {
        return Ok(None);
    };
    let compositor = compositor_pid().map_err(BackendError::Unsupported)?;
    let shell = judge(SHELL, Some(&shell), compositor).map_err(BackendError::Unsupported)?;
    let idle = holder(conn, IDLE_MONITOR).await?;
    let idle = match judge(IDLE_MONITOR, idle.as_ref(), compositor) {
        Ok(unique) => Some(unique),
        Err(why) => {
            tracing::warn!(why, "mutter's idle monitor is not used");
            None
        }
    };
    let (tx, rx) = watch::channel(None);
    Ok(Some(Arc::new(Pin {
        shell,
        idle,
        lost: rx,
        lost_tx: Arc::new(tx),
    })))
}

/// Watches both names on `rt`: the first change of hands marks `pin` lost.
/// The match rules are in place before this returns.
pub(crate) fn watch(rt: &Rt, conn: &Connection, pin: &Arc<Pin>) -> Result<(), BackendError> {
    let (conn, pin) = (conn.clone(), pin.clone());
    let streams = rt.run(
        std::time::Duration::from_secs(3),
        "watching GNOME Shell's names",
        {
            let conn = conn.clone();
            async move {
                let dbus = DBusProxy::new(&conn).await.map_err(failed("the bus"))?;
                let mut streams = Vec::new();
                for name in [SHELL, IDLE_MONITOR] {
                    let s = dbus
                        .receive_name_owner_changed_with_args(&[(0, name)])
                        .await
                        .map_err(failed(name))?;
                    streams.push(s);
                }
                Ok(futures_util::stream::select_all(streams))
            }
        },
    )?;
    rt.spawn(async move {
        let mut changes = streams;
        while let Some(change) = changes.next().await {
            let Ok(args) = change.args() else { continue };
            let name = args.name().to_string();
            let new = args.new_owner().as_ref().map(|u| u.to_string());
            let kept = match name.as_str() {
                SHELL => Some(pin.shell.to_string()),
                _ => pin.idle.as_ref().map(|u| u.to_string()),
            };
            if new == kept || (kept.is_none() && new.is_none()) {
                continue;
            }
            let by = match new.as_deref() {
                Some(unique) => holder(&conn, &name)
                    .await
                    .ok()
                    .flatten()
                    .filter(|h| h.unique.as_str() == unique)
                    .map_or_else(|| unique.to_owned(), |h| h.describe()),
                None => "no one".into(),
            };
            let why = format!("{name} changed hands: it is now held by {by}, not GNOME Shell");
            tracing::error!(
                why,
                "GNOME Shell's name was taken: the frame and hand-back are lost"
            );
            let _ = pin.lost_tx.send(Some(why));
            return;
        }
    });
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn unique(s: &str) -> OwnedUniqueName {
        OwnedUniqueName::try_from(s).expect("a unique name")
    }

    #[test]
    fn only_the_compositors_connection_is_taken_for_gnome_shell() {
        let shell = Holder {
            unique: unique(":1.7"),
            pid: 40,
        };
        assert_eq!(judge(SHELL, Some(&shell), 40), Ok(unique(":1.7")));
        let squatter = Holder {
            unique: unique(":1.99"),
            pid: std::process::id(),
        };
        let why = judge(SHELL, Some(&squatter), 40).expect_err("not the compositor");
        assert!(
            why.starts_with(&format!(
                "org.gnome.Shell is held by pid {}",
                std::process::id()
            )),
            "{why}"
        );
        assert!(why.contains("not by the compositor (pid 40"), "{why}");
        assert!(judge(SHELL, None, 40).is_err());
    }

    #[test]
    fn the_compositor_is_the_peer_of_the_wayland_socket() {
        let dir = std::env::temp_dir().join(format!("deskhand-peer-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("dir");
        let path = dir.join("wayland-test");
        let _ = std::fs::remove_file(&path);
        let _listener = std::os::unix::net::UnixListener::bind(&path).expect("bind");
        assert_eq!(peer_pid(&path), Ok(std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
    }
}
