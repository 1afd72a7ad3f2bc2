//! Payloads of the wire ops (`wire-ops.md`). Request payloads are lenient
//! (unknown fields are ignored, every field optional where the spec allows);
//! validation of values happens in the adapters, which report the field at
//! fault.

use serde::{Deserialize, Serialize};

use crate::features::{CoarseFeature, Feature};
use crate::tree::ElementRow;

/// Name and version of the server, sent in HELLO.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ServerInfo {
    /// Always `deskhand`.
    pub name: String,
    /// The daemon's version.
    pub version: String,
}

/// `HELLO`: sent by deskhand as soon as a connection is accepted.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HelloPayload {
    /// Wire protocol version.
    pub protocol_version: u32,
    /// The session this connection is.
    pub session_id: String,
    /// Who is speaking.
    pub server: ServerInfo,
    /// Capabilities; `computer_use` when any computer-use op is available.
    pub capabilities: Vec<String>,
    /// Fine-grained features probed from the live backend.
    pub computer_use_features: Vec<Feature>,
    /// Coarse buckets probed from the live backend.
    pub computer_use_features_coarse: Vec<CoarseFeature>,
    /// Size of the primary display in pixels.
    pub screen_resolution: [u32; 2],
    /// Largest message deskhand accepts, in bytes.
    pub max_message_bytes: usize,
}

/// `HELLO_ACK`: the client's answer to HELLO.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct HelloAckPayload {
    /// Largest clipboard or file payload the client accepts.
    #[serde(default)]
    pub max_file_size_bytes: Option<u64>,
    /// Free-form client name, for the audit log.
    #[serde(default)]
    pub client: Option<String>,
}

/// `ACK`: success without data.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AckPayload {
    /// Always true.
    pub ok: bool,
}

/// Image formats a screenshot can be encoded in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ImageFormat {
    /// Lossless PNG (fast compression).
    Png,
    /// JPEG with the requested quality.
    Jpeg,
}

impl ImageFormat {
    /// The MIME type of the format.
    pub fn mime_type(self) -> &'static str {
        match self {
            Self::Png => "image/png",
            Self::Jpeg => "image/jpeg",
        }
    }
}

/// `SCREENSHOT_REQUEST`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ScreenshotRequest {
    /// Display index (DISPLAY_INFO); default the primary display.
    #[serde(default)]
    pub monitor: Option<i64>,
    /// JPEG quality 1..=100 (default 75).
    #[serde(default)]
    pub quality: Option<i64>,
    /// `[x1, y1, x2, y2]` in global desktop pixels; crops only.
    #[serde(default)]
    pub region: Option<Vec<i64>>,
    /// Opaque id from WINDOW_LIST_RESPONSE (not yet available).
    #[serde(default)]
    pub window_id: Option<String>,
    /// `png` (default) or `jpeg`.
    #[serde(default)]
    pub format: Option<ImageFormat>,
    /// Draw the pointer into the image.
    #[serde(default)]
    pub include_cursor: Option<bool>,
}

/// Where a screenshot came from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ScreenshotMeta {
    /// Top-left of the returned image in global desktop pixels.
    pub origin: [i32; 2],
    /// Index of the display the image came from.
    pub display_id: u32,
}

/// `SCREENSHOT_RESPONSE`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ScreenshotResponse {
    /// The encoded image.
    pub image_base64: String,
    /// `image/png` or `image/jpeg`.
    pub mime_type: String,
    /// Image width in pixels.
    pub width: u32,
    /// Image height in pixels.
    pub height: u32,
    /// Display index the image came from.
    pub monitor: u32,
    /// `[x1, y1, x2, y2]` echo of the captured rectangle.
    pub region: Option<[i32; 4]>,
    /// Physical pixels per logical pixel of that display.
    pub display_scale: f64,
    /// Logical size of that display.
    pub logical_size: [u32; 2],
    /// Origin and display of the image.
    pub meta: ScreenshotMeta,
}

