//! The settings file as a form (the tray app's Settings window): read
//! from the file, checked by the file's own rules and written back whole,
//! so the watcher applies it as it applies a hand edit.

use std::path::Path;

use deskhand_engine::settings::DisplayChoice;
use serde::{Deserialize, Serialize};

use crate::HostError;
use crate::settings::{FileSettings, Fixed, Invalid, parse};

/// Every value of the settings file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Form {
    /// `allow`, `write`, `prompt` or `deny`.
    pub approval: String,
    /// The classes of apps refused input (`terminals`, ...).
    pub refuse_apps: Vec<String>,
    /// The displays agents may see and act on; `None` for every display.
    pub displays: Option<Vec<String>>,
    /// How long a consent question waits, in seconds.
    pub consent_timeout_s: u64,
    /// Clipboard writes, pastes and writeback reads.
    pub clipboard_enabled: bool,
    /// Reads of what others copied.
    pub clipboard_read_foreign: bool,
    /// Every foreign read approved in advance.
    pub clipboard_approve_foreign_reads: bool,
    /// The kill-switch hotkey, e.g. `ctrl+alt+Escape`.
    pub kill_switch: String,
    /// The loopback port of the next start.
    pub listen_port: u16,
    /// The audit log's file.
    pub audit_log: String,
}

impl Form {
    /// The form of `file`.
    pub fn of(file: &FileSettings) -> Self {
        let s = &file.live;
        Self {
            approval: s.approval.as_str().to_owned(),
            refuse_apps: s.refuse.names().into_iter().map(str::to_owned).collect(),
            displays: match &s.displays {
                DisplayChoice::All => None,
                DisplayChoice::Only(names) => Some(names.clone()),
            },
            consent_timeout_s: s.consent_timeout.as_secs(),
            clipboard_enabled: s.clipboard.enabled,
            clipboard_read_foreign: s.clipboard.read_foreign,
            clipboard_approve_foreign_reads: s.clipboard.foreign_reads_approved,
            kill_switch: file.kill_switch.clone(),
            listen_port: file.listen_port,
            audit_log: file.audit_log.display().to_string(),
        }
    }

    /// The file's text for this form.
    pub fn to_toml(&self) -> String {
        text(&self.table())
    }

    fn table(&self) -> toml::Table {
        let mut file = toml::Table::new();
        file.insert("approval".into(), self.approval.clone().into());
        let refused = self.refuse_apps.iter().map(|n| n.as_str().into()).collect();
        file.insert("refuse_apps".into(), toml::Value::Array(refused));
        let displays = match &self.displays {
            None => toml::Value::from("all"),
            Some(names) => toml::Value::Array(names.iter().map(|n| n.as_str().into()).collect()),
        };
        file.insert("displays".into(), displays);
        let secs = i64::try_from(self.consent_timeout_s).unwrap_or(i64::MAX);
        file.insert("consent_timeout_s".into(), secs.into());
        file.insert("kill_switch".into(), self.kill_switch.clone().into());
        file.insert("listen_port".into(), i64::from(self.listen_port).into());
        file.insert("audit_log".into(), self.audit_log.clone().into());
        let mut clipboard = toml::Table::new();
        clipboard.insert("enabled".into(), self.clipboard_enabled.into());
        clipboard.insert("read_foreign".into(), self.clipboard_read_foreign.into());
        clipboard.insert(
            "approve_foreign_reads".into(),
            self.clipboard_approve_foreign_reads.into(),
        );
        file.insert("clipboard".into(), clipboard.into());
        file
    }

    /// The settings this form gives over `fixed`, or what is wrong with it.
    pub fn settings(&self, fixed: &Fixed) -> Result<FileSettings, Invalid> {
        parse(&self.to_toml(), fixed)
    }
}

