//! deskhand's menu in GNOME's top bar, where GNOME runs no tray host:
//! drawn by deskhand's extension (`ShowStatus`), its items chosen by the
//! person coming back as the shell's own `Chosen` signal.

use std::sync::Arc;
use std::time::Duration;

use deskhand_backend::{BackendError, ChoiceSink, MenuChoice, PlaceStatus, StatusPlace};
use futures_util::StreamExt;

use crate::rt::Rt;
use crate::shell::ShellExt;

const CALL: Duration = Duration::from_secs(3);

/// The first version of the extension that draws the menu.
pub(crate) const SINCE_VERSION: u32 = 2;

/// What the extension is given: the status and the menu's items (their
/// ids and words), which it draws as they come.
fn shown(status: &PlaceStatus) -> Result<String, BackendError> {
    let mut json = serde_json::to_value(status)
        .map_err(|e| BackendError::Failed(format!("the status: {e}")))?;
    json["items"] = serde_json::json!(MenuChoice::ALL);
    Ok(json.to_string())
}

pub(crate) struct TopBar {
    pub(crate) rt: Arc<Rt>,
    pub(crate) shell: ShellExt,
}

impl StatusPlace for TopBar {
    fn show(&self, status: &PlaceStatus) -> Result<(), BackendError> {
        let json = shown(status)?;
        let shell = self.shell.clone();
        self.rt.run(CALL, "showing the status", async move {
            shell.show_status(&json).await
        })
    }

    fn set_choices(&self, sink: ChoiceSink) {
        let shell = self.shell.clone();
        self.rt.spawn(async move {
            let mut chosen = match shell.choices().await {
                Ok(s) => s,
                Err(e) => {
                    tracing::warn!(error = %e, "no menu choices from the GNOME Shell extension");
                    return;
                }
            };
            while let Some(msg) = chosen.next().await {
                let id = msg.body().deserialize::<String>();
                match id.as_deref().ok().and_then(MenuChoice::of_id) {
                    Some(choice) => sink(choice),
                    None => tracing::debug!(?id, "an unknown menu item"),
                }
            }
        });
    }

    fn remove(&self) -> Result<(), BackendError> {
        let shell = self.shell.clone();
        self.rt.run(CALL, "removing the status", async move {
            shell.hide_status().await
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_extension_is_given_the_status_and_every_item_of_the_menu() {
        let status = PlaceStatus {
            state: "paused",
            line: "Paused: you have control".into(),
            sessions: vec!["agent-a (mcp): paused".into()],
        };
        let json: serde_json::Value =
            serde_json::from_str(&shown(&status).expect("json")).expect("parsed");
        assert_eq!(json["state"], "paused");
        assert_eq!(json["sessions"][0], "agent-a (mcp): paused");
        let items = json["items"].as_array().expect("items");
        assert_eq!(items.len(), MenuChoice::ALL.len());
        assert_eq!(
            (&items[1]["id"], &items[1]["label"]),
            (&"stop".into(), &"Stop all agents".into())
        );
    }
}
