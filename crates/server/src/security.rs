//! The guard in front of every route: a loopback `Host` with our port
//! (DNS rebinding), no foreign `Origin` (browsers), and the bearer token,
//! compared in constant time. Tokens never reach a log.

use std::sync::Arc;

use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{HeaderMap, StatusCode, Uri, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use subtle::ConstantTimeEq;

use crate::AppState;
use crate::listen::Admission;

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

/// The person's token as it is now. The host can replace it while serving
/// (the Settings window's Replace); requests with the old one are refused
/// from then on and WebSocket connections opened with it are closed.
#[derive(Clone)]
pub struct PersonToken(Arc<tokio::sync::watch::Sender<Token>>);

impl PersonToken {
    /// Starts with `token`.
    pub fn new(token: Token) -> Self {
        Self(Arc::new(tokio::sync::watch::Sender::new(token)))
    }

    /// The token now.
    pub fn current(&self) -> Token {
        self.0.borrow().clone()
    }

    /// Puts `token` in the old one's place.
    pub fn replace(&self, token: Token) {
        self.0.send_replace(token);
        tracing::warn!("the token was replaced: the old one is refused from now on");
    }

    /// Tells of the next replacement.
    pub(crate) fn replaced(&self) -> tokio::sync::watch::Receiver<Token> {
        self.0.subscribe()
    }

    fn matches(&self, presented: &str) -> bool {
        self.0.borrow().matches(presented)
    }
}

impl std::fmt::Debug for PersonToken {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("PersonToken(<redacted>)")
    }
}

/// A refusal, said in the status and a one-line body. The connection is
/// closed after it: a client that was refused does not keep its slot.
fn deny(status: StatusCode, why: &'static str) -> Response {
    let mut r = (status, why).into_response();
    r.headers_mut().insert(
        header::CONNECTION,
        header::HeaderValue::from_static("close"),
    );
    r
}

/// Whether `host` names the loopback interface with our port. Host names
/// are case-insensitive (RFC 9110 §4.2.3).
fn host_ok(host: &str, port: u16) -> bool {
    let Some((name, p)) = host.rsplit_once(':') else {
        return false;
    };
    let loopback = name.eq_ignore_ascii_case("localhost")
        || name
            .strip_prefix('[')
            .and_then(|n| n.strip_suffix(']'))
            .unwrap_or(name)
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback());
    p.parse::<u16>().is_ok_and(|p| p == port) && loopback
}

/// The authority a request is addressed to, when it is acceptable: the
/// request target's own in absolute form (it overrides `Host`, RFC 9112
/// §3.2.2), and otherwise the one `Host` header. More than one `Host` is a
/// malformed request (400); a foreign or missing one is refused (403).
fn check_host(uri: &Uri, headers: &HeaderMap, port: u16) -> Result<(), (StatusCode, &'static str)> {
    let mut hosts = headers.get_all(header::HOST).iter();
    let host = hosts.next();
    if hosts.next().is_some() {
        return Err((StatusCode::BAD_REQUEST, "more than one Host header\n"));
    }
    let foreign = (StatusCode::FORBIDDEN, "forbidden host\n");
    if let Some(authority) = uri.authority() {
        // `user@host` is never ours, whatever follows the `@`.
        if authority.as_str().contains('@') || !host_ok(authority.as_str(), port) {
            return Err(foreign);
        }
    }
    match host.and_then(|h| h.to_str().ok()) {
        Some(h) if host_ok(h, port) => Ok(()),
        _ => Err(foreign),
    }
}

/// The token of the one `Authorization: Bearer …` header. The scheme is
/// case-insensitive (RFC 9110 §11.1).
fn bearer(headers: &HeaderMap) -> Option<&str> {
    let mut all = headers.get_all(header::AUTHORIZATION).iter();
    let value = all.next()?.to_str().ok()?;
    if all.next().is_some() {
        return None;
    }
    let (scheme, token) = value.trim_start().split_once(' ')?;
    scheme
        .eq_ignore_ascii_case("bearer")
        .then_some(token.trim())
}

