//! The MCP tools of the driver contract: their names, descriptions,
//! argument and result types, the error envelope (§2) and the schemas
//! generated from the types (§8).

pub mod args;
pub mod computer;
pub mod results;

use schemars::JsonSchema;
use serde_json::Value;

use crate::{Disposition, ErrorCode};
pub use args::*;
pub use computer::*;
pub use results::*;

/// Most candidates an ambiguous target lists.
pub const MAX_CANDIDATES: usize = 8;
/// Longest app name in a candidate or window row, in characters.
pub const MAX_APP_CHARS: usize = 64;

/// One tool of `tools/list`.
#[derive(Debug, Clone, Copy)]
pub struct ToolSpec {
    /// Its name.
    pub name: &'static str,
    /// What it does, for the model.
    pub description: &'static str,
    /// Whether it only reads (the `readOnlyHint` annotation).
    pub read_only: bool,
    /// Its input schema.
    pub input: fn() -> Value,
    /// The schema of its `structuredContent` on success.
    pub output: fn() -> Value,
}

/// The schema of `T`, with every subschema inlined (no `$ref`).
pub fn schema_of<T: JsonSchema>() -> Value {
    let settings = schemars::generate::SchemaSettings::draft2020_12().with(|s| {
        s.inline_subschemas = true;
    });
    let mut schema = serde_json::to_value(settings.into_generator().into_root_schema_for::<T>())
        .unwrap_or(Value::Null);
    if let Some(obj) = schema.as_object_mut() {
        obj.remove("$schema");
        obj.remove("title");
    }
    schema
}

macro_rules! tool {
    ($name:literal, $read:expr, $args:ty, $out:ty, $desc:literal) => {
        ToolSpec {
            name: $name,
            description: $desc,
            read_only: $read,
            input: schema_of::<$args>,
            output: schema_of::<$out>,
        }
    };
}

/// Every tool, in the order `tools/list` gives them.
#[rustfmt::skip]
pub const TOOLS: &[ToolSpec] = &[
    tool!("start_session", false, StartSessionArgs, SessionState,
        "Start (or change) a session: the apps it works with, input \"headless\" (default, reads only) or \"takeover\" (mouse and keyboard under a red frame the person sees; they can take control back at any moment), clipboard reading and the lease. What is granted comes from the person, never from this call."),
    tool!("get_session_state", true, SessionArgs, SessionState,
        "The session's grants, lease and takeover state (paused after the person took over)."),
    tool!("end_session", false, SessionArgs, SessionEnded,
        "End the session: its takeover ends and everything it holds is released."),
    tool!("list_windows", true, ListWindowsArgs, WindowList,
        "The approved apps' windows, topmost first, with ids, pids, titles and bounds (`frame`) in desktop pixels."),
    tool!("get_window_state", true, WindowStateArgs, WindowState,
        "One window's details, screenshot and accessibility tree: rows with element tokens (\"<snapshot>:<N>\") that click, type_text and set_value act on without the pointer. skeleton: true gives only containers and landmarks of a dense window; root: <token> reads one region of it."),
    tool!("screenshot", true, ScreenshotArgs, ScreenshotResult,
        "A screenshot of a window, or of a display for a session granted the whole desktop. Pixel (0, 0) of the image is the frame's corner in desktop pixels. marks: true (with a window) numbers the window's visible interactive elements on the image and returns each number's element token."),
    tool!("click", false, ClickArgs, ActResult,
        "Click an element by its element_token (its own action, no pointer, works headless), or left-click at a point x, y in desktop pixels inside an approved app's window (needs takeover)."),
    tool!("double_click", false, ClickArgs, ActResult,
        "Double-click at a point in desktop pixels inside an approved app's window (needs takeover)."),
    tool!("right_click", false, ClickArgs, ActResult,
        "Right-click at a point in desktop pixels inside an approved app's window (needs takeover)."),
    tool!("type_text", false, TypeTextArgs, ActResult,
        "Type text exactly into the focused window, which must be an approved app's (needs takeover), or add it to an editable field named by element_token (headless, read back)."),
    tool!("set_value", false, SetValueArgs, ActResult,
        "Replace an editable field's text, named by its element_token, through its accessibility interface (headless), and read it back: readback match, mismatch or unverified. Password fields are refused."),
    tool!("press_key", false, PressKeyArgs, ActResult,
        "Press a key or a chord such as \"Return\" or \"ctrl+s\" in the focused approved window (needs takeover)."),
    tool!("hotkey", false, HotkeyArgs, ActResult,
        "Press keys together, e.g. [\"ctrl\", \"c\"], in the focused approved window (needs takeover)."),
    tool!("scroll", false, ScrollArgs, ActResult,
        "Turn the mouse wheel at a point inside an approved app's window (needs takeover)."),
    tool!("drag", false, DragArgs, ActResult,
        "Drag with the left button from one point to another, both inside the same approved window (needs takeover)."),
    tool!("move_cursor", false, MoveCursorArgs, ActResult,
        "Move the pointer to a point, optionally gliding over duration_ms (needs takeover)."),
    tool!("bring_to_front", false, BringToFrontArgs, ActResult,
        "Raise and focus an approved app's window (needs takeover)."),
    tool!("clipboard_read", true, SessionArgs, ClipboardText,
        "Read the clipboard's text (a session started with clipboard_read, each read approved by the host)."),
    tool!("clipboard_write", false, ClipboardWriteArgs, ClipboardWritten,
        "Put text on the clipboard."),
    tool!("list_notifications", true, SessionArgs, ErrorEnvelope,
        "Other apps' notifications (unsupported on X11: the platform has no API)."),
    tool!("dismiss_notification", false, NotificationArgs, ErrorEnvelope,
        "Dismiss a notification (unsupported on X11)."),
    tool!("invoke_notification_action", false, NotificationArgs, ErrorEnvelope,
        "Invoke a notification's action (unsupported on X11)."),
    tool!("computer", false, ComputerArgs, ComputerResult,
        "Use the whole desktop like a person: screenshot, click, double_click, drag, keypress, move, scroll, type and wait (OpenAI's computer actions), one action or several in order. Every call returns one fresh screenshot; x and y are pixels of the last screenshot this session was sent. Input needs a takeover session granted the whole desktop. With marks: true the focused window's interactive elements are numbered on the screenshot and listed with their tokens and centres."),
    tool!("health_report", true, SessionArgs, crate::doctor::DoctorReport,
        "What works here: backends and capabilities, with what to do about each missing one."),
];

