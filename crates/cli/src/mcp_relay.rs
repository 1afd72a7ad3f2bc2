//! `deskhand mcp` beside a running daemon: the client's stdio is relayed
//! to that daemon's `/mcp`, so one desktop has one engine, one queue and
//! one indicator. Each JSON-RPC line is POSTed with the daemon's token;
//! the answer (JSON, or an SSE stream carrying progress notifications
//! before the result) goes back as lines. `Mcp-Session-Id` and the
//! negotiated `MCP-Protocol-Version` are kept between requests. When the
//! person replaces the token (the tray app's Settings), a 401 makes the
//! relay read the new one from the connection file and send again. The
//! first answer (initialize, `server/discover`) names the daemon and its
//! display; a line that is no message gets a parse error and the relay
//! goes on; whatever ends the relay, it ends its sessions on the daemon.

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use anyhow::Context;
use http_body_util::{BodyExt, Full};
use hyper::body::Bytes;
use hyper_util::rt::TokioIo;
use serde_json::{Value, json};
use tokio::io::AsyncWriteExt;
use tokio::sync::{mpsc, oneshot};

use crate::lines::{self, Line};

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
    /// The desktop it serves (an X display, a Wayland socket's name).
    pub display: String,
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

    /// What the client is told first: which desktop its tools act on.
    fn desktop_note(&self) -> String {
        let desktop = match self.display.as_str() {
            d if d.starts_with(':') => format!("X display {d}"),
            d if d.starts_with("wayland-") => format!("the Wayland session {d}"),
            d => format!("the desktop {d}"),
        };
        format!(
            "This is `deskhand mcp` relaying to the deskhand daemon (pid {}) that serves {desktop}: every tool acts on that desktop, under its person's consent and pause.",
            self.pid
        )
    }
}

/// The protocol state a relay keeps between requests.
#[derive(Default)]
struct State {
    /// The HTTP session (`Mcp-Session-Id`), in the session revisions.
    session: Option<String>,
    version: Option<String>,
    /// The client's last `_meta`, for requests of the relay's own (the
    /// stateless revision wants it on every request).
    meta: Option<Value>,
    /// deskhand sessions started through this relay and not ended.
    started: BTreeSet<String>,
    /// The client's `initialize`, to open a new HTTP session with when the
    /// daemon closed an idle one.
    initialize: Option<String>,
}

const META_VERSION: &str = "io.modelcontextprotocol/protocolVersion";

/// How long the relay's own requests at its end may take.
const END_TIMEOUT: Duration = Duration::from_secs(3);

/// Relays stdin to the daemon until stdin closes, the client stops
/// reading, or a signal comes; then ends on the daemon what this relay
/// started (its deskhand sessions and its HTTP session), so that no
/// takeover outlives it.
pub async fn run(daemon: Daemon) -> anyhow::Result<()> {
    let mut stop = deskhand_host::shutdown::Shutdown::listen(true)?;
    let state = Arc::new(Mutex::new(State::default()));
    let (out_tx, out_rx) = mpsc::channel::<String>(64);
    let (gone_tx, gone_rx) = oneshot::channel::<()>();
    let writer = tokio::spawn(write_out(out_rx, gone_tx));
    let result = tokio::select! {
        r = pump(&daemon, &state, &out_tx) => r,
        signal = stop.recv() => { tracing::info!("{signal}: ending the relay"); Ok(()) }
        _ = gone_rx => { tracing::info!("the client stopped reading: ending the relay"); Ok(()) }
    };
    end_on_daemon(&daemon, &state).await;
    drop(out_tx);
    let _ = tokio::time::timeout(Duration::from_secs(2), writer).await;
    result
}

/// Writes the answers to stdout, one line each; says when it cannot.
async fn write_out(mut answers: mpsc::Receiver<String>, gone: oneshot::Sender<()>) {
    let mut stdout = tokio::io::stdout();
    while let Some(line) = answers.recv().await {
        if stdout.write_all(line.as_bytes()).await.is_err()
            || stdout.write_all(b"\n").await.is_err()
            || stdout.flush().await.is_err()
        {
            let _ = gone.send(());
            return;
        }
    }
}

