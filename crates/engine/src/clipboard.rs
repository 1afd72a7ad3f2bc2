//! The clipboard sandbox (DESIGN decision 7, wire-ops Q3): default deny;
//! with the clipboard enabled, writes and a writeback-only read (what
//! deskhand itself wrote in the last 30 s and is still there); with foreign
//! reads enabled and approved, any text. Concealed contents and
//! credential-looking text are refused on every path. Content never reaches
//! the audit log: only its length and a hash prefix.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use crate::backend::{BackendError, Clipboard, ClipboardContent, ClipboardRead};
use crate::credentials::looks_like_credential;
use crate::error::EngineError;
use crate::{Action, Engine, Session, audit};

/// How long what deskhand wrote stays readable in writeback-only mode.
pub const WRITEBACK_WINDOW: Duration = Duration::from_secs(30);
/// `type` with `paste: true` pastes only text at least this long; shorter
/// text is typed.
pub const PASTE_MIN_CHARS: usize = 200;
/// Clipboard limit when the client's HELLO_ACK names none.
pub const DEFAULT_MAX_BYTES: u64 = 1 << 20;
/// The most deskhand moves through the clipboard in one call, whatever the
/// client accepts (one X request carries it; one wire message holds it).
pub const MAX_BYTES: u64 = 8 << 20;
/// How long a paste waits for the target app to fetch the text before the
/// previous clipboard is restored.
const PASTE_FETCH_TIMEOUT: Duration = Duration::from_millis(1000);

/// What the person allowed of the clipboard.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ClipboardPolicy {
    /// Writes, pastes and writeback-only reads (`--enable-clipboard`).
    pub enabled: bool,
    /// Reads of what others copied (`--enable-clipboard-read-foreign`).
    pub read_foreign: bool,
    /// The host approves every foreign read (`--approve-clipboard-reads`);
    /// without it a foreign read is refused as not approved.
    pub foreign_reads_approved: bool,
}

/// Why a clipboard read was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ConcealReason {
    /// The owner marked the content secret.
    ConcealedType {
        /// The marker found.
        marker: &'static str,
    },
    /// Only deskhand's own writes are readable, and this is not one.
    WritebackOnly,
    /// deskhand wrote recently, but the clipboard changed since.
    WritebackOverwritten,
    /// The text looks like a credential.
    CredentialLike,
    /// The owner would not list its formats, so a concealed marker cannot
    /// be ruled out.
    Unverifiable,
}

impl ConcealReason {
    /// The wire name in `details.reason`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::ConcealedType { .. } => "concealed_type",
            Self::WritebackOnly => "writeback_only",
            Self::WritebackOverwritten => "writeback_overwritten",
            Self::CredentialLike => "credential_like",
            Self::Unverifiable => "unverifiable",
        }
    }

    /// The error message.
    pub fn message(self) -> &'static str {
        match self {
            Self::ConcealedType { .. } => {
                "clipboard contents marked concealed by source application"
            }
            Self::WritebackOnly => "clipboard contents not written by deskhand within the last 30s",
            Self::WritebackOverwritten => "clipboard contents changed since deskhand wrote them",
            Self::CredentialLike => "clipboard contents look like a credential",
            Self::Unverifiable => {
                "the clipboard's owner did not list its formats, so it may hold a secret"
            }
        }
    }
}

/// What deskhand last wrote: a hash (never the text), when, and the change
/// count right after.
#[derive(Debug, Clone)]
struct Writeback {
    digest: [u8; 32],
    at: Instant,
    change_count: u64,
}

/// The engine's clipboard: the backend, the policy, and the last write.
pub(crate) struct ClipboardGate {
    backend: Option<Arc<dyn Clipboard>>,
    /// The person may change it while deskhand runs (the settings file).
    policy: Mutex<ClipboardPolicy>,
    last_write: Mutex<Option<Writeback>>,
}

fn digest(text: &str) -> [u8; 32] {
    Sha256::digest(text.as_bytes()).into()
}

impl ClipboardGate {
    pub(crate) fn new(backend: Option<Arc<dyn Clipboard>>, policy: ClipboardPolicy) -> Self {
        Self {
            backend,
            policy: Mutex::new(policy),
            last_write: Mutex::new(None),
        }
    }

