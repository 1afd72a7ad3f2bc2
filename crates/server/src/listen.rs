//! The accept loop and the bound on connections that have not shown the
//! token yet.
//!
//! Every TCP connection starts unauthenticated. Until a request on it
//! passes the guard it holds one of at most
//! [`Limits::max_unauthenticated`] slots and has [`Limits::header_timeout`]
//! to get there; then it is closed. A new connection that finds every slot
//! taken closes the oldest unauthenticated one instead of waiting behind
//! it, so a local process that opens connections and sends nothing (or
//! half a request) cannot keep a real client out, and neither file
//! descriptors nor memory grow with the number it opens. Authenticated
//! WebSocket sessions are bounded apart (`ServerConfig::max_connections`).
//!
//! HTTP/1 is served by hyper directly (axum's `serve` has no header
//! deadline): the header deadline also holds for every later request on a
//! kept-alive connection.

use std::collections::BTreeMap;
use std::future::Future;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use axum::Router;
use axum::body::Body;
use hyper::body::Incoming;
use hyper::server::conn::http1;
use hyper_util::rt::{TokioIo, TokioTimer};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{Notify, watch};
use tower_service::Service as _;

/// How long an accept that failed for want of file descriptors waits
/// before the next try (the kernel keeps the waiting connections queued).
const ACCEPT_BACKOFF: Duration = Duration::from_millis(100);

/// How long shutdown waits for requests in flight.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(2);

/// The bounds on connections before authentication.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Limits {
    /// Time from connect (or from the end of the previous request) to a
    /// request's complete headers, and from connect to passing the guard.
    pub header_timeout: Duration,
    /// Most connections that have not passed the guard at once.
    pub max_unauthenticated: usize,
}

/// The unauthenticated connections, oldest first, each with the signal
/// that closes it.
#[derive(Debug, Default)]
struct Waiting {
    next_id: u64,
    open: BTreeMap<u64, Arc<Notify>>,
}

/// The shared pool of unauthenticated slots.
#[derive(Debug)]
struct Pool {
    max: usize,
    waiting: Mutex<Waiting>,
}

impl Pool {
    /// A slot for a new connection; the oldest one is told to close when
    /// every slot is taken.
    fn admit(self: &Arc<Self>) -> Ticket {
        let mut w = self.waiting.lock().unwrap_or_else(PoisonError::into_inner);
        while w.open.len() >= self.max.max(1) {
            let Some((_, evicted)) = w.open.pop_first() else {
                break;
            };
            evicted.notify_one();
        }
        let id = w.next_id;
        w.next_id += 1;
        let evicted = Arc::new(Notify::new());
        w.open.insert(id, evicted.clone());
        Ticket(Admission {
            id,
            pool: self.clone(),
            evicted,
            passed: Arc::new(AtomicBool::new(false)),
        })
    }

    fn release(&self, id: u64) {
        let mut w = self.waiting.lock().unwrap_or_else(PoisonError::into_inner);
        w.open.remove(&id);
    }

    #[cfg(test)]
    fn len(&self) -> usize {
        self.waiting
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .open
            .len()
    }
}

/// One connection's place among the unauthenticated. It travels in every
/// request's extensions so that the guard can say the token was right.
#[derive(Debug, Clone)]
pub(crate) struct Admission {
    id: u64,
    pool: Arc<Pool>,
    evicted: Arc<Notify>,
    passed: Arc<AtomicBool>,
}

impl Admission {
    /// The connection showed the token: it leaves the pool and is no
    /// longer closed for being slow or the oldest.
    pub(crate) fn authenticated(&self) {
        if !self.passed.swap(true, Ordering::AcqRel) {
            self.pool.release(self.id);
        }
    }

    fn has_passed(&self) -> bool {
        self.passed.load(Ordering::Acquire)
    }

    /// Completes when the connection must close: it did not pass the
    /// guard within `limit`, or a newer connection took its slot. Never
    /// completes once it has passed.
    async fn expired(&self, limit: Duration) {
        tokio::select! {
            () = tokio::time::sleep(limit) => {}
            () = self.evicted.notified() => {}
        }
        if self.has_passed() {
            std::future::pending::<()>().await;
        }
    }
}

/// The connection's own [`Admission`]: its slot is given back when the
/// connection ends, whether or not it passed.
#[derive(Debug)]
struct Ticket(Admission);

impl Drop for Ticket {
    fn drop(&mut self) {
        self.0.pool.release(self.0.id);
    }
}