/// A JSON-RPC error answer without an id (the line had none to read).
fn rpc_error_without_id(code: i64, message: &str) -> String {
    json!({"jsonrpc": "2.0", "id": null, "error": {"code": code, "message": message}}).to_string()
}

/// What a line from the client is.
#[derive(Debug, PartialEq)]
enum Incoming {
    /// A blank line.
    Blank,
    /// A JSON-RPC message (or batch) to relay.
    Message(String, Value),
    /// Not a message: this answer goes back, nothing to the daemon.
    Refused(String),
}

/// Reads one line from the client; a line that is not a message is
/// answered and logged (its length, never its content).
fn incoming(line: Line) -> Incoming {
    match line {
        Line::Text(text) if text.trim().is_empty() => Incoming::Blank,
        Line::Text(text) => match serde_json::from_str::<Value>(&text) {
            Ok(v) if v.is_object() || v.is_array() => Incoming::Message(text, v),
            Ok(_) => {
                tracing::warn!(
                    bytes = text.len(),
                    "a line from the client is JSON but no message: answered an invalid request"
                );
                Incoming::Refused(rpc_error_without_id(
                    -32600,
                    "Invalid Request: a JSON-RPC message is an object",
                ))
            }
            Err(_) => {
                tracing::warn!(
                    bytes = text.len(),
                    "a line from the client is not JSON: answered a parse error"
                );
                Incoming::Refused(rpc_error_without_id(
                    -32700,
                    "Parse error: the line is not JSON",
                ))
            }
        },
        Line::NotUtf8(bytes) => {
            tracing::warn!(
                bytes,
                "a line from the client is not UTF-8: answered a parse error"
            );
            Incoming::Refused(rpc_error_without_id(
                -32700,
                "Parse error: the line is not UTF-8",
            ))
        }
        Line::TooLong => {
            tracing::warn!("a line from the client is over 16 MiB: skipped it");
            Incoming::Refused(rpc_error_without_id(
                -32600,
                "Invalid Request: the line is over 16 MiB",
            ))
        }
    }
}

