//! Windows and focus on KDE Plasma, from KWin's own scripting: Wayland
//! gives clients no window list, but KWin runs a script a session program
//! loads over D-Bus (`org.kde.kwin.Scripting`), and the script answers
//! with `callDBus` to this engine's bus name. Each answer carries a nonce
//! of its request (not in the script's file or plugin name) and is taken
//! only from KWin's own connection; a request answered twice fails. A
//! program of the same user that reads the script's private file in the
//! moment it exists could still race an answer through a script of its
//! own; the second answer then fails the request.

use std::collections::HashMap;
use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use deskhand_backend::{BackendError, NativeWindow, Point, Rect, Windows};
use serde::Deserialize;
use tokio::sync::oneshot;
use zbus::Connection;

use crate::rt::Rt;

const KWIN: &str = "org.kde.KWin";
/// Where the scripts' answers come to, on the engine's connection (which
/// holds the bus name the scripts call).
const PATH: &str = "/dev/deskhand/KWin";
const CALL: Duration = Duration::from_secs(3);
/// How long a script may take to answer.
const ANSWER: Duration = Duration::from_secs(2);

/// The script: lists the windows (and first focuses the one whose key is
/// `%FOCUS%`), bottom of the stack first as KWin stacks them, and calls
/// back with `%NONCE%`. Written for KWin 5.27 and 6 (`clientList` and
/// `activeClient` became `windowList` and `activeWindow`).
const SCRIPT: &str = r#"(function () {
  const all = workspace.windowList ? workspace.windowList() : workspace.clientList();
  const six = workspace.activeWindow !== undefined;
  const key = w => String(w.internalId).replace(/[{}-]/g, "").slice(0, 16);
  const want = "%FOCUS%";
  let focused = false;
  const target = all.find(w => want !== "" && key(w) === want);
  if (target) {
    if (six) { workspace.activeWindow = target; } else { workspace.activeClient = target; }
    focused = true;
  }
  const active = six ? workspace.activeWindow : workspace.activeClient;
  const g = r => [r.x, r.y, r.width, r.height];
  const here = w => w.onAllDesktops || (six ? w.desktops.includes(workspace.currentDesktop)
                                            : w.desktop === workspace.currentDesktop);
  const rows = all.filter(w => !w.specialWindow && !w.desktopWindow && !w.dock).map(w => ({
    key: key(w), pid: w.pid, class: String(w.resourceClass), instance: String(w.resourceName),
    title: String(w.caption), rect: g(w.clientGeometry || w.frameGeometry),
    buffer: g(w.bufferGeometry), wayland: !w.windowId, minimized: w.minimized || !here(w),
    fullscreen: w.fullScreen, active: w === active, stack: w.stackingOrder
  }));
  callDBus("dev.deskhand.Engine", "/dev/deskhand/KWin", "dev.deskhand.KWinReport", "Report",
           "%NONCE%", JSON.stringify({ focused: focused, rows: rows }));
})();
"#;

/// The script for one request.
pub(crate) fn script(nonce: &str, focus: Option<u64>) -> String {
    SCRIPT.replace("%NONCE%", nonce).replace(
        "%FOCUS%",
        &focus.map(|k| format!("{k:016x}")).unwrap_or_default(),
    )
}

/// A window as the script reports it.
#[derive(Debug, Deserialize)]
struct Row {
    /// The first 16 hex digits of KWin's `internalId` (a UUID).
    key: String,
    pid: i64,
    class: String,
    instance: String,
    title: String,
    rect: [f64; 4],
    buffer: [f64; 4],
    wayland: bool,
    minimized: bool,
    fullscreen: bool,
    active: bool,
    stack: i64,
}

/// What a script answered.
#[derive(Debug, Deserialize)]
pub(crate) struct Answer {
    focused: bool,
    rows: Vec<Row>,
}

fn rect(r: [f64; 4]) -> Rect {
    Rect::new(
        r[0].round() as i32,
        r[1].round() as i32,
        r[2].round().max(0.0) as u32,
        r[3].round().max(0.0) as u32,
    )
}

/// The windows of an answer, bottom of the stack first.
pub(crate) fn windows_of(answer: &Answer) -> Vec<NativeWindow> {
    let mut rows: Vec<&Row> = answer.rows.iter().collect();
    rows.sort_by_key(|r| r.stack);
    rows.into_iter()
        .filter_map(|r| {
            let buffer = rect(r.buffer);
            Some(NativeWindow {
                id: u64::from_str_radix(&r.key, 16).ok()?,
                pid: u32::try_from(r.pid).ok().filter(|p| *p > 0),
                class: r.class.clone(),
                instance: r.instance.clone(),
                title: r.title.clone(),
                rect: rect(r.rect),
                focused: r.active,
                minimized: r.minimized,
                fullscreen: r.fullscreen,
                // A Wayland app counts its coordinates from its buffer.
                surface_origin: r.wayland.then(|| Point::new(buffer.x, buffer.y)),
            })
        })
        .collect()
}

