//! The Doctor window's commands: the doctor's report of this display, as
//! `deskhand doctor --json` gives it but worded for the person
//! (`Reader::Window`: its own buttons, the Settings window, no commands of
//! deskhand's) with the clipboard as the settings have it (the page
//! renders it as a checklist),
//! asking macOS for a missing permission, and retrying the backend once
//! the person fixed what it lacked.

use std::sync::Arc;

use deskhand_engine::Engine;
use deskhand_host::doctor;
use serde_json::{Value, json};
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
/// accessibility bus), worded for the person and with the clipboard as
/// their settings have it.
#[tauri::command]
pub async fn doctor_run(panel: tauri::State<'_, DoctorPanel>) -> Result<Value, PanelError> {
    let display = panel.display.clone();
    let clipboard_on = panel.engine.clipboard_policy().enabled;
    let report = tauri::async_runtime::spawn_blocking(move || {
        doctor::report(Some(&display)).for_window(clipboard_on)
    })
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

/// Asks the OS for permission `name` (macOS: its prompt, then its System
/// Settings pane). Where deskhand can send input, only a click of the
/// person's own mouse asks: an agent could otherwise make macOS prompt the
/// person on its behalf. Where it cannot (no takeover yet, as before
/// Input Monitoring is granted, which telling the person's click apart
/// needs), no agent can click at all, so the click asks.
#[tauri::command]
pub async fn permission_ask(
    panel: tauri::State<'_, DoctorPanel>,
    name: String,
) -> Result<Value, PanelError> {
    if panel.engine.takeover_available() && !panel.engine.person_clicked().await {
        tracing::warn!(permission = %name, "a permission prompt that was not the person's click was refused");
        return Err(PanelError::AskNotThePerson);
    }
    let asked =
        tauri::async_runtime::spawn_blocking(move || deskhand_platform::ask_permission(&name))
            .await
            .map_err(|e| PanelError::Task(e.to_string()))?
            .map_err(|e| PanelError::Permission(e.to_string()))?;
    tracing::info!(permission = %asked.name, granted = ?asked.granted, pane_opened = asked.pane_opened, "permission asked from the Doctor window");
    Ok(json!({
        "name": asked.name,
        "granted": asked.granted,
        "pane_opened": asked.pane_opened,
        "summary": asked.summary,
    }))
}
