//! The settings file (`$XDG_CONFIG_HOME/deskhand/settings.toml`, shared
//! by every host): read at start and whenever it
//! changes, and applied to the engine from the next request on. A value
//! given on the command line wins over the file; a file that does not
//! parse is reported and the last good settings stay.
//!
//! ```toml
//! approval = "write"            # allow | write | prompt | deny
//! refuse_apps = ["terminals"]   # or true (every class), false
//! displays = ["DUMMY0"]         # or "all"
//! consent_timeout_s = 60        # a consent question's wait, 5 to 600
//! kill_switch = "ctrl+alt+Escape"
//! listen_port = 48100           # from the next start on
//! audit_log = "/home/me/.local/state/deskhand/audit.jsonl"
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
use deskhand_engine::refusal::RefuseApps;
use deskhand_engine::settings::{DisplayChoice, Settings};
use deskhand_engine::{ClipboardPolicy, Engine};
use deskhand_platform::{Chord, KillSwitchHotkey};
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
    refuse_apps: Option<RefuseApps>,
    displays: Option<Displays>,
    consent_timeout_s: Option<u64>,
    kill_switch: Option<String>,
    listen_port: Option<u16>,
    audit_log: Option<PathBuf>,
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

/// Everything the settings file sets: the engine's live settings and the
/// host's own values.
#[derive(Debug, Clone, PartialEq)]
pub struct FileSettings {
    /// What the engine applies from the next request on.
    pub live: Settings,
    /// The kill-switch hotkey (grabbed anew while running).
    pub kill_switch: String,
    /// The loopback port of the next start.
    pub listen_port: u16,
    /// Where the audit log is written (it moves there while running).
    pub audit_log: PathBuf,
}

impl Default for FileSettings {
    fn default() -> Self {
        Self {
            live: Settings::default(),
            kill_switch: deskhand_platform::DEFAULT_KILL_SWITCH.to_owned(),
            listen_port: crate::daemon::DEFAULT_PORT,
            audit_log: crate::audit_file::default_path(),
        }
    }
}

impl FileSettings {
    /// What `next` allows that these settings do not (see
    /// [`Settings::loosened_by`]); another kill switch or audit log place
    /// counts too, since either could keep the person from seeing or
    /// stopping an agent.
    pub fn loosened_by(&self, next: &FileSettings) -> Vec<&'static str> {
        let mut more = self.live.loosened_by(&next.live);
        let same_chord =
            Chord::parse(&self.kill_switch).ok() == Chord::parse(&next.kill_switch).ok();
        if !same_chord {
            more.push("kill_switch");
        }
        if self.audit_log != next.audit_log {
            more.push("audit_log");
        }
        more
    }
}

/// What the command line (and the consent file) set: the start-up values,
/// and which of them the file may not change.
#[derive(Debug, Clone, Default)]
pub struct Fixed {
    /// The values without a file.
    pub base: FileSettings,
    /// `--approval` was given.
    pub approval: bool,
    /// `--enable-clipboard` (and its read flags) were given.
    pub clipboard: bool,
    /// `--kill-switch` was given.
    pub kill_switch: bool,
    /// `--listen` was given.
    pub listen: bool,
    /// `--audit-log` was given.
    pub audit_log: bool,
}

impl Fixed {
    /// The names of the values the command line set.
    pub fn names(&self) -> Vec<&'static str> {
        [
            ("approval", self.approval),
            ("clipboard", self.clipboard),
            ("kill_switch", self.kill_switch),
            ("listen_port", self.listen),
            ("audit_log", self.audit_log),
        ]
        .into_iter()
        .filter_map(|(name, set)| set.then_some(name))
        .collect()
    }
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
pub fn parse(text: &str, fixed: &Fixed) -> Result<FileSettings, Invalid> {
    let file: File = toml::from_str(text).map_err(|e| Invalid(e.message().to_owned()))?;
    let mut s = fixed.base.clone();
    s.live = live(&file, fixed)?;
    if let Some(chord) = file.kill_switch
        && !fixed.kill_switch
    {
        Chord::parse(&chord).map_err(|e| Invalid(format!("kill_switch: {e}")))?;
        s.kill_switch = chord;
    }
    if let Some(port) = file.listen_port
        && !fixed.listen
    {
        if port == 0 {
            invalid!("listen_port: 0 would pick another port at every start; give 1 to 65535");
        }
        s.listen_port = port;
    }
    if let Some(path) = file.audit_log
        && !fixed.audit_log
    {
        if !path.is_absolute() || path.file_name().is_none() {
            invalid!(
                "audit_log: {} is not the absolute path of a file",
                path.display()
            );
        }
        if path.is_dir() {
            invalid!(
                "audit_log: {} is a directory; name a file in it",
                path.display()
            );
        }
        if let Err(why) = deskhand_engine::audit::check_place(&path) {
            invalid!("audit_log: {why}");
        }
        s.audit_log = path;
    }
    Ok(s)
}