/// Relays the client's lines until its stdin ends (or cannot be read),
/// then waits for the answers still coming.
async fn pump(
    daemon: &Daemon,
    state: &Arc<Mutex<State>>,
    out: &mpsc::Sender<String>,
) -> anyhow::Result<()> {
    let mut stdin = tokio::io::BufReader::new(tokio::io::stdin());
    let mut in_flight = tokio::task::JoinSet::new();
    loop {
        let line = match lines::next(&mut stdin, lines::MAX_LINE).await {
            Ok(Some(line)) => line,
            Ok(None) => break,
            Err(e) => {
                tracing::warn!(error = %e, "reading the client's stdin failed");
                break;
            }
        };
        let (line, message) = match incoming(line) {
            Incoming::Blank => continue,
            Incoming::Refused(answer) => {
                let _ = out.send(answer).await;
                continue;
            }
            Incoming::Message(line, message) => (line, message),
        };
        while in_flight.try_join_next().is_some() {}
        let (daemon, state, out) = (daemon.clone(), state.clone(), out.clone());
        // Initialize must finish before anything else uses its session.
        let is_init = message["method"] == "initialize";
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
    Ok(())
}

/// Ends what this relay started on the daemon: each deskhand session
/// still open (`end_session`), then the HTTP session (DELETE), which ends
/// its takeover too.
async fn end_on_daemon(daemon: &Daemon, state: &Mutex<State>) {
    let (session, version, meta, started) = {
        let mut s = state.lock().unwrap_or_else(|e| e.into_inner());
        (
            s.session.take(),
            s.version.clone(),
            s.meta.clone(),
            std::mem::take(&mut s.started),
        )
    };
    for (n, id) in started.iter().enumerate() {
        let mut params = json!({"name": "end_session", "arguments": {"session_id": id}});
        if let Some(meta) = &meta {
            params["_meta"] = meta.clone();
        }
        let body = json!({"jsonrpc": "2.0", "id": format!("deskhand-relay-end-{n}"),
                          "method": "tools/call", "params": params});
        let routing = routing_headers(&body);
        let ended = send_and_read(
            daemon,
            hyper::Method::POST,
            session.as_deref(),
            version.as_deref(),
            &routing,
            Some(body.to_string()),
        )
        .await;
        tracing::info!(ended, "the relay ended a session it started");
    }
    if let Some(id) = session {
        let ended = send_and_read(
            daemon,
            hyper::Method::DELETE,
            Some(&id),
            version.as_deref(),
            &[],
            None,
        )
        .await;
        tracing::info!(ended, "the relay ended its MCP session on the daemon");
    }
}

/// One request of the relay's own, its answer read to the end within
/// [`END_TIMEOUT`]; whether the daemon answered 2xx.
async fn send_and_read(
    daemon: &Daemon,
    method: hyper::Method,
    session: Option<&str>,
    version: Option<&str>,
    routing: &[(&'static str, String)],
    body: Option<String>,
) -> bool {
    let exchange = async {
        let response = request(daemon, method, session, version, routing, body).await?;
        let ok = response.status().is_success();
        response.into_body().collect().await?;
        anyhow::Ok(ok)
    };
    matches!(
        tokio::time::timeout(END_TIMEOUT, exchange).await,
        Ok(Ok(true))
    )
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

/// What the relay remembers of a request while its answer comes.
struct Sent {
    id: Option<Value>,
    /// `initialize` or `server/discover`: the answer says which desktop.
    names_desktop: bool,
    /// The tool a `tools/call` calls.
    tool: Option<String>,
}

impl Sent {
    fn of(message: &Value) -> Self {
        let method = message["method"].as_str();
        Self {
            id: message.get("id").cloned(),
            names_desktop: matches!(method, Some("initialize" | "server/discover")),
            tool: (method == Some("tools/call"))
                .then(|| message["params"]["name"].as_str().map(str::to_owned))
                .flatten(),
        }
    }
}

/// Learns what the client's request tells: its revision, its `_meta`.
fn note_request(message: &Value, state: &Mutex<State>) {
    let meta = &message["params"]["_meta"];
    let mut s = state.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(v) = meta[META_VERSION].as_str()
        && s.version.as_deref() != Some(v)
    {
        tracing::info!(version = v, "the client speaks this MCP revision");
        s.version = Some(v.to_owned());
    }
    if let Some(meta) = meta.as_object() {
        let mut meta = meta.clone();
        meta.remove("progressToken");
        s.meta = Some(Value::Object(meta));
    }
}

async fn forward(
    daemon: &Daemon,
    state: &Mutex<State>,
    out: &mpsc::Sender<String>,
    line: String,
    message: Value,
) -> anyhow::Result<()> {
    note_request(&message, state);
    let (session, version) = {
        let s = state.lock().unwrap_or_else(|e| e.into_inner());
        (s.session.clone(), s.version.clone())
    };
    let sent = Sent::of(&message);
    if message["method"] == "initialize" {
        state.lock().unwrap_or_else(|e| e.into_inner()).initialize = Some(line.clone());
    }
    let routing = routing_headers(&message);
    let post = |session: Option<String>, line| {
        let (routing, version) = (&routing, version.clone());
        async move {
            request(
                daemon,
                hyper::Method::POST,
                session.as_deref(),
                version.as_deref(),
                routing,
                Some(line),
            )
            .await
        }
    };
    let status_is =
        |r: &anyhow::Result<hyper::Response<_>>, s| r.as_ref().is_ok_and(|r| r.status() == s);
    let mut response = post(session.clone(), line.clone()).await;
    if status_is(&response, hyper::StatusCode::UNAUTHORIZED) && daemon.renew_token() {
        response = post(session.clone(), line.clone()).await;
    }
    if let Some(closed) = session.as_deref()
        && status_is(&response, hyper::StatusCode::NOT_FOUND)
        && let Some(renewed) = reopen(daemon, state, closed).await
    {
        response = post(Some(renewed), line).await;
    }
    let response = match response {
        Ok(r) => r,
        Err(e) => {
            if let Some(id) = &sent.id {
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
            let (event, answers) = outgoing(event, &sent, state, daemon);
            answered |= answers;
            if out.send(event).await.is_err() {
                return Ok(());
            }
        }
    }
    if !sse && !whole.is_empty() {
        let text = String::from_utf8_lossy(&whole).trim().to_owned();
        if text.starts_with('{') || text.starts_with('[') {
            let (text, answers) = outgoing(text, &sent, state, daemon);
            answered |= answers;
            let _ = out.send(text).await;
        }
    }
    if !answered && let Some(id) = &sent.id {
        let _ = out
            .send(rpc_error(
                id,
                format!("the deskhand daemon answered HTTP {status}"),
            ))
            .await;
    }
    Ok(())
}

/// Opens a new HTTP session on the daemon with the client's own
/// `initialize` (the daemon closes one unused for 30 minutes), and returns
/// its id. The client's deskhand sessions ended with the old one.
async fn reopen(daemon: &Daemon, state: &Mutex<State>, closed: &str) -> Option<String> {
    let (init, version) = {
        let s = state.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(current) = s.session.as_deref().filter(|s| *s != closed) {
            // Another request of the client reopened it already.
            return Some(current.to_owned());
        }
        (s.initialize.clone()?, s.version.clone())
    };
    let answer = request(
        daemon,
        hyper::Method::POST,
        None,
        version.as_deref(),
        &[],
        Some(init),
    )
    .await
    .ok()?;
    let id = answer
        .headers()
        .get("mcp-session-id")
        .and_then(|v| v.to_str().ok())?
        .to_owned();
    let _ = answer.into_body().collect().await;
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    // Read to its end (bounded), so that the connection is free again.
    let _ = send_and_read(
        daemon,
        hyper::Method::POST,
        Some(&id),
        version.as_deref(),
        &[],
        Some(initialized.to_string()),
    )
    .await;
    tracing::info!("the daemon had closed the relay's idle MCP session: opened a new one");
    let mut s = state.lock().unwrap_or_else(|e| e.into_inner());
    s.session = Some(id.clone());
    s.started.clear();
    Some(id)
}

/// A line from the daemon on its way to the client, and whether it
/// answers the request: the negotiated revision is learnt, the sessions
/// started and ended are tracked, the first answer names the desktop.
fn outgoing(line: String, sent: &Sent, state: &Mutex<State>, daemon: &Daemon) -> (String, bool) {
    let Ok(mut v) = serde_json::from_str::<Value>(&line) else {
        return (line, false);
    };
    if let Some(version) = v["result"]["protocolVersion"].as_str() {
        tracing::info!(version, "the client speaks this MCP revision");
        state.lock().unwrap_or_else(|e| e.into_inner()).version = Some(version.to_owned());
    }
    if sent.id.is_none() || v.get("id") != sent.id.as_ref() {
        return (line, false);
    }
    let result = &v["result"];
    let session_id = |r: &Value| {
        r["structuredContent"]["session_id"]
            .as_str()
            .or_else(|| r["structuredContent"]["error"]["session_id"].as_str())
            .map(str::to_owned)
    };
    match sent.tool.as_deref() {
        Some("start_session") => {
            if let Some(id) = session_id(result) {
                let mut s = state.lock().unwrap_or_else(|e| e.into_inner());
                s.started.insert(id);
            }
        }
        Some("end_session") if result["isError"] != true => {
            if let Some(id) = session_id(result) {
                let mut s = state.lock().unwrap_or_else(|e| e.into_inner());
                s.started.remove(&id);
            }
        }
        _ => {}
    }
    if sent.names_desktop
        && let Some(result) = v["result"].as_object_mut()
    {
        let note = daemon.desktop_note();
        let instructions = match result.get("instructions").and_then(Value::as_str) {
            Some(given) => format!("{given}\n\n{note}"),
            None => note,
        };
        result.insert("instructions".into(), Value::String(instructions));
        return (v.to_string(), true);
    }
    (line, true)
}

/// Splits an SSE stream into the JSON payloads of its events.
#[derive(Default)]
struct SseLines {
    /// Bytes up to the next line end: a character split between two
    /// frames is decoded whole.
    buffer: Vec<u8>,
    data: String,
}

impl SseLines {
    fn push(&mut self, bytes: &[u8]) -> Vec<String> {
        self.buffer.extend_from_slice(bytes);
        let mut events = Vec::new();
        while let Some(end) = self.buffer.iter().position(|b| *b == b'\n') {
            let raw: Vec<u8> = self.buffer.drain(..=end).collect();
            let line = String::from_utf8_lossy(&raw);
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
    use super::*;

    fn daemon() -> Daemon {
        Daemon {
            authority: "127.0.0.1:1".into(),
            token: Arc::new(Mutex::new("t".into())),
            pid: 77,
            connection_file: "/run/endpoint.json".into(),
            display: ":99".into(),
        }
    }

    #[test]
    fn a_line_that_is_no_message_is_answered_and_not_relayed() {
        let parse_error = |line| match incoming(line) {
            Incoming::Refused(answer) => serde_json::from_str::<Value>(&answer).expect("json"),
            other => panic!("relayed: {other:?}"),
        };
        let e = parse_error(Line::NotUtf8(3));
        assert_eq!(e["error"]["code"], -32700);
        assert_eq!(e["id"], Value::Null);
        assert_eq!(
            parse_error(Line::Text("{oops".into()))["error"]["code"],
            -32700
        );
        assert_eq!(
            parse_error(Line::Text("42".into()))["error"]["code"],
            -32600
        );
        assert_eq!(parse_error(Line::TooLong)["error"]["code"], -32600);
        assert_eq!(incoming(Line::Text("  ".into())), Incoming::Blank);
        let ok = r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#;
        assert!(matches!(
            incoming(Line::Text(ok.into())),
            Incoming::Message(..)
        ));
    }

    #[test]
    fn the_first_answer_names_the_desktop() {
        let state = Mutex::new(State::default());
        let init = Sent::of(&json!({"id": 1, "method": "initialize"}));
        let answer = r#"{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-11-25","instructions":"Call start_session first."}}"#;
        let (line, answers) = outgoing(answer.into(), &init, &state, &daemon());
        assert!(answers);
        let v: Value = serde_json::from_str(&line).expect("json");
        let text = v["result"]["instructions"].as_str().expect("instructions");
        assert!(text.starts_with("Call start_session first."), "{text}");
        assert!(
            text.contains("X display :99") && text.contains("pid 77"),
            "{text}"
        );
        let other = Sent::of(&json!({"id": 2, "method": "tools/list"}));
        let (line, answers) = outgoing(answer.into(), &other, &state, &daemon());
        assert!(
            !answers && line == answer,
            "another id is passed on as it is"
        );
    }

    #[test]
    fn sessions_started_through_the_relay_are_tracked_until_ended() {
        let state = Mutex::new(State::default());
        let call = |tool: &str| {
            Sent::of(&json!({"id": 5, "method": "tools/call", "params": {"name": tool}}))
        };
        let result = |body: Value| json!({"jsonrpc": "2.0", "id": 5, "result": body}).to_string();
        let ok = result(json!({"structuredContent": {"session_id": "mcp-1"}}));
        outgoing(ok.clone(), &call("start_session"), &state, &daemon());
        let refused = result(json!({"isError": true,
            "structuredContent": {"error": {"session_id": "mcp-2"}}}));
        outgoing(refused, &call("start_session"), &state, &daemon());
        let started = |s: &Mutex<State>| s.lock().expect("lock").started.clone();
        assert_eq!(
            started(&state),
            BTreeSet::from(["mcp-1".to_owned(), "mcp-2".to_owned()])
        );
        outgoing(ok, &call("end_session"), &state, &daemon());
        assert_eq!(started(&state), BTreeSet::from(["mcp-2".to_owned()]));
    }

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
        // A character split between two frames arrives whole.
        let e = "data: {\"t\":\"é\"}\n\n".as_bytes();
        let cut = e.iter().position(|b| *b == 0xc3).expect("é") + 1;
        assert!(s.push(&e[..cut]).is_empty());
        assert_eq!(s.push(&e[cut..]), ["{\"t\":\"é\"}"]);
    }
}
