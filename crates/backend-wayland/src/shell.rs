//! deskhand's GNOME Shell extension (`installers/linux/gnome-shell`), the
//! only way on GNOME to draw above every window and to list windows: a
//! D-Bus object in the shell's own connection, reached through that
//! connection alone (`shell_owner`: never through a name another program
//! may take). What it answers is parsed here, as plain data.

use deskhand_backend::{BackendError, NativeWindow, Point, Rect};
use std::collections::HashMap;
use std::sync::Arc;

use serde::Deserialize;
use zbus::Connection;
use zbus::zvariant::OwnedValue;

use crate::shell_owner::Pin;

/// The extension's object and interface.
const PATH: &str = "/dev/deskhand/Shell";
const IFACE: &str = "dev.deskhand.Shell1";
/// The extension's uuid, for the doctor's advice.
pub(crate) const UUID: &str = "deskhand@deskhand.dev";

/// A window as the extension lists it.
#[derive(Debug, Clone, Deserialize, PartialEq)]
pub(crate) struct ShellWindow {
    /// `Meta.Window.get_id()`, as text (a 64-bit number).
    id: String,
    pid: i64,
    app_id: String,
    class: String,
    instance: String,
    title: String,
    rect: Rect,
    focused: bool,
    minimized: bool,
    fullscreen: bool,
    /// Where a Wayland client's surface starts (none for an X11 client).
    #[serde(default)]
    surface: Option<Point>,
}

impl ShellWindow {
    /// The window in the backend's terms; `None` when its id is not a
    /// number.
    pub(crate) fn native(&self) -> Option<NativeWindow> {
        Some(NativeWindow {
            id: self.id.parse().ok()?,
            pid: u32::try_from(self.pid).ok().filter(|p| *p > 0),
            class: if self.app_id.is_empty() {
                self.class.clone()
            } else {
                self.app_id.clone()
            },
            instance: self.instance.clone(),
            title: self.title.clone(),
            rect: self.rect,
            focused: self.focused,
            minimized: self.minimized,
            fullscreen: self.fullscreen,
            surface_origin: self.surface,
        })
    }
}

/// What the extension says about the parts it shows.
#[derive(Debug, Clone, Deserialize, PartialEq)]
pub(crate) struct FrameState {
    /// How many parts it shows.
    pub(crate) parts: usize,
    /// Every part visible, mapped and opaque.
    pub(crate) visible: bool,
    /// Every part still in the shell's top chrome.
    pub(crate) on_top: bool,
    /// Each part's (x, y, width, height) as placed now.
    pub(crate) placed: Vec<[f64; 4]>,
}

/// GNOME Shell's word on an extension: its `ExtensionState` number and
/// the error it gave.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ShellState {
    state: f64,
    error: Option<String>,
}

/// Why the extension does not answer, from GNOME Shell's state of it
/// (`ExtensionState`: 1 enabled, 2 disabled, 3 error, 4 out of date, 6
/// initialized; GNOME 45 renamed 1 and 2 active and inactive).
pub(crate) fn not_answering(shell: Option<&ShellState>) -> String {
    let enable = format!("enable it with `gnome-extensions enable {UUID}`");
    match shell.map(|s| (s.state as i64, s.error.as_deref().unwrap_or(""))) {
        None | Some((99, _)) => format!(
            "deskhand's GNOME Shell extension is not installed, or was installed after this login: install deskhand's package, sign out and in, then {enable}"
        ),
        Some((2 | 6, _)) => format!("deskhand's GNOME Shell extension is installed but not enabled: {enable}"),
        Some((3, why)) => format!("deskhand's GNOME Shell extension failed in GNOME Shell: {why}"),
        Some((4, _)) => "deskhand's GNOME Shell extension was linked for another GNOME version: reinstall deskhand's package (it links the build for this GNOME), then sign out and in".to_owned(),
        Some((state, _)) => format!(
            "deskhand's GNOME Shell extension does not answer (GNOME Shell's state {state}): sign out and in, then {enable}"
        ),
    }
}

/// A connection to the extension, through GNOME Shell's own connection
/// once it is pinned (no extension without it).
#[derive(Clone)]
pub(crate) struct ShellExt {
    conn: Connection,
    pin: Option<Arc<Pin>>,
    /// Why there is no pin, when another program holds the shell's name.
    taken: Option<String>,
}

fn failed(what: &str) -> impl Fn(zbus::Error) -> BackendError + '_ {
    move |e| BackendError::Failed(format!("GNOME Shell extension {what}: {e}"))
}