/// The tool named `name`.
pub fn tool(name: &str) -> Option<&'static ToolSpec> {
    TOOLS.iter().find(|t| t.name == name)
}

/// The schema of a failed call's `structuredContent`.
pub fn error_schema() -> Value {
    schema_of::<ErrorEnvelope>()
}

impl Disposition {
    /// The name in error objects and texts.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Safe => "safe",
            Self::Unsafe => "unsafe",
            Self::AfterRefresh => "after_refresh",
            Self::Never => "never",
        }
    }
}

impl ErrorObject {
    /// The error object of `code` with its table row's disposition and
    /// suggestion.
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        let info = code.info();
        Self {
            code: info.canonical.to_owned(),
            message: message.into(),
            disposition: DispositionInfo {
                retry: info.disposition,
            },
            suggestion: info.suggestion.to_owned(),
            candidates: None,
            candidates_truncated: None,
            effect: None,
            paused_reason: None,
            typed_characters: None,
            session_id: None,
            reason: None,
            failed_action_index: None,
        }
    }

    /// The text content of a failed call: `<code>: <message> [retry:
    /// <disposition>] <suggestion>`.
    pub fn text(&self) -> String {
        format!(
            "{}: {} [retry: {}] {}",
            self.code,
            self.message,
            self.disposition.retry.as_str(),
            self.suggestion
        )
    }
}

/// Untrusted app text made safe to show the model: control characters
/// escaped, cut to `max` characters.
pub fn app_text(text: &str, max: usize) -> String {
    let mut out = String::new();
    for c in text.chars().take(max) {
        if c.is_control() {
            out.extend(c.escape_unicode());
        } else {
            out.push(c);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn has_ref(v: &Value) -> bool {
        match v {
            Value::Object(m) => m.contains_key("$ref") || m.values().any(has_ref),
            Value::Array(a) => a.iter().any(has_ref),
            _ => false,
        }
    }

    #[test]
    fn input_schemas_follow_the_contract() {
        for t in TOOLS {
            let s = (t.input)();
            assert_eq!(s["type"], "object", "{}", t.name);
            assert!(s["properties"].is_object(), "{}", t.name);
            assert!(!has_ref(&s), "{} has a $ref", t.name);
            for combinator in ["anyOf", "oneOf", "allOf", "not"] {
                assert!(s.get(combinator).is_none(), "{} root {combinator}", t.name);
            }
            let bytes = s.to_string().len();
            assert!(bytes < 12_000, "{} schema is {bytes} bytes", t.name);
        }
    }

    #[test]
    fn names_are_unique_and_the_targets_flatten() {
        let mut names: Vec<_> = TOOLS.iter().map(|t| t.name).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), TOOLS.len());
        let click = (tool("click").expect("click").input)();
        let fields = [
            "session_id",
            "window_id",
            "pid",
            "app",
            "x",
            "y",
            "element_token",
            "observe",
        ];
        for field in fields {
            assert!(
                click["properties"][field].is_object(),
                "click lacks {field}"
            );
        }
        // A click takes x and y, or an element token: neither is required.
        assert!(click.get("required").is_none(), "{click}");
        let set_value = (tool("set_value").expect("set_value").input)();
        let required: Vec<_> = set_value["required"]
            .as_array()
            .expect("required")
            .iter()
            .filter_map(|v| v.as_str())
            .collect();
        assert_eq!(required, ["element_token", "value"]);
    }

    #[test]
    fn error_text_has_the_contract_shape() {
        let e = ErrorObject::new(ErrorCode::RequiresTakeover, "click needs takeover");
        assert_eq!(
            e.text(),
            "requires_takeover: click needs takeover [retry: never] Call start_session with input \"takeover\" first, then send the act again."
        );
        assert_eq!(app_text("a\u{1b}[31mb", 64), "a\\u{1b}[31mb");
        assert_eq!(app_text(&"x".repeat(100), 64).len(), 64);
    }
}
