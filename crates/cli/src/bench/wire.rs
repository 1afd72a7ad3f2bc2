//! What every platform's benchmark shares: the wire-ops client an agent
//! would be, the statistics, the rows and the table they print as.

use std::net::TcpStream;
use std::time::{Duration, Instant};

use std::sync::Arc;

use anyhow::{Context, bail};
use deskhand_engine::{AuditLog, Consent, Engine};
use deskhand_platform::Backend;
use deskhand_server::{ServerConfig, Token};
use serde_json::{Value, json};
use tungstenite::Message;
use tungstenite::client::IntoClientRequest;

/// The daemon side of a benchmark: an engine over a backend (sandbox
/// consent, no audit log) serving the wire ops on a loopback port, as
/// `deskhand serve` would, with a fresh token.
pub(crate) struct Served {
    pub(crate) engine: Arc<Engine>,
    pub(crate) url: String,
    pub(crate) token: String,
    stop: tokio::sync::oneshot::Sender<()>,
    server: tokio::task::JoinHandle<Result<(), deskhand_server::ServerError>>,
}

impl Served {
    /// Serves `backend` (of the desktop named `desktop`) on `daemon`'s
    /// runtime, its listener registered with that runtime's reactor.
    pub(crate) fn start(
        daemon: &tokio::runtime::Handle,
        backend: Backend,
        desktop: &str,
    ) -> anyhow::Result<Self> {
        let mut secret = [0u8; 32];
        getrandom::fill(&mut secret).map_err(|e| anyhow::anyhow!("{e}"))?;
        let token: String = secret.iter().map(|b| format!("{b:02x}")).collect();
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let _daemon = daemon.enter();
        let engine = Arc::new(Engine::new(
            backend,
            Consent::sandbox(),
            AuditLog::disabled(),
        ));
        let listener = std::net::TcpListener::bind("127.0.0.1:0")?;
        listener.set_nonblocking(true)?;
        let listener = tokio::net::TcpListener::from_std(listener)?;
        let url = format!("ws://{}/v1/ws", listener.local_addr()?);
        let server = daemon.spawn(deskhand_server::serve(
            listener,
            engine.clone(),
            ServerConfig::new(Token::new(token.clone())),
            deskhand_host::doctor::health_source(desktop),
            async {
                let _ = stopped.await;
            },
        ));
        Ok(Self {
            engine,
            url,
            token,
            stop,
            server,
        })
    }

    /// Stops the server and shuts the engine down (releasing whatever it
    /// holds).
    pub(crate) async fn stop(self) -> anyhow::Result<()> {
        let _ = self.stop.send(());
        let _ = self.server.await;
        let engine = self.engine;
        tokio::task::spawn_blocking(move || engine.shutdown()).await?;
        Ok(())
    }
}

/// Longest any step may take before the benchmark gives up.
pub(crate) const LIMIT: Duration = Duration::from_secs(5);

/// Median and p95 of a set of samples, in milliseconds.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Stats {
    pub(crate) median: f64,
    pub(crate) p95: f64,
}

pub(crate) fn stats(mut ms: Vec<f64>) -> Stats {
    ms.sort_by(f64::total_cmp);
    let at = |q: f64| ms[((ms.len() as f64 - 1.0) * q).round() as usize];
    Stats {
        median: at(0.5),
        p95: at(0.95),
    }
}

pub(crate) struct Row {
    pub(crate) what: String,
    pub(crate) ours: Stats,
    pub(crate) peer_name: String,
    pub(crate) peer: Option<Stats>,
}

/// A WebSocket client speaking the wire ops, as an agent would, and as
/// lean as one can be: a blocking socket, read by the thread that waits for
/// the reply (as `xdotool`, the reference, is a plain blocking process), so
/// that what is timed is deskhand's part and not a client runtime's.
pub(crate) struct Client {
    ws: tungstenite::WebSocket<TcpStream>,
    next: u64,
}

impl Client {
    pub(crate) fn connect(url: &str, token: &str) -> anyhow::Result<Self> {
        let mut req = url.into_client_request()?;
        req.headers_mut()
            .insert("Authorization", format!("Bearer {token}").parse()?);
        let host = req.uri().host().context("no host in the URL")?;
        let port = req.uri().port_u16().context("no port in the URL")?;
        let stream = TcpStream::connect((host, port))?;
        stream.set_nodelay(true)?;
        // No wait for deskhand may hang the benchmark.
        stream.set_read_timeout(Some(LIMIT))?;
        // Screenshots of large desktops exceed tungstenite's default 16 MiB.
        let config = tungstenite::protocol::WebSocketConfig::default()
            .max_message_size(None)
            .max_frame_size(None);
        let (ws, _) = tungstenite::client::client_with_config(req, stream, Some(config))
            .map_err(|e| anyhow::anyhow!("WebSocket handshake: {e}"))?;
        let mut c = Self { ws, next: 0 };
        c.recv()?;
        c.send(json!({"type": "HELLO_ACK", "id": "ack", "ts": 0, "payload": {}}))?;
        // Input needs a takeover, as for any agent (the indicator shows).
        c.send(
            json!({"type": "TAKEOVER_REQUEST", "id": "takeover", "ts": 0, "payload": {"on": true}}),
        )?;
        let state = c.recv()?;
        if state["payload"]["on"] != true {
            bail!("no takeover (is deskhand-overlay built next to deskhand?): {state}");
        }
        Ok(c)
    }

