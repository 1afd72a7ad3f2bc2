//! A minimal MCP client over Streamable HTTP for the contract tests: the
//! legacy handshake (initialize, `Mcp-Session-Id`) and JSON-RPC tool calls,
//! each answer checked against the tool's schemas.

use std::time::Duration;

use deskhand_protocol::mcp;
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use crate::common::TOKEN;

pub struct Mcp {
    pub port: u16,
    /// `Bearer <token>`.
    pub auth: String,
    pub session: Option<String>,
    next: u64,
}

/// One HTTP answer: status, headers (lower-case names), body.
pub struct Answer {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: String,
}

impl Answer {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }

    /// The JSON-RPC messages of the body (JSON, or SSE `data:` lines).
    pub fn messages(&self) -> Vec<Value> {
        if self
            .header("content-type")
            .is_some_and(|c| c.starts_with("text/event-stream"))
        {
            self.body
                .lines()
                .filter_map(|l| l.strip_prefix("data:"))
                .filter_map(|d| serde_json::from_str(d.trim()).ok())
                .collect()
        } else {
            serde_json::from_str(&self.body).into_iter().collect()
        }
    }
}

pub async fn post(port: u16, headers: &[(&str, &str)], body: &str) -> Answer {
    send(port, "POST", headers, body).await
}

/// An HTTP request of `method` to `/mcp`, its answer read to the end.
pub async fn send(port: u16, method: &str, headers: &[(&str, &str)], body: &str) -> Answer {
    let mut s = TcpStream::connect(("127.0.0.1", port))
        .await
        .expect("connect");
    let mut head = format!(
        "{method} /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nConnection: close\r\n\
         Content-Length: {}\r\n",
        body.len()
    );
    for (k, v) in headers {
        head.push_str(&format!("{k}: {v}\r\n"));
    }
    head.push_str("\r\n");
    s.write_all(head.as_bytes()).await.expect("write");
    s.write_all(body.as_bytes()).await.expect("write");
    let mut raw = Vec::new();
    tokio::time::timeout(Duration::from_secs(20), s.read_to_end(&mut raw))
        .await
        .expect("answer in time")
        .expect("read");
    let text = String::from_utf8_lossy(&raw).into_owned();
    let (head, body) = text.split_once("\r\n\r\n").expect("a head");
    let mut lines = head.lines();
    let status = lines
        .next()
        .and_then(|l| l.split(' ').nth(1))
        .and_then(|s| s.parse().ok());
    let headers = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_ascii_lowercase(), v.trim().to_owned()))
        .collect::<Vec<_>>();
    let chunked = headers
        .iter()
        .any(|(k, v)| k == "transfer-encoding" && v.contains("chunked"));
    Answer {
        status: status.expect("a status"),
        headers,
        body: if chunked {
            dechunk(body)
        } else {
            body.to_owned()
        },
    }
}

fn dechunk(mut body: &str) -> String {
    let mut out = String::new();
    while let Some((size, rest)) = body.split_once("\r\n") {
        let n = usize::from_str_radix(size.trim(), 16).unwrap_or(0);
        if n == 0 || rest.len() < n {
            break;
        }
        out.push_str(&rest[..n]);
        body = rest[n..].trim_start_matches("\r\n");
    }
    out
}

impl Mcp {
    /// Initializes a legacy (2025-06-18) session with the daemon's token.
    pub async fn connect(port: u16) -> Self {
        Self::connect_with(port, TOKEN).await
    }

    pub async fn connect_with(port: u16, token: &str) -> Self {
        let mut c = Self {
            port,
            auth: format!("Bearer {token}"),
            session: None,
            next: 1,
        };
        let init = c
            .rpc(
                "initialize",
                json!({"protocolVersion": "2025-06-18", "capabilities": {},
                  "clientInfo": {"name": "contract", "version": "1"}}),
            )
            .await;
        assert_eq!(init.status, 200, "{}", init.body);
        c.session = init.header("mcp-session-id").map(str::to_owned);
        assert!(c.session.is_some(), "no Mcp-Session-Id");
        let note = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
        let a = post(port, &c.headers(), &note.to_string()).await;
        assert_eq!(a.status, 202, "{}", a.body);
        c
    }

    fn headers(&self) -> Vec<(&str, &str)> {
        let mut h = vec![("Authorization", self.auth.as_str())];
        if let Some(s) = &self.session {
            h.push(("Mcp-Session-Id", s.as_str()));
            h.push(("MCP-Protocol-Version", "2025-06-18"));
        }
        h
    }

    pub async fn rpc(&mut self, method: &str, params: Value) -> Answer {
        let id = self.next;
        self.next += 1;
        let body = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        post(self.port, &self.headers(), &body.to_string()).await
    }

    /// Calls `tool`, validates arguments and result against its schemas,
    /// and returns the result (`isError`, `structuredContent`, `content`).
    pub async fn call(&mut self, tool: &str, args: Value) -> Value {
        let spec = mcp::tool(tool).expect("a listed tool");
        validate(&(spec.input)(), &args, &format!("{tool} arguments"));
        let a = self
            .rpc("tools/call", json!({"name": tool, "arguments": args}))
            .await;
        assert_eq!(a.status, 200, "{tool}: {}", a.body);
        let result = a
            .messages()
            .into_iter()
            .find(|m| m.get("result").is_some() || m.get("error").is_some())
            .unwrap_or_else(|| panic!("{tool}: no answer in {}", a.body));
        let result = result["result"].clone();
        let structured = &result["structuredContent"];
        if result["isError"] == true {
            validate(&mcp::error_schema(), structured, &format!("{tool} error"));
            let e = &structured["error"];
            let text = format!(
                "{}: {} [retry: {}] {}",
                e["code"].as_str().unwrap_or(""),
                e["message"].as_str().unwrap_or(""),
                e["disposition"]["retry"].as_str().unwrap_or(""),
                e["suggestion"].as_str().unwrap_or("")
            );
            assert_eq!(result["content"][0]["text"], text.as_str());
        } else {
            validate(&(spec.output)(), structured, &format!("{tool} result"));
        }
        result
    }

    /// Calls `tool` and returns its structured success.
    pub async fn ok(&mut self, tool: &str, args: Value) -> Value {
        let r = self.call(tool, args).await;
        assert_ne!(
            r["isError"], true,
            "{tool} failed: {}",
            r["structuredContent"]
        );
        r["structuredContent"].clone()
    }

    /// Calls `tool` and returns its error object.
    pub async fn err(&mut self, tool: &str, args: Value) -> Value {
        let r = self.call(tool, args).await;
        assert_eq!(
            r["isError"], true,
            "{tool} succeeded: {}",
            r["structuredContent"]
        );
        r["structuredContent"]["error"].clone()
    }
}

pub fn validate(schema: &Value, value: &Value, what: &str) {
    let v = jsonschema::validator_for(schema).expect("the schema compiles");
    let errors: Vec<String> = v.iter_errors(value).map(|e| e.to_string()).collect();
    assert!(
        errors.is_empty(),
        "{what} does not match its schema: {errors:?}\n{value}"
    );
}
