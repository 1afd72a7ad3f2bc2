//! Consent: what the person (never an agent) allowed. It comes from a
//! policy file given to `deskhand serve --consent FILE`, or, only for a
//! virtual desktop deskhand started itself, from the sandbox default.

use std::path::Path;

use serde::Deserialize;
use thiserror::Error;

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
    /// Executables the person allows APP_LAUNCH to start even though they
    /// run commands (shells, interpreters, terminals given a command).
    pub launch_allow: Vec<String>,
    /// Where this came from.
    pub source: ConsentSource,
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
    #[serde(default)]
    input: bool,
    #[serde(default)]
    launch_allow: Vec<String>,
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
            source: ConsentSource::None,
        }
    }

    /// The sandbox default of a virtual desktop deskhand started itself.
    pub fn sandbox() -> Self {
        Self {
            input: true,
            clipboard: Default::default(),
            launch_allow: Vec::new(),
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
                path: display,
                message: format!("launch_allow entry {bad:?} is not an absolute path"),
            });
        }
        Ok(Self {
            input: policy.input,
            clipboard: Default::default(),
            launch_allow: policy.launch_allow,
            source: ConsentSource::PolicyFile,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
        let _ = std::fs::remove_dir_all(&dir);
    }
}
