//! `deskhand mcp` beside a running daemon: the client's stdio is relayed
//! to that daemon's `/mcp`, so one desktop has one engine, one queue and
//! one indicator. Each JSON-RPC line is POSTed with the daemon's token;
//! the answer (JSON, or an SSE stream carrying progress notifications
//! before the result) goes back as lines. `Mcp-Session-Id` and the
//! negotiated `MCP-Protocol-Version` are kept between requests. When the
//! person replaces the token (the tray app's Settings), a 401 makes the
//! relay read the new one from the connection file and send again.

use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use anyhow::Context;
use http_body_util::{BodyExt, Full};
use hyper::body::Bytes;
use hyper_util::rt::TokioIo;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt};
use tokio::sync::mpsc;

/// Where the daemon listens, from its connection file.
#[derive(Debug, Clone)]
pub struct Daemon {
    /// `host:port`.
    pub authority: String,
    /// The bearer token, renewed from the connection file.
    pub token: Arc<Mutex<String>>,
    /// Its pid, for the log.
    pub pid: u32,
    /// The connection file it was found in.
    pub connection_file: PathBuf,
}

impl Daemon {
    fn token(&self) -> String {
        self.token.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// Takes the connection file's token when it is another one for the
    /// same port (the person replaced it); whether it did.
    fn renew_token(&self) -> bool {
        let Some(fresh) = deskhand_host::endpoint::read(&self.connection_file)
            .filter(|e| e.authority == self.authority)
            .map(|e| e.token)
        else {
            return false;
        };
        let mut token = self.token.lock().unwrap_or_else(|e| e.into_inner());
        if *token == fresh {
            return false;
        }
        tracing::info!("the daemon's token was replaced: relaying with the new one");
        *token = fresh;
        true
    }
}

/// The protocol state a relay keeps between requests.
#[derive(Default)]
struct State {
    session: Option<String>,
    version: Option<String>,
}

const META_VERSION: &str = "io.modelcontextprotocol/protocolVersion";

/// Relays stdin to the daemon until stdin closes; then ends the HTTP
/// session, if one was made.
pub async fn run(daemon: Daemon) -> anyhow::Result<()> {
    let state = Arc::new(Mutex::new(State::default()));
    let (out_tx, mut out_rx) = mpsc::channel::<String>(64);
    let writer = tokio::spawn(async move {
        let mut stdout = tokio::io::stdout();
        while let Some(line) = out_rx.recv().await {
            if stdout.write_all(line.as_bytes()).await.is_err()
                || stdout.write_all(b"\n").await.is_err()
                || stdout.flush().await.is_err()
            {
                break;
            }
        }
    });
    let mut lines = tokio::io::BufReader::new(tokio::io::stdin()).lines();
    let mut in_flight = tokio::task::JoinSet::new();
    while let Some(line) = lines.next_line().await? {
        if line.trim().is_empty() {
            continue;
        }
        let (daemon, state, out) = (daemon.clone(), state.clone(), out_tx.clone());
        let message: Option<Value> = serde_json::from_str(&line).ok();
        // Initialize must finish before anything else uses its session.
        let is_init = message
            .as_ref()
            .is_some_and(|m| m["method"] == "initialize");
        let task = async move {
            if let Err(e) = forward(&daemon, &state, &out, line, message).await {
                tracing::warn!(error = %e, "relaying a message to the daemon failed");
            }
        };
        if is_init {
            task.await;
        } else {
            in_flight.spawn(task);
        }
    }
    while in_flight.join_next().await.is_some() {}
    let session = state
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .session
        .take();
    if let Some(id) = session {
        let _ = request(&daemon, hyper::Method::DELETE, Some(&id), None, &[], None).await;
    }
    drop(out_tx);
    let _ = writer.await;
    Ok(())
}

/// The headers 2026-07-28 wants beside the body (SEP-2243): `Mcp-Method`,
/// and `Mcp-Name` for the methods that name something. A name that is not
/// plain visible ASCII is left out (the daemon then says what is wrong).
fn routing_headers(message: &Value) -> Vec<(&'static str, String)> {
    let Some(method) = message["method"].as_str() else {
        return Vec::new();
    };
    let mut headers = vec![("mcp-method", method.to_owned())];
    let key = match method {
        "tools/call" | "prompts/get" => "name",
        "resources/read" | "resources/subscribe" | "resources/unsubscribe" => "uri",
        "tasks/get" | "tasks/update" | "tasks/cancel" => "taskId",
        _ => return headers,
    };
    if let Some(name) = message["params"][key].as_str()
        && !name.is_empty()
        && name.chars().all(|c| c.is_ascii_graphic())
    {
        headers.push(("mcp-name", name.to_owned()));
    }
    headers
}

/// A JSON-RPC error answer for `id`, when the daemon gave none.
fn rpc_error(id: &Value, message: String) -> String {
    json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32603, "message": message}}).to_string()
}

