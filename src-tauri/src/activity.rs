//! The Activity window's commands: the live sessions (client, protocol,
//! takeover, since) with End, and the latest audit records, which the page
//! groups into each session's timeline.

use std::sync::Arc;

use deskhand_engine::Engine;
use serde::Serialize;
use serde_json::Value;

use crate::panels::PanelError;
use crate::status::{Opened, Shared};

/// Most audit records the window shows.
const RECORDS: usize = 300;

/// What the Activity window reads.
pub struct ActivityPanel {
    /// The engine (client names, ending a session).
    pub engine: Arc<Engine>,
    /// The open sessions.
    pub tracker: Shared,
}

/// A live session.
#[derive(Debug, Serialize)]
pub struct SessionView {
    id: String,
    client: Option<String>,
    #[serde(flatten)]
    opened: Opened,
    takeover: bool,
    paused: bool,
}

/// The window's content.
#[derive(Debug, Serialize)]
pub struct ActivityView {
    sessions: Vec<SessionView>,
    /// The latest audit records, oldest first.
    records: Vec<Value>,
    /// Why there are no records, when the log could not be read.
    audit_note: Option<String>,
}

/// The live sessions and the latest audit records.
#[tauri::command]
pub async fn activity(panel: tauri::State<'_, ActivityPanel>) -> Result<ActivityView, PanelError> {
    let open = panel.tracker.lock().map(|t| t.open()).unwrap_or_default();
    let sessions = open
        .into_iter()
        .map(|(id, opened, (takeover, paused))| SessionView {
            client: panel.engine.client_name(&id),
            id,
            opened,
            takeover,
            paused,
        })
        .collect();
    let path = panel.engine.audit_path();
    let read = tauri::async_runtime::spawn_blocking(move || match path {
        Some(path) => deskhand_host::audit_file::last_lines(&path, RECORDS),
        None => Ok(Vec::new()),
    })
    .await
    .map_err(|e| PanelError::Task(e.to_string()))?;
    let (records, audit_note) = match read {
        Ok(lines) => (
            lines
                .iter()
                .filter_map(|l| serde_json::from_str(l).ok())
                .collect(),
            None,
        ),
        Err(e) => (Vec::new(), Some(e.to_string())),
    };
    Ok(ActivityView {
        sessions,
        records,
        audit_note,
    })
}

/// Ends `session`'s takeover at once and grants it none again (the kill
/// switch for one agent).
#[tauri::command]
pub async fn session_end(
    session: String,
    panel: tauri::State<'_, ActivityPanel>,
) -> Result<(), PanelError> {
    tracing::warn!(%session, "the person ended a session in the Activity window");
    panel.engine.revoke_session(&session).await;
    Ok(())
}
