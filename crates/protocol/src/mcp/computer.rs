//! The MCP `computer` tool: OpenAI's GA computer action set as a function
//! tool, for clients and models without a native computer tool. Every call
//! answers one fresh screenshot; coordinates of later actions are its pixels.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::results::Bounds;

/// What an action does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ComputerActionType {
    /// Return a fresh screenshot (nothing sent).
    Screenshot,
    /// Click `button` at `x`, `y`, holding `keys`.
    Click,
    /// Double-click at `x`, `y`.
    DoubleClick,
    /// Press at the first point of `path`, move through it, release.
    Drag,
    /// Press `keys` together, e.g. `["CTRL", "S"]`.
    Keypress,
    /// Move the pointer to `x`, `y`.
    Move,
    /// Turn the wheel at `x`, `y` by `scroll_x`/`scroll_y` pixels.
    Scroll,
    /// Type `text` exactly.
    Type,
    /// Wait 2 seconds.
    Wait,
}

/// A mouse button.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ComputerButton {
    /// Left.
    #[default]
    Left,
    /// Right.
    Right,
    /// The wheel (middle).
    Wheel,
    /// The browser's Back button.
    Back,
    /// The browser's Forward button.
    Forward,
}

/// A point of a drag, in screenshot pixels.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct PathPoint {
    /// Horizontal.
    pub x: i64,
    /// Vertical.
    pub y: i64,
}

/// One action; coordinates are pixels of the last screenshot this session was
/// sent.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ComputerAction {
    /// What to do.
    #[serde(rename = "type")]
    pub kind: ComputerActionType,
    /// Horizontal, in screenshot pixels.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub x: Option<i64>,
    /// Vertical, in screenshot pixels.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub y: Option<i64>,
    /// For `click`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub button: Option<ComputerButton>,
    /// For `keypress`: the keys pressed together; for pointer actions:
    /// modifiers held during them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub keys: Option<Vec<String>>,
    /// For `type`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    /// For `scroll`: horizontal pixels (negative: left).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scroll_x: Option<i64>,
    /// For `scroll`: vertical pixels (negative: up).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scroll_y: Option<i64>,
    /// For `drag`: at least two points.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<Vec<PathPoint>>,
}

/// `computer`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ComputerArgs {
    /// The session; the connection's own when absent. It must be granted
    /// the whole desktop, and input needs `input: "takeover"`.
    #[serde(default)]
    pub session_id: Option<String>,
    /// One action.
    #[serde(default)]
    pub action: Option<ComputerAction>,
    /// Several actions, run in order and halted at the first failure.
    #[serde(default)]
    pub actions: Option<Vec<ComputerAction>>,
    /// `all` (default) or a display index: which displays the screenshot shows.
    #[serde(default)]
    pub display: Option<String>,
    /// Largest screenshot width (default 1920).
    #[serde(default)]
    pub max_width: Option<u32>,
    /// Largest screenshot height (default 1200).
    #[serde(default)]
    pub max_height: Option<u32>,
    /// Set-of-mark: number the visible interactive elements of the focused
    /// window on the screenshot (from its accessibility tree) and list them.
    #[serde(default)]
    pub marks: Option<bool>,
}

/// One numbered box on a screenshot.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ComputerMark {
    /// The number drawn on the screenshot.
    pub mark: u32,
    /// The element's token, for `click`, `type_text` and `set_value`.
    pub element_token: String,
    /// Its role.
    pub role: String,
    /// Its label (untrusted app text, at most 80 characters).
    pub label: String,
    /// Its visible box, in screenshot pixels.
    #[serde(rename = "box")]
    pub shot_box: Bounds,
    /// The box's centre, in screenshot pixels: where a `click` action lands on
    /// it.
    pub center: [i64; 2],
}

/// The marks of a screenshot.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ComputerMarks {
    /// The window whose elements are marked.
    pub window_id: String,
    /// The snapshot the tokens belong to.
    pub snapshot_id: String,
    /// The marks, in document order.
    pub marks: Vec<ComputerMark>,
}

/// One display of a screenshot.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ComputerDisplay {
    /// The display's index.
    pub index: u32,
    /// Its name.
    pub name: String,
    /// Whether it is the primary display.
    pub primary: bool,
    /// The part of it the screenshot shows, in global desktop pixels.
    pub rect: Bounds,
    /// Where that part is in the screenshot, in screenshot pixels.
    pub pixel: Bounds,
    /// The display's own scale.
    pub scale: f64,
}

/// The screenshot a `computer` call answers (the image content block carries
/// its bytes).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ComputerShot {
    /// `image/png` or `image/jpeg`.
    pub mime_type: String,
    /// Screenshot pixels.
    pub width: u32,
    /// Screenshot pixels.
    pub height: u32,
    /// Its displays.
    pub displays: Vec<ComputerDisplay>,
    /// How it was made smaller to fit the byte budget, when it was.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// A successful `computer` call.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ComputerResult {
    /// Always true.
    pub ok: bool,
    /// The fresh screenshot (`frame` on the wire, as 0.1 named it).
    #[serde(rename = "frame")]
    pub shot: ComputerShot,
    /// Milliseconds each action took.
    pub timings_ms: Vec<f64>,
    /// Milliseconds waited for the screen to settle after input.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub settle_ms: Option<f64>,
    /// With `marks: true`: the numbered elements drawn on the screenshot.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub marks: Option<ComputerMarks>,
    /// With `marks: true`: why there are none (no focused window, its app
    /// not on the accessibility bus); the screenshot is sent unmarked.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub marks_error: Option<super::ErrorObject>,
}
