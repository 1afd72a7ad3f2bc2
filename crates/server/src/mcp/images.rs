//! Screenshots in MCP answers over HTTP: the image block carries a slot
//! (the computer answers' random per-process marker and a number) and the
//! encoder's base64 pieces are written in its place as the answer leaves,
//! so the megabytes of base64 are neither copied into a JSON string nor
//! scanned for escapes by rmcp's serializer. stdio answers carry the data
//! itself.

use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use axum::body::{Body, Bytes};
use axum::extract::Request;
use axum::http::header;
use axum::middleware::Next;
use axum::response::Response;
use deskhand_engine::encode::EncodedImage;
use futures_util::StreamExt;
use http_body_util::BodyExt;

/// A slot whose answer never left (its client went away) is dropped
/// after this long.
const STALE: Duration = Duration::from_secs(30);

static PENDING: Mutex<Vec<(u64, Instant, EncodedImage)>> = Mutex::new(Vec::new());
static NEXT: AtomicU64 = AtomicU64::new(1);

fn pending() -> std::sync::MutexGuard<'static, Vec<(u64, Instant, EncodedImage)>> {
    PENDING.lock().unwrap_or_else(|e| e.into_inner())
}

/// Keeps `image` for the answer; returns the text to put where its base64
/// goes.
pub fn slot_for(image: EncodedImage) -> String {
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    let mut p = pending();
    p.retain(|(_, at, _)| at.elapsed() < STALE);
    p.push((n, Instant::now(), image));
    format!("{}-{n}.", crate::computer::image_slot())
}

fn take(n: u64) -> Option<EncodedImage> {
    let mut p = pending();
    let i = p.iter().position(|(k, _, _)| *k == n)?;
    Some(p.swap_remove(i).2)
}

/// `text` with every slot replaced by its image's base64.
fn splice(text: &[u8]) -> Vec<u8> {
    let marker = crate::computer::image_slot().as_bytes();
    let mut out = Vec::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = find(rest, marker) {
        out.extend_from_slice(&rest[..at]);
        let after = &rest[at + marker.len()..];
        let digits: &[u8] = after.strip_prefix(b"-").map_or(&[], |d| {
            &d[..d.iter().take_while(|b| b.is_ascii_digit()).count()]
        });
        let complete = !digits.is_empty() && after.get(1 + digits.len()) == Some(&b'.');
        let number = std::str::from_utf8(digits)
            .ok()
            .and_then(|d| d.parse::<u64>().ok());
        let digits = digits.len();
        match (complete, number.and_then(take)) {
            (true, Some(image)) => {
                out.reserve(image.len() * 4 / 3 + 4);
                for piece in image.base64_pieces() {
                    out.extend_from_slice(piece.as_bytes());
                }
                rest = &after[2 + digits..];
            }
            _ => {
                out.extend_from_slice(marker);
                rest = after;
            }
        }
    }
    out.extend_from_slice(rest);
    out
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

/// The layer after rmcp: JSON answers are spliced whole, SSE streams
/// event by event.
pub(crate) async fn fill(request: Request, next: Next) -> Response {
    let response = next.run(request).await;
    let kind = response
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_owned();
    let (mut parts, body) = response.into_parts();
    parts.headers.remove(header::CONTENT_LENGTH);
    if kind.starts_with("application/json") {
        let bytes = match body.collect().await {
            Ok(b) => b.to_bytes(),
            Err(_) => return Response::from_parts(parts, Body::empty()),
        };
        return Response::from_parts(parts, Body::from(splice(&bytes)));
    }
    if kind.starts_with("text/event-stream") {
        return Response::from_parts(parts, Body::from_stream(events_spliced(body)));
    }
    Response::from_parts(parts, body)
}

/// An SSE body with its slots filled: whole events are spliced as they
/// come, and whatever is left when the stream ends goes out too.
fn events_spliced(
    body: Body,
) -> impl futures_util::Stream<Item = Result<Bytes, axum::Error>> + Send {
    let carry = std::sync::Arc::new(Mutex::new(Vec::<u8>::new()));
    let rest = carry.clone();
    let events = body.into_data_stream().map(move |chunk| {
        let mut carry = carry.lock().unwrap_or_else(|e| e.into_inner());
        carry.extend_from_slice(&chunk?);
        let end = carry
            .windows(2)
            .rposition(|w| w == b"\n\n")
            .map_or(0, |i| i + 2);
        let ready: Vec<u8> = carry.drain(..end).collect();
        Ok(Bytes::from(splice(&ready)))
    });
    let tail = futures_util::stream::once(async move {
        let rest = std::mem::take(&mut *rest.lock().unwrap_or_else(|e| e.into_inner()));
        Ok(Bytes::from(splice(&rest)))
    });
    events.chain(tail)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slots_become_base64_and_strangers_stay() {
        let image = EncodedImage::from(vec![1, 2, 3, 4, 5]);
        let slot = slot_for(image);
        let text = format!("{{\"data\":\"{slot}\",\"x\":\"{slot}\"}}");
        let out = String::from_utf8(splice(text.as_bytes())).expect("utf8");
        assert!(out.starts_with("{\"data\":\"AQIDBAU=\""), "{out}");
        // Used once: the second stays as it was.
        assert!(out.ends_with(&format!("\"x\":\"{slot}\"}}")), "{out}");
        let unknown = format!("{}-999999.", crate::computer::image_slot());
        assert_eq!(splice(unknown.as_bytes()), unknown.as_bytes());
    }
}
