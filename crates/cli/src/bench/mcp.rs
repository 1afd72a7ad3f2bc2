//! MCP round trips beside the wire ops, in the same run: `click` over
//! Streamable HTTP and over stdio (`deskhand mcp --standalone`, a process
//! of its own as an MCP client spawns it), and a 1080p `screenshot` over
//! HTTP against the wire ops' SCREENSHOT_REQUEST. The clients are blocking
//! and minimal, as the wire-ops client is, so what is timed is deskhand's.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use serde_json::{Value, json};

use super::{Client, LIMIT, Row, stats};

/// One JSON-RPC exchange, whatever carries it.
trait Rpc {
    /// Sends `body`; returns the answer's JSON text once all of it has
    /// arrived (`None` for a notification). Parsing it is the client's
    /// business and is not timed, as for the wire-ops client.
    fn exchange_raw(&mut self, body: &Value) -> anyhow::Result<Option<String>>;

    fn exchange(&mut self, body: &Value) -> anyhow::Result<Value> {
        match self.exchange_raw(body)? {
            Some(text) => Ok(serde_json::from_str(&text)?),
            None => Ok(Value::Null),
        }
    }
    /// The `_meta` every request carries (2026-07-28), if any.
    fn meta(&self) -> Option<Value> {
        None
    }
}

/// The revision the SDKs speak by default: stateless, no initialize.
const MODERN: &str = "2026-07-28";

/// Streamable HTTP on one kept-alive connection: legacy session mode
/// (2025-06-18), or stateless 2026-07-28 requests.
struct Http {
    stream: BufReader<TcpStream>,
    port: u16,
    token: String,
    session: Option<String>,
    modern: bool,
}

impl Http {
    fn connect(port: u16, token: &str, modern: bool) -> anyhow::Result<Self> {
        let stream = TcpStream::connect(("127.0.0.1", port))?;
        stream.set_nodelay(true)?;
        stream.set_read_timeout(Some(LIMIT))?;
        Ok(Self {
            stream: BufReader::new(stream),
            port,
            token: token.to_owned(),
            session: None,
            modern,
        })
    }

    /// Sends `body`; returns the status and the answer's body.
    fn post(&mut self, message: &Value) -> anyhow::Result<(u16, String)> {
        let body = message.to_string();
        let mut head = format!(
            "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{}\r\nAuthorization: Bearer {}\r\n\
             Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n\
             Content-Length: {}\r\n",
            self.port,
            self.token,
            body.len()
        );
        if self.modern {
            head.push_str(&format!("MCP-Protocol-Version: {MODERN}\r\n"));
            if let Some(method) = message["method"].as_str() {
                head.push_str(&format!("Mcp-Method: {method}\r\n"));
            }
            if let Some(name) = message["params"]["name"].as_str() {
                head.push_str(&format!("Mcp-Name: {name}\r\n"));
            }
        } else if let Some(s) = &self.session {
            head.push_str(&format!(
                "Mcp-Session-Id: {s}\r\nMCP-Protocol-Version: 2025-06-18\r\n"
            ));
        }
        head.push_str("\r\n");
        let w = self.stream.get_mut();
        w.write_all(head.as_bytes())?;
        w.write_all(body.as_bytes())?;
        let mut status = String::new();
        self.stream.read_line(&mut status)?;
        let code: u16 = status
            .split(' ')
            .nth(1)
            .and_then(|c| c.parse().ok())
            .context("no HTTP status")?;
        let (mut length, mut chunked) = (0usize, false);
        loop {
            let mut line = String::new();
            self.stream.read_line(&mut line)?;
            let line = line.trim_end();
            if line.is_empty() {
                break;
            }
            let (k, v) = line.split_once(':').unwrap_or((line, ""));
            match k.to_ascii_lowercase().as_str() {
                "content-length" => length = v.trim().parse()?,
                "transfer-encoding" => chunked = v.contains("chunked"),
                "mcp-session-id" => self.session = Some(v.trim().to_owned()),
                _ => {}
            }
        }
        let mut out = Vec::new();
        if chunked {
            loop {
                let mut size = String::new();
                self.stream.read_line(&mut size)?;
                let n = usize::from_str_radix(size.trim(), 16)?;
                let mut chunk = vec![0; n + 2];
                self.stream.read_exact(&mut chunk)?;
                if n == 0 {
                    break;
                }
                out.extend_from_slice(&chunk[..n]);
            }
        } else {
            out.resize(length, 0);
            self.stream.read_exact(&mut out)?;
        }
        Ok((code, String::from_utf8(out)?))
    }
}