/// `INPUT_ACTION`: every field optional on the wire; the adapter validates
/// what each action requires.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct InputActionPayload {
    /// The verb, e.g. `left_click`.
    #[serde(default)]
    pub action: Option<String>,
    /// `[x, y]` in global desktop pixels.
    #[serde(default)]
    pub coordinate: Option<Vec<i64>>,
    /// `left` | `middle` | `right`.
    #[serde(default)]
    pub button: Option<String>,
    /// Held during a click or scroll: `shift` | `ctrl` | `alt` | `super` | `meta`.
    #[serde(default)]
    pub modifiers: Option<Vec<String>>,
    /// Wheel steps.
    #[serde(default)]
    pub scroll_amount: Option<i64>,
    /// `up` | `down` | `left` | `right`.
    #[serde(default)]
    pub scroll_direction: Option<String>,
    /// Hold or wait duration.
    #[serde(default)]
    pub duration_ms: Option<i64>,
    /// Text to type (also a key chord for `key` when `key` is absent).
    #[serde(default)]
    pub text: Option<String>,
    /// Key chord such as `ctrl+s`.
    #[serde(default)]
    pub key: Option<String>,
    /// Legacy scroll direction.
    #[serde(default)]
    pub direction: Option<String>,
    /// Legacy scroll amount.
    #[serde(default)]
    pub clicks: Option<i64>,
    /// Polyline for `drag`.
    #[serde(default)]
    pub path: Option<Vec<Vec<i64>>>,
    /// Type by pasting through the clipboard (honoured for 200 characters
    /// or more, and only with the clipboard enabled).
    #[serde(default)]
    pub paste: Option<bool>,
    /// Restore the clipboard after pasting.
    #[serde(default)]
    pub preserve_clipboard: Option<bool>,
}

/// `CURSOR_POSITION_RESPONSE`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CursorPositionResponse {
    /// Global x.
    pub x: i32,
    /// Global y.
    pub y: i32,
    /// Display under the pointer, if any.
    pub monitor: Option<u32>,
}

/// One display of DISPLAY_INFO_RESPONSE.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MonitorInfo {
    /// Stable index used by `monitor` fields.
    pub index: u32,
    /// Output or monitor name, e.g. `DUMMY0`.
    pub name: String,
    /// Whether this is the primary display.
    pub primary: bool,
    /// Size in physical pixels.
    pub physical_size: [u32; 2],
    /// Size in logical pixels (physical / scale).
    pub logical_size: [u32; 2],
    /// Physical pixels per logical pixel.
    pub scale: f64,
    /// Top-left in global desktop pixels.
    pub origin: [i32; 2],
}

/// `DISPLAY_INFO_RESPONSE`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DisplayInfoResponse {
    /// Every connected display.
    pub monitors: Vec<MonitorInfo>,
}

/// `WINDOW_LIST_REQUEST`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct WindowListRequest {
    /// Only windows of this app (X11: its WM_CLASS class or instance, or
    /// its name).
    #[serde(default)]
    pub app_bundle_id: Option<String>,
    /// Include minimized (iconic, hidden) windows.
    #[serde(default)]
    pub include_minimized: Option<bool>,
    /// Include windows lying entirely outside every display.
    #[serde(default)]
    pub include_offscreen: Option<bool>,
}

/// One window of WINDOW_LIST_RESPONSE.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WindowInfo {
    /// `win_<uuid>`, minted by deskhand, never reused.
    pub window_id: String,
    /// Owning process, when the window says.
    pub pid: Option<u32>,
    /// The app's name (X11: WM_CLASS class).
    pub app_name: String,
    /// The app's identifier (X11: WM_CLASS instance).
    pub app_bundle_id: Option<String>,
    /// The window's title.
    pub title: String,
    /// `[x1, y1, x2, y2]` in global desktop pixels (content area).
    pub bounds: [i32; 4],
    /// Display holding most of the window, if any.
    pub monitor: Option<u32>,
    /// Whether it has the input focus.
    pub is_focused: bool,
    /// Whether it is minimized.
    pub is_minimized: bool,
    /// Whether it is full screen.
    pub is_fullscreen: bool,
}

