//! The audit log: JSON lines, one record per op, appended and flushed
//! before the reply goes out, rotated by size (`audit.jsonl` →
//! `audit.jsonl.1` … `.N`). Typed text is never written: only its length
//! and a prefix of its HMAC under the install's key. A refusal repeated by
//! a session, and what a session writes past its budget, are counted in
//! summary records instead (`repeats.rs`).

mod repeats;

use std::fs::File;
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock, Weak};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use hmac::{Hmac, Mac};
use serde::Serialize;
use serde_json::{Value, json};
use sha2::Sha256;

use crate::action::Action;

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

/// Largest audit record, newline included: one request can never push
/// the earlier history out of the rotated files.
pub const MAX_RECORD_BYTES: usize = 4096;
/// Longest string kept in a record's target; longer ones are cut.
const MAX_FIELD_CHARS: usize = 256;
/// Most items of an array or object kept in a record's target.
const MAX_FIELD_ITEMS: usize = 32;

/// Default size at which the audit file is rotated.
pub const DEFAULT_ROTATE_BYTES: u64 = 10 * 1024 * 1024;
/// Default number of rotated files kept besides the current one.
pub const DEFAULT_KEEP: u32 = 3;

/// An append-only JSON-lines audit file (or nowhere). Counted records are
/// summed up by a thread of its own every few seconds, and all of them
/// when the log is dropped.
#[derive(Debug)]
pub struct AuditLog {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    file: Mutex<Option<Current>>,
    repeats: Mutex<repeats::Repeats>,
    rotate_bytes: u64,
    keep: u32,
}

/// The file being written, where it is, and its size.
#[derive(Debug)]
struct Current {
    path: PathBuf,
    file: File,
    size: u64,
}

impl Current {
    fn open(path: &Path) -> io::Result<Self> {
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir)?;
        }
        let file = open_append(path)?;
        let size = file.metadata()?.len();
        Ok(Self {
            path: path.to_owned(),
            file,
            size,
        })
    }

    fn append(&mut self, line: &[u8]) -> io::Result<()> {
        self.file.write_all(line)?;
        self.file.flush()?;
        self.size += line.len() as u64;
        Ok(())
    }
}

fn open_append(path: &Path) -> io::Result<File> {
    if std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink()) {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("audit log {} is a symlink; refusing it", path.display()),
        ));
    }
    // The check above gives the clear message; the open never follows a
    // symlink either, which closes the race between the two.
    deskhand_files::open_append(path)
}

/// Whether `path` may take the audit log when it moves there: a new file,
/// or a regular file that already holds audit records (never a device, a
/// pipe, or some other file that records would be appended to). The reason
/// when not.
pub fn check_place(path: &Path) -> Result<(), String> {
    let meta = match std::fs::symlink_metadata(path) {
        Ok(meta) => meta,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(e.to_string()),
    };
    if !meta.is_file() {
        return Err(format!("{} is not a regular file", path.display()));
    }
    if meta.len() == 0 {
        return Ok(());
    }
    let mut first = String::new();
    let read = File::open(path).and_then(|f| {
        io::BufRead::read_line(&mut io::BufReader::new(io::Read::take(f, 8192)), &mut first)
    });
    let record: Option<Value> = read.ok().and_then(|_| serde_json::from_str(&first).ok());
    match record {
        Some(r) if r.get("op").is_some() && r.get("ts").is_some() => Ok(()),
        _ => Err(format!(
            "{} holds something other than audit records",
            path.display()
        )),
    }
}

/// The `n`-th rotated file of `path` (`audit.jsonl.n`).
pub fn rotated_path(path: &Path, n: u32) -> PathBuf {
    let mut name = path.as_os_str().to_owned();
    name.push(format!(".{n}"));
    PathBuf::from(name)
}

impl AuditLog {
    /// An audit log that records nothing (tests, benchmarks).
    pub fn disabled() -> Self {
        Self {
            inner: Arc::new(Inner {
                file: Mutex::new(None),
                repeats: Mutex::default(),
                rotate_bytes: DEFAULT_ROTATE_BYTES,
                keep: DEFAULT_KEEP,
            }),
        }
    }

    /// Opens (creating, 0600) the audit file at `path` for appending, rotated
    /// at [`DEFAULT_ROTATE_BYTES`] keeping [`DEFAULT_KEEP`] old files.
    pub fn open(path: &Path) -> io::Result<Self> {
        Self::open_rotating(path, DEFAULT_ROTATE_BYTES, DEFAULT_KEEP)
    }

