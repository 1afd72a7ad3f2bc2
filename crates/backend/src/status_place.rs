//! A place in the desktop's own chrome for deskhand's status and the
//! tray's menu, where no tray host runs (GNOME's top bar, drawn by
//! deskhand's extension). Like the tray menu it never resumes an agent:
//! an agent could choose its items; only Continue does.

use std::sync::Arc;

use serde::Serialize;

use crate::BackendError;

/// What the place shows.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PlaceStatus {
    /// The state its icon shows: `idle`, `connected`, `takeover` or
    /// `paused`.
    pub state: &'static str,
    /// The status line, as the tray menu's first item.
    pub line: String,
    /// One line per open session: the agent and what it does.
    pub sessions: Vec<String>,
}

/// An item of the place's menu, as the person chose it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MenuChoice {
    /// Pause agents: the person holds the desktop until Continue.
    Pause,
    /// Stop all agents (the kill switch).
    Stop,
    /// The Settings window.
    Settings,
    /// The Doctor window.
    Doctor,
    /// The Activity window.
    Activity,
    /// Quit deskhand.
    Quit,
}

impl MenuChoice {
    /// Every item, in the menu's order.
    pub const ALL: [Self; 6] = [
        Self::Pause,
        Self::Stop,
        Self::Settings,
        Self::Doctor,
        Self::Activity,
        Self::Quit,
    ];

    /// The item's id (the tray menu's and the extension's).
    pub fn id(self) -> &'static str {
        match self {
            Self::Pause => "pause",
            Self::Stop => "stop",
            Self::Settings => "settings",
            Self::Doctor => "doctor",
            Self::Activity => "activity",
            Self::Quit => "quit",
        }
    }

    /// The item whose id is `id`.
    pub fn of_id(id: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|c| c.id() == id)
    }

    /// The item's words in the menu.
    pub fn label(self) -> &'static str {
        match self {
            Self::Pause => "Pause agents",
            Self::Stop => "Stop all agents",
            Self::Settings => "Settings…",
            Self::Doctor => "Doctor…",
            Self::Activity => "Activity…",
            Self::Quit => "Quit deskhand",
        }
    }
}

/// An item as a menu draws it: `{"id": …, "label": …}`.
impl Serialize for MenuChoice {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct as _;
        let mut item = s.serialize_struct("MenuChoice", 2)?;
        item.serialize_field("id", self.id())?;
        item.serialize_field("label", self.label())?;
        item.end()
    }
}

/// Where the person's menu choices go.
pub type ChoiceSink = Arc<dyn Fn(MenuChoice) + Send + Sync>;

/// The status place of a desktop that has one.
pub trait StatusPlace: Send + Sync {
    /// Shows `status`; the first call puts the place up.
    fn show(&self, status: &PlaceStatus) -> Result<(), BackendError>;
    /// Sends the person's menu choices to `sink` from now on.
    fn set_choices(&self, sink: ChoiceSink);
    /// Takes the place down.
    fn remove(&self) -> Result<(), BackendError>;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_item_is_found_by_its_id_alone() {
        for c in MenuChoice::ALL {
            assert_eq!(MenuChoice::of_id(c.id()), Some(c));
        }
        assert_eq!(MenuChoice::of_id("continue"), None, "nothing resumes");
        assert_eq!(MenuChoice::of_id(""), None);
    }
}
