//! The message envelope `{type, id, ts, payload}` shared by every wire op.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Every message type deskhand sends or accepts on `/v1/ws`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
#[allow(missing_docs)]
pub enum MessageType {
    Hello,
    HelloAck,
    Ack,
    Error,
    ScreenshotRequest,
    ScreenshotResponse,
    InputAction,
    CursorPositionRequest,
    CursorPositionResponse,
    DisplayInfoRequest,
    DisplayInfoResponse,
    WindowListRequest,
    WindowListResponse,
    WindowFocus,
    AppListRequest,
    AppListResponse,
    AppLaunch,
    PermissionsCheckRequest,
    PermissionsCheckResponse,
    ClipboardRead,
    ClipboardReadResponse,
    ClipboardWrite,
    TakeoverRequest,
    TakeoverState,
    A11yTreeRequest,
    A11yTreeResponse,
}

impl MessageType {
    /// All message types, in declaration order.
    pub const ALL: &'static [MessageType] = &[
        Self::Hello,
        Self::HelloAck,
        Self::Ack,
        Self::Error,
        Self::ScreenshotRequest,
        Self::ScreenshotResponse,
        Self::InputAction,
        Self::CursorPositionRequest,
        Self::CursorPositionResponse,
        Self::DisplayInfoRequest,
        Self::DisplayInfoResponse,
        Self::WindowListRequest,
        Self::WindowListResponse,
        Self::WindowFocus,
        Self::AppListRequest,
        Self::AppListResponse,
        Self::AppLaunch,
        Self::PermissionsCheckRequest,
        Self::PermissionsCheckResponse,
        Self::ClipboardRead,
        Self::ClipboardReadResponse,
        Self::ClipboardWrite,
        Self::TakeoverRequest,
        Self::TakeoverState,
        Self::A11yTreeRequest,
        Self::A11yTreeResponse,
    ];

    /// The name on the wire, e.g. `SCREENSHOT_REQUEST`.
    pub fn wire_name(self) -> &'static str {
        match self {
            Self::Hello => "HELLO",
            Self::HelloAck => "HELLO_ACK",
            Self::Ack => "ACK",
            Self::Error => "ERROR",
            Self::ScreenshotRequest => "SCREENSHOT_REQUEST",
            Self::ScreenshotResponse => "SCREENSHOT_RESPONSE",
            Self::InputAction => "INPUT_ACTION",
            Self::CursorPositionRequest => "CURSOR_POSITION_REQUEST",
            Self::CursorPositionResponse => "CURSOR_POSITION_RESPONSE",
            Self::DisplayInfoRequest => "DISPLAY_INFO_REQUEST",
            Self::DisplayInfoResponse => "DISPLAY_INFO_RESPONSE",
            Self::WindowListRequest => "WINDOW_LIST_REQUEST",
            Self::WindowListResponse => "WINDOW_LIST_RESPONSE",
            Self::WindowFocus => "WINDOW_FOCUS",
            Self::AppListRequest => "APP_LIST_REQUEST",
            Self::AppListResponse => "APP_LIST_RESPONSE",
            Self::AppLaunch => "APP_LAUNCH",
            Self::PermissionsCheckRequest => "PERMISSIONS_CHECK_REQUEST",
            Self::PermissionsCheckResponse => "PERMISSIONS_CHECK_RESPONSE",
            Self::ClipboardRead => "CLIPBOARD_READ",
            Self::ClipboardReadResponse => "CLIPBOARD_READ_RESPONSE",
            Self::ClipboardWrite => "CLIPBOARD_WRITE",
            Self::TakeoverRequest => "TAKEOVER_REQUEST",
            Self::TakeoverState => "TAKEOVER_STATE",
            Self::A11yTreeRequest => "A11Y_TREE_REQUEST",
            Self::A11yTreeResponse => "A11Y_TREE_RESPONSE",
        }
    }

    /// Looks a type up by its wire name.
    pub fn from_wire_name(name: &str) -> Option<Self> {
        Self::ALL.iter().copied().find(|t| t.wire_name() == name)
    }
}

/// One message on the wire. `kind` is kept as a string so that an unknown
/// type can still be answered with its id.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Envelope {
    /// The message type's wire name.
    #[serde(rename = "type")]
    pub kind: String,
    /// Correlation id; replies carry the id of their request.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// Sender's wall-clock time in seconds since the Unix epoch.
    #[serde(default)]
    pub ts: f64,
    /// Type-specific payload.
    #[serde(default)]
    pub payload: Value,
}

impl Envelope {
    /// Builds an envelope of `kind` with a serialized payload.
    pub fn new(kind: MessageType, id: Option<String>, ts: f64, payload: Value) -> Self {
        Self {
            kind: kind.wire_name().to_owned(),
            id,
            ts,
            payload,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wire_names_round_trip_through_serde() {
        for t in MessageType::ALL {
            let json = serde_json::to_value(t).expect("serialize");
            assert_eq!(json, Value::String(t.wire_name().to_owned()));
            assert_eq!(MessageType::from_wire_name(t.wire_name()), Some(*t));
        }
    }

    #[test]
    fn envelope_defaults_missing_fields() {
        let e: Envelope = serde_json::from_str(r#"{"type":"HELLO_ACK"}"#).expect("parse");
        assert_eq!(e.kind, "HELLO_ACK");
        assert_eq!(e.id, None);
        assert_eq!(e.payload, Value::Null);
    }
}