    /// Opens the audit file, rotating it once it would pass `rotate_bytes`
    /// and keeping `keep` rotated files.
    pub fn open_rotating(path: &Path, rotate_bytes: u64, keep: u32) -> io::Result<Self> {
        let inner = Arc::new(Inner {
            file: Mutex::new(Some(Current::open(path)?)),
            repeats: Mutex::default(),
            rotate_bytes: rotate_bytes.max(1),
            keep: keep.max(1),
        });
        let weak = Arc::downgrade(&inner);
        std::thread::Builder::new()
            .name("audit-summaries".into())
            .spawn(move || write_due_summaries(&weak))?;
        Ok(Self { inner })
    }

    /// Where the log is written, if anywhere.
    pub fn path(&self) -> Option<PathBuf> {
        let guard = self.inner.file.lock().ok()?;
        guard.as_ref().map(|c| c.path.clone())
    }

    /// Writes the log at `path` from now on (created 0600 if missing,
    /// appended to if not). The old file keeps its records and ends with
    /// one saying where the log went; the new one says where it came
    /// from. When `path` cannot be opened nothing changes.
    pub fn move_to(&self, path: &Path) -> io::Result<()> {
        self.inner.move_to(path)
    }

    /// Appends one record and flushes it, unless it is a repeat of the
    /// session's last refusal or past the session's budget (then it is
    /// counted, and the count written within a few seconds). A failure to
    /// write is logged, never hidden from the operator, and never fails
    /// the op.
    pub fn record(&self, record: &AuditRecord<'_>) {
        self.inner.record(record);
    }
}

impl Drop for AuditLog {
    fn drop(&mut self) {
        self.inner.write_summaries(true);
    }
}

/// Writes the summaries that are due, every second, until the log goes.
fn write_due_summaries(log: &Weak<Inner>) {
    loop {
        std::thread::sleep(Duration::from_secs(1));
        let Some(inner) = log.upgrade() else {
            return;
        };
        inner.write_summaries(false);
    }
}

impl Inner {
    fn write_summaries(&self, all: bool) {
        let due = match self.repeats.lock() {
            Ok(mut r) => r.due(Instant::now(), all),
            Err(_) => return,
        };
        for summary in &due {
            self.write(&summary.record());
        }
    }

    /// Moves `path` to `path.1` (and each `.n` to `.n+1`, dropping the
    /// oldest), then starts a new file.
    fn rotate(&self, path: &Path) -> io::Result<Current> {
        for n in (1..self.keep).rev() {
            let from = rotated_path(path, n);
            if from.exists() {
                std::fs::rename(&from, rotated_path(path, n + 1))?;
            }
        }
        std::fs::rename(path, rotated_path(path, 1))?;
        Current::open(path)
    }

    fn move_to(&self, path: &Path) -> io::Result<()> {
        let mut guard = self
            .file
            .lock()
            .map_err(|_| io::Error::other("the audit log's lock is poisoned"))?;
        let Some(old) = guard.as_mut() else {
            return Err(io::Error::other("this audit log records nothing"));
        };
        if old.path == path {
            return Ok(());
        }
        check_place(path).map_err(|why| io::Error::new(io::ErrorKind::InvalidInput, why))?;
        let mut new = Current::open(path)?;
        let record = AuditRecord {
            ts: now_ts(),
            session: "deskhand",
            protocol: "settings",
            op: "audit.moved",
            target: json!({"from": old.path.display().to_string(), "to": path.display().to_string()}),
            outcome: "ok",
            duration_ms: 0.0,
        };
        let mut line = bounded_line(&record).unwrap_or_default();
        line.push(b'\n');
        if let Err(e) = old.append(&line) {
            tracing::error!(error = %e, "the old audit log could not say where the log went");
        }
        new.append(&line)?;
        tracing::info!(from = %old.path.display(), to = %path.display(), "the audit log moved");
        *old = new;
        Ok(())
    }

    fn record(&self, record: &AuditRecord<'_>) {
        let Some(line) = bounded_line(record) else {
            return;
        };
        let mut first = Vec::new();
        let admitted = match self.repeats.lock() {
            Ok(mut r) => r.admit(record, line.len() + 1, Instant::now(), &mut first),
            Err(_) => true,
        };
        for summary in &first {
            self.write(&summary.record());
        }
        if admitted {
            self.append(line);
        }
    }

