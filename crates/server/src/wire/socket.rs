//! The wire connection's WebSocket: the RFC 6455 upgrade over hyper's
//! upgrade, tungstenite for reading and for small replies, and one frame
//! written straight from its parts for screenshots.
//!
//! axum's WebSocket keeps its stream to itself, so a screenshot reply sent
//! through it is copied twice in deskhand: into one `String`, then into
//! tungstenite's output buffer. Here the frame header and the reply's
//! parts (the JSON around the image and the image's base64, kept by the
//! encoder) go to the socket in one vectored write, and only the kernel
//! copies them.

use std::future::Future;
use std::io::IoSlice;

use axum::body::Body;
use axum::extract::FromRequestParts;
use axum::http::header::{
    CONNECTION, SEC_WEBSOCKET_ACCEPT, SEC_WEBSOCKET_KEY, SEC_WEBSOCKET_VERSION, UPGRADE,
};
use axum::http::request::Parts;
use axum::http::{HeaderMap, HeaderName, HeaderValue, Method, StatusCode};
use axum::response::{IntoResponse, Response};
use futures_util::{SinkExt as _, StreamExt as _};
use hyper::upgrade::{OnUpgrade, Upgraded};
use hyper_util::rt::TokioIo;
use tokio::io::{AsyncRead, AsyncReadExt as _, AsyncWrite, AsyncWriteExt as _};
use tokio_tungstenite::WebSocketStream;
use tokio_tungstenite::tungstenite::protocol::frame::FrameHeader;
use tokio_tungstenite::tungstenite::protocol::frame::coding::{CloseCode, Data, OpCode};
use tokio_tungstenite::tungstenite::protocol::{CloseFrame, Role, WebSocketConfig};
use tokio_tungstenite::tungstenite::{self, Message, handshake::derive_accept_key};

/// How long a connection the server closes waits for the client to close
/// its side.
const CLOSE_LINGER: std::time::Duration = std::time::Duration::from_secs(2);

/// A WebSocket upgrade request that passed the handshake checks.
pub(crate) struct UpgradeRequest {
    key: HeaderValue,
    on_upgrade: OnUpgrade,
}

fn header_is(headers: &HeaderMap, name: HeaderName, value: &str) -> bool {
    headers
        .get(name)
        .is_some_and(|v| v.as_bytes().eq_ignore_ascii_case(value.as_bytes()))
}

fn header_has_token(headers: &HeaderMap, name: HeaderName, token: &str) -> bool {
    headers.get_all(name).iter().any(|v| {
        v.as_bytes()
            .split(|&b| b == b',')
            .any(|t| t.trim_ascii().eq_ignore_ascii_case(token.as_bytes()))
    })
}

fn bad_request(why: &'static str) -> Response {
    (StatusCode::BAD_REQUEST, format!("{why}\n")).into_response()
}

impl<S: Send + Sync> FromRequestParts<S> for UpgradeRequest {
    type Rejection = Response;

    async fn from_request_parts(parts: &mut Parts, _state: &S) -> Result<Self, Response> {
        if parts.method != Method::GET {
            return Err((StatusCode::METHOD_NOT_ALLOWED, "use GET\n").into_response());
        }
        if !header_has_token(&parts.headers, CONNECTION, "upgrade")
            || !header_is(&parts.headers, UPGRADE, "websocket")
        {
            return Err(bad_request(
                "this is a WebSocket endpoint; upgrade to websocket",
            ));
        }
        if !header_is(&parts.headers, SEC_WEBSOCKET_VERSION, "13") {
            return Err((
                StatusCode::UPGRADE_REQUIRED,
                [(SEC_WEBSOCKET_VERSION, "13")],
                "WebSocket version 13 only\n",
            )
                .into_response());
        }
        let key = parts
            .headers
            .get(SEC_WEBSOCKET_KEY)
            .cloned()
            .ok_or_else(|| bad_request("no Sec-WebSocket-Key"))?;
        let on_upgrade = parts
            .extensions
            .remove::<OnUpgrade>()
            .ok_or_else(|| bad_request("this connection cannot be upgraded"))?;
        Ok(Self { key, on_upgrade })
    }
}

impl UpgradeRequest {
    /// Answers 101 and runs `serve` on the socket once the client has it.
    pub(crate) fn on_upgrade<F, Fut>(self, config: WebSocketConfig, serve: F) -> Response
    where
        F: FnOnce(WireSocket) -> Fut + Send + 'static,
        Fut: Future<Output = ()> + Send,
    {
        let accept = derive_accept_key(self.key.as_bytes());
        let on_upgrade = self.on_upgrade;
        tokio::spawn(async move {
            match on_upgrade.await {
                Ok(upgraded) => {
                    let io = TokioIo::new(upgraded);
                    let ws = WebSocketStream::from_raw_socket(io, Role::Server, Some(config)).await;
                    serve(WireSocket { ws }).await;
                }
                Err(e) => tracing::info!(error = %e, "WebSocket upgrade failed"),
            }
        });
        let mut response = Response::new(Body::empty());
        *response.status_mut() = StatusCode::SWITCHING_PROTOCOLS;
        let headers = response.headers_mut();
        headers.insert(CONNECTION, HeaderValue::from_static("upgrade"));
        headers.insert(UPGRADE, HeaderValue::from_static("websocket"));
        if let Ok(accept) = HeaderValue::from_str(&accept) {
            headers.insert(SEC_WEBSOCKET_ACCEPT, accept);
        }
        response
    }
}

