//! The Activity window's commands: the live sessions (client, protocol,
//! takeover, since, what the person allowed them) with Revoke, the latest audit records, which the page
//! groups into each session's timeline, and the thumbnails of what agents
//! were shown, which the page puts beside the act they came with.

use std::sync::Arc;

use base64::Engine as _;
use deskhand_engine::thumbnails::ThumbnailInfo;
use deskhand_engine::{AppScope, Consent, Engine, Grant};
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
    /// What the person allowed it, in words.
    allowed: String,
}

/// What a session may do, in the person's words: what the consent in
/// force gives every session, with what they allowed it in the consent
/// dialog (its apps and lease when there is one).
fn allowed_words(grant: Option<&Grant>, consent: &Consent) -> String {
    let input = consent.input || grant.is_some_and(|g| g.takeover);
    let clipboard = consent.clipboard_read || grant.is_some_and(|g| g.clipboard_read);
    let (apps, until) = match grant {
        Some(g) => (&g.apps, g.until),
        None => (&consent.apps, None),
    };
    let mut can = vec!["see the screen"];
    if input {
        can.push("use mouse and keyboard (red frame)");
    }
    if clipboard {
        can.push("ask to read the clipboard");
    }
    let mut words = can.join(", ");
    match apps {
        AppScope::Named(names) if names.is_empty() => words.push_str("; in no app"),
        AppScope::Named(names) => words.push_str(&format!("; only in {}", names.join(", "))),
        AppScope::All => {}
    }
    match until.map(|t| t.saturating_duration_since(std::time::Instant::now())) {
        Some(left) => words.push_str(&format!("; for {} more min", left.as_secs().div_ceil(60))),
        None if grant.is_some() => words.push_str("; until it ends"),
        None => words.push_str(" (your consent settings)"),
    }
    words
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
            allowed: allowed_words(panel.engine.granted(&id).as_ref(), panel.engine.consent()),
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::{Duration, Instant};

    #[test]
    fn what_was_allowed_reads_as_words() {
        let grant = Grant {
            takeover: true,
            clipboard_read: false,
            apps: AppScope::Named(vec!["XTerm".into()]),
            until: Some(Instant::now() + Duration::from_secs(59 * 60 + 30)),
        };
        assert_eq!(
            allowed_words(Some(&grant), &Consent::none()),
            "see the screen, use mouse and keyboard (red frame); only in XTerm; for 60 more min"
        );
        assert_eq!(
            allowed_words(None, &Consent::none()),
            "see the screen; in no app (your consent settings)"
        );
        // The consent in force counts too: input it gives needs no box.
        let file = Consent {
            input: true,
            ..Consent::none()
        };
        let asked = Grant {
            takeover: false,
            ..grant
        };
        assert!(allowed_words(Some(&asked), &file).contains("use mouse and keyboard"));
    }
}
