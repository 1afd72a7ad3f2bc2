//! The arguments of every MCP tool (driver contract §2–§8). Their JSON
//! schemas, generated from these types, are the tools' input schemas.
//! Unknown arguments are ignored, as the contract says; a listed argument
//! of the wrong type is refused with `invalid_arguments`.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// How a session may act (driver contract §4).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum InputMode {
    /// Reads only (accessibility acts arrive with the accessibility tree);
    /// no synthetic input, focus change or raising.
    #[default]
    Headless,
    /// Synthetic pointer and keyboard under the red frame, handed back the
    /// moment the person touches mouse or keyboard.
    Takeover,
}

/// Which window a call is about: `window_id`, or `pid` (its topmost
/// window), or `app` (a name or title fragment of an approved app).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Target {
    /// The session to act in; the connection's own session when absent.
    #[serde(default)]
    pub session_id: Option<String>,
    /// A window id from list_windows.
    #[serde(default)]
    pub window_id: Option<String>,
    /// The process owning the window.
    #[serde(default)]
    pub pid: Option<u32>,
    /// An approved app's name, class or a fragment of its window title.
    #[serde(default)]
    pub app: Option<String>,
}

impl Target {
    /// Whether the call names a window at all.
    pub fn is_given(&self) -> bool {
        self.window_id.is_some() || self.pid.is_some() || self.app.is_some()
    }
}

/// What to observe after an act (driver contract §7.1).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Observe {
    /// Return a fresh screenshot of the target (or the desktop) with the
    /// result.
    #[serde(default)]
    pub screenshot: bool,
    /// Return the window's accessibility tree as a default read shows it
    /// (at most 250 rows).
    #[serde(default)]
    pub tree: bool,
}

/// A point in global desktop pixels.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct XY {
    /// Horizontal, from the desktop's left edge.
    pub x: i32,
    /// Vertical, from the desktop's top edge.
    pub y: i32,
}

/// `start_session`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct StartSessionArgs {
    /// The session to change; a new one when absent (or, on a connection
    /// that has one, that one).
    #[serde(default)]
    pub session_id: Option<String>,
    /// Apps the session works with, by name or class; `["*"]` for the
    /// whole desktop. Default: whatever the person granted.
    #[serde(default)]
    pub apps: Option<Vec<String>>,
    /// `headless` (default) or `takeover`.
    #[serde(default)]
    pub input: Option<InputMode>,
    /// Ask to read the clipboard (each read still needs the host's
    /// approval).
    #[serde(default)]
    pub clipboard_read: Option<bool>,
    /// How long the consent should last, in seconds (at most what the
    /// person granted).
    #[serde(default)]
    pub lease_s: Option<u64>,
}

/// Tools that take only the session (`get_session_state`, `end_session`,
/// `clipboard_read`, `health_report`, the notification tools).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct SessionArgs {
    /// The session; the connection's own when absent.
    #[serde(default)]
    pub session_id: Option<String>,
}

/// `list_windows`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ListWindowsArgs {
    /// The session; the connection's own when absent.
    #[serde(default)]
    pub session_id: Option<String>,
    /// Only windows matching this app name or title fragment.
    #[serde(default)]
    pub app: Option<String>,
    /// Include minimized windows.
    #[serde(default)]
    pub include_minimized: bool,
}

/// `get_window_state`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct WindowStateArgs {
    /// The window.
    #[serde(flatten)]
    pub target: Target,
    /// Include a screenshot of the window, secure fields blacked out
    /// (default true; false by default for skeleton reads).
    #[serde(default)]
    pub include_screenshot: Option<bool>,
    /// Only containers and landmarks (toolbars, lists, documents, named
    /// panels): a small map of a dense window to drill into with `root`.
    #[serde(default)]
    pub skeleton: Option<bool>,
    /// An element token: read only that element and what lies below it.
    #[serde(default)]
    pub root: Option<String>,
    /// At most this many rows (default 250, skeleton 60 and at most 200).
    #[serde(default)]
    pub max_elements: Option<usize>,
    /// At most this many levels below the root (default 25, skeleton 8).
    #[serde(default)]
    pub max_depth: Option<usize>,
}

/// Image encoding of a screenshot.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ImageKind {
    /// Lossless.
    #[default]
    Png,
    /// Smaller, lossy.
    Jpeg,
}

/// `screenshot`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ScreenshotArgs {
    /// A window to capture; the primary display when no window is named
    /// (only for a session granted the whole desktop).
    #[serde(flatten)]
    pub target: Target,
    /// A display index to capture instead of a window.
    #[serde(default)]
    pub display: Option<u32>,
    /// `png` (default) or `jpeg`.
    #[serde(default)]
    pub format: Option<ImageKind>,
    /// JPEG quality 1–100 (default 80).
    #[serde(default)]
    pub quality: Option<u8>,
    /// Draw numbered boxes on the window's visible interactive elements
    /// (from its accessibility tree) and return which element token each
    /// number stands for (needs a window target).
    #[serde(default)]
    pub marks: Option<bool>,
}