/// `WINDOW_LIST_RESPONSE`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WindowListResponse {
    /// Windows, topmost first.
    pub windows: Vec<WindowInfo>,
    /// Whether the list was cut.
    pub truncated: bool,
}

/// `WINDOW_FOCUS`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct WindowFocusRequest {
    /// From WINDOW_LIST_RESPONSE.
    #[serde(default)]
    pub window_id: Option<String>,
    /// Bring it to the front too (default true).
    #[serde(default)]
    pub raise: Option<bool>,
}

/// `APP_LIST_REQUEST`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct AppListRequest {
    /// Also list the person's processes that have no window.
    #[serde(default)]
    pub include_background: Option<bool>,
}

/// One running app of APP_LIST_RESPONSE.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AppInfo {
    /// Process id.
    pub pid: u32,
    /// Process name.
    pub name: String,
    /// Identifier (X11: WM_CLASS instance of its first window).
    pub bundle_id: Option<String>,
    /// Executable, when readable.
    pub executable_path: Option<String>,
    /// Owns the focused window.
    pub is_frontmost: bool,
    /// Top-level windows it owns.
    pub window_count: u32,
}

/// `APP_LIST_RESPONSE`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AppListResponse {
    /// Running apps, frontmost first, then by pid.
    pub apps: Vec<AppInfo>,
}

/// `APP_LAUNCH`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct AppLaunchRequest {
    /// A `.desktop` id on Linux (`org.gnome.Calculator`, `debian-xterm`).
    #[serde(default)]
    pub bundle_id: Option<String>,
    /// An absolute path to an executable.
    #[serde(default)]
    pub executable_path: Option<String>,
    /// Arguments, passed as they are (no shell).
    #[serde(default)]
    pub args: Option<Vec<String>>,
    /// Bring its first window to the front when it appears (default true).
    #[serde(default)]
    pub activate: Option<bool>,
}

/// `ACK` of APP_LAUNCH.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LaunchAck {
    /// Always true.
    pub ok: bool,
    /// The launched process.
    pub pid: u32,
}

/// The state of one OS permission.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PermissionStatus {
    /// Granted (probed).
    Granted,
    /// Denied (probed).
    Denied,
    /// Cannot be told without trying; treat as "try and see".
    Unknown,
    /// This OS has no such permission.
    NotApplicable,
}

/// `PERMISSIONS_CHECK_REQUEST`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct PermissionsCheckRequest {
    /// Names to check; every known one when absent or empty.
    #[serde(default)]
    pub permissions: Option<Vec<String>>,
}

/// `PERMISSIONS_CHECK_RESPONSE`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PermissionsCheckResponse {
    /// Name → status.
    pub permissions: std::collections::BTreeMap<String, PermissionStatus>,
}

/// Clipboard content formats. Only text is implemented; `image` is refused
/// with `FEATURE_NOT_SUPPORTED`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ClipboardFormat {
    /// UTF-8 text.
    #[default]
    Text,
    /// An image (not implemented).
    Image,
}

/// `CLIPBOARD_READ`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ClipboardReadRequest {
    /// What to read; text when absent.
    #[serde(default)]
    pub format: ClipboardFormat,
}

/// `CLIPBOARD_READ_RESPONSE`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ClipboardReadResponse {
    /// Always `text` today.
    pub format: ClipboardFormat,
    /// The clipboard's text.
    pub content: String,
    /// UTF-8 length of `content`.
    pub size_bytes: u64,
}

