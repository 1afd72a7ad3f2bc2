//! A minimal HTTP/1.1 client for the computer adapters' routes: one
//! request per connection, the answer read to its end.

#![allow(dead_code, missing_docs)]

use std::time::Duration;

use serde_json::Value;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use crate::common::TOKEN;

/// An HTTP answer.
#[derive(Debug)]
pub struct Answer {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Answer {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    pub fn json(&self) -> Value {
        serde_json::from_slice(&self.body).unwrap_or_else(|e| {
            panic!(
                "status {} body not JSON ({e}): {}",
                self.status,
                String::from_utf8_lossy(&self.body)
            )
        })
    }

    pub fn session(&self) -> String {
        self.header("x-deskhand-session")
            .expect("session header")
            .to_owned()
    }
}

/// Sends a raw request (`head` without the final blank line) and `body`.
pub async fn raw(port: u16, head: &str, body: &[u8]) -> Answer {
    let mut s = TcpStream::connect(("127.0.0.1", port))
        .await
        .expect("connect");
    let req = format!(
        "{head}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    );
    s.write_all(req.as_bytes()).await.expect("head");
    // A refused body may not be read: the answer comes anyway.
    let _ = s.write_all(body).await;
    let mut buf = Vec::new();
    tokio::time::timeout(Duration::from_secs(20), s.read_to_end(&mut buf))
        .await
        .expect("answer within 20 s")
        .ok();
    parse(&buf)
}

fn parse(buf: &[u8]) -> Answer {
    let split = buf
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .expect("end of head");
    let head = String::from_utf8_lossy(&buf[..split]).to_string();
    let mut lines = head.split("\r\n");
    let status = lines
        .next()
        .and_then(|l| l.split(' ').nth(1))
        .and_then(|c| c.parse().ok())
        .expect("status line");
    let headers = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(n, v)| (n.trim().to_owned(), v.trim().to_owned()))
        .collect();
    Answer {
        status,
        headers,
        body: buf[split + 4..].to_vec(),
    }
}

/// POSTs JSON with the token, in `session` when given.
pub async fn post(port: u16, path: &str, session: Option<&str>, body: &Value) -> Answer {
    let mut head = format!(
        "POST {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nAuthorization: Bearer {TOKEN}\r\nContent-Type: application/json"
    );
    if let Some(s) = session {
        head.push_str(&format!("\r\nX-Deskhand-Session: {s}"));
    }
    raw(port, &head, body.to_string().as_bytes()).await
}

/// GETs with the token.
pub async fn get(port: u16, path: &str) -> Answer {
    let head =
        format!("GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nAuthorization: Bearer {TOKEN}");
    raw(port, &head, b"").await
}
