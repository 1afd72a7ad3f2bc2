//! The port's own limits through real sockets: connections without the
//! token are bounded in number and time, and the server says why it
//! closes a WebSocket (1009 too big, 1001 idle, 1008 its token replaced).

#![allow(missing_docs)]

use std::sync::Arc;
use std::time::Duration;

use crate::common::TOKEN;
use deskhand_backend_mock::MockDesktop;
use deskhand_engine::{AuditLog, Consent, Engine};
use deskhand_server::{ServerConfig, Token};
use futures_util::{SinkExt, StreamExt};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode;
use tokio_tungstenite::tungstenite::{self, Message};

/// A sandbox server over the mock with `config` changed by `tune`; its
/// port. It stops when the test's runtime ends.
async fn start(tune: impl FnOnce(&mut ServerConfig)) -> u16 {
    let desktop = MockDesktop::new();
    let engine = Arc::new(Engine::new(
        desktop.backend(),
        Consent::sandbox(),
        AuditLog::disabled(),
    ));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let port = listener.local_addr().expect("addr").port();
    let mut config = ServerConfig::new(Token::new(TOKEN.into()));
    tune(&mut config);
    tokio::spawn(deskhand_server::serve(
        listener,
        engine,
        config,
        crate::common::mock_health(),
        std::future::pending(),
    ));
    port
}

type Ws = tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<TcpStream>>;

async fn connect(port: u16) -> Ws {
    connect_with(port, TOKEN).await.expect("the token is taken")
}

/// Connects with `token` and reads the HELLO; the refusal otherwise.
async fn connect_with(port: u16, token: &str) -> Result<Ws, tungstenite::Error> {
    let mut req = format!("ws://127.0.0.1:{port}/v1/ws")
        .into_client_request()
        .expect("request");
    req.headers_mut().insert(
        "Authorization",
        format!("Bearer {token}").parse().expect("header"),
    );
    let (mut ws, _) = tokio::time::timeout(
        Duration::from_secs(5),
        tokio_tungstenite::connect_async(req),
    )
    .await
    .expect("answered within 5 s")?;
    match ws.next().await {
        Some(Ok(Message::Text(t))) => assert!(t.contains("\"HELLO\""), "{t}"),
        other => panic!("expected HELLO, got {other:?}"),
    }
    Ok(ws)
}

/// The close code the server sent, reading until it closes.
async fn close_code(ws: &mut Ws, within: Duration) -> Option<CloseCode> {
    let read = async {
        while let Some(msg) = ws.next().await {
            match msg {
                Ok(Message::Close(frame)) => return frame.map(|f| f.code),
                Ok(_) => {}
                Err(_) => return None,
            }
        }
        None
    };
    tokio::time::timeout(within, read)
        .await
        .expect("the server closed in time")
}

/// Whether the server closes `tcp` within `within` (EOF or reset).
async fn closed_within(tcp: &mut TcpStream, within: Duration) -> bool {
    let mut buf = [0u8; 1024];
    let drain = async {
        loop {
            match tcp.read(&mut buf).await {
                Ok(0) | Err(_) => return,
                Ok(_) => {}
            }
        }
    };
    tokio::time::timeout(within, drain).await.is_ok()
}