/// `click`, `double_click`, `right_click`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ClickArgs {
    /// The window clicked into (optional: the window at the point must be
    /// an approved app's either way).
    #[serde(flatten)]
    pub target: Target,
    /// An element token from get_window_state (or a screenshot's marks):
    /// the element's own action is done, without moving the pointer (no
    /// takeover needed). An element without actions is clicked with the
    /// pointer at its centre in takeover mode (`path: "synthetic"`), when
    /// no other window covers that point. Give it or x and y.
    #[serde(default)]
    pub element_token: Option<String>,
    /// Horizontal, in global desktop pixels (needs takeover).
    #[serde(default)]
    pub x: Option<i32>,
    /// Vertical, in global desktop pixels (needs takeover).
    #[serde(default)]
    pub y: Option<i32>,
    /// Modifier keys held during the click (`shift`, `ctrl`, `alt`,
    /// `super`).
    #[serde(default)]
    pub modifiers: Vec<String>,
    /// What to return after the act.
    #[serde(default)]
    pub observe: Observe,
}

/// `type_text`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct TypeTextArgs {
    /// The window that must have the focus (optional: the focused window
    /// must be an approved app's either way).
    #[serde(flatten)]
    pub target: Target,
    /// An editable field's element token: the text is added to the
    /// field's own text through its accessibility interface (no focus
    /// change, no takeover needed) and read back.
    #[serde(default)]
    pub element_token: Option<String>,
    /// The text, typed exactly (any Unicode character).
    pub text: String,
    /// What to return after the act.
    #[serde(default)]
    pub observe: Observe,
}

/// `set_value`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct SetValueArgs {
    /// The session; the connection's own when absent.
    #[serde(default)]
    pub session_id: Option<String>,
    /// The editable field's element token from get_window_state.
    pub element_token: String,
    /// The field's whole new text.
    pub value: String,
    /// What to return after the act.
    #[serde(default)]
    pub observe: Observe,
}

/// `press_key`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct PressKeyArgs {
    /// The window that must have the focus.
    #[serde(flatten)]
    pub target: Target,
    /// A key name (`Return`, `Escape`, `a`, `F5`) or a chord (`ctrl+s`).
    pub key: String,
    /// What to return after the act.
    #[serde(default)]
    pub observe: Observe,
}

/// `hotkey`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct HotkeyArgs {
    /// The window that must have the focus.
    #[serde(flatten)]
    pub target: Target,
    /// Keys pressed in order and released in reverse (`["ctrl", "c"]`).
    pub keys: Vec<String>,
    /// What to return after the act.
    #[serde(default)]
    pub observe: Observe,
}

/// Which way to scroll.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ScrollWay {
    /// Up.
    Up,
    /// Down.
    #[default]
    Down,
    /// Left.
    Left,
    /// Right.
    Right,
}

/// `scroll`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ScrollArgs {
    /// The window scrolled.
    #[serde(flatten)]
    pub target: Target,
    /// Horizontal, in global desktop pixels.
    pub x: i32,
    /// Vertical, in global desktop pixels.
    pub y: i32,
    /// Which way (default down).
    #[serde(default)]
    pub direction: ScrollWay,
    /// Wheel steps, 1–50 (default 3).
    #[serde(default)]
    pub amount: Option<u32>,
    /// What to return after the act.
    #[serde(default)]
    pub observe: Observe,
}

/// `drag`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct DragArgs {
    /// The window dragged in: both ends must lie in it.
    #[serde(flatten)]
    pub target: Target,
    /// Where the left button goes down.
    pub from: XY,
    /// Where it comes up.
    pub to: XY,
    /// What to return after the act.
    #[serde(default)]
    pub observe: Observe,
}

/// `move_cursor`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct MoveCursorArgs {
    /// The window moved into (optional).
    #[serde(flatten)]
    pub target: Target,
    /// Horizontal, in global desktop pixels.
    pub x: i32,
    /// Vertical, in global desktop pixels.
    pub y: i32,
    /// Glide there over this many milliseconds (at most 5000) instead of
    /// jumping.
    #[serde(default)]
    pub duration_ms: Option<u32>,
}

/// `bring_to_front`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct BringToFrontArgs {
    /// The window.
    #[serde(flatten)]
    pub target: Target,
}

/// `clipboard_write`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ClipboardWriteArgs {
    /// The session; the connection's own when absent.
    #[serde(default)]
    pub session_id: Option<String>,
    /// The text to put on the clipboard.
    pub text: String,
}

/// `dismiss_notification`, `invoke_notification_action`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct NotificationArgs {
    /// The session; the connection's own when absent.
    #[serde(default)]
    pub session_id: Option<String>,
    /// The notification.
    #[serde(default)]
    pub notification_id: Option<String>,
    /// The action to invoke.
    #[serde(default)]
    pub action: Option<String>,
}
