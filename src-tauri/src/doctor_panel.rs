//! The Doctor window's commands: the doctor's report of this display, as
//! `deskhand doctor --json` gives it (the page renders it as a checklist),
//! and retrying the backend once the person fixed what it lacked.

use deskhand_host::doctor;
use serde_json::Value;
use tauri::{AppHandle, Runtime};

use crate::panels::PanelError;

/// The display the doctor looks at.
pub struct DoctorPanel {
    /// The X display deskhand drives.
    pub display: String,
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
/// connection file. It only takes agents away, so it needs no click of the
/// person's own mouse.
#[tauri::command]
pub fn deskhand_restart<R: Runtime>(app: AppHandle<R>) {
    tracing::warn!("restart asked from the Doctor window: the backend is opened again");
    app.request_restart();
}
