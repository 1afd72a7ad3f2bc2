//! `POST /v1/actions`: the action-batch spec. The body is an array of
//! actions (`{"action_type": …}`), one action, or `{"actions": [...]}`.
//! Coordinates are full-size pixels of the primary display's screenshot
//! (design decision 1). The answer is an `ExecutionResponse`: a fresh
//! screenshot on every response, `failed_action_index` on a failure.

use std::collections::HashMap;
use std::sync::Arc;

use axum::body::Bytes;
use axum::extract::{Extension, Query, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::Response;
use deskhand_engine::shot::{DisplaySelect, VendorCap};
use deskhand_engine::{Button, EngineError, ScrollDirection};
use serde_json::{Value, json};

use super::batch::{self, Image, Outcome};
use super::errors::{bad_request, error_json};
use super::step::{self, Step};
use crate::AppState;
use crate::mcp::TokenIndex;

/// Most actions in one batch.
const MAX_ACTIONS: usize = 100;

/// The handler.
pub(crate) async fn handle(
    State(state): State<Arc<AppState>>,
    Query(query): Query<HashMap<String, String>>,
    Extension(token): Extension<TokenIndex>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let call = match super::begin(
        &state,
        (&headers, &query, token),
        &body,
        VendorCap::None,
        DisplaySelect::Primary,
    ) {
        Ok(c) => c,
        Err(r) => return *r,
    };
    let mut spec = call.spec;
    // Full-size pixels unless the caller asked for smaller ones.
    if !query.contains_key("max_width") {
        spec.limits.max_width = 16384;
    }
    if !query.contains_key("max_height") {
        spec.limits.max_height = 16384;
    }
    let list = match actions_of(&call.body) {
        Ok(l) => l,
        Err(e) => return bad_request(&e),
    };
    // Every action is checked before any runs: a bad one sends nothing.
    let parsed: Result<Vec<Step>, (usize, EngineError)> = list
        .iter()
        .enumerate()
        .map(|(i, a)| parse(a).map_err(|e| (i, e)))
        .collect();
    let (steps, invalid) = match parsed {
        Ok(s) => (s, None),
        Err(bad) => (Vec::new(), Some(bad)),
    };
    let mut out = batch::run(
        &state.engine,
        &batch::Driver::http(&call.hs),
        (&steps, &[]),
        spec,
        Image::Shot,
    )
    .await;
    if let Some((index, error)) = invalid {
        out.failure = Some(batch::Failure { index, error });
    }
    let response = super::answer(StatusCode::OK, &execution_response(&out), out.shot.as_ref());
    super::finish_with(&call.hs, &out.timings, out.settle_ms, out.note(), response)
}

/// The list of action objects in the body.
fn actions_of(body: &Value) -> Result<&[Value], EngineError> {
    let list = match body {
        Value::Array(a) => a.as_slice(),
        Value::Object(o) if o.contains_key("action_type") => std::slice::from_ref(body),
        Value::Object(o) => o
            .get("actions")
            .and_then(Value::as_array)
            .map(Vec::as_slice)
            .ok_or_else(|| {
                EngineError::invalid(
                    "actions",
                    "send an array of actions, one action, or {\"actions\": [...]}",
                )
            })?,
        _ => {
            return Err(EngineError::invalid(
                "actions",
                "send a JSON array of action objects",
            ));
        }
    };
    if list.is_empty() || list.len() > MAX_ACTIONS {
        return Err(EngineError::invalid(
            "actions",
            format!("1 to {MAX_ACTIONS} actions per batch"),
        ));
    }
    Ok(list)
}

fn int(a: &Value, field: &'static str) -> Result<i64, EngineError> {
    a.get(field)
        .and_then(Value::as_i64)
        .ok_or_else(|| EngineError::invalid(field, "required: an integer"))
}

fn point(a: &Value) -> Result<Option<[i64; 2]>, EngineError> {
    match (a.get("x"), a.get("y")) {
        (None, None) => Ok(None),
        _ => Ok(Some([int(a, "x")?, int(a, "y")?])),
    }
}

fn string<'a>(a: &'a Value, field: &'static str) -> Result<&'a str, EngineError> {
    a.get(field)
        .and_then(Value::as_str)
        .ok_or_else(|| EngineError::invalid(field, "required: a string"))
}

/// One action of the spec (and a few more: right/middle/double click,
/// scroll, wait, cursor_position).
fn parse(a: &Value) -> Result<Step, EngineError> {
    let kind = string(a, "action_type")?;
    let click = |button, count| -> Result<Step, EngineError> {
        Ok(Step::Click {
            at: point(a)?,
            button,
            count,
            modifiers: Vec::new(),
        })
    };
    Ok(match kind {
        "screenshot" => Step::Screenshot,
        "cursor_position" => Step::CursorPosition,
        "mouse_move" => Step::Move([int(a, "x")?, int(a, "y")?]),
        "left_click" => click(Button::Left, 1)?,
        "right_click" => click(Button::Right, 1)?,
        "middle_click" => click(Button::Middle, 1)?,
        "double_click" => click(Button::Left, 2)?,
        "type" => Step::Type(step::text("text", string(a, "text")?)?),
        "key" => {
            let mut keys = match a.get("modifier").and_then(Value::as_str) {
                Some(m) => step::modifiers("modifier", &[m])?,
                None => Vec::new(),
            };
            keys.extend(step::chord("key_name", string(a, "key_name")?)?);
            Step::Keys(vec![keys])
        }
        "wait" => {
            let s = a.get("duration").and_then(Value::as_f64).unwrap_or(1.0);
            Step::Wait(step::seconds("duration", s)?)
        }
        "scroll" => Step::Scroll {
            at: point(a)?,
            direction: match string(a, "direction")? {
                "up" => ScrollDirection::Up,
                "down" => ScrollDirection::Down,
                "left" => ScrollDirection::Left,
                "right" => ScrollDirection::Right,
                _ => return Err(EngineError::invalid("direction", "up, down, left or right")),
            },
            amount: step::count(
                "amount",
                a.get("amount").and_then(Value::as_u64).unwrap_or(3),
            )?,
            modifiers: Vec::new(),
        },
        other => {
            return Err(EngineError::invalid(
                "action_type",
                format!("unknown action_type {}", deskhand_protocol::echo(other)),
            ));
        }
    })
}

/// The spec's `ExecutionResponse`, plus timings and the screenshot's displays.
fn execution_response(out: &Outcome) -> Value {
    let mut r = json!({
        "status": "success",
        "timings": out.timings,
        "screenshot_ms": out.shot_ms,
        "settle_ms": out.settle_ms,
    });
    if let Some(shot) = &out.shot {
        r["action_result"] = json!({
            "screenshot": super::image_slot(),
            "screen_dimensions": {"width": shot.plan.width, "height": shot.plan.height},
            "displays": super::displays_json(shot),
            "mime_type": shot.format.mime_type(),
            "frame_note": shot.budget_note,
        });
        if let Some([x, y]) = out.cursor {
            r["action_result"]["cursor_position"] = json!({"x": x, "y": y});
        }
    }
    let error = match (&out.failure, &out.shot_error) {
        (Some(f), _) => Some(error_json(&f.error, Some(f.index))),
        (None, Some(e)) => Some(error_json(e, None)),
        (None, None) => None,
    };
    if let Some(e) = error {
        r["status"] = json!("error");
        r["error"] = e;
    }
    r
}