async fn forward(
    daemon: &Daemon,
    state: &Mutex<State>,
    out: &mpsc::Sender<String>,
    line: String,
    message: Option<Value>,
) -> anyhow::Result<()> {
    let (session, mut version) = {
        let s = state.lock().unwrap_or_else(|e| e.into_inner());
        (s.session.clone(), s.version.clone())
    };
    let id = message.as_ref().and_then(|m| m.get("id")).cloned();
    if let Some(v) = message
        .as_ref()
        .and_then(|m| m["params"]["_meta"][META_VERSION].as_str())
    {
        if version.as_deref() != Some(v) {
            tracing::info!(version = v, "the client speaks this MCP revision");
            state.lock().unwrap_or_else(|e| e.into_inner()).version = Some(v.to_owned());
        }
        version = Some(v.to_owned());
    }
    let routing = message.as_ref().map(routing_headers).unwrap_or_default();
    let post = |line| {
        request(
            daemon,
            hyper::Method::POST,
            session.as_deref(),
            version.as_deref(),
            &routing,
            Some(line),
        )
    };
    let mut response = post(line.clone()).await;
    if response
        .as_ref()
        .is_ok_and(|r| r.status() == hyper::StatusCode::UNAUTHORIZED)
        && daemon.renew_token()
    {
        response = post(line).await;
    }
    let response = match response {
        Ok(r) => r,
        Err(e) => {
            if let Some(id) = &id {
                let _ = out
                    .send(rpc_error(
                        id,
                        format!("the deskhand daemon cannot be reached: {e}"),
                    ))
                    .await;
            }
            return Err(e);
        }
    };
    let status = response.status();
    if let Some(sid) = response
        .headers()
        .get("mcp-session-id")
        .and_then(|v| v.to_str().ok())
    {
        state.lock().unwrap_or_else(|e| e.into_inner()).session = Some(sid.to_owned());
    }
    let sse = response
        .headers()
        .get(hyper::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|ct| ct.starts_with("text/event-stream"));
    let mut body = response.into_body();
    let mut events = SseLines::default();
    let mut whole = Vec::new();
    let mut answered = false;
    while let Some(frame) = body.frame().await {
        let Ok(data) = frame?.into_data() else {
            continue;
        };
        if !sse {
            whole.extend_from_slice(&data);
            continue;
        }
        for event in events.push(&data) {
            answered |= is_answer(&event, id.as_ref(), state);
            if out.send(event).await.is_err() {
                return Ok(());
            }
        }
    }
    if !sse && !whole.is_empty() {
        let text = String::from_utf8_lossy(&whole).trim().to_owned();
        if text.starts_with('{') || text.starts_with('[') {
            answered |= is_answer(&text, id.as_ref(), state);
            let _ = out.send(text).await;
        }
    }
    if !answered && let Some(id) = &id {
        let _ = out
            .send(rpc_error(
                id,
                format!("the deskhand daemon answered HTTP {status}"),
            ))
            .await;
    }
    Ok(())
}

