//! Anthropic's computer tool (`computer_20250124`, `computer_20251124`):
//! `GET /v1/computer/anthropic/tool` gives the tool definition whose
//! display size is the screenshots deskhand returns; `POST
//! /v1/computer/anthropic` takes the model's `tool_use` block as it came
//! (or the tool-set shape, the action as the tool's name) and answers the
//! `tool_result` block to send back. Timings and the session are in
//! headers, so that the body can be forwarded as it is.

use std::collections::HashMap;
use std::sync::Arc;

use axum::Json;
use axum::body::Bytes;
use axum::extract::{Extension, Query, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use deskhand_engine::shot::{DisplaySelect, ShotPlan, VendorCap};
use deskhand_engine::{Button, EngineError, ScrollDirection, Shot};
use serde_json::{Value, json};

use super::batch::{self, Image, Outcome};
use super::errors::{bad_request, error_text};
use super::step::{self, Step, Xy};
use crate::AppState;
use crate::mcp::TokenIndex;

/// The tool versions accepted.
const VERSIONS: [&str; 2] = ["computer_20250124", "computer_20251124"];

/// `GET /v1/computer/anthropic/tool?version=…&display=…`.
pub(crate) async fn tool(
    State(state): State<Arc<AppState>>,
    Query(query): Query<HashMap<String, String>>,
    Extension(token): Extension<TokenIndex>,
    headers: HeaderMap,
) -> Response {
    let version = query.get("version").map_or(VERSIONS[1], String::as_str);
    if !VERSIONS.contains(&version) {
        return bad_request(&EngineError::invalid(
            "version",
            format!("one of {VERSIONS:?}"),
        ));
    }
    let spec = match super::shot_spec(&query, VendorCap::Anthropic, DisplaySelect::All) {
        Ok(s) => s,
        Err(e) => return bad_request(&e),
    };
    let hs = match super::session(&state, &headers, token, VendorCap::Anthropic) {
        Ok(hs) => hs,
        Err(r) => return *r,
    };
    let plan = match state.engine.layout(&hs.session).await {
        Ok(layout) => ShotPlan::new(&layout, spec.select, spec.limits),
        Err(e) => Err(e),
    };
    let plan = match plan {
        Ok(p) => p,
        Err(e) => return bad_request(&e),
    };
    let mut def = json!({
        "type": version,
        "name": "computer",
        "display_width_px": plan.width,
        "display_height_px": plan.height,
    });
    if version == VERSIONS[1] {
        def["enable_zoom"] = json!(true);
    }
    super::finish(&hs, &[], Json(def).into_response())
}

/// `POST /v1/computer/anthropic`.
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
        VendorCap::Anthropic,
        DisplaySelect::All,
    ) {
        Ok(c) => c,
        Err(r) => return *r,
    };
    let id = match super::required_id(&call.body, "id", "the model's tool_use block") {
        Ok(id) => id,
        Err(r) => return *r,
    };
    let spec = call.spec;
    let (out, refused) = match parse(&call.body) {
        Ok(step) => {
            let out = batch::run(
                &state.engine,
                &batch::Driver::http(&call.hs),
                (&[step], &[]),
                spec,
                Image::ShotUnlessAnswered,
            )
            .await;
            (out, None)
        }
        Err(e) => {
            // Nothing ran: the model still gets a screenshot with the error.
            (
                batch::run(
                    &state.engine,
                    &batch::Driver::http(&call.hs),
                    (&[], &[]),
                    spec,
                    Image::Shot,
                )
                .await,
                Some(e),
            )
        }
    };
    let (result, shot) = tool_result(&id, &out, refused.as_ref());
    let response = super::answer(StatusCode::OK, &result, shot);
    super::finish_with(&call.hs, &out.timings, out.settle_ms, out.note(), response)
}

/// The `tool_result` block: the image (screenshot or zoom crop), the cursor
/// text, or the error text (with the screenshot when there is one).
fn tool_result<'a>(
    id: &str,
    out: &'a Outcome,
    refused: Option<&EngineError>,
) -> (Value, Option<&'a Shot>) {
    let image = |shot: &Shot| {
        json!({"type": "image", "source": {
            "type": "base64", "media_type": shot.format.mime_type(), "data": super::image_slot(),
        }})
    };
    let error = refused
        .or(out.failure.as_ref().map(|f| &f.error))
        .or(out.shot_error.as_ref());
    let mut content = Vec::new();
    if let Some(e) = error {
        content.push(json!({"type": "text", "text": error_text(e)}));
    } else if let Some([x, y]) = out.cursor {
        content.push(json!({"type": "text", "text": format!("X={x},Y={y}")}));
    }
    let shot = out
        .zoom
        .as_ref()
        .filter(|_| error.is_none())
        .or(out.shot.as_ref());
    content.extend(shot.map(image));
    let mut r = json!({"type": "tool_result", "tool_use_id": id, "content": content});
    if error.is_some() {
        r["is_error"] = json!(true);
    }
    (r, shot)
}

fn xy(v: &Value, field: &'static str) -> Result<Xy, EngineError> {
    let pair = v
        .as_array()
        .filter(|a| a.len() == 2)
        .and_then(|a| Some([a[0].as_i64()?, a[1].as_i64()?]));
    pair.ok_or_else(|| EngineError::invalid(field, "an [x, y] pair of integers"))
}