/// `CLIPBOARD_WRITE` (answered with ACK).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ClipboardWriteRequest {
    /// What `content` is; text when absent.
    #[serde(default)]
    pub format: ClipboardFormat,
    /// The text to put on the clipboard.
    pub content: String,
}

/// `TAKEOVER_REQUEST`: start (`on: true`) or end the session's takeover.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct TakeoverRequest {
    /// Whether the takeover should be on.
    pub on: bool,
}

/// `TAKEOVER_STATE`: the answer to TAKEOVER_REQUEST, and pushed (without
/// an id) whenever the session's takeover changes.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct TakeoverStatePayload {
    /// Synthetic input is granted.
    pub on: bool,
    /// The indicator is on screen.
    pub indicator: bool,
    /// The person took over; input is refused until they click Continue.
    pub paused: bool,
    /// `pointer_moved`, `key_pressed` or `button_pressed`, while paused.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub paused_reason: Option<String>,
    /// Why the takeover is off (`ended`, `disconnected`, `kill_switch`,
    /// `indicator_lost`, `indicator_unavailable`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

/// `A11Y_TREE_REQUEST`: a window's accessibility tree — the whole window,
/// its skeleton (containers and landmarks), or what lies below an
/// element token of an earlier read.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct A11yTreeRequest {
    /// From WINDOW_LIST_RESPONSE (required).
    #[serde(default)]
    pub window_id: String,
    /// List containers and landmarks only (not with `root`).
    #[serde(default)]
    pub skeleton: Option<bool>,
    /// An `element_token` of an earlier read of this window: list what
    /// lies below it (not with `skeleton`).
    #[serde(default)]
    pub root: Option<String>,
    /// At most this many rows (at least 1; capped server-side).
    #[serde(default)]
    pub max_elements: Option<u32>,
    /// At most this many levels below the root (capped server-side).
    #[serde(default)]
    pub max_depth: Option<u32>,
}

/// `A11Y_TREE_RESPONSE`: the rows read, with the same row type the MCP
/// tools return.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct A11yTreeResponse {
    /// The window read.
    pub window_id: String,
    /// The snapshot the rows' tokens belong to.
    pub snapshot_id: String,
    /// The rows, in document order.
    pub elements: Vec<ElementRow>,
    /// Rows were left out to stay within the limits.
    pub truncated: bool,
    /// How many elements the whole window has.
    pub window_elements: u32,
}

/// A display rectangle in INPUT_OUT_OF_BOUNDS details.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DisplayRect {
    /// Display index.
    pub index: u32,
    /// Top-left.
    pub origin: [i32; 2],
    /// Width and height.
    pub size: [u32; 2],
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn input_action_ignores_unknown_fields() {
        let p: InputActionPayload =
            serde_json::from_str(r#"{"action":"left_click","coordinate":[1,2],"future":1}"#)
                .expect("parse");
        assert_eq!(p.action.as_deref(), Some("left_click"));
        assert_eq!(p.coordinate, Some(vec![1, 2]));
    }

    #[test]
    fn screenshot_format_names() {
        let r: ScreenshotRequest =
            serde_json::from_str(r#"{"format":"jpeg","quality":50}"#).expect("parse");
        assert_eq!(r.format, Some(ImageFormat::Jpeg));
        assert!(serde_json::from_str::<ScreenshotRequest>(r#"{"format":"gif"}"#).is_err());
    }

    #[test]
    fn a11y_tree_request_fields_are_optional_but_window_id() {
        let r: A11yTreeRequest =
            serde_json::from_str(r#"{"window_id":"win_1","skeleton":true,"future":1}"#)
                .expect("parse");
        assert_eq!(r.window_id, "win_1");
        assert_eq!(r.skeleton, Some(true));
        assert_eq!((r.root, r.max_elements, r.max_depth), (None, None, None));
        let empty: A11yTreeRequest = serde_json::from_str("{}").expect("parse");
        assert!(empty.window_id.is_empty());
    }
}
