//! deskhand's local port: the WebSocket wire ops on `/v1/ws`, MCP
//! (Streamable HTTP) on `/mcp`, and the computer endpoints (`/v1/actions`,
//! `/v1/computer/*`). Every request passes the Host, Origin and token
//! checks before anything else happens; there are no CORS headers, ever.
//! Connections without the token are bounded in number and time
//! (`listen.rs`).

mod computer;
mod listen;
pub mod mcp;
mod security;
mod wire;

use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::routing::get;
use deskhand_engine::Engine;
use thiserror::Error;
use tokio::net::TcpListener;
use tokio::sync::Semaphore;

pub use security::{PersonToken, Token};

/// Default largest incoming message: 16 MiB.
pub const DEFAULT_MAX_MESSAGE_BYTES: usize = 16 * 1024 * 1024;

/// Errors of the server.
#[derive(Debug, Error)]
pub enum ServerError {
    /// The listener failed.
    #[error("server I/O: {0}")]
    Io(#[from] std::io::Error),
}

/// How the port is guarded and limited.
#[derive(Debug, Clone)]
pub struct ServerConfig {
    /// The person's bearer token, which the host may replace.
    pub token: PersonToken,
    /// More tokens, one per client the person set up: same rights, but
    /// each client's MCP sessions are its own.
    pub client_tokens: Vec<Token>,
    /// Origins allowed to connect (exact match); empty allows none.
    pub allowed_origins: Vec<String>,
    /// Largest incoming WebSocket message.
    pub max_message_bytes: usize,
    /// A WebSocket connection that sends no request (text or binary
    /// message; pings do not count) for this long is closed (1001).
    pub idle_timeout: Duration,
    /// Most simultaneous WebSocket sessions.
    pub max_connections: usize,
    /// Time a connection has from connect to passing the guard, and for
    /// each request's headers; then it is closed.
    pub header_timeout: Duration,
    /// Most connections at once that have not passed the guard yet; a new
    /// one beyond closes the oldest of them.
    pub max_unauthenticated: usize,
    /// An HTTP session's takeover (computer adapters) ends after this long
    /// without input; the session itself after `idle_timeout` unused.
    pub takeover_idle: Duration,
    /// An MCP HTTP session (`Mcp-Session-Id`) unused this long is closed,
    /// its driver session with it.
    pub mcp_session_idle: Duration,
    /// Most MCP HTTP sessions one token keeps open at once.
    pub mcp_sessions_per_token: usize,
    /// Most MCP HTTP sessions open at once, all tokens together.
    pub mcp_sessions_max: usize,
}

impl ServerConfig {
    /// Defaults around `token`: no origins, 16 MiB messages, 10 minutes
    /// idle, 32 sessions, 5 s to send the headers and the token, 64
    /// connections without the token, 60 s idle takeover over HTTP, MCP
    /// HTTP sessions closed after 30 minutes unused, at most 128 of them
    /// per token and 512 in all.
    pub fn new(token: Token) -> Self {
        Self {
            token: PersonToken::new(token),
            client_tokens: Vec::new(),
            allowed_origins: Vec::new(),
            max_message_bytes: DEFAULT_MAX_MESSAGE_BYTES,
            idle_timeout: Duration::from_secs(600),
            max_connections: 32,
            header_timeout: Duration::from_secs(5),
            max_unauthenticated: 64,
            takeover_idle: Duration::from_secs(60),
            mcp_session_idle: Duration::from_secs(30 * 60),
            mcp_sessions_per_token: 128,
            mcp_sessions_max: 512,
        }
    }
}

/// Shared state of the routes.
pub(crate) struct AppState {
    pub engine: Arc<Engine>,
    pub mcp: Arc<mcp::McpShared>,
    pub config: ServerConfig,
    pub port: u16,
    pub connections: Arc<Semaphore>,
    pub computer: computer::Sessions,
}

/// Serves until `shutdown` completes. Open connections are closed and
/// their sessions released when it does.
pub async fn serve(
    listener: TcpListener,
    engine: Arc<Engine>,
    config: ServerConfig,
    health: mcp::HealthSource,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> Result<(), ServerError> {
    let addr: SocketAddr = listener.local_addr()?;
    let limits = listen::Limits {
        header_timeout: config.header_timeout,
        max_unauthenticated: config.max_unauthenticated,
    };
    let state = Arc::new(AppState {
        mcp: mcp::McpShared::new(engine.clone(), health),
        engine,
        port: addr.port(),
        connections: Arc::new(Semaphore::new(config.max_connections)),
        computer: computer::Sessions::new(),
        config,
    });
    let app = router(state);
    tracing::info!(%addr, "listening");
    listen::serve(listener, app, limits, shutdown).await;
    Ok(())
}

fn router(state: Arc<AppState>) -> Router {
    Router::new()
        .route("/v1/ws", get(wire::upgrade))
        .nest_service("/mcp", mcp::http_service(&state))
        // The computer adapters (issue 16): /v1/actions, /v1/computer/*.
        .merge(computer::routes())
        .layer(axum::middleware::from_fn_with_state(
            state.clone(),
            security::guard,
        ))
        .with_state(state)
}
