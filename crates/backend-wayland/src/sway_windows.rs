//! Windows and focus on sway, from its own IPC (`$SWAYSOCK`, the i3 IPC
//! protocol): Wayland gives clients no window list, but sway answers its
//! session's programs with its tree of containers: each window's content
//! rectangle in layout (logical) pixels, its app id (or X11 class), its
//! pid as the compositor knows it, focus, and whether its workspace shows.

use std::io::{Read, Write};
use std::os::unix::net::UnixStream;
use std::path::PathBuf;
use std::time::Duration;

use deskhand_backend::{BackendError, NativeWindow, Point, Rect, Windows};
use serde_json::Value;

const MAGIC: &[u8; 6] = b"i3-ipc";
const RUN_COMMAND: u32 = 0;
const GET_TREE: u32 = 4;
const CALL: Duration = Duration::from_secs(2);
/// A reply larger than this is refused (a tree of thousands of windows
/// is a few MiB).
const MOST: usize = 64 << 20;

/// sway's IPC socket, as the session names it.
pub(crate) struct SwayWindows {
    socket: PathBuf,
}

impl SwayWindows {
    /// sway's IPC where `$SWAYSOCK` names one that answers.
    pub(crate) fn from_env() -> Option<Self> {
        let socket = PathBuf::from(std::env::var_os("SWAYSOCK")?);
        let me = Self { socket };
        me.call(GET_TREE, "")
            .map_err(|e| tracing::info!(error = %e, "SWAYSOCK set, sway's IPC does not answer"))
            .ok()?;
        Some(me)
    }

    /// One request and its reply.
    fn call(&self, kind: u32, payload: &str) -> Result<Value, BackendError> {
        let failed = |e: std::io::Error| BackendError::Failed(format!("sway's IPC: {e}"));
        let mut s = UnixStream::connect(&self.socket).map_err(failed)?;
        s.set_read_timeout(Some(CALL)).map_err(failed)?;
        s.set_write_timeout(Some(CALL)).map_err(failed)?;
        s.write_all(&message(kind, payload)).map_err(failed)?;
        let mut head = [0u8; 14];
        s.read_exact(&mut head).map_err(failed)?;
        let len = reply_len(&head, kind)?;
        let mut body = vec![0; len];
        s.read_exact(&mut body).map_err(failed)?;
        serde_json::from_slice(&body)
            .map_err(|e| BackendError::Failed(format!("sway's IPC answered no JSON: {e}")))
    }
}

/// An i3 IPC message.
fn message(kind: u32, payload: &str) -> Vec<u8> {
    let mut m = Vec::with_capacity(14 + payload.len());
    m.extend_from_slice(MAGIC);
    m.extend_from_slice(&(payload.len() as u32).to_ne_bytes());
    m.extend_from_slice(&kind.to_ne_bytes());
    m.extend_from_slice(payload.as_bytes());
    m
}

/// The length of the reply whose header is `head`, to a request of `kind`.
fn reply_len(head: &[u8; 14], kind: u32) -> Result<usize, BackendError> {
    let word = |at: usize| u32::from_ne_bytes([head[at], head[at + 1], head[at + 2], head[at + 3]]);
    if &head[..6] != MAGIC || word(10) != kind {
        return Err(BackendError::Failed(
            "sway's IPC answered another message".into(),
        ));
    }
    let len = word(6) as usize;
    if len > MOST {
        return Err(BackendError::Failed(format!(
            "sway's IPC reply of {len} bytes"
        )));
    }
    Ok(len)
}

fn rect_of(v: &Value) -> Rect {
    let n = |k: &str| v.get(k).and_then(Value::as_i64).unwrap_or(0);
    Rect::new(
        n("x") as i32,
        n("y") as i32,
        n("width").max(0) as u32,
        n("height").max(0) as u32,
    )
}

/// The window a view node is: its content rectangle (`window_rect` is
/// relative to the node's `rect`), its app, and whether it shows.
fn window_of(node: &Value) -> Option<NativeWindow> {
    let id = node.get("id")?.as_u64()?;
    let outer = rect_of(node.get("rect")?);
    let inner = node.get("window_rect").map(rect_of).unwrap_or(outer);
    let x11 = node.get("window_properties");
    let text = |v: Option<&Value>, k: &str| {
        v.and_then(|v| v.get(k))
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_owned()
    };
    let class = match node.get("app_id").and_then(Value::as_str) {
        Some(app) => app.to_owned(),
        None => text(x11, "class"),
    };
    let rect = Rect::new(
        outer.x + inner.x,
        outer.y + inner.y,
        inner.width,
        inner.height,
    );
    let wayland = node.get("shell").and_then(Value::as_str) != Some("xwayland");
    Some(NativeWindow {
        id,
        pid: node
            .get("pid")
            .and_then(Value::as_u64)
            .and_then(|p| u32::try_from(p).ok()),
        class,
        instance: text(x11, "instance"),
        title: text(Some(node), "name"),
        rect,
        focused: node.get("focused").and_then(Value::as_bool) == Some(true),
        // A view on a workspace that does not show is as good as hidden.
        minimized: node.get("visible").and_then(Value::as_bool) != Some(true),
        fullscreen: node
            .get("fullscreen_mode")
            .and_then(Value::as_u64)
            .unwrap_or(0)
            > 0,
        // A Wayland app counts its own coordinates from its surface
        // (client-side shadows, which sway's geometry leaves out, aside).
        surface_origin: wayland.then(|| Point::new(rect.x, rect.y)),
    })
}

