//! The settings file (`$XDG_CONFIG_HOME/deskhand/settings.toml`, shared
//! by every host): read at start and whenever it
//! changes, and applied to the engine from the next request on. A value
//! given on the command line wins over the file; a file that does not
//! parse is reported and the last good settings stay.
//!
//! ```toml
//! approval = "write"            # allow | write | prompt | deny
//! displays = ["DUMMY0"]         # or "all"
//! consent_timeout_s = 60        # a consent question's wait, 5 to 600
//!
//! [clipboard]
//! enabled = true
//! read_foreign = false
//! approve_foreign_reads = false
//! ```

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use deskhand_engine::approval::ApprovalMode;
use deskhand_engine::settings::{DisplayChoice, Settings};
use deskhand_engine::{ClipboardPolicy, Engine};
use serde::Deserialize;

use crate::HostError;
use crate::error::io;

/// The consent question's wait the file may set, in seconds.
const CONSENT_TIMEOUT_S: std::ops::RangeInclusive<u64> = 5..=600;

/// How often the file is looked at for a change.
const POLL: Duration = Duration::from_millis(200);

/// The file as written.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    approval: Option<String>,
    displays: Option<Displays>,
    consent_timeout_s: Option<u64>,
    #[serde(default)]
    clipboard: ClipboardFile,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct ClipboardFile {
    enabled: Option<bool>,
    read_foreign: Option<bool>,
    approve_foreign_reads: Option<bool>,
}

#[derive(Debug, Deserialize)]
#[serde(untagged)]
enum Displays {
    Word(String),
    Names(Vec<String>),
}

/// What the command line (and the consent file) set: the start-up values,
/// and which of them the file may not change.
#[derive(Debug, Clone, Default)]
pub struct Fixed {
    /// The values without a file.
    pub base: Settings,
    /// `--approval` was given.
    pub approval: bool,
    /// `--enable-clipboard` (and its read flags) were given.
    pub clipboard: bool,
}

/// What is wrong with a settings file.
#[derive(Debug)]
pub struct Invalid(String);

impl std::fmt::Display for Invalid {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

macro_rules! invalid {
    ($($arg:tt)*) => {
        return Err(Invalid(format!($($arg)*)))
    };
}

/// The settings `text` gives on top of `fixed`.
pub fn parse(text: &str, fixed: &Fixed) -> Result<Settings, Invalid> {
    let file: File = toml::from_str(text).map_err(|e| Invalid(e.message().to_owned()))?;
    let mut s = fixed.base.clone();
    if let Some(mode) = file.approval
        && !fixed.approval
    {
        s.approval = mode
            .parse::<ApprovalMode>()
            .map_err(|e| Invalid(format!("approval: {e}")))?;
    }
    s.displays = match file.displays {
        None => s.displays,
        Some(Displays::Word(w)) if w == "all" => DisplayChoice::All,
        Some(Displays::Word(w)) => {
            invalid!("displays: {w:?} is neither \"all\" nor a list of names")
        }
        Some(Displays::Names(names)) if names.is_empty() => {
            invalid!("displays: an empty list would hide every display; say \"all\" or name some")
        }
        Some(Displays::Names(names)) => DisplayChoice::Only(names),
    };
    if let Some(secs) = file.consent_timeout_s {
        if !CONSENT_TIMEOUT_S.contains(&secs) {
            invalid!("consent_timeout_s: {secs} is not between 5 and 600 seconds");
        }
        s.consent_timeout = Duration::from_secs(secs);
    }
    if !fixed.clipboard {
        let c = &file.clipboard;
        let enabled = c.enabled.unwrap_or(s.clipboard.enabled);
        let read_foreign = c.read_foreign.unwrap_or(s.clipboard.read_foreign);
        let approved = c
            .approve_foreign_reads
            .unwrap_or(s.clipboard.foreign_reads_approved);
        if read_foreign && !enabled {
            invalid!("clipboard.read_foreign needs clipboard.enabled");
        }
        if approved && !read_foreign {
            invalid!("clipboard.approve_foreign_reads needs clipboard.read_foreign");
        }
        s.clipboard = ClipboardPolicy {
            enabled,
            read_foreign,
            foreign_reads_approved: approved,
        };
    }
    Ok(s)
}

/// The default place of the file.
pub fn default_path() -> PathBuf {
    crate::files::config_dir().join("settings.toml")
}

/// What the file says now: `None` when it does not exist.
fn read(path: &Path, fixed: &Fixed) -> Result<Option<Settings>, HostError> {
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(io(format!("reading {}", path.display()))(e)),
    };
    parse(&text, fixed)
        .map(Some)
        .map_err(|Invalid(reason)| HostError::Settings {
            path: path.display().to_string(),
            reason,
        })
}

