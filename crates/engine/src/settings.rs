//! What the person changes while deskhand runs (the settings file the
//! host reads): the clipboard policy, the approval mode, the classes of
//! apps refused input, the displays agents may see and act on, and how
//! long a consent question waits. Each applies from the next request on.

use std::time::Duration;

use crate::approval::ApprovalMode;
use crate::clipboard::ClipboardPolicy;
use crate::geometry::Monitor;
use crate::refusal::RefusalPolicy;

/// The displays agents may see and act on.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum DisplayChoice {
    /// Every display.
    #[default]
    All,
    /// Only these, by name (as the backend names them, e.g. `DUMMY0`).
    Only(Vec<String>),
}

impl DisplayChoice {
    /// The monitors of `all` this choice keeps, in their order.
    pub fn keep(&self, all: Vec<Monitor>) -> Vec<Monitor> {
        match self {
            Self::All => all,
            Self::Only(names) => all
                .into_iter()
                .filter(|m| names.iter().any(|n| n == &m.name))
                .collect(),
        }
    }
}

/// The live settings.
#[derive(Debug, Clone, PartialEq)]
pub struct Settings {
    /// What the clipboard may be used for.
    pub clipboard: ClipboardPolicy,
    /// How computer-endpoint input is approved.
    pub approval: ApprovalMode,
    /// The classes of apps no agent may send input to.
    pub refuse: RefusalPolicy,
    /// The displays agents may see and act on.
    pub displays: DisplayChoice,
    /// How long a consent question waits for the person's answer.
    pub consent_timeout: Duration,
}

impl Default for Settings {
    fn default() -> Self {
        Self {
            clipboard: ClipboardPolicy::default(),
            approval: ApprovalMode::default(),
            refuse: RefusalPolicy::default(),
            displays: DisplayChoice::default(),
            consent_timeout: crate::consent_ask::CONSENT_TIMEOUT,
        }
    }
}

impl Settings {
    /// What `next` allows that these settings do not, as the settings'
    /// names: a host lets only the person's own click save such a change
    /// (an agent may tighten the settings, never loosen them).
    pub fn loosened_by(&self, next: &Settings) -> Vec<&'static str> {
        let mut more = Vec::new();
        let (now, then) = (&self.clipboard, &next.clipboard);
        if then.enabled && !now.enabled {
            more.push("clipboard.enabled");
        }
        if then.read_foreign && !now.read_foreign {
            more.push("clipboard.read_foreign");
        }
        if then.foreign_reads_approved && !now.foreign_reads_approved {
            more.push("clipboard.approve_foreign_reads");
        }
        if strictness(next.approval) < strictness(self.approval) {
            more.push("approval");
        }
        if self.refuse.classes.iter().any(|c| !next.refuse.refuses(*c)) {
            more.push("refuse_apps");
        }
        let shows_more = match (&self.displays, &next.displays) {
            (_, DisplayChoice::All) => self.displays != DisplayChoice::All,
            (DisplayChoice::All, DisplayChoice::Only(_)) => false,
            (DisplayChoice::Only(now), DisplayChoice::Only(then)) => {
                then.iter().any(|name| !now.contains(name))
            }
        };
        if shows_more {
            more.push("displays");
        }
        more
    }
}

/// How much an approval mode asks, least first.
fn strictness(mode: ApprovalMode) -> u8 {
    match mode {
        ApprovalMode::Allow => 0,
        ApprovalMode::Write => 1,
        ApprovalMode::Prompt => 2,
        ApprovalMode::Deny => 3,
    }
}

impl crate::Engine {
    /// Every display the backend reports, those the person keeps private
    /// included (for the host's settings, never for agents).
    pub async fn every_display(&self) -> Result<Vec<Monitor>, crate::EngineError> {
        let layout = self.exec.run(|desk| desk.full_layout()).await??;
        Ok(layout.monitors)
    }

    /// Where the audit log is written now, if anywhere.
    pub fn audit_path(&self) -> Option<std::path::PathBuf> {
        self.audit.path()
    }

    /// Writes the audit log at `path` from the next record on; when
    /// `path` cannot be opened the log stays where it is.
    pub fn move_audit_log(&self, path: &std::path::Path) -> std::io::Result<()> {
        self.audit.move_to(path)
    }

    /// Applies `settings` from the next request on (a request under way
    /// finishes under the old ones).
    pub async fn apply_settings(&self, settings: Settings) {
        tracing::info!(?settings, "settings applied");
        self.clipboard.set_policy(settings.clipboard);
        self.set_approval_mode(settings.approval);
        self.set_refusal_policy(settings.refuse);
        self.set_consent_timeout(settings.consent_timeout);
        let displays = settings.displays;
        if self
            .exec
            .run(move |desk| desk.displays = displays)
            .await
            .is_err()
        {
            tracing::warn!("the desktop thread is gone: the display choice was not applied");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::geometry::Rect;

    fn monitor(index: u32, name: &str) -> Monitor {
        Monitor {
            index,
            name: name.into(),
            primary: index == 0,
            rect: Rect {
                x: 1280 * index as i32,
                y: 0,
                width: 1280,
                height: 800,
            },
            scale: 1.0,
        }
    }

    #[test]
    fn a_choice_keeps_only_the_displays_it_names() {
        let all = vec![monitor(0, "DUMMY0"), monitor(1, "DUMMY1")];
        assert_eq!(DisplayChoice::All.keep(all.clone()), all);
        let only = DisplayChoice::Only(vec!["DUMMY1".into()]);
        assert_eq!(only.keep(all.clone()), vec![all[1].clone()]);
        let none = DisplayChoice::Only(vec!["HDMI-1".into()]);
        assert!(none.keep(all).is_empty());
    }

    #[test]
    fn only_allowing_more_counts_as_loosening() {
        let strict = Settings {
            approval: ApprovalMode::Prompt,
            displays: DisplayChoice::Only(vec!["DUMMY0".into()]),
            ..Settings::default()
        };
        let tighter = Settings {
            approval: ApprovalMode::Deny,
            ..strict.clone()
        };
        assert!(strict.loosened_by(&tighter).is_empty());
        assert!(strict.loosened_by(&strict).is_empty());
        let refusing = Settings {
            refuse: RefusalPolicy::from_names(&["terminals"]).expect("a class"),
            ..strict.clone()
        };
        assert!(
            strict.loosened_by(&refusing).is_empty(),
            "refusing more is tighter"
        );
        assert_eq!(refusing.loosened_by(&strict), ["refuse_apps"]);
        let mut looser = strict.clone();
        looser.approval = ApprovalMode::Write;
        looser.displays = DisplayChoice::All;
        looser.clipboard.enabled = true;
        assert_eq!(
            strict.loosened_by(&looser),
            ["clipboard.enabled", "approval", "displays"]
        );
        let other = Settings {
            displays: DisplayChoice::Only(vec!["DUMMY1".into()]),
            ..strict.clone()
        };
        assert_eq!(strict.loosened_by(&other), ["displays"]);
        assert!(looser.loosened_by(&strict).is_empty());
    }
}