impl ShellExt {
    /// Finds GNOME Shell's own connection (`shell_owner::pin`); without
    /// it every call fails: a desktop other than GNOME, or the shell's
    /// name held by another program (`taken` says whose).
    pub(crate) async fn find(conn: Connection) -> Self {
        let (pin, taken) = match crate::shell_owner::pin(&conn).await {
            Ok(pin) => (pin, None),
            Err(e) => {
                tracing::error!(error = %e, "GNOME Shell's name is not the compositor's");
                (None, Some(e.to_string()))
            }
        };
        Self { conn, pin, taken }
    }

    /// GNOME Shell's connections, when pinned.
    pub(crate) fn pin(&self) -> Option<&Arc<Pin>> {
        self.pin.as_ref()
    }

    /// Why the shell is not (or no longer) the compositor's, if so.
    pub(crate) fn lost(&self) -> Option<String> {
        match (&self.pin, &self.taken) {
            (Some(pin), _) => pin.lost(),
            (None, Some(taken)) => Some(taken.clone()),
            (None, None) => Some("GNOME Shell is not on the session bus".into()),
        }
    }

    async fn proxy_at(
        &self,
        path: &'static str,
        iface: &'static str,
    ) -> Result<zbus::Proxy<'static>, BackendError> {
        let pin = match (&self.pin, self.lost()) {
            (Some(pin), None) => pin,
            (_, why) => {
                return Err(BackendError::Failed(format!(
                    "GNOME Shell: {}",
                    why.unwrap_or_default()
                )));
            }
        };
        let dest = zbus::names::BusName::Unique(pin.shell.clone().into_inner());
        zbus::Proxy::new(&self.conn, dest, path, iface)
            .await
            .map_err(failed("proxy"))
    }

    async fn proxy(&self) -> Result<zbus::Proxy<'static>, BackendError> {
        self.proxy_at(PATH, IFACE).await
    }

    /// The extension's version: an error saying why when it does not
    /// answer (not installed, not enabled, failed or for another GNOME).
    pub(crate) async fn version(&self) -> Result<u32, BackendError> {
        match (&self.pin, &self.taken) {
            (None, Some(taken)) => return Err(BackendError::Unsupported(taken.clone())),
            (None, None) => return Err(BackendError::Unsupported(not_answering(None))),
            (Some(_), _) => {}
        }
        let p = self.proxy().await?;
        match p.get_property::<u32>("Version").await {
            Ok(v) => Ok(v),
            Err(_) => Err(BackendError::Unsupported(
                not_answering(self.shell_state().await.as_ref()).to_owned(),
            )),
        }
    }

    /// What GNOME Shell says of the extension (`GetExtensionInfo`): its
    /// state and error, `None` when the shell does not know it.
    async fn shell_state(&self) -> Option<ShellState> {
        let p = self
            .proxy_at("/org/gnome/Shell", "org.gnome.Shell.Extensions")
            .await
            .ok()?;
        let info: HashMap<String, OwnedValue> = p.call("GetExtensionInfo", &(UUID,)).await.ok()?;
        let state = f64::try_from(info.get("state")?).ok()?;
        let error = info
            .get("error")
            .and_then(|e| String::try_from(e.clone()).ok());
        Some(ShellState { state, error })
    }

    /// Shows these parts (JSON of `overlay_layout::Part`s), replacing what
    /// it showed.
    pub(crate) async fn show_parts(&self, parts_json: &str) -> Result<(), BackendError> {
        self.proxy()
            .await?
            .call::<_, _, ()>("ShowParts", &(parts_json,))
            .await
            .map_err(failed("ShowParts"))
    }

    pub(crate) async fn hide_parts(&self) -> Result<(), BackendError> {
        self.proxy()
            .await?
            .call::<_, _, ()>("HideParts", &())
            .await
            .map_err(failed("HideParts"))
    }

    pub(crate) async fn frame_state(&self) -> Result<FrameState, BackendError> {
        let json: String = self
            .proxy()
            .await?
            .call("FrameState", &())
            .await
            .map_err(failed("FrameState"))?;
        serde_json::from_str(&json)
            .map_err(|e| BackendError::Failed(format!("GNOME Shell extension FrameState: {e}")))
    }

    pub(crate) async fn windows(&self) -> Result<Vec<ShellWindow>, BackendError> {
        let json: String = self
            .proxy()
            .await?
            .call("ListWindows", &())
            .await
            .map_err(failed("ListWindows"))?;
        parse_windows(&json)
    }

    pub(crate) async fn focus(&self, id: u64, raise: bool) -> Result<bool, BackendError> {
        self.proxy()
            .await?
            .call("Focus", &(id, raise))
            .await
            .map_err(failed("Focus"))
    }

    /// Commits `text` to the focused text field through the input method;
    /// `false`, with nothing done, when no field has input-method focus.
    pub(crate) async fn commit_text(&self, text: &str) -> Result<bool, BackendError> {
        self.proxy()
            .await?
            .call("CommitText", &(text,))
            .await
            .map_err(failed("CommitText"))
    }

    /// Where the pointer is, and the buttons held (bit 0 the first).
    pub(crate) async fn pointer(&self) -> Result<(i32, i32, u32), BackendError> {
        self.proxy()
            .await?
            .call("Pointer", &())
            .await
            .map_err(failed("Pointer"))
    }

    /// How far GNOME's top bar reaches down the primary monitor.
    pub(crate) async fn top_inset(&self) -> Result<u32, BackendError> {
        self.proxy()
            .await?
            .call("TopInset", &())
            .await
            .map_err(failed("TopInset"))
    }

    /// Shows the top bar's deskhand menu with this status (JSON of a
    /// `PlaceStatus`), putting it up the first time.
    pub(crate) async fn show_status(&self, status_json: &str) -> Result<(), BackendError> {
        self.proxy()
            .await?
            .call::<_, _, ()>("ShowStatus", &(status_json,))
            .await
            .map_err(failed("ShowStatus"))
    }

    /// Takes the top bar's deskhand menu down.
    pub(crate) async fn hide_status(&self) -> Result<(), BackendError> {
        self.proxy()
            .await?
            .call::<_, _, ()>("HideStatus", &())
            .await
            .map_err(failed("HideStatus"))
    }

    /// The items the person chose in the top bar's menu, from the shell's
    /// pinned connection alone (as [`ShellExt::presses`]).
    pub(crate) async fn choices(&self) -> Result<zbus::proxy::SignalStream<'static>, BackendError> {
        self.proxy()
            .await?
            .receive_signal("Chosen")
            .await
            .map_err(failed("Chosen"))
    }

    /// The buttons pressed on the indicator (`continue`, `stop`), as the
    /// shell itself sends them (the match names the shell's pinned
    /// connection: another program's signal is never seen).
    pub(crate) async fn presses(&self) -> Result<zbus::proxy::SignalStream<'static>, BackendError> {
        self.proxy()
            .await?
            .receive_signal("Pressed")
            .await
            .map_err(failed("Pressed"))
    }
}

