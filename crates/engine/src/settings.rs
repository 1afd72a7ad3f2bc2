//! What the person changes while deskhand runs (the settings file the
//! host reads): the clipboard policy, the approval mode, the displays
//! agents may see and act on, and how long a consent question waits. Each
//! applies from the next request on.

use std::time::Duration;

use crate::approval::ApprovalMode;
use crate::clipboard::ClipboardPolicy;
use crate::geometry::Monitor;

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
            displays: DisplayChoice::default(),
            consent_timeout: crate::consent_ask::CONSENT_TIMEOUT,
        }
    }
}

impl crate::Engine {
    /// Applies `settings` from the next request on (a request under way
    /// finishes under the old ones).
    pub async fn apply_settings(&self, settings: Settings) {
        tracing::info!(?settings, "settings applied");
        self.clipboard.set_policy(settings.clipboard);
        self.set_approval_mode(settings.approval);
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
}
