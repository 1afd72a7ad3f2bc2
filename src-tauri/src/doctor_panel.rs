//! The Doctor window's command: the doctor's report of this display, as
//! `deskhand doctor --json` gives it; the page renders it as a checklist.

use deskhand_host::doctor;
use serde_json::Value;

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
