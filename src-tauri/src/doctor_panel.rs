//! The Doctor window's commands: the doctor's report of this display, as
//! `deskhand doctor --json` gives it (the page renders it as a checklist),
//! and retrying the backend once the person fixed what it lacked.

use std::sync::Arc;

use deskhand_engine::Engine;
use deskhand_host::doctor;
use serde_json::Value;
use tauri::{AppHandle, Runtime};

use crate::panels::PanelError;

/// The display the doctor looks at.
pub struct DoctorPanel {
    /// The X display deskhand drives.
    pub display: String,
    /// The engine (the person's click).
    pub engine: Arc<Engine>,
}

/// Runs the doctor now (off the UI thread: it probes the display and the
/// accessibility bus).
#[tauri::command]
pub async fn doctor_run(panel: tauri::State<'_, DoctorPanel>) -> Result<Value, PanelError> {
    let display = panel.display.clone();
    let report = tauri::async_runtime::spawn_blocking(move || doctor::report(Some(&display)))
        .await
        .map_err(|e| PanelError::Task(e.to_string()))?;
    serde_json::to_value(report).map_err(|e| PanelError::Task(e.to_string()))
}

/// Retries the backend: deskhand stops as Quit does (every takeover ends,
/// everything held is released, the connection file goes) and starts again
/// with the same flags, so that it opens the display, the input, the
/// overlay and the clipboard anew. Agents reconnect through the new
/// connection file. The new process holds no pause, so only a click of
/// the person's own mouse restarts: an agent could otherwise lift the
/// person's hold (a hand-back, the kill switch) this way.
#[tauri::command]
pub async fn deskhand_restart<R: Runtime>(
    app: AppHandle<R>,
    panel: tauri::State<'_, DoctorPanel>,
) -> Result<(), PanelError> {
    if !panel.engine.person_clicked().await {
        tracing::warn!("a restart that was not the person's click was refused");
        return Err(PanelError::RestartNotThePerson);
    }
    tracing::warn!("restart asked from the Doctor window: the backend is opened again");
    app.request_restart();
    Ok(())
}