impl Rpc for Http {
    fn exchange_raw(&mut self, body: &Value) -> anyhow::Result<Option<String>> {
        let (code, text) = self.post(body)?;
        if code == 202 {
            return Ok(None);
        }
        if !text.starts_with('{') {
            // An SSE answer's last data line is the result.
            let last = text
                .lines()
                .filter_map(|l| l.strip_prefix("data:"))
                .next_back();
            return Ok(last.map(|l| l.trim().to_owned()));
        }
        Ok(Some(text))
    }

    fn meta(&self) -> Option<Value> {
        self.modern.then(|| {
            json!({"io.modelcontextprotocol/protocolVersion": MODERN,
                   "io.modelcontextprotocol/clientInfo": {"name": "bench", "version": "1"},
                   "io.modelcontextprotocol/clientCapabilities": {}})
        })
    }
}

/// `deskhand mcp` as a child on pipes.
struct Piped {
    child: Child,
    input: ChildStdin,
    output: BufReader<ChildStdout>,
}

impl Rpc for Piped {
    fn exchange_raw(&mut self, body: &Value) -> anyhow::Result<Option<String>> {
        writeln!(self.input, "{body}")?;
        self.input.flush()?;
        if body.get("id").is_none() {
            return Ok(None);
        }
        loop {
            let mut line = String::new();
            if self.output.read_line(&mut line)? == 0 {
                bail!("deskhand mcp closed stdout");
            }
            // Notifications (progress) come before the answer.
            let head = &line[..line.len().min(64)];
            if !head.contains("\"method\"") {
                return Ok(Some(line));
            }
        }
    }
}

/// The legacy handshake (2026-07-28 has none).
fn initialize(rpc: &mut dyn Rpc) -> anyhow::Result<()> {
    if rpc.meta().is_some() {
        return Ok(());
    }
    rpc.exchange(
        &json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "bench", "version": "1"}}}),
    )?;
    rpc.exchange(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))?;
    Ok(())
}