    pub(crate) fn send(&mut self, msg: Value) -> anyhow::Result<()> {
        Ok(self.ws.send(Message::Text(msg.to_string().into()))?)
    }

    /// Waits until the person's input has paused the takeover, resumes it
    /// as the host would, and waits until that is pushed too.
    #[cfg(target_os = "linux")]
    pub(crate) async fn resume_after_pause(
        &mut self,
        engine: &deskhand_engine::Engine,
    ) -> anyhow::Result<()> {
        let deadline = Instant::now() + LIMIT;
        let mut wait_for = |paused: bool| loop {
            if Instant::now() > deadline {
                bail!("the takeover did not pause and resume");
            }
            if self.push()?["paused"] == paused {
                return anyhow::Ok(());
            }
        };
        wait_for(true)?;
        engine.resume_takeover(None).await;
        wait_for(false)
    }

    /// The next TAKEOVER_STATE deskhand pushed.
    #[cfg(target_os = "linux")]
    pub(crate) fn push(&mut self) -> anyhow::Result<Value> {
        loop {
            let v = self.recv()?;
            if v["type"] == "TAKEOVER_STATE" && v.get("id").is_none() {
                return Ok(v["payload"].clone());
            }
        }
    }

    pub(crate) fn recv(&mut self) -> anyhow::Result<Value> {
        loop {
            if let Message::Text(t) = self.ws.read()? {
                return Ok(serde_json::from_str(t.as_str())?);
            }
        }
    }

    /// One request; its reply (an error reply is an error). The session's
    /// bench reads the window list and the displays with it.
    pub(crate) fn reply(&mut self, kind: &str, payload: Value) -> anyhow::Result<Value> {
        self.next += 1;
        let id = self.next.to_string();
        self.send(json!({"type": kind, "id": id, "ts": 0, "payload": payload}))?;
        loop {
            let v = self.recv()?;
            if v["id"] != id.as_str() {
                continue;
            }
            if v["type"] == "ERROR" {
                bail!("{kind} failed: {}", v["payload"]);
            }
            return Ok(v);
        }
    }

    /// One request; returns the time until the whole reply had arrived
    /// (parsing it is the client's business and not counted) and checks
    /// that the reply is not an error.
    pub(crate) fn request(&mut self, kind: &str, payload: Value) -> anyhow::Result<Duration> {
        self.next += 1;
        let msg = json!({"type": kind, "id": self.next.to_string(), "ts": 0, "payload": payload});
        let msg = Message::Text(msg.to_string().into());
        let started = Instant::now();
        self.ws.send(msg)?;
        let text = loop {
            match self.ws.read()? {
                // A pushed TAKEOVER_STATE is not the reply.
                Message::Text(t) if is_push(t.as_str()) => continue,
                Message::Text(t) => break t,
                _ => continue,
            }
        };
        let elapsed = started.elapsed();
        let reply: Value = serde_json::from_str(text.as_str())?;
        if reply["type"] == "ERROR" {
            bail!("{kind} failed: {}", reply["payload"]);
        }
        Ok(elapsed)
    }
}

/// Whether a text frame is a pushed TAKEOVER_STATE (small, no id), told
/// apart without parsing multi-megabyte screenshot replies.
fn is_push(text: &str) -> bool {
    text.len() < 4096 && text.contains("\"TAKEOVER_STATE\"") && !text.contains("\"id\"")
}

pub(crate) fn time_ours(
    c: &mut Client,
    n: usize,
    kind: &str,
    payload: impl Fn(usize) -> Value,
) -> anyhow::Result<Stats> {
    // Warm up (SHM segment, caches).
    c.request(kind, payload(0))?;
    let mut ms = Vec::with_capacity(n);
    for i in 0..n {
        let took = c.request(kind, payload(i + 1))?;
        ms.push(took.as_secs_f64() * 1000.0);
    }
    Ok(stats(ms))
}

pub(crate) fn print_table(rows: &[Row]) {
    println!(
        "| operation | deskhand median / p95 (ms) | reference | reference median / p95 (ms) | speed-up (median) |"
    );
    println!("|---|---|---|---|---|");
    for r in rows {
        let (peer, ratio) = match r.peer {
            Some(p) => (
                format!("{:.2} / {:.2}", p.median, p.p95),
                format!("{:.1}×", p.median / r.ours.median),
            ),
            None => ("n/a".into(), "n/a".into()),
        };
        println!(
            "| {} | {:.2} / {:.2} | {} | {} | {} |",
            r.what, r.ours.median, r.ours.p95, r.peer_name, peer, ratio
        );
    }
}
