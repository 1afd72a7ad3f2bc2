//! The computer adapters on HTTP: `POST /v1/actions` (the action-batch
//! spec), `GET /v1/computer/anthropic/tool` and `POST
//! /v1/computer/anthropic` (Anthropic's computer tool), `POST
//! /v1/computer/openai` (OpenAI's `computer` tool). Each parses its
//! vendor's verbs into steps (`step.rs`), runs them as one batch for the
//! session the `X-Deskhand-Session` header names (`batch.rs`,
//! `session.rs`) and answers in its vendor's shape, with one fresh screenshot
//! whose pixels later coordinates refer to. Behind the same guard as every
//! route (token, Host, Origin).

mod actions;
mod anthropic;
pub(crate) mod batch;
mod errors;
pub(crate) mod openai;
mod session;
mod step;

use std::collections::HashMap;
use std::sync::Arc;

use axum::Router;
use axum::body::Bytes;
use axum::extract::DefaultBodyLimit;
use axum::extract::{Extension, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{delete, get, post};
use deskhand_engine::shot::{DisplaySelect, ShotLimits, VendorCap};
use deskhand_engine::{EngineError, Shot, ShotSpec};
use deskhand_protocol::messages::ImageFormat;
use serde_json::{Value, json};

use crate::AppState;
use crate::mcp::TokenIndex;
pub(crate) use session::Sessions;
use session::{HttpSession, SessionRefusal};

/// Largest request body of these routes: 1 MiB (a batch of actions, not
/// an upload).
pub const MAX_BODY_BYTES: usize = 1024 * 1024;

/// The routes, for the server's router.
pub(crate) fn routes() -> Router<Arc<AppState>> {
    Router::new()
        .route("/v1/actions", post(actions::handle))
        .route("/v1/computer/anthropic/tool", get(anthropic::tool))
        .route("/v1/computer/anthropic", post(anthropic::handle))
        .route("/v1/computer/openai", post(openai::handle))
        .route("/v1/computer/session", delete(end_session))
        .layer(DefaultBodyLimit::max(MAX_BODY_BYTES))
}

/// A request that passed the adapter's own checks.
pub(crate) struct Call {
    /// Its session.
    pub hs: Arc<HttpSession>,
    /// The parsed body.
    pub body: Value,
    /// The screenshots it asks for.
    pub spec: ShotSpec,
}

/// Checks the content type, the screenshot options (`query`, defaults for
/// `vendor` and `select`) and the body, then finds or creates the
/// session. Nothing is sent to the desktop before this passed.
pub(crate) fn begin(
    state: &Arc<AppState>,
    (headers, query, token): (&HeaderMap, &HashMap<String, String>, TokenIndex),
    body: &Bytes,
    vendor: VendorCap,
    select: DisplaySelect,
) -> Result<Call, Box<Response>> {
    let json_type = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|t| {
            t.split(';')
                .next()
                .is_some_and(|m| m.trim().eq_ignore_ascii_case("application/json"))
        });
    if !json_type {
        return Err((
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            axum::Json(json!({"error": {
                "code": "invalid_message",
                "message": "send the body as Content-Type: application/json",
            }})),
        )
            .into_response()
            .into());
    }
    let body: Value = serde_json::from_slice(body).map_err(|e| {
        Box::new(errors::bad_request(&EngineError::invalid(
            "body",
            format!("not JSON: {e}"),
        )))
    })?;
    let spec = shot_spec(query, vendor, select).map_err(|e| Box::new(errors::bad_request(&e)))?;
    let hs = session(state, headers, token, vendor)?;
    Ok(Call { hs, body, spec })
}

/// The string field `field` of the body (the vendor's call id), or a
/// 400 that says what to send (`what`).
pub(crate) fn required_id(
    body: &Value,
    field: &'static str,
    what: &str,
) -> Result<String, Box<Response>> {
    body.get(field)
        .and_then(Value::as_str)
        .map(str::to_owned)
        .ok_or_else(|| {
            Box::new(errors::bad_request(&EngineError::invalid(
                field,
                format!("send {what}"),
            )))
        })
}

/// The session the header names (only one `token` made), a fresh one
/// (`new`), or without the header the token's default session of the
/// endpoint of `vendor`.
pub(crate) fn session(
    state: &Arc<AppState>,
    headers: &HeaderMap,
    token: TokenIndex,
    vendor: VendorCap,
) -> Result<Arc<HttpSession>, Box<Response>> {
    let named = match headers.get(session::HEADER) {
        None => None,
        Some(v) => Some(v.to_str().map_err(|_| Box::new(unknown_session()))?),
    };
    match state
        .computer
        .resolve(state, token.0, session::Wanted::of(named, vendor))
    {
        Ok(hs) => Ok(hs),
        Err(SessionRefusal::Unknown) => Err(unknown_session().into()),
        Err(SessionRefusal::TooMany) => Err((
            StatusCode::SERVICE_UNAVAILABLE,
            axum::Json(json!({"error": {
                "code": "busy",
                "message": "too many HTTP sessions are open: reuse yours (send back \
                            its X-Deskhand-Session) or end one (DELETE /v1/computer/session)",
            }})),
        )
            .into_response()
            .into()),
    }
}

