//! Consent: what the person (never an agent) allowed. It comes from a
//! policy file given to `deskhand serve --consent FILE`, or, only for a
//! virtual desktop deskhand started itself, from the sandbox default.

use std::path::Path;
use std::time::Duration;

use serde::Deserialize;
use thiserror::Error;

use crate::refusal::RefuseApps;

/// The longest lease a policy file may grant: a week.
pub const MAX_LEASE_S: u64 = 7 * 24 * 3600;

/// Where the grants came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ConsentSource {
    /// Nothing granted beyond reads.
    None,
    /// A virtual desktop deskhand started itself: everything inside it.
    Sandbox,
    /// A policy file the person wrote.
    PolicyFile,
}

/// What the sessions of this daemon may do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Consent {
    /// Synthetic pointer and keyboard input.
    pub input: bool,
    /// What the clipboard may be used for (off unless the person enables
    /// it; never part of the sandbox default).
    pub clipboard: crate::clipboard::ClipboardPolicy,
    /// Executables (absolute paths, compared by the file they name) the
    /// person allows APP_LAUNCH to start with any arguments, though no
    /// application entry names them or they run commands.
    pub launch_allow: Vec<String>,
    /// The apps sessions may work with (MCP scopes its targets to them).
    pub apps: AppScope,
    /// Whether a session may ask to read the clipboard (each read still
    /// needs the clipboard policy and a per-call approval).
    pub clipboard_read: bool,
    /// The longest a session's consent lasts; `None`: until it ends.
    pub lease: Option<Duration>,
    /// App classes no agent may send input to (off unless the person
    /// turns it on).
    pub refuse: crate::refusal::RefusalPolicy,
    /// How input through the computer endpoints is approved.
    pub approval: crate::approval::ApprovalMode,
    /// Where this came from.
    pub source: ConsentSource,
}

/// Which apps' windows a session may target.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AppScope {
    /// The whole desktop (`"*"`).
    All,
    /// Apps by name or class, compared case-insensitively.
    Named(Vec<String>),
}

impl AppScope {
    /// Whether `name` (an app's class, instance or name) is inside.
    pub fn allows(&self, name: &str) -> bool {
        match self {
            Self::All => true,
            Self::Named(names) => names.iter().any(|n| n.eq_ignore_ascii_case(name)),
        }
    }

    /// The part of `asked` that this scope grants: `None` asks for
    /// everything granted.
    pub fn narrow(&self, asked: Option<&[String]>) -> AppScope {
        let Some(asked) = asked else {
            return self.clone();
        };
        if asked.iter().any(|a| a == "*") {
            return self.clone();
        }
        AppScope::Named(asked.iter().filter(|a| self.allows(a)).cloned().collect())
    }

    /// The names, `["*"]` for the whole desktop.
    pub fn names(&self) -> Vec<String> {
        match self {
            Self::All => vec!["*".to_owned()],
            Self::Named(names) => names.clone(),
        }
    }
}

/// A consent file that cannot be used.
#[derive(Debug, Error)]
pub enum ConsentError {
    /// The file cannot be read.
    #[error("cannot read consent file {path}: {source}")]
    Read {
        /// The file.
        path: String,
        /// Why.
        source: std::io::Error,
    },
    /// The file is not a valid policy.
    #[error("invalid consent file {path}: {message}")]
    Invalid {
        /// The file.
        path: String,
        /// What is wrong.
        message: String,
    },
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct PolicyFile {
    /// Synthetic input (`takeover` is the driver contract's name for it).
    #[serde(default, alias = "takeover")]
    input: bool,
    #[serde(default)]
    launch_allow: Vec<String>,
    /// Apps by name or class, or `"*"`; the whole desktop when absent.
    #[serde(default)]
    apps: Option<Vec<String>>,
    #[serde(default)]
    clipboard_read: bool,
    #[serde(default)]
    lease_s: Option<u64>,
    /// `true` (every class) or class names (`terminals`, ...).
    #[serde(default)]
    refuse_apps: Option<RefuseApps>,
    /// `allow`, `write`, `prompt` or `deny`.
    #[serde(default)]
    approval: Option<String>,
}

impl Consent {
    /// The same grants plus the clipboard `policy` (from the command line).
    pub fn with_clipboard(mut self, policy: crate::clipboard::ClipboardPolicy) -> Self {
        self.clipboard = policy;
        self
    }

    /// Nothing granted: reads only.
    pub fn none() -> Self {
        Self {
            input: false,
            clipboard: Default::default(),
            launch_allow: Vec::new(),
            apps: AppScope::Named(Vec::new()),
            clipboard_read: false,
            lease: None,
            refuse: Default::default(),
            approval: Default::default(),
            source: ConsentSource::None,
        }
    }

    /// The sandbox default of a virtual desktop deskhand started itself.
    pub fn sandbox() -> Self {
        Self {
            input: true,
            clipboard: Default::default(),
            launch_allow: Vec::new(),
            apps: AppScope::All,
            clipboard_read: true,
            lease: None,
            refuse: Default::default(),
            approval: Default::default(),
            source: ConsentSource::Sandbox,
        }
    }

