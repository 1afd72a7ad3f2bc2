//! The WebSocket wire-ops adapter (`/v1/ws`): one session per connection,
//! HELLO on connect, then requests answered in order, each with its id.

mod a11y;
mod clipboard;
mod convert;
mod errors;
mod image_reply;
mod ops;
mod socket;
mod takeover;
mod watch;
mod windows_apps;

use std::sync::Arc;

use axum::Extension;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use deskhand_engine::encode::EncodedImage;
use deskhand_engine::{EngineError, Session, TakeoverEvent};
use deskhand_protocol::messages::{
    AckPayload, CursorPositionResponse, DisplayInfoResponse, HelloAckPayload, HelloPayload,
    InputActionPayload, MonitorInfo, ScreenshotMeta, ScreenshotRequest, ScreenshotResponse,
    ServerInfo,
};
use deskhand_protocol::{
    Envelope, ErrorCode, ErrorPayload, Feature, MessageType, PROTOCOL_VERSION,
};
use serde::Serialize;
use serde_json::Value;
use tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode;
use tokio_tungstenite::tungstenite::{self, Message, protocol::WebSocketConfig};

use self::socket::{UpgradeRequest, WireSocket};

use crate::AppState;
use crate::mcp::TokenIndex;

/// Upgrades an authenticated request to a wire-ops connection. One opened
/// with the person's token closes when that token is replaced.
pub(crate) async fn upgrade(
    State(state): State<Arc<AppState>>,
    Extension(token): Extension<TokenIndex>,
    ws: UpgradeRequest,
) -> Response {
    let Ok(permit) = state.connections.clone().try_acquire_owned() else {
        return (StatusCode::SERVICE_UNAVAILABLE, "too many connections\n").into_response();
    };
    let max = state.config.max_message_bytes;
    let config = WebSocketConfig::default()
        .max_message_size(Some(max))
        .max_frame_size(Some(max));
    let replaced = (token.0 == 0).then(|| state.config.token.replaced());
    ws.on_upgrade(config, move |socket| async move {
        Connection::new(state, socket, replaced).run().await;
        drop(permit);
    })
}

/// Outcome of one request: a reply, or nothing (HELLO_ACK).
enum Reply {
    Message(MessageType, Value),
    /// A screenshot: its payload fields and the encoded image.
    Screenshot(Value, EncodedImage),
    None,
}

/// A connection: the socket and the handler that answers its messages.
struct Connection {
    socket: WireSocket,
    handler: Handler,
    /// The last TAKEOVER_STATE sent, so that a change the client asked for
    /// is answered once, not answered and pushed.
    last_takeover: Option<Value>,
    /// Messages that arrived while a request was answered.
    read_ahead: watch::ReadAhead,
    /// Tells when the token this connection showed is replaced.
    token_replaced: Option<TokenWatch>,
}

/// Per-session state of the wire adapter (kept apart from the socket so
/// that handlers can be awaited while the socket is borrowed).
struct Handler {
    state: Arc<AppState>,
    session: Session,
    acked: bool,
    /// The client's `HELLO_ACK.max_file_size_bytes` (bounds the clipboard).
    max_file_bytes: u64,
    /// The fine features this connection's HELLO lists: what its requests
    /// are checked against, so that an op the HELLO did not list is
    /// refused even when it became available since.
    offered: Vec<Feature>,
}

fn ts() -> f64 {
    deskhand_engine::audit::now_ts()
}

fn to_value<T: Serialize>(v: &T) -> Value {
    serde_json::to_value(v).unwrap_or(Value::Null)
}

impl Connection {
    fn new(state: Arc<AppState>, socket: WireSocket, token_replaced: Option<TokenWatch>) -> Self {
        let session = state.engine.open_session("wire");
        let offered = state.engine.offered_features();
        Self {
            socket,
            last_takeover: None,
            read_ahead: watch::ReadAhead::default(),
            token_replaced,
            handler: Handler {
                state,
                session,
                acked: false,
                max_file_bytes: deskhand_engine::clipboard::DEFAULT_MAX_BYTES,
                offered,
            },
        }
    }

