//! The tray icon: one icon per state, and a menu with the status line,
//! "Pause agents" (the person holds the desktop until Continue), "Stop
//! all agents" (the kill switch), the Settings, Doctor and Activity
//! windows, and Quit. Nothing in the menu resumes an
//! agent: an agent could click it; only Continue, which takes a real
//! mouse click, does. Where no tray host runs, the main window opens
//! instead and says why.

use std::sync::Arc;

use deskhand_engine::Engine;
use tauri::image::Image;
use tauri::menu::{Menu, MenuEvent, MenuItem, PredefinedMenuItem};
use tauri::tray::{TrayIcon, TrayIconBuilder};
use tauri::{AppHandle, Runtime};

use crate::panels::{self, Panel};
use crate::status::{Status, Tracker};

const IDLE: &[u8] = include_bytes!("../../assets/icons/tray-idle.png");
const CONNECTED: &[u8] = include_bytes!("../../assets/icons/tray-connected.png");
const TAKEOVER: &[u8] = include_bytes!("../../assets/icons/tray-takeover.png");
const PAUSED: &[u8] = include_bytes!("../../assets/icons/tray-paused.png");

/// The tray icon and the menu item that shows the status.
pub struct Tray<R: Runtime> {
    icon: TrayIcon<R>,
    status: MenuItem<R>,
}

fn icon_of(status: Status) -> &'static [u8] {
    match status {
        Status::Idle => IDLE,
        Status::Connected => CONNECTED,
        Status::Takeover => TAKEOVER,
        Status::Paused => PAUSED,
    }
}

/// Builds the tray icon and its menu; menu clicks act on `engine`.
pub fn build<R: Runtime>(app: &AppHandle<R>, engine: Arc<Engine>) -> tauri::Result<Tray<R>> {
    let status = MenuItem::with_id(app, "status", Status::Idle.line(0), false, None::<&str>)?;
    let pause = MenuItem::with_id(app, "pause", "Pause agents", true, None::<&str>)?;
    let stop = MenuItem::with_id(app, "stop", "Stop all agents", true, None::<&str>)?;
    let settings = MenuItem::with_id(app, "settings", "Settings…", true, None::<&str>)?;
    let doctor = MenuItem::with_id(app, "doctor", "Doctor…", true, None::<&str>)?;
    let activity = MenuItem::with_id(app, "activity", "Activity…", true, None::<&str>)?;
    let quit = MenuItem::with_id(app, "quit", "Quit deskhand", true, None::<&str>)?;
    let separator = PredefinedMenuItem::separator(app)?;
    let menu = Menu::with_items(
        app,
        &[
            &status, &separator, &pause, &stop, &settings, &doctor, &activity, &quit,
        ],
    )?;
    let icon = TrayIconBuilder::with_id("deskhand")
        .icon(Image::from_bytes(IDLE)?)
        .tooltip("deskhand")
        .menu(&menu)
        .show_menu_on_left_click(true)
        .on_menu_event(move |app, event| on_menu(app, &event, &engine))
        .build(app)?;
    Ok(Tray { icon, status })
}

fn on_menu<R: Runtime>(app: &AppHandle<R>, event: &MenuEvent, engine: &Arc<Engine>) {
    match event.id().as_ref() {
        "pause" => {
            tracing::warn!("the person chose Pause agents in the tray menu");
            let engine = engine.clone();
            tauri::async_runtime::spawn(async move { engine.pause_agents().await });
        }
        "stop" => {
            tracing::warn!("the person chose Stop all agents in the tray menu");
            let engine = engine.clone();
            tauri::async_runtime::spawn(async move { engine.kill_switch().await });
        }
        "quit" => {
            tracing::info!("the person chose Quit in the tray menu");
            app.exit(0);
        }
        other => {
            if let Some(panel) = Panel::of_menu_item(other)
                && let Err(e) = panels::open(app, panel)
            {
                tracing::warn!(error = %e, ?panel, "the window could not open");
            }
        }
    }
}

impl<R: Runtime> Tray<R> {
    /// Shows what `tracker` says now.
    pub fn show(&self, tracker: &Tracker) {
        if let Err(e) = self.try_show(tracker) {
            tracing::warn!(error = %e, "the tray icon could not be updated");
        }
    }

    fn try_show(&self, tracker: &Tracker) -> tauri::Result<()> {
        let status = tracker.status();
        self.icon
            .set_icon(Some(Image::from_bytes(icon_of(status))?))?;
        self.icon.set_tooltip(Some(format!(
            "deskhand: {}",
            status.line(tracker.sessions())
        )))?;
        self.status.set_text(status.line(tracker.sessions()))
    }
}
