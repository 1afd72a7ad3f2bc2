//! The error table: every canonical error code with its retry disposition,
//! its fixed one-sentence suggestion, whether it is fatal to the
//! connection, and its name on the wire.
//!
//! Adapters never invent codes: they map an [`ErrorCode`] through
//! [`ErrorCode::info`]. The suggestion is fixed text per code, never built
//! from application content, so an app cannot steer the model through an
//! error.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// What a caller may do after an error (driver contract §2.1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Disposition {
    /// Nothing happened; the same call may be sent again.
    Safe,
    /// Something may have happened; observe before acting again.
    Unsafe,
    /// Read again first, then retry with fresh targets.
    AfterRefresh,
    /// The same call will fail again; change the arguments or ask the person.
    Never,
}

/// Canonical error codes. Every variant has exactly one row in [`ERRORS`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[allow(missing_docs)]
pub enum ErrorCode {
    InvalidMessage,
    UnknownMessageType,
    InvalidArguments,
    HandshakeRequired,
    MessageTooLarge,
    FeatureNotSupported,
    CapabilityNotGranted,
    PermissionPending,
    InputOutOfBounds,
    WindowStale,
    WindowNotVisible,
    ClipboardConcealed,
    FileTooLarge,
    UserTookOver,
    DisplayUnavailable,
    BackendFailure,
    Busy,
    Internal,
    AmbiguousTarget,
    AmbiguousWindowTarget,
    WindowTargetNotFound,
    CapabilityNotConsented,
    RequiresTakeover,
    Unsupported,
    ConsentExpired,
    SessionNotFound,
    DesktopCoordinateOutOfBounds,
    DesktopLayoutChanged,
    ApprovalDenied,
    PermissionDenied,
    /// An element token from a snapshot the window's structure (or a
    /// resume) has made stale.
    StaleElementToken,
    /// A write or read of a password or secure field, refused.
    SecureField,
}

impl ErrorCode {
    /// Every code, in declaration order.
    pub const ALL: &'static [ErrorCode] = &[
        Self::InvalidMessage,
        Self::UnknownMessageType,
        Self::InvalidArguments,
        Self::HandshakeRequired,
        Self::MessageTooLarge,
        Self::FeatureNotSupported,
        Self::CapabilityNotGranted,
        Self::PermissionPending,
        Self::InputOutOfBounds,
        Self::WindowStale,
        Self::WindowNotVisible,
        Self::ClipboardConcealed,
        Self::FileTooLarge,
        Self::UserTookOver,
        Self::DisplayUnavailable,
        Self::BackendFailure,
        Self::Busy,
        Self::Internal,
        Self::AmbiguousTarget,
        Self::AmbiguousWindowTarget,
        Self::WindowTargetNotFound,
        Self::CapabilityNotConsented,
        Self::RequiresTakeover,
        Self::Unsupported,
        Self::ConsentExpired,
        Self::SessionNotFound,
        Self::DesktopCoordinateOutOfBounds,
        Self::DesktopLayoutChanged,
        Self::ApprovalDenied,
        Self::PermissionDenied,
        Self::StaleElementToken,
        Self::SecureField,
    ];

    /// This code's row of the table.
    pub fn info(self) -> &'static ErrorInfo {
        ERRORS
            .iter()
            .find(|row| row.code == self)
            .unwrap_or(&INTERNAL_FALLBACK)
    }

    /// The code's name on the WebSocket wire, e.g. `INPUT_OUT_OF_BOUNDS`.
    pub fn wire_name(self) -> &'static str {
        self.info().wire
    }

    /// The canonical snake_case name, e.g. `input_out_of_bounds`.
    pub fn canonical(self) -> &'static str {
        self.info().canonical
    }
}