/// `DELETE /v1/computer/session`: ends the session the header names (its
/// takeover ends, what it holds is released); 204, or 400 when unknown
/// (another token's session is unknown to this one).
async fn end_session(
    State(state): State<Arc<AppState>>,
    Extension(token): Extension<TokenIndex>,
    headers: HeaderMap,
) -> Response {
    let Some(id) = headers.get(session::HEADER).and_then(|v| v.to_str().ok()) else {
        return errors::bad_request(&EngineError::invalid(
            "X-Deskhand-Session",
            "name the session to end: the id its answers gave",
        ));
    };
    match state.computer.remove(id, token.0) {
        Some(hs) => {
            state.engine.close_session(&hs.session).await;
            StatusCode::NO_CONTENT.into_response()
        }
        None => unknown_session(),
    }
}

fn unknown_session() -> Response {
    errors::bad_request(&EngineError::invalid(
        "X-Deskhand-Session",
        "no such session (it ended, or another token made it): send no header for your \
         default session, or `new` for a fresh one, then send back the id returned",
    ))
}

/// Adds the session header (and the step timings) to a response.
pub(crate) fn finish(hs: &HttpSession, timings: &[batch::Timing], r: Response) -> Response {
    finish_with(hs, timings, None, None, r)
}

/// [`finish`], with how long the screen took to settle after input and
/// how the screenshot was made to fit its byte budget.
pub(crate) fn finish_with(
    hs: &HttpSession,
    timings: &[batch::Timing],
    settle_ms: Option<f64>,
    note: Option<&str>,
    mut r: Response,
) -> Response {
    if let Some(v) = settle_ms.and_then(|ms| HeaderValue::from_str(&format!("{ms:.3}")).ok()) {
        r.headers_mut().insert("x-deskhand-settle-ms", v);
    }
    if let Some(v) = note.and_then(|n| HeaderValue::from_str(n).ok()) {
        r.headers_mut().insert("x-deskhand-frame-note", v);
    }
    if let Ok(v) = HeaderValue::from_str(&hs.session.id) {
        r.headers_mut().insert(session::HEADER, v);
    }
    let ms: Vec<f64> = timings
        .iter()
        .map(|t| (t.ms * 1000.0).round() / 1000.0)
        .collect();
    if let Ok(v) = HeaderValue::from_str(&json!(ms).to_string()) {
        r.headers_mut().insert("x-deskhand-timings-ms", v);
    }
    r
}

/// Screenshot options from the query: `display` (`all` or an id), `max_width`,
/// `max_height`.
pub(crate) fn shot_spec(
    query: &HashMap<String, String>,
    vendor: VendorCap,
    select: DisplaySelect,
) -> Result<ShotSpec, EngineError> {
    let select = match query.get("display").map(String::as_str) {
        None => select,
        Some("all") => DisplaySelect::All,
        Some(id) => DisplaySelect::One(id.parse().map_err(|_| {
            EngineError::invalid(
                "display",
                "\"all\" or a display id from the last screenshot",
            )
        })?),
    };
    let defaults = ShotLimits::default();
    let dim = |name: &'static str, default: u32| -> Result<u32, EngineError> {
        match query.get(name) {
            None => Ok(default),
            Some(v) => v
                .parse::<u32>()
                .ok()
                .filter(|n| (16..=16384).contains(n))
                .ok_or_else(|| EngineError::invalid(name, "a number of pixels in 16..=16384")),
        }
    };
    Ok(ShotSpec {
        select,
        limits: ShotLimits {
            max_width: dim("max_width", defaults.max_width)?,
            max_height: dim("max_height", defaults.max_height)?,
            vendor,
        },
        format: ImageFormat::Png,
        quality: 80,
        max_bytes: match query.get("max_bytes") {
            None => default_max_bytes(vendor),
            Some(v) => Some(
                v.parse::<usize>()
                    .ok()
                    .filter(|n| *n >= 1024)
                    .ok_or_else(|| {
                        EngineError::invalid("max_bytes", "a number of bytes, at least 1024")
                    })?,
            ),
        },
    })
}

/// Anthropic's API refuses images over 5 MB of base64: about 3.75 MB of
/// image. Other clients' limits are theirs to say (`max_bytes`).
fn default_max_bytes(vendor: VendorCap) -> Option<usize> {
    (vendor == VendorCap::Anthropic).then_some(3_750_000)
}

/// Stands for the image's base64 in an answer's JSON until [`answer`]
/// writes the encoder's base64 pieces there (no copy into a JSON string,
/// no scan for escapes: base64 needs none). Random per process, so that no
/// text a client sent and an error repeats can pass for it.
pub(crate) fn image_slot() -> &'static str {
    static SLOT: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    SLOT.get_or_init(|| format!("deskhand-image-{}", uuid::Uuid::new_v4().simple()))
}

/// The JSON answer `v` with `shot`'s base64 in its [`image_slot`].
pub(crate) fn answer(status: StatusCode, v: &Value, shot: Option<&Shot>) -> Response {
    let text = v.to_string();
    let slot = image_slot();
    let mut body = Vec::with_capacity(text.len() + shot.map_or(0, |s| s.bytes.len() * 4 / 3 + 4));
    match (shot, text.find(slot)) {
        (Some(shot), Some(at)) => {
            body.extend_from_slice(&text.as_bytes()[..at]);
            for piece in shot.bytes.base64_pieces() {
                body.extend_from_slice(piece.as_bytes());
            }
            body.extend_from_slice(&text.as_bytes()[at + slot.len()..]);
        }
        _ => body.extend_from_slice(text.as_bytes()),
    }
    (
        status,
        [(header::CONTENT_TYPE, "application/json")],
        axum::body::Body::from(body),
    )
        .into_response()
}

/// The screenshot's displays, for the caller: global and pixel rectangles.
pub(crate) fn displays_json(shot: &Shot) -> Value {
    json!(shot.plan.displays)
}