/// The start-up settings: the file's over `fixed`; a bad file fails the
/// start (the person sees why at once).
pub fn initial(path: &Path, fixed: &Fixed) -> Result<Settings, HostError> {
    Ok(read(path, fixed)?.unwrap_or_else(|| fixed.base.clone()))
}

fn stamp(path: &Path) -> Option<(SystemTime, u64)> {
    let meta = std::fs::metadata(path).ok()?;
    Some((meta.modified().ok()?, meta.len()))
}

/// Applies every change of the file to `engine` until the runtime stops.
pub async fn watch(path: PathBuf, fixed: Fixed, engine: Arc<Engine>, mut current: Settings) {
    let mut seen = stamp(&path);
    loop {
        tokio::time::sleep(POLL).await;
        let now = stamp(&path);
        if now == seen {
            continue;
        }
        seen = now;
        let next = match read(&path, &fixed) {
            Ok(next) => next.unwrap_or_else(|| fixed.base.clone()),
            Err(e) => {
                tracing::warn!(
                    error = %e,
                    "the settings file changed but is not valid: the last good settings stay"
                );
                continue;
            }
        };
        if next != current {
            engine.apply_settings(next.clone()).await;
            current = next;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixed() -> Fixed {
        Fixed::default()
    }

    #[test]
    fn an_empty_file_keeps_the_start_up_values() {
        assert_eq!(parse("", &fixed()).expect("parses"), Settings::default());
    }

    #[test]
    fn the_file_sets_clipboard_approval_and_displays() {
        let s = parse(
            "approval = \"write\"\ndisplays = [\"DUMMY1\"]\n[clipboard]\nenabled = true\nread_foreign = true\n",
            &fixed(),
        )
        .expect("parses");
        assert_eq!(s.approval, ApprovalMode::Write);
        assert_eq!(s.displays, DisplayChoice::Only(vec!["DUMMY1".into()]));
        assert!(s.clipboard.enabled && s.clipboard.read_foreign);
        assert!(!s.clipboard.foreign_reads_approved);
        let all = parse("displays = \"all\"\nconsent_timeout_s = 5", &fixed()).expect("parses");
        assert_eq!(all.displays, DisplayChoice::All);
        assert_eq!(all.consent_timeout, Duration::from_secs(5));
    }

    #[test]
    fn bad_values_are_refused_with_what_is_wrong() {
        for (text, says) in [
            ("approval = \"sometimes\"", "approval"),
            ("displays = []", "empty list"),
            ("displays = \"some\"", "neither"),
            (
                "[clipboard]\nread_foreign = true",
                "needs clipboard.enabled",
            ),
            ("colour = \"red\"", "unknown field"),
            ("approval = ", ""),
            ("consent_timeout_s = 1", "consent_timeout_s"),
            ("consent_timeout_s = 86400", "consent_timeout_s"),
        ] {
            let e = parse(text, &fixed()).expect_err(text).to_string();
            assert!(e.contains(says), "{text}: {e}");
        }
    }

    #[test]
    fn command_line_values_win_over_the_file() {
        let mut f = fixed();
        f.approval = true;
        f.clipboard = true;
        f.base.approval = ApprovalMode::Deny;
        let s = parse("approval = \"allow\"\n[clipboard]\nenabled = true", &f).expect("parses");
        assert_eq!(s.approval, ApprovalMode::Deny);
        assert!(!s.clipboard.enabled);
    }
}
