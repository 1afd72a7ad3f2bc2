//! Which client (token) each HTTP MCP session belongs to, and how many
//! there may be: learned from the `Mcp-Session-Id` rmcp hands out, checked
//! on every later request, so that one client's session id is refused
//! (404, as for an unknown one) when another client's token presents it.
//! An `initialize` that would open more sessions than its token or the
//! daemon may keep is refused (503) before rmcp makes one; sessions rmcp
//! closed (idle, deleted) stop counting.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use serde_json::{Value, json};

use super::TokenIndex;

/// The request and response header naming an MCP HTTP session.
pub(crate) const SESSION_HEADER: &str = "mcp-session-id";

/// Session id → the token index that created it, and the bounds.
pub struct Owners {
    inner: Mutex<Inner>,
    manager: Arc<LocalSessionManager>,
    limits: Limits,
}

/// How many MCP HTTP sessions may be open, and the largest body read.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// Per token.
    pub per_token: usize,
    /// All tokens together.
    pub total: usize,
    /// The largest request body (as rmcp's own limit).
    pub max_body: usize,
}

#[derive(Default)]
struct Inner {
    owners: HashMap<String, usize>,
    /// `initialize` requests let through and not answered yet, per token.
    pending: HashMap<usize, usize>,
}

impl Inner {
    fn count(&self, token: usize) -> (usize, usize) {
        let own = self.owners.values().filter(|t| **t == token).count();
        let pending_own = self.pending.get(&token).copied().unwrap_or(0);
        let pending_all: usize = self.pending.values().sum();
        (own + pending_own, self.owners.len() + pending_all)
    }
}

impl Owners {
    /// No sessions yet; `manager` is rmcp's, whose sessions are the live ones.
    pub fn new(manager: Arc<LocalSessionManager>, limits: Limits) -> Self {
        Self {
            inner: Mutex::new(Inner::default()),
            manager,
            limits,
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Forgets the sessions rmcp no longer has (closed idle or deleted).
    async fn prune(&self) {
        let live = self.manager.sessions.read().await;
        let owners = &mut self.lock().owners;
        owners.retain(|id, _| live.contains_key(id.as_str()));
        if owners.capacity() > 4 * owners.len() + 64 {
            owners.shrink_to_fit();
        }
    }

    /// Counts one more `initialize` of `token` under way, unless its
    /// token or the daemon keeps as many sessions as they may. The count
    /// ends with the reservation, even when the client goes away first.
    fn reserve(&self, token: usize) -> Option<Reservation<'_>> {
        let mut inner = self.lock();
        let (own, all) = inner.count(token);
        if own >= self.limits.per_token || all >= self.limits.total {
            return None;
        }
        *inner.pending.entry(token).or_insert(0) += 1;
        Some(Reservation {
            owners: self,
            token,
        })
    }
}

/// An `initialize` under way, counted against its token's share.
struct Reservation<'a> {
    owners: &'a Owners,
    token: usize,
}

impl Reservation<'_> {
    /// The `initialize` was answered, with `created` if rmcp made a
    /// session.
    fn settle(self, created: Option<&str>) {
        if let Some(id) = created {
            self.owners
                .lock()
                .owners
                .entry(id.to_owned())
                .or_insert(self.token);
        }
    }
}

impl Drop for Reservation<'_> {
    fn drop(&mut self) {
        let mut inner = self.owners.lock();
        if let Some(n) = inner.pending.get_mut(&self.token) {
            *n = n.saturating_sub(1);
            if *n == 0 {
                inner.pending.remove(&self.token);
            }
        }
    }
}

/// The check in front of rmcp's service.
pub(crate) async fn check(
    State(owners): State<Arc<Owners>>,
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
        && owners
            .lock()
            .owners
            .get(id)
            .is_some_and(|owner| *owner != token)
    {
        tracing::warn!("refused an MCP session id presented with another client's token");
        return (StatusCode::NOT_FOUND, "session not found\n").into_response();
    }
    let deleting = request.method() == axum::http::Method::DELETE;
    let mut request = request;
    let mut reserved = None;
    if asked.is_none() && request.method() == axum::http::Method::POST {
        let (parts, body) = request.into_parts();
        let Ok(bytes) = axum::body::to_bytes(body, owners.limits.max_body).await else {
            return (StatusCode::PAYLOAD_TOO_LARGE, "request body too large\n").into_response();
        };
        let init_id = serde_json::from_slice::<Value>(&bytes)
            .ok()
            .filter(|v| v.get("method").and_then(Value::as_str) == Some("initialize"))
            .map(|v| v.get("id").cloned().unwrap_or(Value::Null));
        request = Request::from_parts(parts, Body::from(bytes));
        if let Some(id) = init_id {
            owners.prune().await;
            reserved = owners.reserve(token);
            if reserved.is_none() {
                tracing::warn!(token, "refused an MCP session: too many open");
                return too_many(&owners.limits, id);
            }
        }
    }
    let response = next.run(request).await;
    let created = response
        .headers()
        .get(SESSION_HEADER)
        .and_then(|v| v.to_str().ok());
    match reserved {
        Some(reservation) => reservation.settle(created),
        None => {
            if let Some(id) = created {
                owners.lock().owners.entry(id.to_owned()).or_insert(token);
            }
        }
    }
    // Only a session rmcp ended stops counting: a refused DELETE (a bad
    // version, say) leaves it open, and so counted.
    if deleting
        && response.status().is_success()
        && let Some(id) = asked
    {
        owners.lock().owners.remove(&id);
    }
    response
}

/// The JSON-RPC error answering an `initialize` past the bounds (503).
fn too_many(limits: &Limits, id: Value) -> Response {
    let message = format!(
        "too many MCP sessions are open (at most {} per token, {} in all): end one \
         (HTTP DELETE with its Mcp-Session-Id) or wait until idle ones are closed",
        limits.per_token, limits.total
    );
    let body = json!({
        "jsonrpc": "2.0",
        "id": id,
        "error": { "code": -32000, "message": message },
    });
    (
        StatusCode::SERVICE_UNAVAILABLE,
        [(header::CONTENT_TYPE, "application/json")],
        body.to_string(),
    )
        .into_response()
}
