//! Helpers of the contract tests: a server over the mock desktop on a free
//! loopback port, and a wire-ops client.

#![allow(dead_code, missing_docs)]

use std::sync::Arc;
use std::time::Duration;

use deskhand_backend_mock::MockDesktop;
use deskhand_engine::{AuditLog, Backend, Consent, Engine};
use deskhand_server::{ServerConfig, Token};
use futures_util::{SinkExt, StreamExt};
use serde_json::{Value, json};
use tokio::net::TcpStream;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::{MaybeTlsStream, WebSocketStream};

pub const TOKEN: &str = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";

pub struct Server {
    pub port: u16,
    pub desktop: MockDesktop,
    pub engine: Arc<Engine>,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
}

impl Server {
    pub async fn start(desktop: MockDesktop, backend: Backend, consent: Consent) -> Self {
        Self::start_with_audit(desktop, backend, consent, AuditLog::disabled()).await
    }

    pub async fn start_with_audit(
        desktop: MockDesktop,
        backend: Backend,
        consent: Consent,
        audit: AuditLog,
    ) -> Self {
        Self::start_full(desktop, backend, consent, audit, |_| {}).await
    }

    /// A server whose config `tune` changed.
    pub async fn start_tuned(
        desktop: MockDesktop,
        backend: Backend,
        consent: Consent,
        tune: impl FnOnce(&mut ServerConfig),
    ) -> Self {
        Self::start_full(desktop, backend, consent, AuditLog::disabled(), tune).await
    }

    async fn start_full(
        desktop: MockDesktop,
        backend: Backend,
        consent: Consent,
        audit: AuditLog,
        tune: impl FnOnce(&mut ServerConfig),
    ) -> Self {
        let engine = Arc::new(Engine::new(backend, consent, audit));
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind");
        let port = listener.local_addr().expect("addr").port();
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let mut config = ServerConfig::new(Token::new(TOKEN.into()));
        tune(&mut config);
        tokio::spawn(deskhand_server::serve(
            listener,
            engine.clone(),
            config,
            mock_health(),
            async {
                let _ = stopped.await;
            },
        ));
        Self {
            port,
            desktop,
            engine,
            stop: Some(stop),
        }
    }

    /// A sandbox-consented server over a 1920×1080 mock.
    pub async fn sandbox() -> Self {
        let desktop = MockDesktop::new();
        let backend = desktop.backend();
        Self::start(desktop, backend, Consent::sandbox()).await
    }

    pub fn url(&self) -> String {
        format!("ws://127.0.0.1:{}/v1/ws", self.port)
    }

    pub async fn client(&self) -> Client {
        let mut req = self.url().into_client_request().expect("request");
        req.headers_mut().insert(
            "Authorization",
            format!("Bearer {TOKEN}").parse().expect("header"),
        );
        let (ws, _) = tokio_tungstenite::connect_async(req)
            .await
            .expect("connect");
        let mut c = Client {
            ws,
            next: 0,
            hello: Value::Null,
            pushes: Vec::new(),
        };
        let hello = c.recv().await;
        assert_eq!(hello["type"], "HELLO");
        c.hello = hello;
        c
    }

    /// Connects and completes the handshake, without a takeover.
    pub async fn handshaken_client(&self) -> Client {
        let mut c = self.client().await;
        c.send_raw(json!({"type": "HELLO_ACK", "id": "ack", "ts": 0, "payload": {}}).to_string())
            .await;
        c
    }

    /// Connects, completes the handshake and asks for a takeover, as an
    /// agent that means to drive does (refusals are left for the test to
    /// see in its own requests).
    pub async fn ready_client(&self) -> Client {
        let mut c = self.handshaken_client().await;
        c.request("TAKEOVER_REQUEST", json!({"on": true})).await;
        c
    }

    /// Polls the mock until `check` holds (sessions close asynchronously).
    pub async fn eventually(&self, what: &str, check: impl Fn(&MockDesktop) -> bool) {
        for _ in 0..200 {
            if check(&self.desktop) {
                return;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        panic!("timed out waiting for: {what}");
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        if let Some(s) = self.stop.take() {
            let _ = s.send(());
        }
    }
}

pub struct Client {
    pub ws: WebSocketStream<MaybeTlsStream<TcpStream>>,
    pub next: u32,
    pub hello: Value,
    /// TAKEOVER_STATE pushed while waiting for replies.
    pub pushes: Vec<Value>,
}

impl Client {
    pub async fn send_raw(&mut self, text: String) {
        self.ws
            .send(Message::Text(text.into()))
            .await
            .expect("send");
    }

    pub async fn recv(&mut self) -> Value {
        loop {
            let msg = tokio::time::timeout(Duration::from_secs(10), self.ws.next())
                .await
                .expect("reply within 10 s")
                .expect("connection open")
                .expect("frame");
            if let Message::Text(t) = msg {
                return serde_json::from_str(t.as_str()).expect("JSON reply");
            }
        }
    }

    /// Sends a request and returns the reply, checking the id echo.
    pub async fn request(&mut self, kind: &str, payload: Value) -> Value {
        self.next += 1;
        let id = format!("req-{}", self.next);
        self.send_raw(json!({"type": kind, "id": id, "ts": 1.0, "payload": payload}).to_string())
            .await;
        let reply = loop {
            let msg = self.recv().await;
            if msg["type"] == "TAKEOVER_STATE" && msg.get("id").is_none() {
                self.pushes.push(msg);
                continue;
            }
            break msg;
        };
        assert_eq!(reply["id"], id.as_str(), "reply id of {kind}: {reply}");
        reply
    }

    /// The next TAKEOVER_STATE pushed (one already received first).
    pub async fn next_push(&mut self) -> Value {
        if !self.pushes.is_empty() {
            return self.pushes.remove(0);
        }
        loop {
            let msg = self.recv().await;
            if msg["type"] == "TAKEOVER_STATE" && msg.get("id").is_none() {
                return msg;
            }
        }
    }

    pub async fn act(&mut self, payload: Value) -> Value {
        self.request("INPUT_ACTION", payload).await
    }
}

/// The error code of a reply, or "" when it is not an ERROR.
pub fn error_code(reply: &Value) -> &str {
    if reply["type"] == "ERROR" {
        reply["payload"]["code"].as_str().unwrap_or("")
    } else {
        ""
    }
}

/// Decodes a base64 PNG into (width, height, RGB bytes).
pub fn decode_png(b64: &str) -> (u32, u32, Vec<u8>) {
    use base64::Engine as _;
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(b64)
        .expect("base64");
    let decoder = png::Decoder::new(std::io::Cursor::new(bytes));
    let mut reader = decoder.read_info().expect("png header");
    let mut buf = vec![0; reader.output_buffer_size().expect("size")];
    let info = reader.next_frame(&mut buf).expect("png frame");
    buf.truncate(info.buffer_size());
    (info.width, info.height, buf)
}

/// The health report of the mock desktop: one available backend.
pub fn mock_health() -> deskhand_server::mcp::HealthSource {
    use deskhand_protocol::doctor::*;
    Arc::new(|| {
        DoctorReport::assemble(
            Findings {
                platform: Platform::Linux,
                session_type: SessionType::Mock,
                backends: vec![BackendEntry::new("mock", true, Verdict::AVAILABLE)],
                capabilities: Vec::new(),
                permissions: Vec::new(),
                probes: Vec::new(),
            },
            "test",
        )
    })
}