    async fn run(mut self) {
        let h = &self.handler;
        tracing::info!(session = %h.session.id, "wire session opened");
        let hello = h.hello().await;
        if self.send(MessageType::Hello, None, hello).await.is_ok() {
            let ending = self.serve_messages().await;
            if let Some((code, reason)) = ending.close_frame() {
                self.socket.close(code, reason).await;
            }
        }
        let h = &self.handler;
        h.state.engine.close_session(&h.session).await;
        tracing::info!(session = %h.session.id, "wire session closed");
    }

    async fn send(
        &mut self,
        kind: MessageType,
        id: Option<String>,
        payload: Value,
    ) -> Result<(), tungstenite::Error> {
        let envelope = Envelope::new(kind, id, ts(), payload);
        let text = serde_json::to_string(&envelope).unwrap_or_default();
        let idle = self.handler.state.config.idle_timeout;
        unless_idle(idle, self.socket.send_text(text)).await
    }
}

/// A send that gives up when the client stops reading for `idle` (the
/// connection is then dropped and its held input released), never waited
/// on for longer.
async fn unless_idle(
    idle: std::time::Duration,
    send: impl std::future::Future<Output = Result<(), tungstenite::Error>>,
) -> Result<(), tungstenite::Error> {
    match tokio::time::timeout(idle, send).await {
        Ok(sent) => sent,
        Err(_) => Err(tungstenite::Error::Io(std::io::Error::new(
            std::io::ErrorKind::TimedOut,
            "the client stopped reading",
        ))),
    }
}

impl Connection {
    /// Pushes this session's takeover changes as TAKEOVER_STATE (no id).
    async fn push_takeover(
        &mut self,
        event: Result<TakeoverEvent, tokio::sync::broadcast::error::RecvError>,
    ) -> Result<(), tungstenite::Error> {
        let state = match event {
            Ok(TakeoverEvent::State { session, state }) if session == self.handler.session.id => {
                state
            }
            // Missed some: send where things stand now.
            Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => self
                .handler
                .state
                .engine
                .takeover_state(&self.handler.session),
            _ => return Ok(()),
        };
        let payload = takeover::state_payload(&state);
        if self.last_takeover.as_ref() == Some(&payload) {
            return Ok(());
        }
        self.last_takeover = Some(payload.clone());
        self.send(MessageType::TakeoverState, None, payload).await
    }
}

impl Handler {
    async fn hello(&self) -> Value {
        let engine = &self.state.engine;
        let features = engine.features();
        let resolution = engine.primary_size().await.unwrap_or([0, 0]);
        let mut capabilities = Vec::new();
        if !features.coarse.is_empty() {
            capabilities.push("computer_use".to_owned());
        }
        // Takeover with hand-back (an indicator and an input watcher, on
        // X11 XInput 2.1): without it no synthetic input is granted.
        if engine.takeover_available() {
            capabilities.push("takeover_handback".to_owned());
        }
        let hello = HelloPayload {
            protocol_version: PROTOCOL_VERSION,
            session_id: self.session.id.clone(),
            server: ServerInfo {
                name: "deskhand".into(),
                version: env!("CARGO_PKG_VERSION").into(),
            },
            capabilities,
            computer_use_features: self.offered.clone(),
            computer_use_features_coarse: features.coarse.clone(),
            screen_resolution: resolution,
            max_message_bytes: self.state.config.max_message_bytes,
        };
        to_value(&hello)
    }
}

/// Why a connection's message loop ended.
enum Ending {
    /// The client closed, the socket failed, or a send did not go out.
    Gone,
    /// No request for the idle timeout.
    Idle,
    /// A message or frame over the size limit.
    TooBig,
    /// The person's token, which this connection showed, was replaced.
    TokenReplaced,
    /// A text frame that is not UTF-8.
    NotUtf8,
}

/// Follows the person's token.
type TokenWatch = tokio::sync::watch::Receiver<crate::Token>;

/// Resolves when the token `replaced` follows changes; never without one
/// (a client's own token is not replaced) or once its sender is gone.
async fn token_replaced(replaced: &mut Option<TokenWatch>) {
    if let Some(r) = replaced
        && r.changed().await.is_ok()
    {
        return;
    }
    std::future::pending().await
}

