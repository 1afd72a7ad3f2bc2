//! The guard in front of every route: a loopback `Host` with our port
//! (DNS rebinding), no foreign `Origin` (browsers), and the bearer token,
//! compared in constant time. Tokens never reach a log.

use std::sync::Arc;

use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use subtle::ConstantTimeEq;

use crate::AppState;

/// The secret every request must present. Its `Debug` never shows it.
#[derive(Clone)]
pub struct Token(String);

impl Token {
    /// Wraps a token string (64 hex digits for a 256-bit token).
    pub fn new(secret: String) -> Self {
        Self(secret)
    }

    /// The secret itself, for the connection file and the ready line only.
    pub fn expose(&self) -> &str {
        &self.0
    }

    fn matches(&self, presented: &str) -> bool {
        self.0.as_bytes().ct_eq(presented.as_bytes()).into()
    }
}

impl std::fmt::Debug for Token {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Token(<redacted>)")
    }
}

fn deny(status: StatusCode, why: &'static str) -> Response {
    (status, why).into_response()
}

/// Whether `host` names the loopback interface with our port.
fn host_ok(host: &str, port: u16) -> bool {
    let Some((name, p)) = host.rsplit_once(':') else {
        return false;
    };
    let loopback = name == "localhost"
        || name
            .trim_start_matches('[')
            .trim_end_matches(']')
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback());
    p.parse::<u16>().is_ok_and(|p| p == port) && loopback
}

fn bearer(headers: &HeaderMap) -> Option<&str> {
    headers
        .get(header::AUTHORIZATION)?
        .to_str()
        .ok()?
        .strip_prefix("Bearer ")
        .map(str::trim)
}

/// Checks Host, Origin and token, in that order.
pub(crate) async fn guard(
    State(state): State<Arc<AppState>>,
    request: Request<Body>,
    next: Next,
) -> Response {
    let headers = request.headers();
    let host = headers
        .get(header::HOST)
        .and_then(|h| h.to_str().ok())
        .unwrap_or("");
    if !host_ok(host, state.port) {
        tracing::warn!("refused a request with a non-loopback Host header");
        return deny(StatusCode::FORBIDDEN, "forbidden host\n");
    }
    if let Some(origin) = headers.get(header::ORIGIN) {
        let allowed = origin
            .to_str()
            .is_ok_and(|o| state.config.allowed_origins.iter().any(|a| a == o));
        if !allowed {
            tracing::warn!("refused a request from a foreign Origin");
            return deny(StatusCode::FORBIDDEN, "forbidden origin\n");
        }
    }
    match bearer(headers) {
        Some(t) if state.config.token.matches(t) => next.run(request).await,
        _ => {
            tracing::warn!("refused a request without a valid token");
            let mut r = deny(StatusCode::UNAUTHORIZED, "missing or wrong token\n");
            r.headers_mut().insert(
                header::WWW_AUTHENTICATE,
                header::HeaderValue::from_static("Bearer"),
            );
            r
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_loopback_hosts_with_our_port() {
        assert!(host_ok("127.0.0.1:4000", 4000));
        assert!(host_ok("localhost:4000", 4000));
        assert!(host_ok("[::1]:4000", 4000));
        assert!(host_ok("127.0.0.2:4000", 4000), "all of 127/8 is loopback");
        assert!(!host_ok("10.0.0.1:4000", 4000));
        assert!(!host_ok("localhost.evil.example:4000", 4000));
        assert!(!host_ok("127.0.0.1:4001", 4000));
        assert!(!host_ok("evil.example:4000", 4000));
        assert!(!host_ok("127.0.0.1", 4000));
        assert!(!host_ok("", 4000));
    }

    #[test]
    fn token_debug_is_redacted() {
        let t = Token::new("s3cret".into());
        assert!(!format!("{t:?}").contains("s3cret"));
        assert!(t.matches("s3cret"));
        assert!(!t.matches("s3cre"));
    }
}
