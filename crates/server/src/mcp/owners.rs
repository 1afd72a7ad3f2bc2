//! Which client (token) each HTTP MCP session belongs to: learned from the
//! `Mcp-Session-Id` rmcp hands out, checked on every later request, so
//! that one client's session id is refused (404, as for an unknown one)
//! when another client's token presents it.

use std::collections::HashMap;
use std::sync::Mutex;

use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::StatusCode;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use super::TokenIndex;

const SESSION_HEADER: &str = "mcp-session-id";

/// Session id → the token index that created it.
#[derive(Default)]
pub struct Owners(Mutex<HashMap<String, usize>>);

impl Owners {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, usize>> {
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// The check in front of rmcp's service.
pub(crate) async fn check(
    State(owners): State<std::sync::Arc<Owners>>,
    request: Request<Body>,
    next: Next,
) -> Response {
    let token = request
        .extensions()
        .get::<TokenIndex>()
        .map_or(usize::MAX, |t| t.0);
    let asked = request
        .headers()
        .get(SESSION_HEADER)
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    if let Some(id) = &asked
        && owners.lock().get(id).is_some_and(|owner| *owner != token)
    {
        tracing::warn!("refused an MCP session id presented with another client's token");
        return (StatusCode::NOT_FOUND, "session not found\n").into_response();
    }
    let deleting = request.method() == axum::http::Method::DELETE;
    let response = next.run(request).await;
    if let Some(id) = response
        .headers()
        .get(SESSION_HEADER)
        .and_then(|v| v.to_str().ok())
    {
        owners.lock().entry(id.to_owned()).or_insert(token);
    }
    if deleting && let Some(id) = asked {
        owners.lock().remove(&id);
    }
    response
}