/// The server's side of one wire connection (over any stream in tests).
pub(crate) struct WireSocket<S = TokioIo<Upgraded>> {
    ws: WebSocketStream<S>,
}

impl<S: AsyncRead + AsyncWrite + Unpin> WireSocket<S> {
    /// The next message, or `None` once the connection is closed.
    pub(crate) async fn recv(&mut self) -> Option<Result<Message, tungstenite::Error>> {
        self.ws.next().await
    }

    /// Ends the connection from the server's side: a close frame with
    /// `code`, then whatever the client still sends is read and dropped
    /// until it closes (or for [`CLOSE_LINGER`]), so that the close frame
    /// is not lost to a reset of a socket with unread data in it.
    pub(crate) async fn close(mut self, code: CloseCode, reason: &'static str) {
        let frame = CloseFrame {
            code,
            reason: reason.into(),
        };
        if self.ws.close(Some(frame)).await.is_err() {
            return;
        }
        let io = self.ws.get_mut();
        let mut sink = vec![0u8; 64 * 1024];
        let drain = async { while let Ok(1..) = io.read(&mut sink).await {} };
        let _ = tokio::time::timeout(CLOSE_LINGER, drain).await;
    }

    /// Sends one text message.
    pub(crate) async fn send_text(&mut self, text: String) -> Result<(), tungstenite::Error> {
        self.ws.send(Message::Text(text.into())).await
    }

    /// Sends one text message made of `parts` in order, as one frame
    /// written straight to the socket (nothing is copied into a buffer).
    pub(crate) async fn send_text_parts(
        &mut self,
        parts: &[&str],
    ) -> Result<(), tungstenite::Error> {
        // Whatever tungstenite still holds (a pong, say) goes first.
        self.ws.flush().await?;
        let len: usize = parts.iter().map(|p| p.len()).sum();
        let mut header = Vec::with_capacity(10);
        let frame = FrameHeader {
            opcode: OpCode::Data(Data::Text),
            ..FrameHeader::default()
        };
        frame.format(len as u64, &mut header)?;
        let mut slices: Vec<IoSlice<'_>> = std::iter::once(header.as_slice())
            .chain(parts.iter().map(|p| p.as_bytes()))
            .map(IoSlice::new)
            .collect();
        let mut rest = slices.as_mut_slice();
        let io = self.ws.get_mut();
        while !rest.is_empty() {
            let n = io.write_vectored(rest).await?;
            if n == 0 {
                return Err(std::io::Error::from(std::io::ErrorKind::WriteZero).into());
            }
            IoSlice::advance_slices(&mut rest, n);
        }
        io.flush().await?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_message_in_parts_arrives_whole_through_a_narrow_pipe() {
        // A 4 KiB pipe takes the frame in many partial writes.
        let (server, client) = tokio::io::duplex(4096);
        let mut server = WireSocket {
            ws: WebSocketStream::from_raw_socket(server, Role::Server, None).await,
        };
        let mut client = WebSocketStream::from_raw_socket(client, Role::Client, None).await;
        let big: String = (0..300_000)
            .map(|i| char::from(b'a' + (i % 26) as u8))
            .collect();
        let parts = ["{\"x\":\"", &big[..100_001], "", &big[100_001..], "\"}"];
        let expected = parts.concat();
        let reader = tokio::spawn(async move {
            let mut got = Vec::new();
            for _ in 0..3 {
                match client.next().await {
                    Some(Ok(Message::Text(t))) => got.push(t.as_str().to_owned()),
                    other => panic!("expected text, got {other:?}"),
                }
            }
            got
        });
        server.send_text("before".into()).await.expect("send");
        server.send_text_parts(&parts).await.expect("send parts");
        server.send_text("after".into()).await.expect("send");
        let got = reader.await.expect("reader");
        assert_eq!(got[0], "before");
        assert_eq!(got[1].len(), expected.len());
        assert!(got[1] == expected, "the parts arrived changed");
        assert_eq!(got[2], "after");
    }

    #[test]
    fn connection_header_tokens_are_matched_whole_and_case_blind() {
        let mut h = HeaderMap::new();
        h.insert(CONNECTION, HeaderValue::from_static("keep-alive, Upgrade"));
        assert!(header_has_token(&h, CONNECTION, "upgrade"));
        h.insert(CONNECTION, HeaderValue::from_static("upgraded"));
        assert!(!header_has_token(&h, CONNECTION, "upgrade"));
    }
}