/// The engine's settings the file gives.
fn live(file: &File, fixed: &Fixed) -> Result<Settings, Invalid> {
    let mut s = fixed.base.live.clone();
    if let Some(mode) = &file.approval
        && !fixed.approval
    {
        s.approval = mode
            .parse::<ApprovalMode>()
            .map_err(|e| Invalid(format!("approval: {e}")))?;
    }
    if let Some(refuse) = &file.refuse_apps {
        s.refuse = refuse
            .policy()
            .map_err(|e| Invalid(format!("refuse_apps: {e}")))?;
    }
    s.displays = match &file.displays {
        None => s.displays,
        Some(Displays::Word(w)) if w == "all" => DisplayChoice::All,
        Some(Displays::Word(w)) => {
            invalid!("displays: {w:?} is neither \"all\" nor a list of names")
        }
        Some(Displays::Names(names)) if names.is_empty() => {
            invalid!("displays: an empty list would hide every display; say \"all\" or name some")
        }
        Some(Displays::Names(names)) => DisplayChoice::Only(names.clone()),
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
fn read(path: &Path, fixed: &Fixed) -> Result<Option<FileSettings>, HostError> {
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

/// The port the settings file at `path` asks for, if it names one (read
/// before anything starts, to find a taken port early).
pub fn listen_port(path: &Path) -> Option<u16> {
    let text = std::fs::read_to_string(path).ok()?;
    let table: toml::Table = toml::from_str(&text).ok()?;
    u16::try_from(table.get("listen_port")?.as_integer()?).ok()
}

/// The start-up settings: the file's over `fixed`; a bad file fails the
/// start (the person sees why at once).
pub fn initial(path: &Path, fixed: &Fixed) -> Result<FileSettings, HostError> {
    Ok(read(path, fixed)?.unwrap_or_else(|| fixed.base.clone()))
}

fn stamp(path: &Path) -> Option<(SystemTime, u64)> {
    let meta = std::fs::metadata(path).ok()?;
    Some((meta.modified().ok()?, meta.len()))
}

/// What a change of the file is applied to while deskhand runs.
#[derive(Clone)]
pub struct Live {
    /// The engine (its settings, its audit log).
    pub engine: Arc<Engine>,
    /// The backend's kill-switch hotkey.
    pub hotkey: KillSwitchHotkey,
}

impl Live {
    /// Applies `next`: the audit log's place and the kill switch first
    /// (either may be refused, and then the log goes back where it was),
    /// then the engine's settings, from the next request on.
    pub async fn apply(&self, next: &FileSettings) -> Result<(), HostError> {
        let (hotkey, engine) = (self.hotkey.clone(), self.engine.clone());
        let (chord, audit_log) = (next.kill_switch.clone(), next.audit_log.clone());
        tokio::task::spawn_blocking(move || {
            let before = engine.audit_path();
            engine.move_audit_log(&audit_log).map_err(io(format!(
                "moving the audit log to {}",
                audit_log.display()
            )))?;
            if let Err(e) = hotkey.change(&chord) {
                if let Some(before) = before
                    && let Err(back) = engine.move_audit_log(&before)
                {
                    tracing::error!(error = %back, "the audit log could not go back");
                }
                return Err(HostError::from(e));
            }
            Ok(())
        })
        .await
        .map_err(|e| HostError::Refused(format!("the settings could not be applied: {e}")))??;
        self.engine.apply_settings(next.live.clone()).await;
        Ok(())
    }
}

/// Applies every change of the file until the runtime stops.
pub async fn watch(path: PathBuf, fixed: Fixed, live: Live, mut current: FileSettings) {
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
        if next == current {
            continue;
        }
        match live.apply(&next).await {
            Ok(()) => current = next,
            Err(e) => tracing::warn!(
                error = %e,
                "the settings file changed but could not be applied: the last good settings stay"
            ),
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
        assert_eq!(
            parse("", &fixed()).expect("parses"),
            FileSettings::default()
        );
    }

    #[test]
    fn the_file_sets_clipboard_approval_and_displays() {
        let s = parse(
            "approval = \"write\"\ndisplays = [\"DUMMY1\"]\n[clipboard]\nenabled = true\nread_foreign = true\n",
            &fixed(),
        )
        .expect("parses")
        .live;
        assert_eq!(s.approval, ApprovalMode::Write);
        assert_eq!(s.displays, DisplayChoice::Only(vec!["DUMMY1".into()]));
        assert!(s.clipboard.enabled && s.clipboard.read_foreign);
        assert!(!s.clipboard.foreign_reads_approved);
        let all = parse("displays = \"all\"\nconsent_timeout_s = 5", &fixed())
            .expect("parses")
            .live;
        assert_eq!(all.displays, DisplayChoice::All);
        assert_eq!(all.consent_timeout, Duration::from_secs(5));
    }

    #[test]
    fn the_file_sets_the_refused_classes() {
        let s = parse(
            "refuse_apps = [\"terminals\", \"developer_tools\"]",
            &fixed(),
        )
        .expect("parses");
        assert_eq!(s.live.refuse.names(), ["terminals", "developer_tools"]);
        let every = parse("refuse_apps = true", &fixed()).expect("parses");
        assert_eq!(every.live.refuse.classes.len(), 4);
        let mut f = fixed();
        f.base.live.refuse = every.live.refuse.clone();
        assert!(
            parse("", &f).expect("parses").live.refuse.is_on(),
            "the consent file's stays"
        );
        assert!(
            !parse("refuse_apps = false", &f)
                .expect("parses")
                .live
                .refuse
                .is_on()
        );
    }

    #[test]
    fn the_file_sets_the_kill_switch_the_port_and_the_audit_log() {
        let s = parse(
            "kill_switch = \"super+F12\"\nlisten_port = 48123\naudit_log = \"/var/tmp/dh/audit.jsonl\"",
            &fixed(),
        )
        .expect("parses");
        assert_eq!(s.kill_switch, "super+F12");
        assert_eq!(s.listen_port, 48123);
        assert_eq!(s.audit_log, PathBuf::from("/var/tmp/dh/audit.jsonl"));
        let before = FileSettings::default();
        assert_eq!(before.loosened_by(&s), ["kill_switch", "audit_log"]);
        let same = FileSettings {
            kill_switch: "Ctrl+Alt+escape".into(),
            listen_port: 1,
            ..before.clone()
        };
        assert!(before.loosened_by(&same).is_empty());
    }

    #[test]
    fn bad_values_are_refused_with_what_is_wrong() {
        for (text, says) in [
            ("approval = \"sometimes\"", "approval"),
            ("refuse_apps = [\"shells\"]", "refuse_apps"),
            ("refuse_apps = \"terminals\"", ""),
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
            ("kill_switch = \"Escape\"", "kill_switch"),
            ("kill_switch = \"ctrl+banana\"", "unknown key"),
            ("listen_port = 0", "listen_port"),
            ("listen_port = 70000", ""),
            ("audit_log = \"audit.jsonl\"", "absolute"),
            ("audit_log = \"/tmp\"", "directory"),
            ("audit_log = \"/dev/null\"", "not a regular file"),
            ("audit_log = \"/etc/passwd\"", "other than audit records"),
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
        f.kill_switch = true;
        f.listen = true;
        f.audit_log = true;
        f.base.live.approval = ApprovalMode::Deny;
        let s = parse(
            "approval = \"allow\"\nkill_switch = \"super+F1\"\nlisten_port = 1\naudit_log = \"/a/b\"\n[clipboard]\nenabled = true",
            &f,
        )
        .expect("parses");
        assert_eq!(s.live.approval, ApprovalMode::Deny);
        assert!(!s.live.clipboard.enabled);
        assert_eq!(
            (s.kill_switch, s.listen_port),
            (f.base.kill_switch, f.base.listen_port)
        );
        assert_eq!(s.audit_log, f.base.audit_log);
    }
}
