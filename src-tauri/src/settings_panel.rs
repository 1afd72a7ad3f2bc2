//! The Settings window's commands: the settings file as a form, the
//! displays to choose from, start at login, the token (copied or
//! replaced), a folder for the audit log, and what cannot change while
//! deskhand runs. A save that allows more than before (a display shown
//! again, the clipboard on, fewer approvals, another kill switch or audit
//! log place) takes a click of the person's own mouse, as Continue does:
//! an agent that reaches the window may tighten the settings, never
//! loosen them.

use std::path::Path;
use std::sync::Arc;

use deskhand_engine::Engine;
use deskhand_host::desktop::SettingsFile;
use deskhand_host::port_token::PortToken;
use deskhand_host::settings_form::{self, Form};
use serde::{Deserialize, Serialize};
use tauri::{AppHandle, Runtime};
use tauri_plugin_autostart::ManagerExt as _;
use tauri_plugin_dialog::DialogExt as _;

use crate::panels::PanelError;

/// What the Settings window edits and shows.
pub struct SettingsPanel {
    /// The engine (its displays, the person's click).
    pub engine: Arc<Engine>,
    /// The settings file.
    pub file: SettingsFile,
    /// Where the port listens.
    pub listen: String,
    /// The person's token.
    pub token: PortToken,
}

/// A display to choose.
#[derive(Debug, Serialize)]
pub struct DisplayView {
    name: String,
    width: u32,
    height: u32,
    primary: bool,
}

/// The window's content.
#[derive(Debug, Serialize)]
pub struct SettingsView {
    form: Form,
    start_at_login: bool,
    displays: Vec<DisplayView>,
    /// Values the command line set, which the form cannot change.
    fixed: Vec<&'static str>,
    path: String,
    /// Where the port listens now (a new port applies at the next start).
    listen: String,
    /// Where the audit log is written now.
    audit_log: Option<String>,
    /// Where the token is kept.
    token_kept_in: String,
    /// What the last save did, for the person.
    note: Option<String>,
}

/// What the page sends on Save.
#[derive(Debug, Deserialize)]
pub struct SettingsSave {
    form: Form,
    start_at_login: bool,
}

impl SettingsPanel {
    async fn view<R: Runtime>(
        &self,
        app: &AppHandle<R>,
        note: Option<String>,
    ) -> Result<SettingsView, PanelError> {
        let current = deskhand_host::settings::initial(&self.file.path, &self.file.fixed)
            .map_err(|e| PanelError::Invalid(e.to_string()))?;
        let displays = self
            .engine
            .every_display()
            .await
            .map_err(|e| PanelError::Invalid(e.to_string()))?
            .into_iter()
            .map(|m| DisplayView {
                name: m.name,
                width: m.rect.width,
                height: m.rect.height,
                primary: m.primary,
            })
            .collect();
        let fixed = &self.file.fixed;
        Ok(SettingsView {
            form: Form::of(&current),
            start_at_login: app.autolaunch().is_enabled().unwrap_or(false),
            displays,
            fixed: fixed.names(),
            path: self.file.path.display().to_string(),
            listen: self.listen.clone(),
            audit_log: self.engine.audit_path().map(|p| p.display().to_string()),
            token_kept_in: self.token.kept_in().to_string(),
            note,
        })
    }

    async fn save<R: Runtime>(
        &self,
        app: &AppHandle<R>,
        save: SettingsSave,
    ) -> Result<SettingsView, PanelError> {
        let file = &self.file;
        let current = deskhand_host::settings::initial(&file.path, &file.fixed)
            .unwrap_or_else(|_| file.fixed.base.clone());
        let next = save
            .form
            .settings(&file.fixed)
            .map_err(|e| PanelError::Invalid(e.to_string()))?;
        let more = current.loosened_by(&next);
        if !more.is_empty() && !self.engine.person_clicked().await {
            tracing::warn!(?more, "a save that allows more was not the person's click");
            return Err(PanelError::NotThePerson(more.join(", ")));
        }
        // Applied before it is written: a kill switch that cannot be
        // grabbed or an audit log place that cannot be opened is refused
        // with nothing changed; a file that cannot be written puts the
        // running settings back.
        file.live
            .apply(&next)
            .await
            .map_err(|e| PanelError::Invalid(e.to_string()))?;
        if let Err(e) = settings_form::save(&file.path, &file.fixed, &save.form) {
            if let Err(back) = file.live.apply(&current).await {
                tracing::error!(error = %back, "the running settings could not be put back");
            }
            return Err(PanelError::Invalid(e.to_string()));
        }
        let mut note = String::from("Saved: it applies from the next request on");
        if !file.fixed.listen && next.listen_port.to_string() != port_of(&self.listen) {
            note.push_str("; the new port from the next start");
        }
        note.push('.');
        if let Err(e) = self.start_at_login(app, save.start_at_login) {
            note.push_str(&format!(" {e}."));
        }
        self.view(app, Some(note)).await
    }
}

