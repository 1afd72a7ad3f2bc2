//! The audit log: JSON lines, one record per op, appended and flushed
//! before the reply goes out. Typed text is never written: only its length
//! and a SHA-256 prefix.

use std::fs::{File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde::Serialize;
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

/// One audit record.
#[derive(Debug, Clone, Serialize)]
pub struct AuditRecord<'a> {
    /// Seconds since the Unix epoch.
    pub ts: f64,
    /// Session id.
    pub session: &'a str,
    /// Protocol the op came in on (`wire`, `mcp`, ...).
    pub protocol: &'a str,
    /// Op name, e.g. `input.left_click`.
    pub op: &'a str,
    /// What the op aimed at, already redacted.
    pub target: Value,
    /// `ok` or the canonical error code.
    pub outcome: &'a str,
    /// Time spent, in milliseconds.
    pub duration_ms: f64,
}

/// An append-only JSON-lines audit file (or nowhere).
#[derive(Debug)]
pub struct AuditLog {
    path: Option<PathBuf>,
    file: Mutex<Option<File>>,
}

impl AuditLog {
    /// An audit log that records nothing (tests, benchmarks).
    pub fn disabled() -> Self {
        Self {
            path: None,
            file: Mutex::new(None),
        }
    }

    /// Opens (creating, 0600) the audit file at `path` for appending.
    pub fn open(path: &Path) -> io::Result<Self> {
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir)?;
        }
        if std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink()) {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("audit log {} is a symlink; refusing it", path.display()),
            ));
        }
        let mut opts = OpenOptions::new();
        opts.create(true).append(true);
        #[cfg(unix)]
        {
            use std::os::unix::fs::OpenOptionsExt;
            opts.mode(0o600);
        }
        let file = opts.open(path)?;
        Ok(Self {
            path: Some(path.to_owned()),
            file: Mutex::new(Some(file)),
        })
    }

    /// Where the log is written, if anywhere.
    pub fn path(&self) -> Option<&Path> {
        self.path.as_deref()
    }

    /// Appends one record and flushes it. A failure to write is logged,
    /// never hidden from the operator, and never fails the op.
    pub fn record(&self, record: &AuditRecord<'_>) {
        let Ok(mut guard) = self.file.lock() else {
            return;
        };
        let Some(file) = guard.as_mut() else {
            return;
        };
        let mut line = match serde_json::to_vec(record) {
            Ok(line) => line,
            Err(e) => {
                tracing::error!(error = %e, "audit record not serializable");
                return;
            }
        };
        line.push(b'\n');
        if let Err(e) = file.write_all(&line).and_then(|()| file.flush()) {
            tracing::error!(error = %e, "audit log write failed");
        }
    }
}

/// Seconds since the Unix epoch, as the wire's `ts`.
pub fn now_ts() -> f64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or(Duration::ZERO)
        .as_secs_f64()
}

/// The redacted form of text: its length in characters and bytes and the
/// first 12 hex digits of its SHA-256.
pub fn redacted_text(text: &str) -> Value {
    let digest = Sha256::digest(text.as_bytes());
    let prefix: String = digest[..6].iter().map(|b| format!("{b:02x}")).collect();
    json!({"text_chars": text.chars().count(), "text_bytes": text.len(), "text_sha256_prefix": prefix})
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn typed_text_never_reaches_the_file() {
        let dir = std::env::temp_dir().join(format!("dh-audit-{}", std::process::id()));
        let path = dir.join("audit.jsonl");
        let _ = std::fs::remove_file(&path);
        let log = AuditLog::open(&path).expect("open");
        let secret = "hunter2-very-secret";
        log.record(&AuditRecord {
            ts: now_ts(),
            session: "s1",
            protocol: "wire",
            op: "input.type",
            target: redacted_text(secret),
            outcome: "ok",
            duration_ms: 1.0,
        });
        let content = std::fs::read_to_string(&path).expect("read");
        assert!(!content.contains(secret));
        let rec: Value = serde_json::from_str(content.trim()).expect("json line");
        assert_eq!(rec["target"]["text_chars"], 19);
        assert_eq!(
            rec["target"]["text_sha256_prefix"].as_str().map(str::len),
            Some(12)
        );
        let _ = std::fs::remove_dir_all(&dir);
    }
}