#[tokio::test]
async fn a_replaced_token_closes_its_connections_and_is_refused_from_then_on() {
    const CLIENT: &str = "c1c1c1c1c1c1c1c1c1c1c1c1c1c1c1c1c1c1c1c1c1c1c1c1c1c1c1c1c1c1c1c1";
    const NEW: &str = "4e4e4e4e4e4e4e4e4e4e4e4e4e4e4e4e4e4e4e4e4e4e4e4e4e4e4e4e4e4e4e4e";
    let mut person = None;
    let port = start(|c| {
        c.client_tokens = vec![Token::new(CLIENT.into())];
        person = Some(c.token.clone());
    })
    .await;
    let person = person.expect("the served token");
    let mut old = connect(port).await;
    let mut client = connect_with(port, CLIENT).await.expect("a client token");
    person.replace(Token::new(NEW.into()));
    assert_eq!(
        close_code(&mut old, Duration::from_secs(5)).await,
        Some(CloseCode::Policy)
    );
    match connect_with(port, TOKEN).await {
        Err(tungstenite::Error::Http(r)) => assert_eq!(r.status(), 401),
        other => panic!("the old token was not refused: {:?}", other.map(|_| ())),
    }
    connect_with(port, NEW)
        .await
        .expect("the new token is taken");
    // A client's own token is not the person's: its connection stays.
    client
        .send(Message::Text(
            r#"{"type":"CURSOR_POSITION_REQUEST","id":"still","ts":0,"payload":{}}"#.into(),
        ))
        .await
        .expect("send");
    match tokio::time::timeout(Duration::from_secs(5), client.next()).await {
        Ok(Some(Ok(Message::Text(t)))) => assert!(t.contains("\"still\""), "{t}"),
        other => panic!("the client's connection did not answer: {other:?}"),
    }
}

#[tokio::test]
async fn an_over_size_message_is_answered_with_close_1009() {
    let port = start(|c| c.max_message_bytes = 1024).await;
    let mut ws = connect(port).await;
    ws.send(Message::Text("x".repeat(4096).into()))
        .await
        .expect("send");
    assert_eq!(
        close_code(&mut ws, Duration::from_secs(5)).await,
        Some(CloseCode::Size)
    );
}

#[tokio::test]
async fn pings_alone_do_not_keep_a_connection_open() {
    let port = start(|c| c.idle_timeout = Duration::from_millis(300)).await;
    let mut ws = connect(port).await;
    let pinging = async {
        loop {
            if ws.send(Message::Ping(Vec::new().into())).await.is_err() {
                return None;
            }
            match tokio::time::timeout(Duration::from_millis(50), ws.next()).await {
                Ok(Some(Ok(Message::Close(frame)))) => return frame.map(|f| f.code),
                Ok(None | Some(Err(_))) => return None,
                _ => {}
            }
        }
    };
    let code = tokio::time::timeout(Duration::from_secs(5), pinging)
        .await
        .expect("closed despite the pings");
    assert_eq!(code, Some(CloseCode::Away));
}

#[tokio::test]
async fn a_half_sent_request_is_closed_at_the_header_deadline() {
    let port = start(|c| c.header_timeout = Duration::from_millis(300)).await;
    let mut tcp = TcpStream::connect(("127.0.0.1", port))
        .await
        .expect("connect");
    tcp.write_all(b"GET /v1/ws HTTP/1.1\r\nHost: 127.0.0.1\r\nUpg")
        .await
        .expect("write");
    assert!(closed_within(&mut tcp, Duration::from_secs(3)).await);
    let mut silent = TcpStream::connect(("127.0.0.1", port))
        .await
        .expect("connect");
    assert!(closed_within(&mut silent, Duration::from_secs(3)).await);
}

#[tokio::test]
async fn half_open_connections_do_not_keep_a_client_out() {
    // The deadline is an hour away: only the bound can let the client in.
    let port = start(|c| {
        c.header_timeout = Duration::from_secs(3600);
        c.max_unauthenticated = 16;
    })
    .await;
    let mut flood = Vec::new();
    for _ in 0..200 {
        let mut tcp = TcpStream::connect(("127.0.0.1", port))
            .await
            .expect("connect");
        tcp.write_all(b"GET /v1/ws HTT").await.expect("write");
        flood.push(tcp);
    }
    let _client = connect(port).await;
    let mut closed = 0;
    for tcp in &mut flood {
        if closed_within(tcp, Duration::from_millis(20)).await {
            closed += 1;
        }
    }
    assert!(
        closed >= 200 - 16,
        "only {closed} of 200 half-open connections were closed"
    );
}