/// Starts a takeover (once the wire client's is gone); answers the
/// session's id, which a stateless client names in every later call.
fn take_over(rpc: &mut dyn Rpc) -> anyhow::Result<String> {
    let deadline = Instant::now() + LIMIT;
    loop {
        let r = tool(rpc, "start_session", json!({"input": "takeover"}))?;
        if r["takeover"]["on"] == true {
            return r["session_id"]
                .as_str()
                .map(str::to_owned)
                .context("start_session named no session");
        }
        if Instant::now() > deadline {
            bail!("no MCP takeover: {r}");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn call_message(rpc: &dyn Rpc, name: &str, args: Value) -> Value {
    let mut params = json!({"name": name, "arguments": args});
    if let Some(meta) = rpc.meta() {
        params["_meta"] = meta;
    }
    json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params})
}

fn tool(rpc: &mut dyn Rpc, name: &str, args: Value) -> anyhow::Result<Value> {
    let message = call_message(rpc, name, args);
    let r = rpc.exchange(&message)?;
    checked(name, &r)
}

fn checked(name: &str, r: &Value) -> anyhow::Result<Value> {
    let result = &r["result"];
    if result["isError"] == true && name != "start_session" {
        bail!("MCP {name} failed: {}", result["structuredContent"]);
    }
    Ok(result["structuredContent"].clone())
}

fn time_tool(rpc: &mut dyn Rpc, n: usize, name: &str, args: &Value) -> anyhow::Result<Vec<f64>> {
    tool(rpc, name, args.clone())?;
    (0..n)
        .map(|_| Ok(time_tool_once(rpc, name, args)?[0]))
        .collect()
}

fn spawn_stdio(display: &str, dir: &std::path::Path) -> anyhow::Result<Piped> {
    let exe = std::env::current_exe()?;
    // The bench's desktop is one deskhand started: the person's consent
    // there is the sandbox's, written out for a display given by name.
    let consent = dir.join("consent.json");
    std::fs::write(&consent, r#"{"takeover": true}"#)?;
    let mut cmd = Command::new(exe);
    cmd.args(["mcp", "--standalone", "--display", display, "--consent"])
        .arg(&consent)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    for (k, sub) in [("XDG_STATE_HOME", "state"), ("XDG_CONFIG_HOME", "config")] {
        let path = dir.join(sub);
        deskhand_host::files::private_dir(&path)?;
        cmd.env(k, path);
    }
    let mut child = cmd.spawn()?;
    let input = child.stdin.take().context("stdin")?;
    let output = BufReader::new(child.stdout.take().context("stdout")?);
    Ok(Piped {
        child,
        input,
        output,
    })
}

/// The MCP rows: screenshot first (a read, beside the wire client's
/// takeover), then the wire client's clicks, then its takeover goes and
/// MCP's clicks over HTTP and stdio follow.
#[allow(clippy::too_many_arguments)]
pub(super) fn measure(
    c: &mut Client,
    port: u16,
    token: &str,
    display: &str,
    dir: &std::path::Path,
    size: &str,
    at: (i32, i32),
    n: usize,
    rows: &mut Vec<Row>,
) -> anyhow::Result<()> {
    let mut http = Http::connect(port, token, true)?;
    initialize(&mut http)?;
    // Alternate MCP and wire screenshots, so both see the same machine.
    let png = json!({"format": "png"});
    let (mut mcp_shots, mut wire_shots) = (Vec::new(), Vec::new());
    c.request("SCREENSHOT_REQUEST", png.clone())?;
    tool(&mut http, "screenshot", json!({}))?;
    for _ in 0..n {
        mcp_shots.extend(time_tool_once(&mut http, "screenshot", &json!({}))?);
        wire_shots.push(c.request("SCREENSHOT_REQUEST", png.clone())?.as_secs_f64() * 1000.0);
    }
    rows.push(Row {
        what: format!("MCP screenshot {size} PNG over HTTP, nothing changed"),
        ours: stats(mcp_shots),
        peer_name: "wire ops SCREENSHOT_REQUEST (same run)".into(),
        peer: Some(stats(wire_shots)),
    });

    let click = json!({"action": "left_click", "coordinate": [at.0, at.1]});
    c.request("INPUT_ACTION", click.clone())?;
    let wire: Vec<f64> = (0..n)
        .map(|_| Ok(c.request("INPUT_ACTION", click.clone())?.as_secs_f64() * 1000.0))
        .collect::<anyhow::Result<_>>()?;
    let wire = stats(wire);
    c.request("TAKEOVER_REQUEST", json!({"on": false}))?;

    let args = json!({"x": at.0, "y": at.1});
    for (modern, what) in [
        (true, "2026-07-28, stateless"),
        (false, "2025-06-18, session"),
    ] {
        let mut http = Http::connect(port, token, modern)?;
        initialize(&mut http)?;
        // A stateless request carries no session: each names its own.
        let session = take_over(&mut http)?;
        let mut args = args.clone();
        args["session_id"] = json!(session);
        let over_http = time_tool(&mut http, n, "click", &args)?;
        tool(&mut http, "end_session", json!({"session_id": session}))?;
        rows.push(Row {
            what: format!("MCP click round trip over HTTP ({what})"),
            ours: stats(over_http),
            peer_name: "wire ops left_click (same run)".into(),
            peer: Some(wire),
        });
    }

    let mut stdio = spawn_stdio(display, dir)?;
    initialize(&mut stdio)?;
    take_over(&mut stdio)?;
    let over_stdio = time_tool(&mut stdio, n, "click", &args)?;
    tool(&mut stdio, "end_session", json!({}))?;
    drop(stdio.input);
    let _ = stdio.child.wait();
    rows.push(Row {
        what: "MCP click round trip over stdio (own engine)".into(),
        ours: stats(over_stdio),
        peer_name: "wire ops left_click (same run)".into(),
        peer: Some(wire),
    });
    Ok(())
}

fn time_tool_once(rpc: &mut dyn Rpc, name: &str, args: &Value) -> anyhow::Result<Vec<f64>> {
    let message = call_message(rpc, name, args.clone());
    let t = Instant::now();
    let text = rpc.exchange_raw(&message)?.context("no answer")?;
    let took = t.elapsed().as_secs_f64() * 1000.0;
    checked(name, &serde_json::from_str(&text)?)?;
    Ok(vec![took])
}
