//! The tray icon: one icon per state, and a menu with the status line
//! and deskhand's menu items (`menu`: Pause agents, Stop all agents, the
//! Settings, Doctor and Activity windows, Quit).

use std::sync::Arc;

use deskhand_engine::Engine;
use deskhand_engine::backend::MenuChoice;
use tauri::image::Image;
use tauri::menu::{Menu, MenuItem, PredefinedMenuItem};
use tauri::tray::{TrayIcon, TrayIconBuilder};
use tauri::{AppHandle, Runtime};

use crate::menu;
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
    let separator = PredefinedMenuItem::separator(app)?;
    let menu = Menu::with_items(app, &[&status, &separator])?;
    for choice in MenuChoice::ALL {
        menu.append(&MenuItem::with_id(
            app,
            choice.id(),
            choice.label(),
            true,
            None::<&str>,
        )?)?;
    }
    let icon = TrayIconBuilder::with_id("deskhand")
        .icon(Image::from_bytes(IDLE)?)
        .tooltip("deskhand")
        .menu(&menu)
        .show_menu_on_left_click(true)
        .on_menu_event(move |app, event| {
            if let Some(choice) = MenuChoice::of_id(event.id().as_ref()) {
                menu::choose(app, choice, &engine, "the tray menu");
            }
        })
        .build(app)?;
    Ok(Tray { icon, status })
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