/// Accepts connections on `listener` and serves each with `router` until
/// `shutdown` completes; then stops accepting, lets requests in flight
/// finish (for a short while) and returns.
pub(crate) async fn serve(
    listener: TcpListener,
    router: Router,
    limits: Limits,
    shutdown: impl Future<Output = ()> + Send,
) {
    let pool = Arc::new(Pool {
        max: limits.max_unauthenticated,
        waiting: Mutex::default(),
    });
    let (stop_tx, stop_rx) = watch::channel(false);
    tokio::pin!(shutdown);
    loop {
        let stream = tokio::select! {
            () = &mut shutdown => break,
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => stream,
                Err(e) => {
                    accept_failed(&e).await;
                    continue;
                }
            },
        };
        // Answers are small writes (a head, then a body): without this,
        // Nagle holds the second until the client's delayed ACK (40 ms).
        if let Err(e) = stream.set_nodelay(true) {
            tracing::debug!(error = %e, "TCP_NODELAY not set");
        }
        let ticket = pool.admit();
        let conn = connection(stream, router.clone(), limits, ticket, stop_rx.clone());
        tokio::spawn(conn);
    }
    drop(listener);
    let _ = stop_tx.send(true);
    drop(stop_rx);
    if tokio::time::timeout(SHUTDOWN_GRACE, stop_tx.closed())
        .await
        .is_err()
    {
        tracing::info!("requests still in flight at shutdown were dropped");
    }
}

/// Waits a little after an accept that failed for want of descriptors or
/// memory (the next one would fail too); a failure that concerns only the
/// one connection (reset or aborted before it was accepted) does not wait.
async fn accept_failed(e: &std::io::Error) {
    use std::io::ErrorKind;
    if matches!(
        e.kind(),
        ErrorKind::ConnectionAborted | ErrorKind::ConnectionReset | ErrorKind::Interrupted
    ) {
        tracing::debug!(error = %e, "accept failed");
        return;
    }
    tracing::warn!(error = %e, "cannot accept a connection; waiting");
    tokio::time::sleep(ACCEPT_BACKOFF).await;
}

/// Serves one connection: HTTP/1 with upgrades, closed when it expires
/// unauthenticated, shut down gracefully when the server stops.
async fn connection(
    stream: TcpStream,
    router: Router,
    limits: Limits,
    ticket: Ticket,
    mut stop: watch::Receiver<bool>,
) {
    let for_requests = ticket.0.clone();
    let service = hyper::service::service_fn(move |mut request: hyper::Request<Incoming>| {
        request.extensions_mut().insert(for_requests.clone());
        router.clone().call(request.map(Body::new))
    });
    let mut builder = http1::Builder::new();
    builder
        .timer(TokioTimer::new())
        .header_read_timeout(limits.header_timeout);
    let conn = builder
        .serve_connection(TokioIo::new(stream), service)
        .with_upgrades();
    tokio::pin!(conn);
    tokio::select! {
        done = conn.as_mut() => {
            if let Err(e) = done {
                tracing::debug!(error = %e, "connection ended with an error");
            }
        }
        () = ticket.0.expired(limits.header_timeout) => {
            tracing::debug!("closed a connection that did not show the token in time");
        }
        () = async {
            let _ = stop.wait_for(|stopping| *stopping).await;
        } => {
            // A connection without the token has nothing in flight worth
            // waiting for.
            if ticket.0.has_passed() {
                conn.as_mut().graceful_shutdown();
                let _ = conn.await;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pool(max: usize) -> Arc<Pool> {
        Arc::new(Pool {
            max,
            waiting: Mutex::default(),
        })
    }

    #[tokio::test]
    async fn a_full_pool_closes_its_oldest_connection() {
        let pool = pool(2);
        let first = pool.admit();
        let second = pool.admit();
        let third = pool.admit();
        assert_eq!(pool.len(), 2);
        let long = Duration::from_secs(3600);
        tokio::time::timeout(Duration::from_secs(1), first.0.expired(long))
            .await
            .expect("the oldest is told to close");
        assert!(
            tokio::time::timeout(Duration::from_millis(50), second.0.expired(long))
                .await
                .is_err(),
            "the others stay"
        );
        drop(third);
        assert_eq!(pool.len(), 1, "a closed connection gives its slot back");
    }

    #[tokio::test]
    async fn an_authenticated_connection_leaves_the_pool_and_never_expires() {
        let pool = pool(1);
        let a = pool.admit();
        let guard_copy = a.0.clone();
        guard_copy.authenticated();
        drop(guard_copy);
        assert_eq!(pool.len(), 0);
        let b = pool.admit();
        assert_eq!(pool.len(), 1, "b did not have to close a");
        assert!(
            tokio::time::timeout(Duration::from_millis(50), a.0.expired(Duration::ZERO))
                .await
                .is_err(),
            "past its deadline, still open"
        );
        drop(b);
        assert_eq!(pool.len(), 0);
    }

    #[tokio::test]
    async fn an_unauthenticated_connection_expires_at_its_deadline() {
        let pool = pool(4);
        let a = pool.admit();
        tokio::time::timeout(
            Duration::from_secs(1),
            a.0.expired(Duration::from_millis(20)),
        )
        .await
        .expect("expired");
    }
}
