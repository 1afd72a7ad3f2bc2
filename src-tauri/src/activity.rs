//! The Activity window's commands: the live sessions (client, protocol,
//! takeover, since) with End, the latest audit records, which the page
//! groups into each session's timeline, and the thumbnails of what agents
//! were shown, which the page puts beside the act they came with.

use std::sync::Arc;

use base64::Engine as _;
use deskhand_engine::Engine;
use deskhand_engine::thumbnails::ThumbnailInfo;
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
    /// The kept thumbnails (their images by [`activity_thumbnail`]).
    thumbnails: Vec<ThumbnailInfo>,
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
        thumbnails: panel.engine.thumbnails(),
    })
}

/// Thumbnail `id` as a `data:` URL for an `<img>`.
#[tauri::command]
pub fn activity_thumbnail(
    id: u64,
    panel: tauri::State<'_, ActivityPanel>,
) -> Result<String, PanelError> {
    let jpeg = panel
        .engine
        .thumbnail_jpeg(id)
        .ok_or_else(|| PanelError::Invalid(format!("thumbnail {id} is no longer kept")))?;
    let base64 = base64::engine::general_purpose::STANDARD.encode(jpeg.as_slice());
    Ok(format!("data:image/jpeg;base64,{base64}"))
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