fn opt_xy(input: &Value, field: &'static str) -> Result<Option<Xy>, EngineError> {
    input
        .get(field)
        .filter(|v| !v.is_null())
        .map(|v| xy(v, field))
        .transpose()
}

fn text<'a>(input: &'a Value, field: &'static str) -> Result<&'a str, EngineError> {
    input
        .get(field)
        .and_then(Value::as_str)
        .ok_or_else(|| EngineError::invalid(field, "required: a string"))
}

/// Modifiers held during a click or scroll: `text`, or `key` as some
/// clients send them.
fn held(input: &Value) -> Result<Vec<deskhand_engine::Key>, EngineError> {
    let names: Vec<&str> = ["text", "key"]
        .iter()
        .filter_map(|f| input.get(*f).and_then(Value::as_str))
        .collect();
    step::modifiers("text", &names)
}

/// The model's action as a step.
fn parse(block: &Value) -> Result<Step, EngineError> {
    let input = block.get("input").unwrap_or(&Value::Null);
    // The tool-set shape names the action as the tool.
    let name = block
        .get("name")
        .and_then(Value::as_str)
        .unwrap_or("computer");
    let action = match input.get("action").and_then(Value::as_str) {
        Some(a) => a,
        None if name != "computer" => name,
        None => {
            return Err(EngineError::invalid(
                "action",
                "required: the computer action",
            ));
        }
    };
    let click = |button, count| -> Result<Step, EngineError> {
        Ok(Step::Click {
            at: opt_xy(input, "coordinate")?,
            button,
            count,
            modifiers: held(input)?,
        })
    };
    let press = |press| -> Result<Step, EngineError> {
        Ok(Step::Button {
            at: opt_xy(input, "coordinate")?,
            button: Button::Left,
            press,
        })
    };
    Ok(match action {
        "screenshot" => Step::Screenshot,
        "cursor_position" => Step::CursorPosition,
        "mouse_move" => Step::Move(xy(
            input.get("coordinate").unwrap_or(&Value::Null),
            "coordinate",
        )?),
        "left_click" => click(Button::Left, 1)?,
        "right_click" => click(Button::Right, 1)?,
        "middle_click" => click(Button::Middle, 1)?,
        "double_click" => click(Button::Left, 2)?,
        "triple_click" => click(Button::Left, 3)?,
        "left_mouse_down" => press(true)?,
        "left_mouse_up" => press(false)?,
        "left_click_drag" => Step::Drag {
            path: vec![
                xy(
                    input.get("start_coordinate").unwrap_or(&Value::Null),
                    "start_coordinate",
                )?,
                xy(
                    input.get("coordinate").unwrap_or(&Value::Null),
                    "coordinate",
                )?,
            ],
            modifiers: held(input)?,
        },
        "scroll" => scroll(input)?,
        "key" => {
            let repeat = step::count(
                "repeat",
                input.get("repeat").and_then(Value::as_u64).unwrap_or(1),
            )?;
            // xdotool-style: chords separated by spaces, pressed in turn.
            let chords = text(input, "text")?
                .split_whitespace()
                .map(|c| step::chord("text", c))
                .collect::<Result<Vec<_>, _>>()?;
            if chords.is_empty() {
                return Err(EngineError::invalid(
                    "text",
                    "name a key such as Return or ctrl+s",
                ));
            }
            Step::Keys((0..repeat.max(1)).flat_map(|_| chords.clone()).collect())
        }
        "hold_key" => Step::HoldKey {
            keys: step::chord("text", text(input, "text")?)?,
            duration: step::seconds("duration", duration(input)?)?,
        },
        "type" => Step::Type(step::text("text", text(input, "text")?)?),
        "wait" => Step::Wait(step::seconds("duration", duration(input)?)?),
        "zoom" => {
            let r = input
                .get("region")
                .and_then(Value::as_array)
                .filter(|a| a.len() == 4)
                .and_then(|a| {
                    Some([
                        a[0].as_i64()?,
                        a[1].as_i64()?,
                        a[2].as_i64()?,
                        a[3].as_i64()?,
                    ])
                })
                .ok_or_else(|| EngineError::invalid("region", "[x1, y1, x2, y2] integers"))?;
            Step::Zoom(r)
        }
        other => {
            return Err(EngineError::invalid(
                "action",
                format!(
                    "unknown action {:?}",
                    other.chars().take(40).collect::<String>()
                ),
            ));
        }
    })
}

fn duration(input: &Value) -> Result<f64, EngineError> {
    input
        .get("duration")
        .and_then(Value::as_f64)
        .ok_or_else(|| EngineError::invalid("duration", "required: seconds"))
}

fn scroll(input: &Value) -> Result<Step, EngineError> {
    let direction = match text(input, "scroll_direction")? {
        "up" => ScrollDirection::Up,
        "down" => ScrollDirection::Down,
        "left" => ScrollDirection::Left,
        "right" => ScrollDirection::Right,
        _ => {
            return Err(EngineError::invalid(
                "scroll_direction",
                "up, down, left or right",
            ));
        }
    };
    let amount = input
        .get("scroll_amount")
        .and_then(Value::as_u64)
        .ok_or_else(|| EngineError::invalid("scroll_amount", "required: an integer ≥ 0"))?;
    Ok(Step::Scroll {
        at: opt_xy(input, "coordinate")?,
        direction,
        amount: step::count("scroll_amount", amount)?,
        modifiers: held(input)?,
    })
}
