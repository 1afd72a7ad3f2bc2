//! What one session may put in the audit log: a refusal repeated is
//! counted in one record, not written each time, and each session writes
//! within a byte budget of its own, so that no one client's flood can
//! rotate the other sessions' history out of the kept files. What is not
//! written is counted and said in a summary record at most every
//! [`FLUSH_EVERY`].

use std::collections::{BTreeMap, HashMap};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::AuditRecord;

/// A refusal like the session's last written one within this time is
/// counted, not written.
const REPEAT_WINDOW: Duration = Duration::from_secs(60);
/// How often counted records are summed up in a record.
pub(super) const FLUSH_EVERY: Duration = Duration::from_secs(10);
/// Bytes a session may write at once, and per [`REFILL_PER`] after that:
/// 2 MiB per 10 minutes (a busy agent writes a tenth of that), so that a
/// flood takes hours to rotate out the 40 MiB of kept history.
const BUDGET_BYTES: f64 = 2.0 * 1024.0 * 1024.0;
const REFILL_PER: Duration = Duration::from_secs(600);
/// Sessions followed at once (the least recently seen goes first).
const MAX_SESSIONS: usize = 1024;
/// Distinct (op, outcome) pairs counted over budget per session; more
/// are counted under `*`.
const MAX_COUNTED_KINDS: usize = 16;

/// A summary record to write: the session, protocol, op and outcome of
/// the records it counts, and what it says of them.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Summary {
    pub ts: f64,
    pub session: String,
    pub protocol: String,
    pub op: String,
    pub outcome: String,
    pub target: Value,
}

impl Summary {
    pub fn record(&self) -> AuditRecord<'_> {
        AuditRecord {
            ts: self.ts,
            session: &self.session,
            protocol: &self.protocol,
            op: &self.op,
            target: self.target.clone(),
            outcome: &self.outcome,
            duration_ms: 0.0,
        }
    }
}

/// Records of one kind that were counted, not written.
#[derive(Debug, Clone)]
struct Count {
    protocol: String,
    n: u64,
    first_ts: f64,
    last_ts: f64,
    since: Instant,
}

impl Count {
    fn new(record: &AuditRecord<'_>, now: Instant) -> Self {
        Self {
            protocol: record.protocol.to_owned(),
            n: 0,
            first_ts: record.ts,
            last_ts: record.ts,
            since: now,
        }
    }

    fn add(&mut self, ts: f64) {
        self.n += 1;
        self.last_ts = ts;
    }
}

/// What is known of one session.
#[derive(Debug)]
struct Seen {
    /// The op and outcome of its last written refusal, and when.
    last_refusal: Option<(String, String, Instant)>,
    /// Repeats of that refusal since it (or their last summary) was written.
    repeats: Option<Count>,
    /// Records over the budget, by op and outcome.
    over: BTreeMap<(String, String), Count>,
    budget: f64,
    refilled: Instant,
    last_seen: Instant,
}

impl Seen {
    fn new(now: Instant) -> Self {
        Self {
            last_refusal: None,
            repeats: None,
            over: BTreeMap::new(),
            budget: BUDGET_BYTES,
            refilled: now,
            last_seen: now,
        }
    }

    fn is_repeat(&self, record: &AuditRecord<'_>, now: Instant) -> bool {
        record.outcome != "ok"
            && self.last_refusal.as_ref().is_some_and(|(op, outcome, at)| {
                op == record.op
                    && outcome == record.outcome
                    && now.duration_since(*at) < REPEAT_WINDOW
            })
    }

    /// Takes `bytes` from the budget, refilled for the time passed.
    fn spend(&mut self, bytes: usize, now: Instant) -> bool {
        let passed = now.duration_since(self.refilled).as_secs_f64();
        self.budget =
            (self.budget + passed / REFILL_PER.as_secs_f64() * BUDGET_BYTES).min(BUDGET_BYTES);
        self.refilled = now;
        let bytes = bytes as f64;
        if self.budget < bytes {
            return false;
        }
        self.budget -= bytes;
        true
    }