/// The extension's window list.
pub(crate) fn parse_windows(json: &str) -> Result<Vec<ShellWindow>, BackendError> {
    serde_json::from_str(json)
        .map_err(|e| BackendError::Failed(format!("GNOME Shell extension ListWindows: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_listed_window_becomes_a_native_one_named_by_its_app_id() {
        let json = r#"[{"id":"859026528","pid":24224,"app_id":"org.gtk.Demo","class":"gtk3-demo",
            "instance":"gtk3-demo","title":"Application Class",
            "rect":{"x":239,"y":72,"width":800,"height":647},
            "focused":true,"minimized":false,"fullscreen":false,"surface":{"x":213,"y":49}},
            {"id":"x","pid":0,"app_id":"","class":"xterm","instance":"xterm","title":"t",
            "rect":{"x":0,"y":0,"width":1,"height":1},"focused":false,"minimized":true,"fullscreen":false}]"#;
        let rows = parse_windows(json).expect("parsed");
        let w = rows[0].native().expect("a number");
        assert_eq!(
            (w.id, w.pid, w.class.as_str()),
            (859_026_528, Some(24224), "org.gtk.Demo")
        );
        assert_eq!(w.rect, Rect::new(239, 72, 800, 647));
        assert!(w.focused && w.belongs_to("gtk3-demo"));
        assert_eq!(w.surface_origin, Some(Point { x: 213, y: 49 }));
        assert_eq!(rows[1].native(), None, "an id that is not a number");
        assert!(parse_windows("{").is_err());
    }

    #[test]
    fn the_reason_the_extension_is_silent_follows_gnome_shells_state_of_it() {
        let state = |state: f64, error: Option<&str>| ShellState {
            state,
            error: error.map(str::to_owned),
        };
        assert!(not_answering(None).contains("not installed"));
        assert!(not_answering(Some(&state(99.0, None))).contains("not installed"));
        for disabled in [2.0, 6.0] {
            let why = not_answering(Some(&state(disabled, None)));
            assert!(
                why.contains("not enabled")
                    && why.contains("gnome-extensions enable deskhand@deskhand.dev")
            );
        }
        let failed = not_answering(Some(&state(3.0, Some("SyntaxError: import"))));
        assert!(failed.ends_with("failed in GNOME Shell: SyntaxError: import"));
        assert!(not_answering(Some(&state(4.0, None))).contains("another GNOME version"));
        assert!(not_answering(Some(&state(1.0, None))).contains("state 1"));
    }
}
