//! What every MCP tool returns as `structuredContent`: the output schemas
//! of the driver contract §8 are generated from these types (they are not
//! advertised as `outputSchema`; the contract tests validate against them).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::args::InputMode;
use crate::Disposition;
use crate::tree::{ElementRow, TreeDiff};

/// A rectangle: in global desktop pixels unless the field that holds it
/// says otherwise (the `computer` tool's are in screenshot pixels). The
/// bounds of element rows, windows, images and marks are named `frame` on
/// the wire, as 0.1 named them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Bounds {
    /// Left edge.
    pub x: i32,
    /// Top edge.
    pub y: i32,
    /// Width.
    pub width: u32,
    /// Height.
    pub height: u32,
}

/// A session's takeover (driver contract §4.2): the same state the wire
/// ops push as TAKEOVER_STATE.
pub use crate::messages::TakeoverStatePayload as TakeoverInfo;

/// `start_session`, `get_session_state`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct SessionState {
    /// Always true.
    pub ok: bool,
    /// Pass it as `session_id` where a connection carries no session of
    /// its own (stateless HTTP).
    pub session_id: String,
    /// The granted input mode.
    pub input: InputMode,
    /// The granted apps; `["*"]` is the whole desktop.
    pub apps: Vec<String>,
    /// Whether clipboard reading was granted (each read still needs the
    /// host's approval).
    pub clipboard_read: bool,
    /// Seconds of consent left; absent when it does not expire.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lease_remaining_s: Option<u64>,
    /// The takeover.
    pub takeover: TakeoverInfo,
}

/// `end_session`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct SessionEnded {
    /// Always true.
    pub ok: bool,
    /// The session that ended.
    pub session_id: String,
}

/// One window.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct WindowInfo {
    /// Its id (`win_…`), valid while this daemon runs and the window lives.
    pub window_id: String,
    /// The owning process.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pid: Option<u32>,
    /// The app's own name (untrusted app text, escaped, at most 64
    /// characters).
    pub app: String,
    /// The title (untrusted app text, at most 1,024 characters).
    pub title: String,
    /// Content area.
    pub frame: Bounds,
    /// Has the input focus.
    pub focused: bool,
    /// Minimized.
    pub minimized: bool,
    /// The display holding most of it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub display: Option<u32>,
}

/// `list_windows`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct WindowList {
    /// Always true.
    pub ok: bool,
    /// Approved apps' windows, topmost first.
    pub windows: Vec<WindowInfo>,
}

/// What an image block of the result shows.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ImageInfo {
    /// `image/png` or `image/jpeg`.
    pub mime_type: String,
    /// Pixels.
    pub width: u32,
    /// Pixels.
    pub height: u32,
    /// Where it was taken, in global desktop pixels (the image's pixel
    /// (0, 0) is this rectangle's corner).
    pub frame: Bounds,
    /// Encoded bytes.
    pub bytes: u64,
}

/// `screenshot`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ScreenshotResult {
    /// Always true.
    pub ok: bool,
    /// The image (the image content block carries its bytes).
    pub image: ImageInfo,
    /// Milliseconds the call took.
    pub took_ms: f64,
    /// With `marks`: the numbers drawn on the image and the elements they
    /// stand for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub marks: Option<Vec<MarkRow>>,
    /// With `marks`: the snapshot the marks' tokens belong to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub snapshot_id: Option<String>,
}

/// One numbered box of a set-of-mark screenshot.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct MarkRow {
    /// The number drawn on the image.
    pub mark: u32,
    /// The element's token, to act on it.
    pub element_token: String,
    /// Its role.
    pub role: String,
    /// Its label (untrusted app text, at most 80 characters).
    pub label: String,
    /// Its visible box in global desktop pixels.
    pub frame: Bounds,
}

/// An accessibility read: rows and their text lines.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct TreeRead {
    /// The snapshot the rows' tokens belong to.
    pub snapshot_id: String,
    /// The rows, in document order.
    pub elements: Vec<ElementRow>,
    /// One line per row: `[N] role "label" …`, indented by depth.
    pub tree_text: String,
    /// Rows were left out to stay within the limits.
    pub truncated: bool,
}