    /// The policy in force.
    pub(crate) fn policy(&self) -> ClipboardPolicy {
        *self.policy.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Applies a new policy from the next call on.
    pub(crate) fn set_policy(&self, policy: ClipboardPolicy) {
        *self.policy.lock().unwrap_or_else(|e| e.into_inner()) = policy;
    }

    fn backend(&self, feature: &'static str) -> Result<Arc<dyn Clipboard>, EngineError> {
        match &self.backend {
            Some(b) if self.policy().enabled => Ok(b.clone()),
            _ => Err(EngineError::NotSupported { feature }),
        }
    }

    /// The refusal for content deskhand did not write, in writeback-only
    /// mode.
    fn not_ours(&self) -> EngineError {
        let age = self
            .last_write
            .lock()
            .ok()
            .and_then(|w| w.as_ref().map(|w| w.at.elapsed()));
        let reason = if age.is_some_and(|a| a < WRITEBACK_WINDOW) {
            ConcealReason::WritebackOverwritten
        } else {
            ConcealReason::WritebackOnly
        };
        concealed(reason, age)
    }

    /// Decides what a read may return (pure policy, no I/O).
    fn judge(&self, read: ClipboardRead, max_bytes: u64) -> Result<String, EngineError> {
        self.judge_as(read, max_bytes, self.policy().foreign_reads_approved)
    }

    /// [`Self::judge`], with a foreign read `approved` (by the flag, or by
    /// the person asked just now).
    fn judge_as(
        &self,
        read: ClipboardRead,
        max_bytes: u64,
        approved: bool,
    ) -> Result<String, EngineError> {
        let text = match read.content {
            ClipboardContent::Foreign => return Err(self.not_ours()),
            ClipboardContent::Unverifiable => {
                return Err(concealed(ConcealReason::Unverifiable, None));
            }
            ClipboardContent::Concealed { marker } => {
                return Err(concealed(ConcealReason::ConcealedType { marker }, None));
            }
            ClipboardContent::TooLarge { bytes } => {
                return Err(EngineError::TooLarge {
                    what: "clipboard content",
                    bytes,
                    max_bytes,
                });
            }
            ClipboardContent::NoText => String::new(),
            ClipboardContent::Text(t) => t,
        };
        if text.len() as u64 > max_bytes {
            return Err(EngineError::TooLarge {
                what: "clipboard content",
                bytes: Some(text.len() as u64),
                max_bytes,
            });
        }
        let last = self.last_write.lock().ok().and_then(|w| w.clone());
        let ours = last.as_ref().is_some_and(|w| {
            w.at.elapsed() < WRITEBACK_WINDOW
                && w.change_count == read.change_count
                && w.digest == digest(&text)
        });
        if !ours {
            if !self.policy().read_foreign {
                return Err(self.not_ours());
            }
            if !approved {
                return Err(EngineError::NotGranted {
                    capability: "clipboard_read",
                    needed: "host_approval",
                });
            }
        }
        if looks_like_credential(&text) {
            return Err(concealed(ConcealReason::CredentialLike, None));
        }
        Ok(text)
    }

    fn remember_write(&self, text: &str, change_count: u64) {
        if let Ok(mut last) = self.last_write.lock() {
            *last = Some(Writeback {
                digest: digest(text),
                at: Instant::now(),
                change_count,
            });
        }
    }
}

fn concealed(reason: ConcealReason, age: Option<Duration>) -> EngineError {
    EngineError::ClipboardConcealed {
        reason,
        writeback_age_seconds: age.map(|a| a.as_secs_f64()),
    }
}

/// Runs a blocking clipboard call off the async threads.
async fn blocking<R: Send + 'static>(
    f: impl FnOnce() -> Result<R, BackendError> + Send + 'static,
) -> Result<R, EngineError> {
    tokio::task::spawn_blocking(f)
        .await
        .map_err(|_| EngineError::ShuttingDown)?
        .map_err(EngineError::from)
}

fn bounded(what: &'static str, text: &str, max_bytes: u64) -> Result<(), EngineError> {
    let max_bytes = max_bytes.min(MAX_BYTES);
    if text.len() as u64 > max_bytes {
        return Err(EngineError::TooLarge {
            what,
            bytes: Some(text.len() as u64),
            max_bytes,
        });
    }
    Ok(())
}

