//! What deskhand's menu does, wherever the person chose it: the tray
//! icon's menu, GNOME's top-bar menu (the extension's), or the main
//! window that stands in for both. Nothing in it resumes an agent: an
//! agent could choose it; only Continue, which takes a real mouse click,
//! does.

use std::sync::Arc;

use deskhand_engine::Engine;
use deskhand_engine::backend::{MenuChoice, PlaceStatus, StatusPlace};
use tauri::{AppHandle, Manager, Runtime};

use crate::panels::{self, Panel, PanelError};
use crate::status::{Shared, Tracker};
use crate::tray::Tray;

/// Where deskhand's menu is.
pub enum Place<R: Runtime> {
    /// The tray icon's menu.
    Tray(Tray<R>),
    /// GNOME's top bar (the updates go to the thread of [`top_bar`]).
    TopBar(std::sync::mpsc::Sender<PlaceStatus>),
    /// The main window (it reads the status itself).
    MainWindow,
}

impl<R: Runtime> Place<R> {
    /// Where the person finds the menu, as a sentence ends it.
    pub fn words(&self) -> &'static str {
        match self {
            Self::Tray(_) => "in the tray",
            Self::TopBar(_) => "in deskhand's menu in the top bar",
            Self::MainWindow => "in deskhand's window",
        }
    }

    /// Shows what `tracker` says now.
    pub fn show(&self, tracker: &Tracker, engine: &Engine) {
        match self {
            Self::Tray(tray) => tray.show(tracker),
            Self::TopBar(updates) => {
                let _ = updates.send(status_of(tracker, engine));
            }
            Self::MainWindow => {}
        }
    }
}

/// Does what `choice` says; `place` names where it was chosen, for the log.
pub fn choose<R: Runtime>(
    app: &AppHandle<R>,
    choice: MenuChoice,
    engine: &Arc<Engine>,
    place: &str,
) {
    tracing::warn!(item = choice.id(), place, "the person chose a menu item");
    let engine = engine.clone();
    let panel = match choice {
        MenuChoice::Pause => {
            tauri::async_runtime::spawn(async move { engine.pause_agents().await });
            return;
        }
        MenuChoice::Stop => {
            tauri::async_runtime::spawn(async move { engine.kill_switch().await });
            return;
        }
        MenuChoice::Quit => return app.exit(0),
        MenuChoice::Settings => Panel::Settings,
        MenuChoice::Doctor => Panel::Doctor,
        MenuChoice::Activity => Panel::Activity,
    };
    if let Err(e) = panels::open(app, panel) {
        tracing::warn!(error = %e, ?panel, "the window could not open");
    }
}

/// What the status place and the main window show now.
pub fn status_of(tracker: &Tracker, engine: &Engine) -> PlaceStatus {
    let status = tracker.status();
    let sessions = tracker
        .open()
        .into_iter()
        .map(|(id, opened, (on, paused))| {
            let who = engine.client_name(&id).unwrap_or_else(|| "an agent".into());
            let doing = match (on, paused) {
                (true, true) => "paused, waits for your Continue",
                (true, false) => "using the desktop (red frame)",
                _ => "connected",
            };
            format!("{who} ({}): {doing}", opened.protocol)
        })
        .collect();
    PlaceStatus {
        state: status.id(),
        line: status.line(tracker.sessions()),
        sessions,
    }
}

/// Shows the status in GNOME's top bar from a thread of its own (each
/// update is a call to the shell), the latest one first, and takes the
/// person's choices there.
pub fn top_bar<R: Runtime>(
    app: &AppHandle<R>,
    place: Arc<dyn StatusPlace>,
    engine: Arc<Engine>,
) -> std::sync::mpsc::Sender<PlaceStatus> {
    let chooser = app.clone();
    let on_choice = engine.clone();
    place.set_choices(Arc::new(move |choice| {
        choose(&chooser, choice, &on_choice, "GNOME's top bar");
    }));
    let (tx, rx) = std::sync::mpsc::channel::<PlaceStatus>();
    std::thread::spawn(move || {
        while let Ok(mut status) = rx.recv() {
            while let Ok(newer) = rx.try_recv() {
                status = newer;
            }
            if let Err(e) = place.show(&status) {
                tracing::warn!(error = %e, "the top bar's menu could not be updated");
            }
        }
        let _ = place.remove();
    });
    tx
}

/// What the main window reads while it stands in for the menu.
pub struct MainWindow {
    /// The engine (client names, the items' acts).
    pub engine: Arc<Engine>,
    /// The open sessions.
    pub tracker: Shared,
}

/// The menu as the main window shows it.
#[derive(serde::Serialize)]
pub struct MenuView {
    #[serde(flatten)]
    status: PlaceStatus,
    items: [MenuChoice; 6],
}

/// The status and the items the main window shows.
#[tauri::command]
pub fn menu_status(state: tauri::State<'_, MainWindow>) -> Result<MenuView, PanelError> {
    let tracker = state
        .tracker
        .lock()
        .map_err(|e| PanelError::Task(e.to_string()))?;
    Ok(MenuView {
        status: status_of(&tracker, &state.engine),
        items: MenuChoice::ALL,
    })
}

/// A menu item chosen in the main window.
#[tauri::command]
pub fn menu_choose<R: Runtime>(app: AppHandle<R>, id: String) -> Result<(), PanelError> {
    let choice = MenuChoice::of_id(&id)
        .ok_or_else(|| PanelError::Invalid(format!("no menu item is called {id:?}")))?;
    let engine = app.state::<MainWindow>().engine.clone();
    choose(&app, choice, &engine, "the main window");
    Ok(())
}