impl Ending {
    /// The close frame the server sends, when it is the one ending.
    fn close_frame(&self) -> Option<(CloseCode, &'static str)> {
        match self {
            Self::Gone => None,
            Self::Idle => Some((CloseCode::Away, "idle")),
            Self::TooBig => Some((CloseCode::Size, "message too big")),
            Self::TokenReplaced => Some((CloseCode::Policy, "the token was replaced")),
            Self::NotUtf8 => Some((CloseCode::Invalid, "a text frame that is not UTF-8")),
        }
    }
}

impl Connection {
    /// Answers requests until the connection ends. Only a request (a text
    /// or binary message) counts against the idle timeout: pings and
    /// pongs do not keep a connection open.
    async fn serve_messages(&mut self) -> Ending {
        let idle = self.handler.state.config.idle_timeout;
        let mut idle_at = tokio::time::Instant::now() + idle;
        let mut takeover = self.handler.state.engine.takeover_events();
        let mut takeover_open = true;
        let mut replaced = self.token_replaced.take();
        loop {
            let next = if let Some(message) = self.read_ahead.pop() {
                Ok(Some(Ok(message)))
            } else {
                tokio::select! {
                next = tokio::time::timeout_at(idle_at, self.socket.recv()) => next,
                _ = token_replaced(&mut replaced) => {
                    tracing::warn!(session = %self.handler.session.id, "closing a connection whose token was replaced");
                    return Ending::TokenReplaced;
                }
                event = takeover.recv(), if takeover_open => {
                    if matches!(event, Err(tokio::sync::broadcast::error::RecvError::Closed)) {
                        takeover_open = false;
                        continue;
                    }
                    if self.push_takeover(event).await.is_err() {
                        return Ending::Gone;
                    }
                    continue;
                }
                }
            };
            let next = match next {
                Ok(next) => next,
                Err(_) => {
                    tracing::info!(session = %self.handler.session.id, "closing an idle connection");
                    return Ending::Idle;
                }
            };
            if matches!(next, Some(Ok(Message::Text(_) | Message::Binary(_)))) {
                idle_at = tokio::time::Instant::now() + idle;
            }
            let text = match next {
                Some(Ok(Message::Text(t))) => t,
                Some(Ok(Message::Binary(_))) => {
                    let err = ErrorPayload::new(
                        ErrorCode::InvalidMessage,
                        "binary frames are not accepted; send JSON text",
                        Value::Null,
                    );
                    if self
                        .send(MessageType::Error, None, to_value(&err))
                        .await
                        .is_err()
                    {
                        return Ending::Gone;
                    }
                    continue;
                }
                Some(Ok(Message::Close(_))) | None => return Ending::Gone,
                Some(Ok(_)) => continue,
                Some(Err(tungstenite::Error::Capacity(e))) => {
                    tracing::info!(session = %self.handler.session.id, error = %e, "closing a connection that sent too much");
                    return Ending::TooBig;
                }
                Some(Err(tungstenite::Error::Utf8(e))) => {
                    tracing::info!(session = %self.handler.session.id, error = %e, "closing a connection that sent a text frame that is not UTF-8");
                    return Ending::NotUtf8;
                }
                Some(Err(e)) => {
                    tracing::info!(session = %self.handler.session.id, error = %e, "connection failed");
                    return Ending::Gone;
                }
            };
            let Some((id, reply)) = self.handle_watching(text.as_str()).await else {
                return Ending::Gone;
            };
            // A takeover of this connection ends with it, when it idles.
            let left = idle_at.saturating_duration_since(tokio::time::Instant::now());
            self.handler.state.engine.set_takeover_until(
                &self.handler.session,
                Some(std::time::SystemTime::now() + left),
            );
            let sent = match reply {
                Reply::Message(kind, payload) => {
                    if kind == MessageType::TakeoverState {
                        self.last_takeover = Some(payload.clone());
                    }
                    self.send(kind, id, payload).await
                }
                Reply::Screenshot(fields, image) => {
                    let started = std::time::Instant::now();
                    let text =
                        image_reply::screenshot_envelope(id.as_deref(), ts(), &image, &fields);
                    let built = started.elapsed();
                    let idle = self.handler.state.config.idle_timeout;
                    let sent = unless_idle(idle, self.socket.send_text_parts(&text.pieces())).await;
                    tracing::debug!(
                        build_ms = built.as_secs_f64() * 1000.0,
                        send_ms = (started.elapsed() - built).as_secs_f64() * 1000.0,
                        "screenshot reply sent"
                    );
                    sent
                }
                Reply::None => Ok(()),
            };
            if sent.is_err() {
                return Ending::Gone;
            }
        }
    }
}

