//! OpenAI's `computer` tool: `POST /v1/computer/openai` takes a
//! `computer_call` (with `action` or `actions[]`) and answers the
//! `computer_call_output` with a `computer_screenshot` data URL. A failure
//! answers 422 with `{"error": {...}, "computer_call_output": {...}}` (the
//! screenshot still in it). Pending safety checks are put to the person
//! (the approval asks whatever the mode) and returned as
//! `acknowledged_safety_checks` only when they approved; never
//! acknowledged on their behalf.

use std::collections::HashMap;
use std::sync::Arc;

use axum::body::Bytes;
use axum::extract::{Extension, Query, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::Response;
use deskhand_engine::approval::SafetyCheck;
use deskhand_engine::shot::{DisplaySelect, VendorCap};
use deskhand_engine::{Button, EngineError, ScrollDirection};
use serde_json::{Value, json};

use super::batch::{self, Image, Outcome};
use super::errors::error_json;
use super::step::{self, Step, Xy};
use crate::AppState;
use crate::mcp::TokenIndex;

/// Pixels of scroll per wheel step: a pixel delta becomes
/// `round(|delta| / 100)` steps, at least one for any non-zero delta.
pub(crate) const PIXELS_PER_WHEEL_STEP: f64 = 100.0;

/// How long `wait` (which carries no duration) waits.
const WAIT_SECONDS: f64 = 2.0;

/// Most actions in one call.
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
        VendorCap::OpenAi,
        DisplaySelect::All,
    ) {
        Ok(c) => c,
        Err(r) => return *r,
    };
    let call_id = match super::required_id(&call.body, "call_id", "the model's computer_call") {
        Ok(id) => id,
        Err(r) => return *r,
    };
    let spec = call.spec;
    let driver = batch::Driver::http(&call.hs);
    let (out, checks) = run_call(&state.engine, &driver, &call.body, spec).await;
    let response = answer(&call_id, &out, &checks);
    super::finish_with(&call.hs, &out.timings, out.settle_ms, out.note(), response)
}

/// Runs a call's `action` or `actions[]` (with its safety checks, which
/// the person must approve) for `driver`; failures carry the index of the
/// action they came from.
pub(crate) async fn run_call(
    engine: &Arc<deskhand_engine::Engine>,
    driver: &batch::Driver<'_>,
    call: &Value,
    spec: deskhand_engine::ShotSpec,
) -> (Outcome, Vec<SafetyCheck>) {
    let parsed = safety_checks(call).and_then(|c| Ok((c, steps(call)?)));
    let (checks, (steps, origins), refused) = match parsed {
        Ok((c, s)) => (c, s, None),
        Err(bad) => (Vec::new(), (Vec::new(), Vec::new()), Some(bad)),
    };
    let mut out = batch::run(engine, driver, (&steps, &checks), spec, Image::Shot).await;
    // A step's index is its action's (a diagonal scroll is two steps).
    if let Some(f) = out.failure.as_mut() {
        f.index = origins.get(f.index).copied().unwrap_or(f.index);
    }
    if let Some((index, error)) = refused {
        out.failure = Some(batch::Failure { index, error });
    }
    (out, checks)
}

/// The call's `pending_safety_checks`: only the person can acknowledge
/// them (the approval asks whatever the mode).
fn safety_checks(call: &Value) -> Result<Vec<SafetyCheck>, (usize, EngineError)> {
    let Some(list) = call.get("pending_safety_checks") else {
        return Ok(Vec::new());
    };
    let bad = || {
        let e = EngineError::invalid(
            "pending_safety_checks",
            "a list of {id, code, message} objects, as the model's computer_call gave it",
        );
        (0, e)
    };
    let items = list.as_array().ok_or_else(bad)?;
    items
        .iter()
        .map(|c| {
            let field = |name: &str| c.get(name).and_then(Value::as_str);
            let id = field("id").ok_or_else(bad)?;
            Ok(SafetyCheck::new(
                id,
                field("code").unwrap_or(""),
                field("message").unwrap_or(""),
            ))
        })
        .collect()
}

