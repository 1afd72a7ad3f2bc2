//! Engine errors as the computer adapters report them: code, suggestion
//! and disposition from the one error table, details from the error's
//! own fields.

use deskhand_engine::{BackendError, EngineError};
use serde_json::{Value, json};

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

/// One line for a model: `CODE: message. Suggestion.`
pub(crate) fn error_text(e: &EngineError) -> String {
    let info = e.code().info();
    format!("{}: {}. {}", info.wire, e, info.suggestion)
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