impl Handler {
    fn protocol_error(&self, op: &str, code: ErrorCode, message: impl Into<String>) -> Reply {
        self.state
            .engine
            .record_adapter_op(&self.session, op, code.canonical());
        let err = ErrorPayload::new(code, message, Value::Null);
        Reply::Message(MessageType::Error, to_value(&err))
    }

    fn engine_error(&self, e: &EngineError) -> Reply {
        let err = ErrorPayload::new(e.code(), e.to_string(), errors::details(e));
        Reply::Message(MessageType::Error, to_value(&err))
    }

    /// Parses one message and answers it. The id is recovered whenever the
    /// message is a JSON object with a string id, however wrong the rest.
    async fn handle(&mut self, text: &str) -> (Option<String>, Reply) {
        let value: Value = match serde_json::from_str(text) {
            Ok(v) => v,
            Err(e) => {
                return (
                    id_despite_surrogates(text),
                    self.protocol_error(
                        "invalid",
                        ErrorCode::InvalidMessage,
                        format!("not JSON: {e}"),
                    ),
                );
            }
        };
        let id = value.get("id").and_then(Value::as_str).map(str::to_owned);
        let envelope: Envelope = match serde_json::from_value(value) {
            Ok(e) => e,
            Err(e) => {
                return (
                    id,
                    self.protocol_error(
                        "invalid",
                        ErrorCode::InvalidMessage,
                        format!("not an envelope: {e}"),
                    ),
                );
            }
        };
        let Some(kind) = MessageType::from_wire_name(&envelope.kind) else {
            let msg = format!(
                "unknown message type {}",
                deskhand_protocol::echo(&envelope.kind)
            );
            return (
                id,
                self.protocol_error("unknown", ErrorCode::UnknownMessageType, msg),
            );
        };
        if kind == MessageType::HelloAck {
            let ack: HelloAckPayload = match self.payload("hello_ack", envelope.payload) {
                Ok(a) => a,
                Err(reply) => return (id, reply),
            };
            if let Some(max) = ack.max_file_size_bytes {
                self.max_file_bytes = max;
            }
            if let Some(client) = &ack.client {
                self.state.engine.set_client_name(&self.session, client);
            }
            self.acked = true;
            self.state
                .engine
                .record_adapter_op(&self.session, "hello_ack", "ok");
            return (id, Reply::None);
        }
        let Some(op) = ops::find(kind) else {
            let name = kind.wire_name().to_ascii_lowercase();
            let msg = format!("{} is not a request", kind.wire_name());
            return (
                id,
                self.protocol_error(&name, ErrorCode::UnknownMessageType, msg),
            );
        };
        if !self.acked {
            let name = kind.wire_name().to_ascii_lowercase();
            let msg = "answer HELLO with HELLO_ACK first";
            return (
                id,
                self.protocol_error(&name, ErrorCode::HandshakeRequired, msg),
            );
        }
        let reply = (op.run)(self, op, envelope.payload).await;
        (id, reply)
    }

    fn payload<T: serde::de::DeserializeOwned + Default>(
        &self,
        op: &str,
        payload: Value,
    ) -> Result<T, Reply> {
        if payload.is_null() {
            return Ok(T::default());
        }
        serde_json::from_value(payload).map_err(|e| {
            let err = EngineError::invalid("payload", e.to_string());
            self.state.engine.record_refused(&self.session, op, &err);
            self.engine_error(&err)
        })
    }