/// Whether `node` is a view (a window), not a container of others.
fn is_view(node: &Value) -> bool {
    node.get("pid").is_some()
        && node
            .get("nodes")
            .and_then(Value::as_array)
            .is_none_or(Vec::is_empty)
}

/// Every view under `node`, tiled ones before floating ones (which sway
/// draws above them), each in tree order.
fn views<'t>(node: &'t Value, out: &mut Vec<&'t Value>) {
    if is_view(node) {
        out.push(node);
        return;
    }
    for key in ["nodes", "floating_nodes"] {
        for child in node
            .get(key)
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            views(child, out);
        }
    }
}

/// The windows of sway's tree, bottom of the stack first: tiled, then
/// floating, then full-screen ones, which cover all; the scratchpad's
/// (hidden) ones as minimized.
pub(crate) fn windows_of(tree: &Value) -> Vec<NativeWindow> {
    let mut all = Vec::new();
    views(tree, &mut all);
    let mut windows: Vec<NativeWindow> = all.into_iter().filter_map(window_of).collect();
    windows.sort_by_key(|w| w.fullscreen);
    windows
}

impl Windows for SwayWindows {
    fn list(&mut self) -> Result<Vec<NativeWindow>, BackendError> {
        Ok(windows_of(&self.call(GET_TREE, "")?))
    }

    fn focus(&mut self, id: u64, _raise: bool) -> Result<(), BackendError> {
        let reply = self.call(RUN_COMMAND, &format!("[con_id={id}] focus"))?;
        let ok = reply
            .as_array()
            .and_then(|r| r.first())
            .and_then(|r| r.get("success"))
            .and_then(Value::as_bool);
        if ok == Some(true) {
            Ok(())
        } else {
            Err(BackendError::Failed(format!(
                "sway did not focus window {id}: {reply}"
            )))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn view(id: u64, app: Option<&str>, x: i32, focused: bool, visible: bool) -> Value {
        json!({
            "id": id, "type": "con", "name": format!("title {id}"), "pid": 1000 + id,
            "app_id": app, "shell": if app.is_some() { "xdg_shell" } else { "xwayland" },
            "window_properties": app.is_none().then(|| json!({"class": "XTerm", "instance": "xterm"})),
            "rect": {"x": x, "y": 0, "width": 640, "height": 800},
            "window_rect": {"x": 2, "y": 24, "width": 636, "height": 774},
            "focused": focused, "visible": visible, "fullscreen_mode": 0, "nodes": []
        })
    }

    #[test]
    fn the_tree_gives_each_windows_content_app_pid_and_stacking() {
        let mut full = view(5, Some("mpv"), 0, false, true);
        full["fullscreen_mode"] = json!(1);
        let tree = json!({"id": 1, "type": "root", "nodes": [
            {"id": 2, "type": "output", "nodes": [
                {"id": 3, "type": "workspace", "nodes": [full, view(4, None, 640, true, true)],
                 "floating_nodes": [view(6, Some("org.gnome.Calculator"), 100, false, true)]},
                {"id": 7, "type": "workspace", "nodes": [view(8, Some("firefox"), 0, false, false)],
                 "floating_nodes": []}
            ]}
        ]});
        let w = windows_of(&tree);
        let ids: Vec<u64> = w.iter().map(|w| w.id).collect();
        assert_eq!(ids, vec![4, 6, 8, 5], "full screen covers all");
        let xterm = &w[0];
        assert_eq!(
            (xterm.class.as_str(), xterm.instance.as_str()),
            ("XTerm", "xterm")
        );
        assert_eq!(xterm.rect, Rect::new(642, 24, 636, 774));
        assert_eq!(
            (xterm.pid, xterm.focused, xterm.surface_origin),
            (Some(1004), true, None)
        );
        let calc = &w[1];
        assert_eq!(calc.class, "org.gnome.Calculator");
        assert_eq!(calc.surface_origin, Some(Point::new(102, 24)));
        assert!(w[2].minimized, "its workspace does not show");
        assert!(w[3].fullscreen && !w[3].minimized);
    }

    #[test]
    fn a_message_is_framed_and_a_reply_to_another_is_refused() {
        let m = message(GET_TREE, "");
        assert_eq!(&m[..6], b"i3-ipc");
        assert_eq!(m.len(), 14);
        let mut head = [0u8; 14];
        head.copy_from_slice(&message(GET_TREE, "abc")[..14]);
        assert_eq!(reply_len(&head, GET_TREE).expect("ours"), 3);
        assert!(reply_len(&head, RUN_COMMAND).is_err());
    }
}
