//! Who holds the desktop, as `BUSY` tells the others: the holding client
//! (its protocol and the name it gave) and when its takeover ends unless
//! it acts again (the adapter's idle rule or the lease, whichever first).

use std::fmt;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde_json::{Value, json};

use crate::error::EngineError;
use crate::{Engine, Session};

/// The client holding the takeover.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Holder {
    /// Its protocol: `wire`, `mcp` or `http`.
    pub protocol: &'static str,
    /// The name it gave (HELLO_ACK, MCP `clientInfo`), if any.
    pub client: Option<String>,
    /// When its takeover ends unless it acts again; `None` while it holds
    /// it until it ends it or goes away.
    pub until: Option<SystemTime>,
}

impl Holder {
    /// [`Holder::until`] as RFC 3339 (UTC, whole seconds).
    pub fn until_rfc3339(&self) -> Option<String> {
        self.until.map(rfc3339)
    }

    /// Seconds from now until [`Holder::until`], rounded up.
    pub fn until_s(&self) -> Option<u64> {
        self.until.map(|t| {
            let left = t
                .duration_since(SystemTime::now())
                .unwrap_or(Duration::ZERO);
            left.as_secs() + u64::from(left.subsec_nanos() > 0)
        })
    }

    /// The `details` object of a `BUSY` error.
    pub fn details(&self) -> Value {
        json!({
            "holder": { "protocol": self.protocol, "client": self.client },
            "until": self.until_rfc3339(),
            "until_s": self.until_s(),
        })
    }
}

impl fmt::Display for Holder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "another client holds the desktop: the {} client",
            self.protocol
        )?;
        if let Some(name) = &self.client {
            write!(f, " {name:?}")?;
        }
        match (self.until_rfc3339(), self.until_s()) {
            (Some(at), Some(s)) => write!(f, ", until {at} (in {s} s) unless it acts again"),
            _ => write!(f, ", until it ends its takeover or goes away"),
        }
    }
}

impl Engine {
    /// A `BUSY` error with the name the holding client gave.
    pub(crate) fn named_holder(&self, e: EngineError) -> EngineError {
        match e {
            EngineError::Busy(mut h) => {
                h.client = self.takeovers.holder().and_then(|s| self.client_name(&s));
                EngineError::Busy(h)
            }
            other => other,
        }
    }

    /// Notes when `session`'s takeover ends unless it acts again (the
    /// adapter's idle rule, the lease), for the `BUSY` others get; a
    /// session not holding the takeover is ignored.
    pub fn set_takeover_until(&self, session: &Session, until: Option<SystemTime>) {
        self.takeovers.set_until(&session.id, until);
    }
}

/// `t` as `YYYY-MM-DDTHH:MM:SSZ`.
fn rfc3339(t: SystemTime) -> String {
    let secs = t
        .duration_since(UNIX_EPOCH)
        .unwrap_or(Duration::ZERO)
        .as_secs();
    let (days, rem) = (secs / 86_400, secs % 86_400);
    let (y, m, d) = civil_from_days(days as i64);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

/// Days since 1970-01-01 as a proleptic Gregorian date (H. Hinnant's
/// `civil_from_days`).
fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let y = yoe + era * 400 + i64::from(m <= 2);
    (y, m, d)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_are_rfc3339_utc() {
        assert_eq!(rfc3339(UNIX_EPOCH), "1970-01-01T00:00:00Z");
        let t = UNIX_EPOCH + Duration::from_secs(951_782_400 + 3_723);
        assert_eq!(rfc3339(t), "2000-02-29T01:02:03Z");
        let t = UNIX_EPOCH + Duration::from_secs(1_796_342_399);
        assert_eq!(rfc3339(t), "2026-12-03T23:59:59Z");
    }

    #[test]
    fn the_message_names_the_client_and_the_time() {
        let h = Holder {
            protocol: "http",
            client: Some("agent-a".into()),
            until: Some(SystemTime::now() + Duration::from_secs(30)),
        };
        let text = h.to_string();
        assert!(text.contains("the http client \"agent-a\""), "{text}");
        assert!(text.contains("unless it acts again"), "{text}");
        let d = h.details();
        assert_eq!(d["holder"]["protocol"], "http");
        assert!(
            (29..=30).contains(&d["until_s"].as_u64().expect("until_s")),
            "{d}"
        );
        let open = Holder { until: None, ..h };
        assert!(
            open.to_string()
                .ends_with("until it ends its takeover or goes away")
        );
        assert!(open.details()["until"].is_null());
    }
}