    fn write(&self, record: &AuditRecord<'_>) {
        if let Some(line) = bounded_line(record) {
            self.append(line);
        }
    }

    /// Appends one line (rotating first when it would not fit) and flushes.
    fn append(&self, mut line: Vec<u8>) {
        let Ok(mut guard) = self.file.lock() else {
            return;
        };
        let Some(current) = guard.as_mut() else {
            return;
        };
        line.push(b'\n');
        if current.size > 0 && current.size + line.len() as u64 > self.rotate_bytes {
            let path = current.path.clone();
            match self.rotate(&path) {
                Ok(fresh) => *current = fresh,
                Err(e) => tracing::error!(error = %e, "audit log rotation failed"),
            }
        }
        if let Err(e) = current.append(&line) {
            tracing::error!(error = %e, "audit log write failed");
        }
    }
}

/// What the audit log may say about `action`: never typed text, only its
/// length and a keyed hash prefix.
pub fn action_target(action: &Action) -> Value {
    match action {
        Action::MoveTo(p) => json!({"coordinate": [p.x, p.y]}),
        Action::Glide { to, duration } => {
            json!({"coordinate": [to.x, to.y], "duration_ms": duration.as_millis() as u64})
        }
        Action::Click {
            at, button, count, ..
        } => {
            json!({"coordinate": at.map(|p| [p.x, p.y]), "button": format!("{button:?}"), "count": count})
        }
        Action::ButtonDown { at, button } | Action::ButtonUp { at, button } => {
            json!({"coordinate": at.map(|p| [p.x, p.y]), "button": format!("{button:?}")})
        }
        Action::Drag { path, .. } => json!({"points": path.len()}),
        Action::Scroll {
            direction, amount, ..
        } => json!({"direction": format!("{direction:?}"), "amount": amount}),
        Action::Key { keys } | Action::HoldKey { keys, .. } => json!({"keys": keys.len()}),
        Action::Type { text } => redacted_text(text),
        Action::Paste {
            text,
            preserve_clipboard,
        } => {
            let mut target = redacted_text(text);
            target["paste"] = json!(true);
            target["preserve_clipboard"] = json!(preserve_clipboard);
            target
        }
        Action::Wait { duration } => json!({"duration_ms": duration.as_millis() as u64}),
    }
}

/// `s` cut to `max` characters, marked with `…` when cut.
fn cut(s: &str, max: usize) -> String {
    match s.char_indices().nth(max) {
        Some((at, _)) => format!("{}…", &s[..at]),
        None => s.to_owned(),
    }
}

/// `v` with every string cut to [`MAX_FIELD_CHARS`] and every array or
/// object cut to [`MAX_FIELD_ITEMS`] items, at any depth.
fn bounded(v: &Value, depth: usize) -> Value {
    match v {
        Value::String(s) => Value::String(cut(s, MAX_FIELD_CHARS)),
        Value::Array(_) | Value::Object(_) if depth > 4 => json!("…"),
        Value::Array(items) => items
            .iter()
            .take(MAX_FIELD_ITEMS)
            .map(|i| bounded(i, depth + 1))
            .collect(),
        Value::Object(map) => map
            .iter()
            .take(MAX_FIELD_ITEMS)
            .map(|(k, v)| (cut(k, MAX_FIELD_CHARS), bounded(v, depth + 1)))
            .collect::<serde_json::Map<_, _>>()
            .into(),
        other => other.clone(),
    }
}

/// The record as one JSON line of at most [`MAX_RECORD_BYTES`] (the
/// newline added by the caller included): long fields are cut, and a
/// target still too large is replaced by its size.
fn bounded_line(record: &AuditRecord<'_>) -> Option<Vec<u8>> {
    let session = cut(record.session, MAX_FIELD_CHARS);
    let op = cut(record.op, MAX_FIELD_CHARS);
    let outcome = cut(record.outcome, MAX_FIELD_CHARS);
    let mut small = AuditRecord {
        ts: record.ts,
        session: &session,
        protocol: record.protocol,
        op: &op,
        target: bounded(&record.target, 0),
        outcome: &outcome,
        duration_ms: record.duration_ms,
    };
    let mut line = serde_json::to_vec(&small).ok()?;
    if line.len() >= MAX_RECORD_BYTES {
        small.target = json!({"truncated": true, "bytes": line.len()});
        line = serde_json::to_vec(&small).ok()?;
    }
    Some(line)
}