fn answer(call_id: &str, out: &Outcome, checks: &[SafetyCheck]) -> Response {
    let mut output = json!({"type": "computer_call_output", "call_id": call_id});
    if out.failure.is_none() && !checks.is_empty() {
        // The person approved them: returned as acknowledged.
        output["acknowledged_safety_checks"] = json!(checks);
    }
    if let Some(shot) = &out.shot {
        output["output"] = json!({
            "type": "computer_screenshot",
            "image_url": format!("data:{};base64,{}", shot.format.mime_type(), super::image_slot()),
        });
    }
    let error = match (&out.failure, &out.shot_error) {
        (Some(f), _) => {
            let mut e = error_json(&f.error, Some(f.index));
            if !checks.is_empty() && matches!(f.error, EngineError::ApprovalDenied { .. }) {
                e["message"] = json!(format!(
                    "provider safety checks need the person's acknowledgement before computer \
                     input; nothing was sent ({})",
                    f.error
                ));
            }
            Some(e)
        }
        (None, Some(e)) => Some(error_json(e, None)),
        (None, None) => None,
    };
    let shot = out.shot.as_ref();
    match error {
        None => super::answer(StatusCode::OK, &output, shot),
        Some(e) => super::answer(
            StatusCode::UNPROCESSABLE_ENTITY,
            &json!({"error": e, "computer_call_output": output}),
            shot,
        ),
    }
}

/// The call's actions as steps, each checked before any runs, with the
/// index of the action each step came from.
type Steps = (Vec<Step>, Vec<usize>);

fn steps(call: &Value) -> Result<Steps, (usize, EngineError)> {
    let list: Vec<&Value> = match (call.get("actions"), call.get("action")) {
        (Some(Value::Array(a)), _) => a.iter().collect(),
        (_, Some(a)) if a.is_object() => vec![a],
        _ => {
            return Err((
                0,
                EngineError::invalid("action", "send action or actions[]"),
            ));
        }
    };
    if list.is_empty() || list.len() > MAX_ACTIONS {
        let e = EngineError::invalid("actions", format!("1 to {MAX_ACTIONS} actions per call"));
        return Err((0, e));
    }
    list.into_iter()
        .enumerate()
        .map(|(i, a)| parse(a).map_err(|e| (i, e)))
        .collect::<Result<Vec<Vec<Step>>, _>>()
        .map(|v| {
            let origins = v
                .iter()
                .enumerate()
                .flat_map(|(i, s)| std::iter::repeat_n(i, s.len()))
                .collect();
            (v.into_iter().flatten().collect(), origins)
        })
}

fn int(a: &Value, field: &'static str) -> Result<i64, EngineError> {
    a.get(field)
        .and_then(Value::as_i64)
        .ok_or_else(|| EngineError::invalid(field, "required: an integer"))
}

fn at(a: &Value) -> Result<Xy, EngineError> {
    Ok([int(a, "x")?, int(a, "y")?])
}