/// A request's place for its answer.
struct Slot {
    tx: Option<oneshot::Sender<String>>,
    answers: u32,
}

/// Requests waiting for their script's answer, by nonce.
#[derive(Default)]
struct Inbox {
    waiting: Mutex<HashMap<String, Slot>>,
}

/// The scripts' answers, served on the engine's connection.
struct Reports {
    inbox: Arc<Inbox>,
}

#[zbus::interface(name = "dev.deskhand.KWinReport")]
impl Reports {
    /// A script's answer: taken only from KWin, for a request waiting.
    async fn report(
        &self,
        #[zbus(header)] header: zbus::message::Header<'_>,
        #[zbus(connection)] conn: &Connection,
        nonce: String,
        answer: String,
    ) -> zbus::fdo::Result<()> {
        let dbus = zbus::fdo::DBusProxy::new(conn).await?;
        let kwin = dbus
            .get_name_owner(KWIN.try_into().map_err(zbus::Error::from)?)
            .await?;
        if header.sender().map(|s| s.as_str()) != Some(kwin.as_str()) {
            return Err(zbus::fdo::Error::AccessDenied("only KWin answers".into()));
        }
        let mut waiting = self
            .inbox
            .waiting
            .lock()
            .map_err(|_| zbus::fdo::Error::Failed("the inbox".into()))?;
        let slot = waiting
            .get_mut(&nonce)
            .ok_or_else(|| zbus::fdo::Error::InvalidArgs("no such request".into()))?;
        slot.answers += 1;
        if let Some(tx) = slot.tx.take() {
            let _ = tx.send(answer);
        }
        Ok(())
    }
}

pub(crate) struct KwinWindows {
    rt: Arc<Rt>,
    conn: Connection,
    inbox: Arc<Inbox>,
}

impl KwinWindows {
    /// KWin's scripting where KWin is on the session bus, with the
    /// answers' object served on `conn` (the engine's).
    pub(crate) fn open(rt: Arc<Rt>, conn: Connection) -> Option<Self> {
        let inbox = Arc::new(Inbox::default());
        let served = {
            let (conn, inbox) = (conn.clone(), inbox.clone());
            rt.run(CALL, "KWin", async move {
                let failed = |e: zbus::Error| BackendError::Failed(e.to_string());
                let dbus = zbus::fdo::DBusProxy::new(&conn).await.map_err(failed)?;
                let name = KWIN
                    .try_into()
                    .map_err(|e: zbus::names::Error| failed(e.into()))?;
                if !dbus
                    .name_has_owner(name)
                    .await
                    .map_err(|e| failed(e.into()))?
                {
                    return Ok(false);
                }
                conn.object_server()
                    .at(PATH, Reports { inbox })
                    .await
                    .map_err(failed)
            })
        };
        match served {
            Ok(true) => Some(Self { rt, conn, inbox }),
            Ok(false) => None,
            Err(e) => {
                tracing::info!(error = %e, "KWin's scripting is not used");
                None
            }
        }
    }

    /// Runs the script once and waits for its answer.
    fn ask(&self, focus: Option<u64>) -> Result<Answer, BackendError> {
        let (conn, inbox) = (self.conn.clone(), self.inbox.clone());
        // The script's own bounds leave time to clean up after it.
        let text = self
            .rt
            .run(CALL * 3 + ANSWER, "KWin's window list", async move {
                run_script(&conn, &inbox, focus).await
            })?;
        serde_json::from_str(&text)
            .map_err(|e| BackendError::Failed(format!("KWin's script answered no list: {e}")))
    }
}