/// Whether `line` answers request `id`; learns the negotiated version
/// from an initialize result.
fn is_answer(line: &str, id: Option<&Value>, state: &Mutex<State>) -> bool {
    let Ok(v) = serde_json::from_str::<Value>(line) else {
        return false;
    };
    if let Some(version) = v["result"]["protocolVersion"].as_str() {
        tracing::info!(version, "the client speaks this MCP revision");
        state.lock().unwrap_or_else(|e| e.into_inner()).version = Some(version.to_owned());
    }
    id.is_some_and(|id| v.get("id") == Some(id))
}

/// Splits an SSE stream into the JSON payloads of its events.
#[derive(Default)]
struct SseLines {
    buffer: String,
    data: String,
}

impl SseLines {
    fn push(&mut self, bytes: &[u8]) -> Vec<String> {
        self.buffer.push_str(&String::from_utf8_lossy(bytes));
        let mut events = Vec::new();
        while let Some(end) = self.buffer.find('\n') {
            let line: String = self.buffer.drain(..=end).collect();
            let line = line.trim_end_matches(['\r', '\n']);
            if line.is_empty() {
                if !self.data.trim().is_empty() {
                    events.push(std::mem::take(&mut self.data));
                }
                self.data.clear();
            } else if let Some(payload) = line.strip_prefix("data:") {
                if !self.data.is_empty() {
                    self.data.push('\n');
                }
                self.data
                    .push_str(payload.strip_prefix(' ').unwrap_or(payload));
            }
        }
        events
    }
}

async fn request(
    daemon: &Daemon,
    method: hyper::Method,
    session: Option<&str>,
    version: Option<&str>,
    routing: &[(&'static str, String)],
    body: Option<String>,
) -> anyhow::Result<hyper::Response<hyper::body::Incoming>> {
    let stream = tokio::net::TcpStream::connect(&daemon.authority)
        .await
        .with_context(|| format!("connecting to {}", daemon.authority))?;
    stream.set_nodelay(true)?;
    let (mut sender, conn) = hyper::client::conn::http1::handshake(TokioIo::new(stream)).await?;
    tokio::spawn(async move {
        let _ = conn.await;
    });
    let mut req = hyper::Request::builder()
        .method(method)
        .uri("/mcp")
        .header(hyper::header::HOST, &daemon.authority)
        .header(
            hyper::header::AUTHORIZATION,
            format!("Bearer {}", daemon.token()),
        )
        .header(hyper::header::CONTENT_TYPE, "application/json")
        .header(hyper::header::ACCEPT, "application/json, text/event-stream");
    if let Some(s) = session {
        req = req.header("mcp-session-id", s);
    }
    if let Some(v) = version {
        req = req.header("mcp-protocol-version", v);
    }
    for (name, value) in routing {
        req = req.header(*name, value.as_str());
    }
    let req = req.body(Full::new(Bytes::from(body.unwrap_or_default())))?;
    Ok(sender.send_request(req).await?)
}

#[cfg(test)]
mod tests {
    use super::SseLines;

    #[test]
    fn routing_headers_name_the_method_and_the_tool() {
        let call = serde_json::json!({"method": "tools/call", "params": {"name": "click"}});
        let h = super::routing_headers(&call);
        assert_eq!(
            h,
            [
                ("mcp-method", "tools/call".into()),
                ("mcp-name", "click".into())
            ]
        );
        let odd = serde_json::json!({"method": "tools/call", "params": {"name": "a b"}});
        assert_eq!(super::routing_headers(&odd).len(), 1);
        assert!(super::routing_headers(&serde_json::json!({"id": 1})).is_empty());
    }

    #[test]
    fn sse_events_split_across_chunks() {
        let mut s = SseLines::default();
        assert!(s.push(b"id: 1\nretry: 3000\n\ndata: {\"a\"").is_empty());
        assert_eq!(
            s.push(b":1}\n\ndata: {\"b\":2}\r\n\r\n"),
            ["{\"a\":1}", "{\"b\":2}"]
        );
    }
}