    /// The summary of the repeats of the last refusal, when `due`.
    fn repeat_summary(
        &mut self,
        session: &str,
        due: impl Fn(&Count) -> bool,
        out: &mut Vec<Summary>,
    ) {
        if let Some(c) = self.repeats.as_ref().filter(|c| due(c)) {
            let (op, outcome) = self
                .last_refusal
                .as_ref()
                .map(|(op, outcome, _)| (op.clone(), outcome.clone()))
                .unwrap_or_default();
            let target = json!({"repeated": c.n, "first_ts": c.first_ts, "last_ts": c.last_ts});
            out.push(summary(session, c, op, outcome, target));
            self.repeats = None;
        }
    }

    /// The summaries of what was counted (all of it, or only what has
    /// waited [`FLUSH_EVERY`]).
    fn summaries(&mut self, session: &str, now: Instant, all: bool, out: &mut Vec<Summary>) {
        let due = |c: &Count| c.n > 0 && (all || now.duration_since(c.since) >= FLUSH_EVERY);
        self.repeat_summary(session, |c| due(c), out);
        let kinds: Vec<(String, String)> = self
            .over
            .iter()
            .filter(|(_, c)| due(c))
            .map(|(k, _)| k.clone())
            .collect();
        for (op, outcome) in kinds {
            if let Some(c) = self.over.remove(&(op.clone(), outcome.clone())) {
                let target = json!({
                    "not_written": c.n,
                    "why": "over this session's audit budget",
                    "first_ts": c.first_ts,
                    "last_ts": c.last_ts,
                });
                out.push(summary(session, &c, op, outcome, target));
            }
        }
    }
}

fn summary(session: &str, c: &Count, op: String, outcome: String, target: Value) -> Summary {
    Summary {
        ts: c.last_ts,
        session: session.to_owned(),
        protocol: c.protocol.clone(),
        op,
        outcome,
        target,
    }
}

/// Every session's counts and budget.
#[derive(Debug, Default)]
pub(super) struct Repeats {
    sessions: HashMap<String, Seen>,
}

impl Repeats {
    /// Whether `record` (`bytes` long as written) is written; the
    /// summaries to write first go to `out`.
    pub fn admit(
        &mut self,
        record: &AuditRecord<'_>,
        bytes: usize,
        now: Instant,
        out: &mut Vec<Summary>,
    ) -> bool {
        if !self.sessions.contains_key(record.session) {
            self.make_room(now, out);
        }
        let seen = self
            .sessions
            .entry(record.session.to_owned())
            .or_insert_with(|| Seen::new(now));
        seen.last_seen = now;
        if seen.is_repeat(record, now) {
            seen.repeats
                .get_or_insert_with(|| Count::new(record, now))
                .add(record.ts);
            return false;
        }
        // Something else: the repeats counted are said first, in order.
        seen.repeat_summary(record.session, |c| c.n > 0, out);
        if !seen.spend(bytes, now) {
            let key = if seen.over.len() < MAX_COUNTED_KINDS {
                (record.op.to_owned(), record.outcome.to_owned())
            } else {
                ("*".to_owned(), "*".to_owned())
            };
            seen.over
                .entry(key)
                .or_insert_with(|| Count::new(record, now))
                .add(record.ts);
            return false;
        }
        seen.last_refusal = (record.outcome != "ok")
            .then(|| (record.op.to_owned(), record.outcome.to_owned(), now));
        true
    }

    /// The summaries that have waited [`FLUSH_EVERY`] (or all of them);
    /// sessions with nothing counted and not seen for a while are let go.
    pub fn due(&mut self, now: Instant, all: bool) -> Vec<Summary> {
        let mut out = Vec::new();
        for (session, seen) in &mut self.sessions {
            seen.summaries(session, now, all, &mut out);
        }
        self.sessions.retain(|_, s| {
            s.repeats.is_some()
                || !s.over.is_empty()
                || now.duration_since(s.last_seen) < REFILL_PER
        });
        out.sort_by(|a, b| a.ts.total_cmp(&b.ts));
        out
    }