/// Seconds since the Unix epoch, as the wire's `ts`.
pub fn now_ts() -> f64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or(Duration::ZERO)
        .as_secs_f64()
}

/// The key of [`redacted_text`]'s HMAC: the install's key when the host set
/// one, else a random key for this process.
static TEXT_KEY: OnceLock<[u8; 32]> = OnceLock::new();

/// Sets the per-install key that typed and clipboard text is hashed with
/// in the audit log, so that its owner (and no one else) can check whether
/// a given text was typed. Call once, before the first record; returns
/// false when a key was already in use.
pub fn set_text_key(key: [u8; 32]) -> bool {
    TEXT_KEY.set(key).is_ok()
}

fn text_key() -> &'static [u8; 32] {
    TEXT_KEY.get_or_init(|| {
        let mut key = [0u8; 32];
        key[..16].copy_from_slice(uuid::Uuid::new_v4().as_bytes());
        key[16..].copy_from_slice(uuid::Uuid::new_v4().as_bytes());
        key
    })
}

/// The redacted form of text: its length in characters and bytes and the
/// first 12 hex digits of its HMAC-SHA-256 under the install's key (an
/// unkeyed hash of a short text, a PIN say, could be reversed by trying
/// every candidate).
pub fn redacted_text(text: &str) -> Value {
    let mut mac = Hmac::<Sha256>::new_from_slice(text_key()).expect("HMAC takes any key length");
    mac.update(text.as_bytes());
    let digest = mac.finalize().into_bytes();
    let prefix: String = digest[..6].iter().map(|b| format!("{b:02x}")).collect();
    json!({"text_chars": text.chars().count(), "text_bytes": text.len(), "text_hmac_sha256_prefix": prefix})
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_hash_is_keyed() {
        use sha2::Digest;
        let plain: String = Sha256::digest(b"1234")[..6]
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        let redacted = redacted_text("1234");
        let keyed = redacted["text_hmac_sha256_prefix"]
            .as_str()
            .expect("prefix");
        assert_eq!(keyed.len(), 12);
        assert_ne!(keyed, plain, "a PIN's plain SHA-256 would be reversible");
        assert_eq!(redacted_text("1234"), redacted, "stable under one key");
        assert_ne!(redacted_text("1235")["text_hmac_sha256_prefix"], keyed);
    }

    #[test]
    fn a_record_stays_small_whatever_the_client_sent() {
        let huge = "w".repeat(2 * 1024 * 1024);
        let many: Vec<Value> = (0..10_000).map(|i| json!(format!("item{i}"))).collect();
        for target in [
            json!({"window_id": huge}),
            json!({"list": many}),
            json!({huge.clone(): 1}),
        ] {
            let record = AuditRecord {
                ts: now_ts(),
                session: &huge,
                protocol: "wire",
                op: "window.focus",
                target,
                outcome: "invalid_arguments",
                duration_ms: 0.0,
            };
            let line = bounded_line(&record).expect("serializable");
            assert!(line.len() < MAX_RECORD_BYTES, "{} bytes", line.len());
            let back: Value = serde_json::from_slice(&line).expect("still JSON");
            assert_eq!(back["op"], "window.focus");
        }
        let cut_id = bounded(&json!({"window_id": huge}), 0);
        let kept = cut_id["window_id"].as_str().expect("string");
        assert_eq!(kept.chars().count(), MAX_FIELD_CHARS + 1, "cut and marked");
        assert_eq!(bounded(&json!({"x": "short"}), 0), json!({"x": "short"}));
    }

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
            rec["target"]["text_hmac_sha256_prefix"]
                .as_str()
                .map(str::len),
            Some(12)
        );
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_moved_log_writes_on_in_the_new_place_and_both_files_say_so() {
        let dir = std::env::temp_dir().join(format!("dh-audit-move-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let (first, second) = (dir.join("a/audit.jsonl"), dir.join("b/audit.jsonl"));
        let log = AuditLog::open(&first).expect("open");
        let op = |name: &'static str| AuditRecord {
            ts: 0.0,
            session: "s",
            protocol: "wire",
            op: name,
            target: Value::Null,
            outcome: "ok",
            duration_ms: 0.0,
        };
        log.record(&op("before"));
        std::fs::create_dir_all(dir.join("c/audit.jsonl")).expect("a directory in the way");
        assert!(log.move_to(&dir.join("c/audit.jsonl")).is_err());
        std::fs::write(dir.join("c/notes.txt"), "a person's notes\n").expect("another file");
        let refused = log
            .move_to(&dir.join("c/notes.txt"))
            .expect_err("not an audit log");
        assert!(
            refused.to_string().contains("other than audit records"),
            "{refused}"
        );
        assert!(
            log.move_to(Path::new("/dev/null")).is_err(),
            "not a regular file"
        );
        assert_eq!(
            log.path(),
            Some(first.clone()),
            "a failed move changes nothing"
        );
        log.move_to(&second).expect("moves");
        log.record(&op("after"));
        let ops = |p: &Path| -> Vec<String> {
            std::fs::read_to_string(p)
                .expect("the file")
                .lines()
                .map(|l| serde_json::from_str::<Value>(l).expect("JSON")["op"].to_string())
                .collect()
        };
        assert_eq!(ops(&first), ["\"before\"", "\"audit.moved\""]);
        assert_eq!(ops(&second), ["\"audit.moved\"", "\"after\""]);
        assert_eq!(log.path(), Some(second));
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_flood_of_refusals_is_one_record_and_a_count_and_keeps_the_history() {
        let dir = std::env::temp_dir().join(format!("dh-audit-flood-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let path = dir.join("audit.jsonl");
        let log = AuditLog::open_rotating(&path, 64 * 1024, 1).expect("open");
        let rec = |session: &'static str, op: &'static str, outcome: &'static str| AuditRecord {
            ts: now_ts(),
            session,
            protocol: "wire",
            op,
            target: Value::Null,
            outcome,
            duration_ms: 0.0,
        };
        log.record(&rec("person's agent", "window.focus", "ok"));
        for _ in 0..100_000 {
            log.record(&rec("flooder", "input.click", "user_took_over"));
        }
        drop(log);
        let text = std::fs::read_to_string(&path).expect("the file");
        let records: Vec<Value> = text
            .lines()
            .map(|l| serde_json::from_str(l).expect("JSON"))
            .collect();
        assert!(!rotated_path(&path, 1).exists(), "nothing was rotated out");
        assert_eq!(records[0]["session"], "person's agent");
        // The first refusal, then its repeats counted: in one summary, or
        // in one per 10 s when the flood takes longer (a loaded machine).
        let repeated: u64 = records[2..]
            .iter()
            .map(|r| r["target"]["repeated"].as_u64().expect("a count"))
            .sum();
        assert_eq!(repeated, 99_999, "{text}");
        assert!(
            records.len() <= 12,
            "a few summaries, not a record each: {}",
            records.len()
        );
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn rotates_by_size_and_keeps_the_newest_files() {
        let dir = std::env::temp_dir().join(format!("dh-audit-rot-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let path = dir.join("audit.jsonl");
        let log = AuditLog::open_rotating(&path, 400, 2).expect("open");
        for i in 0..20 {
            let op = format!("op-{i:02}");
            log.record(&AuditRecord {
                ts: 0.0,
                session: "s",
                protocol: "wire",
                op: &op,
                target: Value::Null,
                outcome: "ok",
                duration_ms: 0.0,
            });
        }
        let read = |p: &Path| std::fs::read_to_string(p).unwrap_or_default();
        let current = read(&path);
        assert!(
            current.len() <= 400,
            "current file is {} bytes",
            current.len()
        );
        assert!(
            current.contains("op-19"),
            "the newest record is in the current file"
        );
        assert!(rotated_path(&path, 1).exists() && rotated_path(&path, 2).exists());
        assert!(
            !rotated_path(&path, 3).exists(),
            "only two rotated files are kept"
        );
        let all = read(&rotated_path(&path, 2)) + &read(&rotated_path(&path, 1)) + &current;
        let ops: Vec<String> = all
            .lines()
            .map(|l| serde_json::from_str::<Value>(l).expect("JSON line")["op"].to_string())
            .collect();
        let mut sorted = ops.clone();
        sorted.sort();
        assert_eq!(ops, sorted, "records stay in order across files");
        let _ = std::fs::remove_dir_all(&dir);
    }
}
