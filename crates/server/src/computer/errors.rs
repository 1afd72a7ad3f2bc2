//! Engine errors as the computer adapters report them: code, suggestion
//! and disposition from the one error table, details from the error's
//! own fields.

use deskhand_engine::{BackendError, EngineError};
use serde_json::{Value, json};

/// How a client stays in one session, for an error about a session's
/// missing screenshot.
const SESSION_HOW: &str = "every answer names its session in the X-Deskhand-Session header: \
     send it back to stay in that session; a request without the header goes to its token's \
     default session, and `X-Deskhand-Session: new` starts a fresh one";

/// What the caller needs to correct itself.
fn details(e: &EngineError) -> Value {
    match e {
        EngineError::InvalidArguments { field, .. } => json!({ "field": field }),
        EngineError::CoordinateOutOfBounds {
            point, shot_size, ..
        } => {
            json!({ "coordinate": point, "frame_size": shot_size })
        }
        EngineError::NotGranted { capability, needed } => {
            json!({ "capability": capability, "needed": needed })
        }
        EngineError::NotSupported { feature } => json!({ "feature": feature }),
        EngineError::NoShot { session } => json!({ "session": session, "how": SESSION_HOW }),
        EngineError::Busy(holder) => holder.details(),
        EngineError::UserTookOver { effect, reason, .. } => {
            json!({ "effect": effect, "paused_reason": reason.as_str() })
        }
        EngineError::Backend(BackendError::Untypable {
            index, character, ..
        }) => json!({ "field": "text", "index": index, "character": character.to_string() }),
        _ => json!({}),
    }
}

/// The JSON error object of `e` (canonical code), with the index of the
/// failed action when there is one.
pub(crate) fn error_json(e: &EngineError, failed_action_index: Option<usize>) -> Value {
    let info = e.code().info();
    let mut v = json!({
        "code": info.canonical,
        "message": e.to_string(),
        "suggestion": info.suggestion,
        "disposition": info.disposition,
        "details": details(e),
    });
    if let Some(i) = failed_action_index {
        v["failed_action_index"] = json!(i);
    }
    v
}

/// One line for a model: `CODE: message. Suggestion.` (and, for a
/// session's missing screenshot, how sessions are named).
pub(crate) fn error_text(e: &EngineError) -> String {
    let info = e.code().info();
    match e {
        EngineError::NoShot { .. } => format!("{}: {}. {SESSION_HOW}.", info.wire, e),
        _ => format!("{}: {}. {}", info.wire, e, info.suggestion),
    }
}

/// A request the adapter refuses before any step ran (HTTP 400): the
/// body is `{"error": {...}}`.
pub(crate) fn bad_request(e: &EngineError) -> axum::response::Response {
    use axum::response::IntoResponse;
    (
        axum::http::StatusCode::BAD_REQUEST,
        axum::Json(json!({ "error": error_json(e, None) })),
    )
        .into_response()
}