/// Random hex of 16 bytes.
fn random_hex() -> Result<String, BackendError> {
    let mut bytes = [0u8; 16];
    getrandom::fill(&mut bytes).map_err(|e| BackendError::Failed(e.to_string()))?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

/// A private file for a script (KWin reads it by its path).
fn write_script(name: &str, text: &str) -> Result<PathBuf, BackendError> {
    let dir = std::env::var_os("XDG_RUNTIME_DIR").map_or_else(std::env::temp_dir, PathBuf::from);
    let path = dir.join(format!("deskhand-kwin-{name}.js"));
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(&path)
        .map_err(|e| BackendError::Failed(format!("KWin's script file: {e}")))?;
    f.write_all(text.as_bytes())
        .map_err(|e| BackendError::Failed(format!("KWin's script file: {e}")))?;
    Ok(path)
}

async fn run_script(
    conn: &Connection,
    inbox: &Inbox,
    focus: Option<u64>,
) -> Result<String, BackendError> {
    // The nonce is only inside the script; the names say nothing of it.
    let (nonce, name) = (random_hex()?, random_hex()?);
    let path = write_script(&name, &script(&nonce, focus))?;
    let (tx, rx) = oneshot::channel();
    if let Ok(mut w) = inbox.waiting.lock() {
        w.insert(
            nonce.clone(),
            Slot {
                tx: Some(tx),
                answers: 0,
            },
        );
    }
    let plugin = format!("deskhand-{name}");
    let answer = tokio::time::timeout(CALL + ANSWER, load_and_wait(conn, &path, &plugin, rx))
        .await
        .unwrap_or_else(|_| Err(BackendError::Failed("KWin did not run the script".into())));
    let args = (plugin,);
    let unload = call::<bool>(
        conn,
        "/Scripting",
        "org.kde.kwin.Scripting",
        "unloadScript",
        &args,
    );
    let _ = tokio::time::timeout(CALL, unload).await;
    let _ = std::fs::remove_file(&path);
    let answers = inbox
        .waiting
        .lock()
        .ok()
        .and_then(|mut w| w.remove(&nonce))
        .map_or(0, |s| s.answers);
    if answers > 1 {
        return Err(BackendError::Failed(
            "KWin's script was answered twice: another program raced it".into(),
        ));
    }
    answer
}

async fn load_and_wait(
    conn: &Connection,
    path: &std::path::Path,
    plugin: &str,
    rx: oneshot::Receiver<String>,
) -> Result<String, BackendError> {
    let file = path.to_string_lossy().into_owned();
    let id: i32 = call(
        conn,
        "/Scripting",
        "org.kde.kwin.Scripting",
        "loadScript",
        &(file, plugin),
    )
    .await?;
    if id < 0 {
        return Err(BackendError::Failed(
            "KWin refused to load the script".into(),
        ));
    }
    // KWin 6 puts a script at /Scripting/Script<id>, KWin 5 at /<id>.
    let six = format!("/Scripting/Script{id}");
    if call::<()>(conn, &six, "org.kde.kwin.Script", "run", &())
        .await
        .is_err()
    {
        call::<()>(conn, &format!("/{id}"), "org.kde.kwin.Script", "run", &()).await?;
    }
    tokio::time::timeout(ANSWER, rx)
        .await
        .map_err(|_| BackendError::Failed("KWin's script did not answer".into()))?
        .map_err(|_| BackendError::Failed("KWin's script did not answer".into()))
}

async fn call<R>(
    conn: &Connection,
    path: &str,
    iface: &str,
    method: &str,
    body: &(impl serde::Serialize + zbus::zvariant::DynamicType),
) -> Result<R, BackendError>
where
    R: for<'d> zbus::zvariant::DynamicDeserialize<'d>,
{
    let reply = conn
        .call_method(Some(KWIN), path, Some(iface), method, body)
        .await
        .map_err(|e| BackendError::Failed(format!("KWin's {method}: {e}")))?;
    reply
        .body()
        .deserialize()
        .map_err(|e| BackendError::Failed(format!("KWin's {method} answered: {e}")))
}

impl Windows for KwinWindows {
    fn list(&mut self) -> Result<Vec<NativeWindow>, BackendError> {
        Ok(windows_of(&self.ask(None)?))
    }

    fn focus(&mut self, id: u64, _raise: bool) -> Result<(), BackendError> {
        if self.ask(Some(id))?.focused {
            Ok(())
        } else {
            Err(BackendError::Failed(format!(
                "KWin has no window {id:016x} to focus"
            )))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_script_carries_its_nonce_and_the_key_to_focus() {
        let s = script("abc123", Some(0xb207_019d_7d28_40c0));
        assert!(s.contains(r#""abc123""#));
        assert!(s.contains(r#"const want = "b207019d7d2840c0";"#));
        assert!(script("n", None).contains(r#"const want = "";"#));
        assert!(!s.contains('%'), "every placeholder filled");
    }

    #[test]
    fn an_answer_gives_windows_bottom_first_with_their_places() {
        let answer: Answer = serde_json::from_str(
            r#"{"focused": false, "rows": [
              {"key": "b207019d7d2840c0", "pid": 24768, "class": "wayland_form.py",
               "instance": "python3.11", "title": "kw form", "rect": [340, 200, 600, 400],
               "buffer": [330, 190, 620, 420], "wayland": true, "minimized": false,
               "fullscreen": false, "active": true, "stack": 3},
              {"key": "00000000000000ff", "pid": 0, "class": "xterm", "instance": "xterm",
               "title": "x", "rect": [0, 0, 10.4, 10.6], "buffer": [0, 0, 10, 10],
               "wayland": false, "minimized": true, "fullscreen": false, "active": false,
               "stack": 1}
            ]}"#,
        )
        .expect("parses");
        let w = windows_of(&answer);
        assert_eq!(
            w.iter().map(|w| w.id).collect::<Vec<_>>(),
            vec![0xff, 0xb207_019d_7d28_40c0]
        );
        assert_eq!(w[0].pid, None);
        assert_eq!(w[0].rect, Rect::new(0, 0, 10, 11));
        assert_eq!(
            w[0].surface_origin, None,
            "an X11 window sees desktop coordinates"
        );
        assert_eq!(w[1].rect, Rect::new(340, 200, 600, 400));
        assert_eq!(w[1].surface_origin, Some(Point::new(330, 190)));
        assert!(w[1].focused && w[0].minimized);
    }
}