/// One row of the error table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ErrorInfo {
    /// The code this row describes.
    pub code: ErrorCode,
    /// Canonical snake_case name (MCP and logs).
    pub canonical: &'static str,
    /// Name on the WebSocket wire.
    pub wire: &'static str,
    /// Retry disposition.
    pub disposition: Disposition,
    /// Whether the connection is closed after this error.
    pub fatal: bool,
    /// Exactly one actionable sentence for the model.
    pub suggestion: &'static str,
    /// Which adapters may answer with this code.
    pub adapters: Adapters,
}

/// The adapters a code belongs to: some codes exist only in one protocol
/// (the wire's handshake, the driver contract's session codes).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Adapters {
    /// The WebSocket wire ops and MCP.
    Both,
    /// Only the WebSocket wire ops.
    Wire,
    /// Only MCP (the driver contract).
    Mcp,
}

impl Adapters {
    /// Whether the wire ops may answer with the code.
    pub fn wire(self) -> bool {
        matches!(self, Self::Both | Self::Wire)
    }

    /// Whether MCP may answer with the code.
    pub fn mcp(self) -> bool {
        matches!(self, Self::Both | Self::Mcp)
    }
}

const fn row(
    code: ErrorCode,
    canonical: &'static str,
    wire: &'static str,
    disposition: Disposition,
    fatal: bool,
    suggestion: &'static str,
) -> ErrorInfo {
    ErrorInfo {
        code,
        canonical,
        wire,
        disposition,
        fatal,
        suggestion,
        adapters: Adapters::Both,
    }
}

/// A row only one adapter answers with.
const fn only(adapters: Adapters, row: ErrorInfo) -> ErrorInfo {
    ErrorInfo { adapters, ..row }
}

const INTERNAL_FALLBACK: ErrorInfo = row(
    ErrorCode::Internal,
    "internal",
    "INTERNAL",
    Disposition::Unsafe,
    false,
    "Take a screenshot to see the current state before acting again.",
);

use Adapters::{Mcp, Wire};
use Disposition::{AfterRefresh, Never, Safe, Unsafe};
use ErrorCode as C;