    /// Reads a policy file such as `{"input": true, "launch_allow":
    /// ["/usr/bin/python3"]}`. Unknown keys are
    /// refused so that a typo never silently grants less (or more).
    pub fn from_file(path: &Path) -> Result<Self, ConsentError> {
        let display = path.display().to_string();
        let text = std::fs::read_to_string(path).map_err(|source| ConsentError::Read {
            path: display.clone(),
            source,
        })?;
        let policy: PolicyFile =
            serde_json::from_str(&text).map_err(|e| ConsentError::Invalid {
                path: display.clone(),
                message: e.to_string(),
            })?;
        if let Some(bad) = policy.launch_allow.iter().find(|p| !p.starts_with('/')) {
            return Err(ConsentError::Invalid {
                path: display.clone(),
                message: format!("launch_allow entry {bad:?} is not an absolute path"),
            });
        }
        let invalid = |message: String| ConsentError::Invalid {
            path: display.clone(),
            message,
        };
        let apps = match policy.apps {
            None => AppScope::All,
            Some(names) if names.iter().any(|n| n == "*") => AppScope::All,
            Some(names) => {
                if let Some(bad) = names.iter().find(|n| n.trim().is_empty() || n.len() > 256) {
                    return Err(invalid(format!("apps entry {bad:?} is not an app name")));
                }
                AppScope::Named(names)
            }
        };
        let lease = match policy.lease_s {
            Some(0) => return Err(invalid("lease_s must be at least 1".into())),
            Some(s) if s > MAX_LEASE_S => {
                return Err(invalid(format!("lease_s must be at most {MAX_LEASE_S}")));
            }
            other => other.map(Duration::from_secs),
        };
        Ok(Self {
            input: policy.input,
            clipboard: Default::default(),
            launch_allow: policy.launch_allow,
            apps,
            clipboard_read: policy.clipboard_read,
            lease,
            refuse: match policy.refuse_apps {
                None => Default::default(),
                Some(r) => r
                    .policy()
                    .map_err(|e| invalid(format!("refuse_apps entry {e}")))?,
            },
            approval: match policy.approval {
                None => Default::default(),
                Some(mode) => mode.parse().map_err(invalid)?,
            },
            source: ConsentSource::PolicyFile,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_scope_grants_only_what_it_holds() {
        let named = AppScope::Named(vec!["XTerm".into()]);
        let asked = ["xterm".to_owned(), "gedit".to_owned()];
        assert_eq!(
            named.narrow(Some(&asked)),
            AppScope::Named(vec!["xterm".into()])
        );
        assert_eq!(named.narrow(Some(&["*".to_owned()])), named);
        assert_eq!(AppScope::All.narrow(None), AppScope::All);
        assert_eq!(AppScope::All.narrow(Some(&asked)).names(), asked);
    }

    #[test]
    fn policy_file_grants_and_refuses_typos() {
        let dir = std::env::temp_dir().join(format!("dh-consent-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("dir");
        let good = dir.join("good.json");
        std::fs::write(&good, r#"{"input": true}"#).expect("write");
        assert!(Consent::from_file(&good).expect("valid").input);
        let typo = dir.join("typo.json");
        std::fs::write(&typo, r#"{"inptu": true}"#).expect("write");
        assert!(matches!(
            Consent::from_file(&typo),
            Err(ConsentError::Invalid { .. })
        ));
        assert!(Consent::from_file(&dir.join("missing.json")).is_err());
        let scoped = dir.join("scoped.json");
        std::fs::write(
            &scoped,
            r#"{"takeover": true, "apps": ["XTerm"], "clipboard_read": true, "lease_s": 60}"#,
        )
        .expect("write");
        let c = Consent::from_file(&scoped).expect("valid");
        assert!(c.input && c.clipboard_read);
        assert_eq!(c.lease, Some(Duration::from_secs(60)));
        assert!(c.apps.allows("xterm") && !c.apps.allows("gedit"));
        let zero = dir.join("zero.json");
        std::fs::write(&zero, r#"{"lease_s": 0}"#).expect("write");
        assert!(Consent::from_file(&zero).is_err());
        assert_eq!(
            c.refuse,
            Default::default(),
            "refusal is off unless turned on"
        );
        let careful = dir.join("careful.json");
        std::fs::write(
            &careful,
            r#"{"input": true, "refuse_apps": ["terminals"], "approval": "write"}"#,
        )
        .expect("write");
        let c = Consent::from_file(&careful).expect("valid");
        assert_eq!(c.refuse.classes, [crate::refusal::RefusedClass::Terminals]);
        assert_eq!(c.approval, crate::approval::ApprovalMode::Write);
        std::fs::write(&careful, r#"{"refuse_apps": true}"#).expect("write");
        assert_eq!(
            Consent::from_file(&careful)
                .expect("valid")
                .refuse
                .classes
                .len(),
            4
        );
        for bad in [r#"{"refuse_apps": ["shells"]}"#, r#"{"approval": "yolo"}"#] {
            std::fs::write(&careful, bad).expect("write");
            assert!(Consent::from_file(&careful).is_err(), "{bad}");
        }
        let _ = std::fs::remove_dir_all(&dir);
    }
}