impl SettingsPanel {
    fn start_at_login<R: Runtime>(&self, app: &AppHandle<R>, on: bool) -> Result<(), PanelError> {
        let autostart = app.autolaunch();
        if autostart.is_enabled().unwrap_or(false) == on {
            return Ok(());
        }
        if on {
            autostart.enable()
        } else {
            autostart.disable()
        }
        .map_err(|e| PanelError::Autostart(e.to_string()))
    }
}

/// The port of a `host:port` address.
fn port_of(addr: &str) -> &str {
    addr.rsplit(':').next().unwrap_or(addr)
}

/// The Settings window's content.
#[tauri::command]
pub async fn settings_read<R: Runtime>(
    app: AppHandle<R>,
    panel: tauri::State<'_, SettingsPanel>,
) -> Result<SettingsView, PanelError> {
    panel.view(&app, None).await
}

/// Saves the form when it is valid (and, when it allows more, when the
/// person's mouse clicked Save); else nothing changes.
#[tauri::command]
pub async fn settings_save<R: Runtime>(
    save: SettingsSave,
    app: AppHandle<R>,
    panel: tauri::State<'_, SettingsPanel>,
) -> Result<SettingsView, PanelError> {
    panel.save(&app, save).await
}

/// The native folder picker (rfd, through Tauri's dialog plugin) for the
/// audit log: the file of the same name in the chosen folder, or `None`
/// when the person cancelled. Nothing changes until Save.
#[tauri::command]
pub async fn audit_folder_pick<R: Runtime>(
    window: tauri::WebviewWindow<R>,
    panel: tauri::State<'_, SettingsPanel>,
) -> Result<Option<String>, PanelError> {
    let now = panel.engine.audit_path();
    let name = now
        .as_deref()
        .and_then(Path::file_name)
        .map_or_else(|| "audit.jsonl".into(), ToOwned::to_owned);
    let mut picker = window
        .dialog()
        .file()
        .set_title("The audit log's folder")
        .set_parent(&window);
    if let Some(dir) = now.as_deref().and_then(Path::parent) {
        picker = picker.set_directory(dir);
    }
    let (chosen, picked) = tokio::sync::oneshot::channel();
    picker.pick_folder(move |folder| {
        let _ = chosen.send(folder.and_then(|f| f.into_path().ok()));
    });
    let folder = picked.await.map_err(|e| PanelError::Task(e.to_string()))?;
    Ok(folder.map(|dir| dir.join(name).display().to_string()))
}

/// The token, for the page to put on the clipboard.
#[tauri::command]
pub fn token_copy(panel: tauri::State<'_, SettingsPanel>) -> String {
    tracing::info!("the token was copied from the Settings window");
    panel.token.current()
}

/// Replaces the token: agents using the old one are cut off. It only
/// takes agents away, so it needs no click of the person's own mouse.
#[tauri::command]
pub async fn token_rotate<R: Runtime>(
    app: AppHandle<R>,
    panel: tauri::State<'_, SettingsPanel>,
) -> Result<SettingsView, PanelError> {
    panel
        .token
        .rotate()
        .await
        .map_err(|e| PanelError::Token(e.to_string()))?;
    panel
        .view(
            &app,
            Some("The token was replaced: agents using the old one are cut off, and clients read the new one from the connection file.".into()),
        )
        .await
}