    async fn screenshot(&self, req: ScreenshotRequest) -> Reply {
        let engine = &self.state.engine;
        let spec = match convert::screenshot(&req, &engine.features()) {
            Ok(s) => s,
            Err(e) => {
                engine.record_refused(&self.session, "screenshot", &e);
                return self.engine_error(&e);
            }
        };
        match engine.screenshot(&self.session, spec).await {
            Ok(shot) => {
                let r = shot.rect;
                let m = &shot.monitor;
                let resp = ScreenshotResponse {
                    image_base64: String::new(),
                    mime_type: shot.format.mime_type().into(),
                    width: r.width,
                    height: r.height,
                    monitor: m.index,
                    region: Some(r.corners()),
                    display_scale: m.scale,
                    logical_size: m.logical_size(),
                    meta: ScreenshotMeta {
                        origin: [r.x, r.y],
                        display_id: m.index,
                    },
                };
                Reply::Screenshot(to_value(&resp), shot.bytes)
            }
            Err(e) => self.engine_error(&e),
        }
    }

    async fn input(&self, req: InputActionPayload) -> Reply {
        let engine = &self.state.engine;
        let op = format!(
            "input.{}",
            req.action.as_deref().map(truncate).unwrap_or("?")
        );
        let action = match convert::input(&req, &engine.features()) {
            Ok(a) => a,
            Err(e) => {
                engine.record_refused(&self.session, &op, &e);
                return self.engine_error(&e);
            }
        };
        match engine.act(&self.session, &op, action).await {
            Ok(()) => Reply::Message(MessageType::Ack, to_value(&AckPayload { ok: true })),
            Err(e) => self.engine_error(&e),
        }
    }

    async fn cursor(&self, _: Value) -> Reply {
        match self.state.engine.cursor(&self.session).await {
            Ok((p, monitor)) => Reply::Message(
                MessageType::CursorPositionResponse,
                to_value(&CursorPositionResponse {
                    x: p.x,
                    y: p.y,
                    monitor,
                }),
            ),
            Err(e) => self.engine_error(&e),
        }
    }

    async fn display_info(&self, _: Value) -> Reply {
        match self.state.engine.layout(&self.session).await {
            Ok(layout) => {
                let monitors = layout
                    .monitors
                    .iter()
                    .map(|m| MonitorInfo {
                        index: m.index,
                        name: m.name.clone(),
                        primary: m.primary,
                        physical_size: [m.rect.width, m.rect.height],
                        logical_size: m.logical_size(),
                        scale: m.scale,
                        origin: [m.rect.x, m.rect.y],
                    })
                    .collect();
                Reply::Message(
                    MessageType::DisplayInfoResponse,
                    to_value(&DisplayInfoResponse { monitors }),
                )
            }
            Err(e) => self.engine_error(&e),
        }
    }
}

/// Caps a client-chosen action name before it reaches the audit log.
fn truncate(s: &str) -> &str {
    match s.char_indices().nth(deskhand_protocol::errors::ECHOED) {
        Some((i, _)) => &s[..i],
        None => s,
    }
}

/// The id of a message that is JSON but for a lone surrogate escape
/// (`"\ud800"`, which serde_json refuses): read again with every surrogate
/// escape made U+FFFD, only to answer under the request's id.
fn id_despite_surrogates(text: &str) -> Option<String> {
    let mut mended = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find("\\u") {
        let (before, escape) = rest.split_at(at);
        mended.push_str(before);
        let hex = escape
            .get(2..6)
            .filter(|h| h.chars().all(|c| c.is_ascii_hexdigit()));
        match hex.and_then(|h| u16::from_str_radix(h, 16).ok()) {
            Some(0xd800..=0xdfff) => {
                mended.push_str("\\ufffd");
                rest = &escape[6..];
            }
            _ => {
                mended.push_str("\\u");
                rest = &escape[2..];
            }
        }
    }
    mended.push_str(rest);
    let value: Value = serde_json::from_str(&mended).ok()?;
    value.get("id").and_then(Value::as_str).map(str::to_owned)
}

#[cfg(test)]
mod tests {
    use super::id_despite_surrogates;

    #[test]
    fn a_lone_surrogate_still_answers_under_the_requests_id() {
        let text = r#"{"id":"r-1","type":"INPUT_ACTION","payload":{"text":"\ud800"}}"#;
        assert!(serde_json::from_str::<serde_json::Value>(text).is_err());
        assert_eq!(id_despite_surrogates(text).as_deref(), Some("r-1"));
        assert_eq!(
            id_despite_surrogates(r#"{"id":"\udc00x"}"#).as_deref(),
            Some("\u{fffd}x")
        );
        assert_eq!(id_despite_surrogates("{not json"), None);
    }
}