/// Writes `form` to the file at `path` when it is valid; an invalid form
/// changes nothing. Returns the settings it gives.
pub fn save(path: &Path, fixed: &Fixed, form: &Form) -> Result<FileSettings, HostError> {
    let settings = form.settings(fixed).map_err(|why| HostError::Settings {
        path: path.display().to_string(),
        reason: why.to_string(),
    })?;
    // What the command line set is this run's only: the file keeps its own
    // value of it (a `--listen 127.0.0.1:0` must not become the next
    // start's port).
    let mut table = form.table();
    let before: toml::Table = std::fs::read_to_string(path)
        .ok()
        .and_then(|t| t.parse().ok())
        .unwrap_or_default();
    for key in fixed.names() {
        match before.get(key) {
            Some(value) => table.insert(key.to_owned(), value.clone()),
            None => table.remove(key),
        };
    }
    crate::files::write_private_atomic(path, text(&table).as_bytes())?;
    tracing::info!(path = %path.display(), "settings saved");
    Ok(settings)
}

fn text(table: &toml::Table) -> String {
    format!("# deskhand's settings (written by its Settings window)\n{table}")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn form() -> Form {
        Form::of(&FileSettings::default())
    }

    #[test]
    fn a_form_reads_back_as_the_settings_it_was_made_of() {
        let mut f = form();
        f.approval = "prompt".into();
        f.displays = Some(vec!["DUMMY1".into(), "a \"quoted\" name".into()]);
        f.consent_timeout_s = 30;
        f.refuse_apps = vec!["terminals".into(), "package_managers".into()];
        f.clipboard_enabled = true;
        f.kill_switch = "super+F12".into();
        f.listen_port = 48200;
        f.audit_log = "/var/tmp/a \"quoted\" dir/audit.jsonl".into();
        let s = f.settings(&Fixed::default()).expect("valid");
        assert_eq!(Form::of(&s), f);
    }

    #[test]
    fn an_invalid_form_is_refused_and_the_file_stays() {
        let dir = std::env::temp_dir().join(format!("deskhand-form-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("a scratch dir");
        let path = dir.join("settings.toml");
        save(&path, &Fixed::default(), &form()).expect("defaults are valid");
        let before = std::fs::read_to_string(&path).expect("the saved file");
        for bad in [
            Form {
                consent_timeout_s: 2,
                ..form()
            },
            Form {
                approval: "sometimes".into(),
                ..form()
            },
            Form {
                displays: Some(vec![]),
                ..form()
            },
            Form {
                clipboard_read_foreign: true,
                ..form()
            },
            Form {
                kill_switch: "shift".into(),
                ..form()
            },
            Form {
                refuse_apps: vec!["shells".into()],
                ..form()
            },
            Form {
                listen_port: 0,
                ..form()
            },
            Form {
                audit_log: "relative.jsonl".into(),
                ..form()
            },
        ] {
            let err = save(&path, &Fixed::default(), &bad).expect_err("invalid");
            assert!(matches!(err, HostError::Settings { .. }), "{err}");
        }
        assert_eq!(std::fs::read_to_string(&path).expect("the file"), before);
        std::fs::remove_dir_all(&dir).expect("the scratch dir goes");
    }

    #[test]
    fn what_the_command_line_set_is_not_written_over_the_files_own_value() {
        let dir = std::env::temp_dir().join(format!("deskhand-form-fixed-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("a scratch dir");
        let path = dir.join("settings.toml");
        std::fs::write(&path, "listen_port = 48200\n").expect("the person's file");
        let mut fixed = Fixed {
            listen: true,
            kill_switch: true,
            ..Fixed::default()
        };
        fixed.base.listen_port = 0; // --listen 127.0.0.1:0
        fixed.base.kill_switch = "super+F1".into();
        let mut f = Form::of(&fixed.base);
        f.approval = "deny".into();
        save(&path, &fixed, &f).expect("saves");
        let saved = parse(
            &std::fs::read_to_string(&path).expect("the file"),
            &Fixed::default(),
        )
        .expect("the next start reads it");
        assert_eq!(saved.listen_port, 48200, "the file's own port stays");
        assert_eq!(
            saved.kill_switch,
            FileSettings::default().kill_switch,
            "no chord written"
        );
        assert_eq!(saved.live.approval.as_str(), "deny", "the rest is saved");
        std::fs::remove_dir_all(&dir).expect("the scratch dir goes");
    }
}