/// The table. A unit test fails when a code has no row or has two.
#[rustfmt::skip]
pub const ERRORS: &[ErrorInfo] = &[
    only(Wire, row(C::InvalidMessage, "invalid_message", "INVALID_MESSAGE", Never, false,
        "Send one JSON object with type, id, ts and payload fields.")),
    only(Wire, row(C::UnknownMessageType, "unknown_message_type", "UNKNOWN_MESSAGE_TYPE", Never, false,
        "Use a message type listed in the protocol; HELLO lists the features available.")),
    row(C::InvalidArguments, "invalid_arguments", "INVALID_ARGUMENTS", Never, false,
        "Fix the named field of the payload and send the request again."),
    only(Wire, row(C::HandshakeRequired, "handshake_required", "HANDSHAKE_REQUIRED", Never, false,
        "Answer HELLO with HELLO_ACK, then send the request again.")),
    only(Wire, row(C::MessageTooLarge, "message_too_large", "MESSAGE_TOO_LARGE", Never, false,
        "Send a smaller message.")),
    only(Wire, row(C::FeatureNotSupported, "feature_not_supported", "FEATURE_NOT_SUPPORTED", Never, false,
        "Use only the features listed in HELLO.computer_use_features.")),
    only(Wire, row(C::CapabilityNotGranted, "capability_not_granted", "CAPABILITY_NOT_GRANTED", Never, false,
        "Ask the person to grant this capability to deskhand; do not retry until they have.")),
    only(Wire, row(C::PermissionPending, "permission_pending", "PERMISSION_PENDING", Safe, false,
        "The person is asked for the operating-system permission named in the message; wait for their answer, then retry.")),
    row(C::InputOutOfBounds, "input_out_of_bounds", "INPUT_OUT_OF_BOUNDS", Never, false,
        "Pick a coordinate inside one of the display rectangles listed in details."),
    row(C::WindowStale, "window_stale", "WINDOW_STALE", AfterRefresh, false,
        "List the windows again and use a fresh window_id."),
    row(C::WindowNotVisible, "window_not_visible", "WINDOW_NOT_VISIBLE", Never, false,
        "Bring the window to the front or capture a region of the screen instead."),
    row(C::ClipboardConcealed, "clipboard_concealed", "CLIPBOARD_CONCEALED", Never, false,
        "Do not read this clipboard content; ask the person to paste it where needed."),
    row(C::FileTooLarge, "file_too_large", "FILE_TOO_LARGE", Never, false,
        "Send or request less data than max_file_size_bytes."),
    row(C::UserTookOver, "user_took_over", "USER_TOOK_OVER", Never, false,
        "The person took control. Wait for them to click Continue, then start again."),
    row(C::DisplayUnavailable, "display_unavailable", "DISPLAY_UNAVAILABLE", Safe, true,
        "The display cannot be reached; reconnect later or ask the person to check deskhand."),
    row(C::BackendFailure, "backend_failure", "BACKEND_FAILURE", Unsafe, false,
        "Take a screenshot to see the current state before acting again."),
    row(C::Busy, "busy", "BUSY", Safe, false,
        "Wait a moment and send the request again."),
    row(C::Internal, "internal", "INTERNAL", Unsafe, false,
        "Take a screenshot to see the current state before acting again."),
    only(Mcp, row(C::AmbiguousTarget, "ambiguous_target", "AMBIGUOUS_TARGET", Never, false,
        "Pick one of the candidates and call again with its pid and window_id.")),
    only(Mcp, row(C::AmbiguousWindowTarget, "ambiguous_window_target", "AMBIGUOUS_WINDOW_TARGET", Never, false,
        "Name the window with app, pid or window_id, for example one of the candidates.")),
    only(Mcp, row(C::WindowTargetNotFound, "window_target_not_found", "WINDOW_TARGET_NOT_FOUND", AfterRefresh, false,
        "Call list_windows and pick a window of an approved app.")),
    only(Mcp, row(C::CapabilityNotConsented, "capability_not_consented", "CAPABILITY_NOT_CONSENTED", Never, false,
        "Ask the person to allow this in deskhand's consent; do not retry until they have.")),
    only(Mcp, row(C::RequiresTakeover, "requires_takeover", "REQUIRES_TAKEOVER", Never, false,
        "Call start_session with input \"takeover\" first, then send the act again.")),
    only(Mcp, row(C::Unsupported, "unsupported", "UNSUPPORTED", Never, false,
        "This platform offers no way to do this; do not retry.")),
    only(Mcp, row(C::ConsentExpired, "consent_expired", "CONSENT_EXPIRED", Never, false,
        "The session's lease ended; call start_session again to ask for consent.")),
    only(Mcp, row(C::SessionNotFound, "session_not_found", "SESSION_NOT_FOUND", AfterRefresh, false,
        "Call start_session and use the session_id it returns.")),
    row(C::DesktopCoordinateOutOfBounds, "desktop_coordinate_out_of_bounds",
        "DESKTOP_COORDINATE_OUT_OF_BOUNDS", Never, false,
        "Pick a point on a display inside the last screenshot, not in a gap or past its edges."),
    row(C::DesktopLayoutChanged, "desktop_layout_changed", "DESKTOP_LAYOUT_CHANGED",
        AfterRefresh, false,
        "The displays changed since the last screenshot; take a new one and use its pixels."),
    row(C::ApprovalDenied, "approval_denied", "APPROVAL_DENIED", Never, false,
        "The person did not approve this; do not send it again unless they ask you to."),
    row(C::PermissionDenied, "permission_denied", "PERMISSION_DENIED", Never, false,
        "The person's policy refuses this app as a target; work in another app or ask the person."),
    row(C::StaleElementToken, "stale_element_token", "STALE_ELEMENT_TOKEN", AfterRefresh, false,
        "Read the window's accessibility tree again and use a token from that read."),
    row(C::SecureField, "secure_field", "SECURE_FIELD", Never, false,
        "This is a password or secure field: deskhand never reads or writes it, so ask the person to fill it in."),
];