/// `keys` held during a pointer action.
fn held(a: &Value) -> Result<Vec<deskhand_engine::Key>, EngineError> {
    let names: Vec<&str> = a
        .get("keys")
        .and_then(Value::as_array)
        .map(|k| k.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    step::modifiers("keys", &names)
}

/// One action; a scroll with both deltas is two steps.
fn parse(a: &Value) -> Result<Vec<Step>, EngineError> {
    let kind = a
        .get("type")
        .and_then(Value::as_str)
        .ok_or_else(|| EngineError::invalid("type", "required: the action type"))?;
    let one = match kind {
        "screenshot" => Step::Screenshot,
        "wait" => Step::Wait(step::seconds("duration", WAIT_SECONDS)?),
        "click" => {
            let button = match a.get("button").and_then(Value::as_str).unwrap_or("left") {
                "left" => Button::Left,
                "right" => Button::Right,
                "wheel" | "middle" => Button::Middle,
                "back" => Button::Back,
                "forward" => Button::Forward,
                _ => {
                    return Err(EngineError::invalid(
                        "button",
                        "left, right, wheel, back or forward",
                    ));
                }
            };
            Step::Click {
                at: Some(at(a)?),
                button,
                count: 1,
                modifiers: held(a)?,
            }
        }
        "double_click" => Step::Click {
            at: Some(at(a)?),
            button: Button::Left,
            count: 2,
            modifiers: held(a)?,
        },
        "move" => {
            if !held(a)?.is_empty() {
                return Err(EngineError::invalid(
                    "keys",
                    "modifiers held during a move are not supported; send the move without keys",
                ));
            }
            Step::Move(at(a)?)
        }
        "drag" => {
            let path = a
                .get("path")
                .and_then(Value::as_array)
                .ok_or_else(|| EngineError::invalid("path", "required: [{x, y}, ...]"))?
                .iter()
                .map(at)
                .collect::<Result<Vec<_>, _>>()?;
            if path.len() < 2 {
                return Err(EngineError::invalid("path", "at least two points"));
            }
            Step::Drag {
                path,
                modifiers: held(a)?,
            }
        }
        "keypress" => {
            let keys = a
                .get("keys")
                .and_then(Value::as_array)
                .filter(|k| !k.is_empty())
                .ok_or_else(|| EngineError::invalid("keys", "required: key names"))?;
            let mut chord = Vec::new();
            for k in keys {
                let name = k
                    .as_str()
                    .ok_or_else(|| EngineError::invalid("keys", "strings"))?;
                chord.extend(step::chord("keys", name)?);
            }
            Step::Keys(vec![chord])
        }
        "type" => Step::Type(step::text(
            "text",
            a.get("text")
                .and_then(Value::as_str)
                .ok_or_else(|| EngineError::invalid("text", "required: a string"))?,
        )?),
        "scroll" => return scroll(a),
        other => {
            return Err(EngineError::invalid(
                "type",
                format!(
                    "unknown action type {:?}",
                    other.chars().take(40).collect::<String>()
                ),
            ));
        }
    };
    Ok(vec![one])
}

/// Wheel steps for a pixel delta (see [`PIXELS_PER_WHEEL_STEP`]).
pub(crate) fn wheel_steps(delta: i64) -> u32 {
    if delta == 0 {
        return 0;
    }
    ((delta.unsigned_abs() as f64 / PIXELS_PER_WHEEL_STEP).round() as u32).clamp(1, 100)
}

fn scroll(a: &Value) -> Result<Vec<Step>, EngineError> {
    let point = at(a)?;
    let modifiers = held(a)?;
    let dx = a.get("scroll_x").and_then(Value::as_i64).unwrap_or(0);
    let dy = a.get("scroll_y").and_then(Value::as_i64).unwrap_or(0);
    let mut steps = Vec::new();
    for (delta, neg, pos) in [
        (dy, ScrollDirection::Up, ScrollDirection::Down),
        (dx, ScrollDirection::Left, ScrollDirection::Right),
    ] {
        if delta != 0 {
            steps.push(Step::Scroll {
                at: Some(point),
                direction: if delta < 0 { neg } else { pos },
                amount: wheel_steps(delta),
                modifiers: modifiers.clone(),
            });
        }
    }
    if steps.is_empty() {
        // No delta: the pointer still goes there, as the scroll would.
        steps.push(Step::Move(point));
    }
    Ok(steps)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pixel_deltas_become_wheel_steps() {
        assert_eq!(wheel_steps(0), 0);
        assert_eq!(wheel_steps(30), 1, "any movement scrolls");
        assert_eq!(wheel_steps(-250), 3);
        assert_eq!(wheel_steps(100_000), 100, "bounded");
    }

    #[test]
    fn a_diagonal_scroll_is_two_steps() {
        let s = scroll(&json!({"x": 1, "y": 2, "scroll_x": 100, "scroll_y": -200})).expect("ok");
        assert_eq!(s.len(), 2);
        assert!(matches!(
            s[0],
            Step::Scroll {
                direction: ScrollDirection::Up,
                amount: 2,
                ..
            }
        ));
        assert!(matches!(
            s[1],
            Step::Scroll {
                direction: ScrollDirection::Right,
                amount: 1,
                ..
            }
        ));
    }
}