    /// Forgets the least recently seen session when the map is full
    /// (saying what it had counted).
    fn make_room(&mut self, now: Instant, out: &mut Vec<Summary>) {
        if self.sessions.len() < MAX_SESSIONS {
            return;
        }
        let oldest = self
            .sessions
            .iter()
            .min_by_key(|(_, s)| s.last_seen)
            .map(|(k, _)| k.clone());
        if let Some(session) = oldest
            && let Some(mut seen) = self.sessions.remove(&session)
        {
            seen.summaries(&session, now, true, out);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec<'a>(session: &'a str, op: &'a str, outcome: &'a str, ts: f64) -> AuditRecord<'a> {
        AuditRecord {
            ts,
            session,
            protocol: "wire",
            op,
            target: Value::Null,
            outcome,
            duration_ms: 0.0,
        }
    }

    #[test]
    fn a_repeated_refusal_is_one_record_and_a_count() {
        let (mut r, t0, mut out) = (Repeats::default(), Instant::now(), Vec::new());
        assert!(r.admit(&rec("a", "input", "user_took_over", 1.0), 100, t0, &mut out));
        for i in 0..99_999 {
            let ts = 1.0 + f64::from(i) * 1e-5;
            assert!(!r.admit(&rec("a", "input", "user_took_over", ts), 100, t0, &mut out));
        }
        assert!(out.is_empty() && r.due(t0, false).is_empty(), "not due yet");
        let due = r.due(t0 + FLUSH_EVERY, false);
        assert_eq!(due.len(), 1);
        assert_eq!(due[0].target["repeated"], 99_999);
        assert_eq!(
            (due[0].op.as_str(), due[0].outcome.as_str()),
            ("input", "user_took_over")
        );
        // Another op of the session says the count first.
        assert!(!r.admit(&rec("a", "input", "user_took_over", 3.0), 100, t0, &mut out));
        assert!(r.admit(&rec("a", "screenshot", "ok", 4.0), 100, t0, &mut out));
        assert_eq!(out.len(), 1, "{out:?}");
        assert_eq!(out[0].target["repeated"], 1);
        assert!(r.admit(&rec("a", "input", "user_took_over", 5.0), 100, t0, &mut out));
    }

    #[test]
    fn successes_are_all_written_and_other_sessions_keep_their_budget() {
        let (mut r, t0, mut out) = (Repeats::default(), Instant::now(), Vec::new());
        for i in 0..1000 {
            assert!(r.admit(&rec("a", "cursor", "ok", f64::from(i)), 200, t0, &mut out));
        }
        let per_record = 4000;
        let fits = (BUDGET_BYTES / f64::from(per_record)) as usize;
        let written = (0..fits + 100)
            .filter(|&i| {
                r.admit(
                    &rec("b", "op", "ok", i as f64),
                    per_record as usize,
                    t0,
                    &mut out,
                )
            })
            .count();
        assert_eq!(written, fits, "b is held to its budget");
        assert!(
            r.admit(&rec("c", "cursor", "ok", 0.0), 200, t0, &mut out),
            "c is not"
        );
        let due = r.due(t0 + FLUSH_EVERY, false);
        assert_eq!(due.len(), 1);
        assert_eq!(
            (due[0].session.as_str(), &due[0].target["not_written"]),
            ("b", &json!(100))
        );
        let later = t0 + REFILL_PER;
        assert!(r.admit(
            &rec("b", "op", "ok", 0.0),
            per_record as usize,
            later,
            &mut out
        ));
    }

    #[test]
    fn sessions_are_bounded_and_forgotten_ones_say_their_counts() {
        let (mut r, t0, mut out) = (Repeats::default(), Instant::now(), Vec::new());
        r.admit(&rec("first", "x", "busy", 0.0), 10, t0, &mut out);
        r.admit(&rec("first", "x", "busy", 0.5), 10, t0, &mut out);
        for i in 0..MAX_SESSIONS {
            let s = format!("s{i}");
            r.admit(
                &rec(&s, "x", "ok", 1.0),
                10,
                t0 + Duration::from_millis(1),
                &mut out,
            );
        }
        assert!(r.sessions.len() <= MAX_SESSIONS);
        assert_eq!(out.len(), 1, "the evicted session's count is written");
        assert_eq!(out[0].session, "first");
        assert!(r.due(t0 + REFILL_PER * 2, false).is_empty());
        assert!(r.sessions.is_empty(), "idle sessions are let go");
    }
}