impl Engine {
    /// What the person allows of the clipboard now (the Doctor window says
    /// it).
    pub fn clipboard_policy(&self) -> ClipboardPolicy {
        self.clipboard.policy()
    }

    /// Judges `read`; a foreign read the flag does not approve is put to
    /// the person, when the host can ask one.
    async fn judge_or_ask(
        &self,
        session: &Session,
        read: ClipboardRead,
        max_bytes: u64,
    ) -> Result<String, EngineError> {
        match self.clipboard.judge(read.clone(), max_bytes) {
            Err(EngineError::NotGranted {
                needed: "host_approval",
                ..
            }) if self.person_present() => {
                self.ask(session, crate::approval::Needs::ClipboardRead, &[], &[])
                    .await?;
                self.clipboard.judge_as(read, max_bytes, true)
            }
            other => other,
        }
    }

    /// Reads the clipboard as text under the sandbox policy. Every read is
    /// audited, refused or not, with the length and hash prefix only.
    pub async fn clipboard_read(
        &self,
        session: &Session,
        max_bytes: u64,
    ) -> Result<String, EngineError> {
        let started = Instant::now();
        let max_bytes = max_bytes.min(MAX_BYTES);
        let foreign = self.clipboard.policy().read_foreign;
        let result = match self.clipboard.backend("clipboard.read") {
            Ok(cb) => match blocking(move || cb.read_text(max_bytes, foreign)).await {
                Ok(read) => self.judge_or_ask(session, read, max_bytes).await,
                Err(e) => Err(e),
            },
            Err(e) => Err(e),
        };
        let target = match &result {
            Ok(text) => audit::redacted_text(text),
            Err(EngineError::ClipboardConcealed { reason, .. }) => {
                json!({"reason": reason.as_str()})
            }
            Err(_) => Value::Null,
        };
        self.record(
            session,
            "clipboard.read",
            target,
            result.as_ref().map(|_| ()),
            started,
        );
        result
    }

    /// Puts `text` on the clipboard, after checking its size.
    pub async fn clipboard_write(
        &self,
        session: &Session,
        text: String,
        max_bytes: u64,
    ) -> Result<(), EngineError> {
        let started = Instant::now();
        let target = audit::redacted_text(&text);
        let result = self.clipboard_write_inner(text, max_bytes).await;
        self.record(
            session,
            "clipboard.write",
            target,
            result.as_ref().map(|_| ()),
            started,
        );
        result
    }

    async fn clipboard_write_inner(&self, text: String, max_bytes: u64) -> Result<(), EngineError> {
        let cb = self.clipboard.backend("clipboard.write")?;
        bounded("clipboard content", &text, max_bytes)?;
        self.write_remembered(cb, text).await.map(|_| ())
    }

    /// Writes `text` and remembers it as deskhand's own write; returns the
    /// change count after it.
    async fn write_remembered(
        &self,
        cb: Arc<dyn Clipboard>,
        text: String,
    ) -> Result<u64, EngineError> {
        let (text, count) = blocking(move || cb.write_text(&text).map(|n| (text, n))).await?;
        self.clipboard.remember_write(&text, count);
        Ok(count)
    }