/// Checks Host, Origin and token, in that order. A request that passes
/// admits its connection ([`Admission::authenticated`]): it no longer
/// counts against the bound on connections without the token.
pub(crate) async fn guard(
    State(state): State<Arc<AppState>>,
    request: Request<Body>,
    next: Next,
) -> Response {
    let headers = request.headers();
    if let Err((status, why)) = check_host(request.uri(), headers, state.port) {
        tracing::warn!(%status, "refused a request with a bad Host or request target");
        return deny(status, why);
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
    let index = bearer(headers).and_then(|t| {
        if state.config.token.matches(t) {
            return Some(0);
        }
        let mut client = state.config.client_tokens.iter();
        client.position(|known| known.matches(t)).map(|i| i + 1)
    });
    match index {
        Some(index) => {
            if let Some(admission) = request.extensions().get::<Admission>() {
                admission.authenticated();
            }
            let mut request = request;
            request
                .extensions_mut()
                .insert(crate::mcp::TokenIndex(index));
            next.run(request).await
        }
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
        assert!(
            host_ok("LOCALHOST:4000", 4000),
            "host names are case-insensitive"
        );
        assert!(host_ok("LocalHost:4000", 4000));
        assert!(!host_ok("[localhost]:4000", 4000));
        assert!(!host_ok("[127.0.0.1:4000", 4000));
    }

    fn headers(pairs: &[(header::HeaderName, &str)]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for (k, v) in pairs {
            h.append(k.clone(), v.parse().expect("header value"));
        }
        h
    }

    #[test]
    fn one_loopback_host_and_no_foreign_absolute_target() {
        let path: Uri = "/v1/ws".parse().expect("uri");
        let good = headers(&[(header::HOST, "127.0.0.1:4000")]);
        assert!(check_host(&path, &good, 4000).is_ok());
        let twice = headers(&[
            (header::HOST, "127.0.0.1:4000"),
            (header::HOST, "evil.example:4000"),
        ]);
        assert_eq!(
            check_host(&path, &twice, 4000).map_err(|e| e.0),
            Err(StatusCode::BAD_REQUEST)
        );
        let same_twice = headers(&[
            (header::HOST, "127.0.0.1:4000"),
            (header::HOST, "127.0.0.1:4000"),
        ]);
        assert_eq!(
            check_host(&path, &same_twice, 4000).map_err(|e| e.0),
            Err(StatusCode::BAD_REQUEST)
        );
        assert_eq!(
            check_host(&path, &HeaderMap::new(), 4000).map_err(|e| e.0),
            Err(StatusCode::FORBIDDEN)
        );
        let evil: Uri = "http://evil.example/v1/ws".parse().expect("uri");
        assert_eq!(
            check_host(&evil, &good, 4000).map_err(|e| e.0),
            Err(StatusCode::FORBIDDEN)
        );
        let userinfo: Uri = "http://127.0.0.1:4000@evil.example:4000/v1/ws"
            .parse()
            .expect("uri");
        assert!(check_host(&userinfo, &good, 4000).is_err());
        let ours: Uri = "http://localhost:4000/v1/ws".parse().expect("uri");
        assert!(check_host(&ours, &good, 4000).is_ok());
    }

    #[test]
    fn the_bearer_scheme_is_case_insensitive_and_said_once() {
        let auth = |v: &str| headers(&[(header::AUTHORIZATION, v)]);
        assert_eq!(bearer(&auth("Bearer abc")), Some("abc"));
        assert_eq!(bearer(&auth("bearer abc")), Some("abc"));
        assert_eq!(bearer(&auth("BEARER  abc ")), Some("abc"));
        assert_eq!(bearer(&auth("Basic abc")), None);
        assert_eq!(bearer(&auth("Bearerabc")), None);
        assert_eq!(bearer(&auth("abc")), None);
        let twice = headers(&[
            (header::AUTHORIZATION, "Bearer abc"),
            (header::AUTHORIZATION, "Bearer abc"),
        ]);
        assert_eq!(bearer(&twice), None);
    }

    #[test]
    fn token_debug_is_redacted() {
        let t = Token::new("s3cret".into());
        assert!(!format!("{t:?}").contains("s3cret"));
        assert!(t.matches("s3cret"));
        assert!(!t.matches("s3cre"));
    }

    #[test]
    fn a_replaced_person_token_matches_only_the_new_secret() {
        let token = PersonToken::new(Token::new("old".into()));
        let replaced = token.replaced();
        token.replace(Token::new("new".into()));
        assert!(replaced.has_changed().expect("the sender lives"));
        assert!(!token.matches("old"));
        assert!(token.matches("new"));
        assert_eq!(token.current().expose(), "new");
        assert!(!format!("{token:?}").contains("new"));
    }
}