/// Payload of an `ERROR` message.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ErrorPayload {
    /// Wire name of the code.
    pub code: String,
    /// One line for people and logs; never quotes application text.
    pub message: String,
    /// Whether the connection closes after this error.
    pub fatal: bool,
    /// Retry disposition.
    pub disposition: Disposition,
    /// The fixed suggestion sentence of the code.
    pub suggestion: String,
    /// Code-specific details (display rects, the field at fault, ...);
    /// always an object, empty when there is nothing to add.
    #[serde(default)]
    pub details: Value,
}

impl ErrorPayload {
    /// Builds the wire payload of `code` with a message and details.
    pub fn new(code: ErrorCode, message: impl Into<String>, details: Value) -> Self {
        let info = code.info();
        Self {
            code: info.wire.to_owned(),
            message: message.into(),
            fatal: info.fatal,
            disposition: info.disposition,
            suggestion: info.suggestion.to_owned(),
            details: if details.is_null() {
                Value::Object(serde_json::Map::new())
            } else {
                details
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    #[test]
    fn every_code_has_exactly_one_row() {
        for code in ErrorCode::ALL {
            let rows = ERRORS.iter().filter(|r| r.code == *code).count();
            assert_eq!(rows, 1, "{code:?} has {rows} rows in ERRORS");
        }
        assert_eq!(ERRORS.len(), ErrorCode::ALL.len(), "a row names no code");
    }

    #[test]
    fn names_are_unique_and_consistent() {
        let mut wires = HashSet::new();
        for r in ERRORS {
            assert!(wires.insert(r.wire), "duplicate wire name {}", r.wire);
            assert_eq!(r.wire, r.canonical.to_ascii_uppercase());
            let serde_name = serde_json::to_value(r.code).expect("serialize");
            assert_eq!(serde_name, Value::String(r.canonical.to_owned()));
        }
    }

    #[test]
    fn suggestions_are_short_and_actionable() {
        // One sentence per code; user_took_over keeps the contract's own
        // two-part wording verbatim.
        for r in ERRORS {
            assert!(r.suggestion.ends_with('.'), "{}", r.canonical);
            assert!(
                r.suggestion.len() <= 120,
                "{} suggestion too long",
                r.canonical
            );
            let sentences = r.suggestion.matches(". ").count() + 1;
            let limit = if r.code == ErrorCode::UserTookOver {
                2
            } else {
                1
            };
            assert!(
                sentences <= limit,
                "{} has {sentences} sentences",
                r.canonical
            );
        }
    }

    #[test]
    fn payload_carries_the_table_row() {
        let p = ErrorPayload::new(ErrorCode::InputOutOfBounds, "out", Value::Null);
        assert_eq!(p.code, "INPUT_OUT_OF_BOUNDS");
        assert_eq!(p.disposition, Disposition::Never);
        assert!(!p.fatal);
        let json = serde_json::to_value(&p).expect("serialize");
        assert_eq!(json["details"], serde_json::json!({}));
    }
}

/// How many characters of a client's own text an error message echoes.
pub const ECHOED: usize = 40;

/// A client's text as an error message echoes it: `Debug`-quoted, cut to
/// [`ECHOED`] characters with the length said, so a long input never
/// comes back whole.
pub fn echo(text: &str) -> String {
    match text.char_indices().nth(ECHOED) {
        None => format!("{text:?}"),
        Some((at, _)) => format!("{:?}… ({} characters)", &text[..at], text.chars().count()),
    }
}

#[cfg(test)]
mod echo_tests {
    use super::*;

    #[test]
    fn a_long_input_is_echoed_cut_with_its_length() {
        assert_eq!(echo("ctrl"), "\"ctrl\"");
        let long = "k".repeat(10_000);
        let echoed = echo(&long);
        assert!(echoed.len() < 70, "{echoed}");
        assert!(echoed.ends_with("… (10000 characters)"), "{echoed}");
    }
}