    /// `type` with `paste: true` for long text: put it on the clipboard,
    /// press Ctrl+V, and with `preserve` put back what was there unless the
    /// clipboard changed meanwhile. Returns whether it restored.
    pub(crate) async fn paste(
        &self,
        session: &Session,
        text: String,
        preserve: bool,
    ) -> Result<bool, EngineError> {
        let cb = self.clipboard.backend("clipboard.write")?;
        bounded("pasted text", &text, MAX_BYTES)?;
        let before = if preserve {
            let cb = cb.clone();
            // Read only to put it back; it never leaves the engine.
            match blocking(move || cb.read_text(MAX_BYTES, true))
                .await?
                .content
            {
                ClipboardContent::Text(t) => Some(t),
                // Nothing restorable (empty, concealed, too large, not text).
                _ => None,
            }
        } else {
            None
        };
        let written = self.write_remembered(cb.clone(), text).await?;
        let id = session.id.clone();
        let chord = Action::Key {
            keys: self.policy.paste.to_vec(),
        };
        // Fetches from here on are the paste (a clipboard manager copies
        // as soon as the owner changes, before the keys are sent).
        let fetched_before = cb.fetches();
        self.exec
            .run(move |desk| desk.perform(&id, &chord))
            .await??;
        let Some(before) = before else {
            return Ok(false);
        };
        // Restore only after the app took the text (never before: it would
        // paste the old content), and only if nobody copied anything since
        // deskhand wrote.
        let deadline = Instant::now() + PASTE_FETCH_TIMEOUT;
        while cb.fetches() == fetched_before {
            if Instant::now() >= deadline {
                tracing::info!("the paste was not fetched in time: not restoring");
                return Ok(false);
            }
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        let restored = blocking(move || cb.write_if_unchanged(written, &before)).await?;
        if !restored {
            tracing::info!("clipboard changed during the paste: not restoring the old content");
        }
        Ok(restored)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn gate(policy: ClipboardPolicy) -> ClipboardGate {
        ClipboardGate::new(None, policy)
    }

    fn foreign(change_count: u64) -> ClipboardRead {
        ClipboardRead {
            content: ClipboardContent::Foreign,
            change_count,
        }
    }

    fn text(t: &str, change_count: u64) -> ClipboardRead {
        ClipboardRead {
            content: ClipboardContent::Text(t.into()),
            change_count,
        }
    }

    fn reason(r: Result<String, EngineError>) -> &'static str {
        match r {
            Err(EngineError::ClipboardConcealed { reason, .. }) => reason.as_str(),
            other => panic!("expected concealed, got {other:?}"),
        }
    }

    const WRITEBACK: ClipboardPolicy = ClipboardPolicy {
        enabled: true,
        read_foreign: false,
        foreign_reads_approved: false,
    };
    const FOREIGN: ClipboardPolicy = ClipboardPolicy {
        enabled: true,
        read_foreign: true,
        foreign_reads_approved: true,
    };

    #[test]
    fn writeback_only_reads_back_only_our_own_write() {
        let g = gate(WRITEBACK);
        assert_eq!(reason(g.judge(foreign(3), 100)), "writeback_only");
        assert_eq!(reason(g.judge(text("foreign", 3), 100)), "writeback_only");
        g.remember_write("mine", 7);
        assert_eq!(g.judge(text("mine", 7), 100).expect("ours"), "mine");
        // Same text copied again by someone else: the change count moved.
        assert_eq!(
            reason(g.judge(text("mine", 9), 100)),
            "writeback_overwritten"
        );
        assert_eq!(
            reason(g.judge(text("other", 7), 100)),
            "writeback_overwritten"
        );
        assert_eq!(reason(g.judge(foreign(9), 100)), "writeback_overwritten");
    }

    #[test]
    fn foreign_reads_need_the_flag_and_approval() {
        let g = gate(FOREIGN);
        assert_eq!(g.judge(text("hello", 1), 100).expect("read"), "hello");
        let unapproved = gate(ClipboardPolicy {
            foreign_reads_approved: false,
            ..FOREIGN
        });
        assert!(matches!(
            unapproved.judge(text("hello", 1), 100),
            Err(EngineError::NotGranted { .. })
        ));
    }

    #[test]
    fn secrets_are_refused_on_every_path() {
        let g = gate(FOREIGN);
        let marked = ClipboardRead {
            content: ClipboardContent::Concealed {
                marker: "x-kde-passwordManagerHint",
            },
            change_count: 1,
        };
        assert_eq!(reason(g.judge(marked, 100)), "concealed_type");
        let unlisted = ClipboardRead {
            content: ClipboardContent::Unverifiable,
            change_count: 1,
        };
        assert_eq!(reason(g.judge(unlisted, 100)), "unverifiable");
        assert_eq!(
            reason(g.judge(text("ghp_0123456789abcdefghijABCD", 1), 100)),
            "credential_like"
        );
        // Even deskhand's own write comes back refused when it looks secret.
        g.remember_write("password=hunter2", 5);
        assert_eq!(
            reason(g.judge(text("password=hunter2", 5), 100)),
            "credential_like"
        );
    }

    #[test]
    fn sizes_are_bounded() {
        let g = gate(FOREIGN);
        assert!(matches!(
            g.judge(text("0123456789", 1), 4),
            Err(EngineError::TooLarge {
                bytes: Some(10),
                ..
            })
        ));
        assert!(bounded("x", "0123456789", 4).is_err());
        assert!(bounded("x", "0123", 4).is_ok());
    }
}
