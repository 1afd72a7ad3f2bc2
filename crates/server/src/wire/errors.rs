//! Engine errors as the wire ops report them: the code and message come
//! from the error table, the `details` object from the error's own fields.

use deskhand_engine::clipboard::ConcealReason;
use deskhand_engine::{BackendError, EngineError};
use serde_json::{Value, json};

/// The wire's `details` of `e`: what the caller needs to correct itself,
/// built here from the error's typed fields (each protocol has its own).
pub(super) fn details(e: &EngineError) -> Value {
    match e {
        EngineError::InvalidArguments { field, .. } => json!({ "field": field }),
        EngineError::OutOfBounds { point, displays } => json!({
            "requested_coordinate": [point.x, point.y],
            "displays": displays.iter().map(|m| json!({
                "index": m.index,
                "origin": [m.rect.x, m.rect.y],
                "size": [m.rect.width, m.rect.height],
            })).collect::<Vec<_>>(),
        }),
        EngineError::NotGranted { capability, needed } => {
            json!({ "capability": capability, "needed": needed })
        }
        EngineError::LaunchRefused { .. } => {
            json!({ "capability": "run_commands", "needed": "consent" })
        }
        EngineError::ConsentShort { missing, .. } => {
            json!({ "capability": "input", "needed": "consent", "missing": missing })
        }
        EngineError::NotSupported { feature } => json!({ "feature": feature }),
        EngineError::FrameDisturbed { what } => json!({ "frame": what }),
        EngineError::Busy(holder) => holder.details(),
        EngineError::Backend(BackendError::InvalidTarget(_)) => json!({ "field": "target" }),
        EngineError::Backend(BackendError::Untypable {
            index, character, ..
        }) => json!({ "field": "text", "index": index, "character": character.to_string() }),
        EngineError::StaleElementToken { token } => {
            json!({ "element_token": token, "hint": "read the tree again" })
        }
        EngineError::WindowStale { window_id } => {
            json!({ "window_id": window_id, "hint": "re-list windows" })
        }
        EngineError::WindowNotVisible { window_id, reason } => {
            json!({ "window_id": window_id, "reason": reason })
        }
        EngineError::ClipboardConcealed {
            reason,
            writeback_age_seconds,
        } => match reason {
            ConcealReason::ConcealedType { marker } => {
                json!({ "reason": reason.as_str(), "marker": marker })
            }
            _ => json!({
                "reason": reason.as_str(),
                "writeback_age_seconds": writeback_age_seconds,
            }),
        },
        EngineError::TooLarge {
            bytes, max_bytes, ..
        } => json!({ "size_bytes": bytes, "max_file_size_bytes": max_bytes }),
        EngineError::UserTookOver {
            effect,
            reason,
            typed_characters,
        } => {
            let mut d = json!({ "effect": effect, "paused_reason": reason.as_str() });
            if let Some(n) = typed_characters {
                d["typed_characters"] = json!(n);
            }
            d
        }
        _ => Value::Null,
    }
}