/// `get_window_state`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct WindowState {
    /// Always true.
    pub ok: bool,
    /// The window.
    pub window: WindowInfo,
    /// Its screenshot, when asked for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub screenshot: Option<ImageInfo>,
    /// Why the screenshot is missing, when it was asked for and failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub screenshot_error: Option<ErrorObject>,
    /// The accessibility read.
    #[serde(default, flatten, skip_serializing_if = "Option::is_none")]
    pub tree: Option<TreeRead>,
    /// Whether this is a skeleton read.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub skeleton: bool,
    /// The drill-down root, echoed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub root: Option<String>,
    /// How many elements the whole window has (of the internal read).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub window_elements: Option<usize>,
    /// Why there is no tree, when it could not be read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tree_error: Option<ErrorObject>,
}

/// One timed step of an act.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Step {
    /// What the step did (`resolve`, `input`, `observe`).
    pub step: String,
    /// Milliseconds.
    pub ms: f64,
}

/// What an act observed afterwards.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Observed {
    /// The fresh image (its bytes ride in an image content block).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub screenshot: Option<ImageInfo>,
    /// The screenshot could not be taken (the act happened anyway).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub screenshot_error: Option<ErrorObject>,
    /// The fresh tree, when asked (at most a default read's rows).
    #[serde(default, flatten, skip_serializing_if = "Option::is_none")]
    pub tree: Option<TreeRead>,
    /// The tree could not be read (the act happened anyway).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<ErrorObject>,
}

/// Every act's result (`click`, `type_text`, `press_key`, …).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ActResult {
    /// Always true.
    pub ok: bool,
    /// `sent`: the input was delivered (not verified in the app);
    /// `done`: the element's action was done; `confirmed`: a value was
    /// written and read back the same; `unverified`: written, the read-back
    /// failed or differed.
    pub effect: String,
    /// Whether the effect was confirmed (a matching read-back).
    pub verified: bool,
    /// `synthetic`: XTEST input under the takeover; `accessibility`: the
    /// element's own action or text interface, no pointer or keys.
    pub path: String,
    /// Whether the act moved the person's pointer.
    pub took_cursor: bool,
    /// The window acted on, when one was resolved.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub window_id: Option<String>,
    /// For typing: characters sent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub typed_characters: Option<usize>,
    /// Milliseconds in all.
    pub took_ms: f64,
    /// Per-step timing.
    pub steps: Vec<Step>,
    /// What was observed, when asked.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observe: Option<Observed>,
    /// For an element act: the element's token.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub element_token: Option<String>,
    /// For an element click: the action done (`click`, `activate`, …).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub action: Option<String>,
    /// For a value written: `match`, `mismatch` or `unverified`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub readback: Option<String>,
    /// For an element act: what changed in the window's tree.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub diff: Option<TreeDiff>,
}

/// `clipboard_read`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ClipboardText {
    /// Always true.
    pub ok: bool,
    /// The clipboard's text.
    pub text: String,
}

/// `clipboard_write`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ClipboardWritten {
    /// Always true.
    pub ok: bool,
    /// Characters written.
    pub length: usize,
}

/// A window an ambiguous target could mean.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Candidate {
    /// Its id.
    pub window_id: String,
    /// Its process.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pid: Option<u32>,
    /// The app's own name: untrusted app text, escaped, at most 64
    /// characters.
    pub app: String,
}

/// The `disposition` object of an error.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct DispositionInfo {
    /// What the caller may do.
    pub retry: Disposition,
}

/// The error object of the driver contract §2.1.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ErrorObject {
    /// A code of the error table.
    pub code: String,
    /// One line; never quotes application text.
    pub message: String,
    /// Whether and how to retry.
    pub disposition: DispositionInfo,
    /// The code's fixed suggestion.
    pub suggestion: String,
    /// With `ambiguous_target` and `ambiguous_window_target`: at most 8.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub candidates: Option<Vec<Candidate>>,
    /// There were more candidates than listed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub candidates_truncated: Option<bool>,
    /// `refused` (nothing was sent) or `stopped` (part was sent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub effect: Option<String>,
    /// With `user_took_over`: what the person did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub paused_reason: Option<String>,
    /// With `user_took_over` during typing: characters sent before it
    /// stopped.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub typed_characters: Option<usize>,
    /// The session the failed call changed, when it did (a
    /// `start_session` granted less than it asked).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_id: Option<String>,
    /// A reason code (`no_platform_api`, `not_built`, …) where one
    /// applies.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// With `computer`: the index of the action that failed (none after it
    /// ran).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failed_action_index: Option<usize>,
}

/// A failed call's `structuredContent`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ErrorEnvelope {
    /// Always false.
    pub ok: bool,
    /// What went wrong.
    pub error: ErrorObject,
}
