//! `deskhand-app`: the tray app people install. One process: the same
//! [`Daemon`] as `deskhand serve` on the person's own display (it takes
//! the same flags), a tray icon per state, a single instance, start at
//! login, the person's consent and approval dialogs, and a rolling log
//! file. It only wires; the rules are the engine's.
// An installed release opens no console window on Windows (started from
// the Start menu or at sign-in); debug builds keep theirs for the logs.
#![cfg_attr(all(windows, not(debug_assertions)), windows_subsystem = "windows")]

mod activity;
mod doctor_panel;
mod logs;
mod menu;
mod panels;
mod questions;
mod settings_panel;
mod status;
mod tray;
#[cfg(windows)]
mod webview2;

use std::sync::{Arc, Mutex};

use clap::Parser;
use deskhand_host::daemon::{Daemon, DaemonArgs};
use deskhand_host::shutdown::Shutdown;
use tauri::{AppHandle, Manager, RunEvent};
use tauri_plugin_autostart::{MacosLauncher, ManagerExt as _};

/// deskhand's tray app (the flags of `deskhand serve`, and a few of its
/// own).
#[derive(Debug, Parser)]
#[command(name = "deskhand-app", version, about)]
struct AppArgs {
    #[command(flatten)]
    daemon: DaemonArgs,
    /// Start (true) or stop (false) starting deskhand at login.
    #[arg(long, value_name = "BOOL")]
    start_at_login: Option<bool>,
    /// Open this window at start (a second start opens it in the first).
    #[arg(long, value_enum)]
    open: Option<panels::Panel>,
    /// "Stop all agents" in the running app, then exit (for a desktop
    /// shortcut); nothing starts when no app runs.
    #[arg(long, conflicts_with = "open")]
    stop_agents: bool,
}

/// The daemon while the app runs.
struct Running(Mutex<Option<Daemon>>);

/// Managed once deskhand's menu shows (the tray's, the top bar's or the
/// main window's): closing windows never ends the app.
struct MenuShown;

fn main() -> anyhow::Result<()> {
    let args = AppArgs::parse();
    let _log = logs::init()?;
    let app = tauri::Builder::default()
        .plugin(tauri_plugin_single_instance::init(|app, argv, _cwd| {
            let asked = AppArgs::try_parse_from(argv).ok();
            if asked.as_ref().is_some_and(|a| a.stop_agents) {
                stop_agents(app);
                return;
            }
            tracing::info!("deskhand is already running: showing its window");
            let opened = match asked.and_then(|a| a.open) {
                Some(panel) => panels::open(app, panel),
                None => panels::open_main_window(app, "deskhand is already running."),
            };
            if let Err(e) = opened {
                tracing::warn!(error = %e, "the window could not open");
            }
        }))
        .plugin(tauri_plugin_dialog::init())
        .plugin(tauri_plugin_autostart::init(
            MacosLauncher::LaunchAgent,
            None,
        ))
        .invoke_handler(tauri::generate_handler![
            questions::question,
            questions::tick,
            questions::lease,
            questions::allow,
            questions::deny,
            settings_panel::settings_read,
            settings_panel::settings_save,
            settings_panel::token_copy,
            settings_panel::token_rotate,
            settings_panel::audit_folder_pick,
            doctor_panel::doctor_run,
            doctor_panel::deskhand_restart,
            doctor_panel::permission_ask,
            activity::activity,
            activity::session_end,
            activity::activity_thumbnail,
            panels::open_panel,
            menu::menu_status,
            menu::menu_choose
        ])
        .on_window_event(|window, event| {
            // The main window stands in for the menu: closing hides it
            // (a second start shows it again; Quit quits).
            if let tauri::WindowEvent::CloseRequested { api, .. } = event
                && window.label() == "main"
            {
                api.prevent_close();
                if let Err(e) = window.hide() {
                    tracing::warn!(error = %e, "the main window could not hide");
                }
            }
        })
        .setup(move |app| {
            setup(app.handle(), args).map_err(|e| -> Box<dyn std::error::Error> { e.into() })
        })
        .build(tauri::generate_context!())?;
    app.run(|app, event| match event {
        // The last window closed (a consent dialog denied or timed out,
        // Settings closed): the menu stays and so does deskhand. Only
        // Quit, a signal or the end of the session stop it.
        RunEvent::ExitRequested {
            code: None, api, ..
        } if app.try_state::<MenuShown>().is_some() => api.prevent_exit(),
        RunEvent::Exit => stop(app),
        _ => {}
    });
    Ok(())
}

fn setup(app: &AppHandle, args: AppArgs) -> anyhow::Result<()> {
    if args.stop_agents {
        eprintln!("deskhand is not running: there is no agent to stop");
        std::process::exit(0);
    }
    if let Some(on) = args.start_at_login {
        let autostart = app.autolaunch();
        if on {
            autostart.enable()
        } else {
            autostart.disable()
        }?;
        tracing::info!(on, "start at login changed");
    }
    // Before anything starts: without WebView2 no consent could be asked.
    #[cfg(windows)]
    if let Err(why) = webview2::check() {
        webview2::say_missing(&why);
        std::process::exit(69);
    }
    let daemon = tauri::async_runtime::block_on(Daemon::start(
        args.daemon,
        deskhand_host::doctor::health_source,
    ))?;
    // Signals are caught from before the ready line on: a SIGTERM right
    // after it still stops cleanly.
    let stop = tauri::async_runtime::block_on(async { Shutdown::listen(false) })?;
    tauri::async_runtime::spawn(stop_on_signal(app.clone(), stop));
    let engine = daemon.engine.clone();
    // The Activity window shows what agents were shown.
    engine.keep_thumbnails();
    let desktop = daemon.desktop_id().clone();
    let tracker = status::Shared::default();
    manage_panels(app, &daemon, tracker.clone());
    // The ready line without the token: an app's stdout may end up in the
    // session's log; clients read the token from the connection file.
    println!("{}", daemon.printed_ready(false));
    let hotkey = daemon.desktop().settings.live.hotkey.clone();
    app.manage(Running(Mutex::new(Some(daemon))));
    // The person is asked in the app's own dialogs from now on; where
    // deskhand's menu is, they are told once it shows.
    let menu_words = Arc::new(std::sync::OnceLock::new());
    let words = menu_words.clone();
    let questions = questions::Questions::new(
        engine.clone(),
        // The chord the hand-back watcher holds now, not what the file
        // asks for (one that could not be grabbed or bound does nothing).
        Box::new(move || {
            let menu = words.get().copied().unwrap_or("in deskhand's menu");
            questions::stop_ways(hotkey.in_force().as_deref(), menu)
        }),
    );
    app.manage(questions.clone());
    tauri::async_runtime::spawn(questions::follow(app.clone(), questions));
    engine.set_person_present(true);
    app.manage(menu::MainWindow {
        engine: engine.clone(),
        tracker: tracker.clone(),
    });
    let place = show_menu(app, &desktop, &engine)?;
    let _ = menu_words.set(place.words());
    app.manage(MenuShown);
    if let Ok(t) = tracker.lock() {
        place.show(&t, &engine);
    }
    let shown = engine.clone();
    tauri::async_runtime::spawn(status::follow(engine, tracker, move |t| {
        place.show(t, &shown);
    }));
    if let Some(panel) = args.open {
        panels::open(app, panel)?;
    }
    Ok(())
}

/// deskhand's menu where the person will find it: the tray icon where a
/// tray host runs, else GNOME's top bar where deskhand's extension draws
/// it, else the main window.
fn show_menu(
    app: &AppHandle,
    desktop: &deskhand_platform::DesktopId,
    engine: &Arc<deskhand_engine::Engine>,
) -> anyhow::Result<menu::Place<tauri::Wry>> {
    let why = match tauri::async_runtime::block_on(tray_host(desktop)) {
        Ok(()) => return Ok(menu::Place::Tray(tray::build(app, engine.clone())?)),
        Err(why) => why,
    };
    if let Some(place) = engine.status_place() {
        tracing::info!(%why, "no tray host: deskhand's menu is in GNOME's top bar");
        return Ok(menu::Place::TopBar(menu::top_bar(
            app,
            place,
            engine.clone(),
        )));
    }
    tracing::warn!(%why, "no tray host: the main window is deskhand's menu");
    panels::open_main_window(app, &why)?;
    Ok(menu::Place::MainWindow)
}

/// What the Settings, Doctor and Activity windows read and change.
fn manage_panels(app: &AppHandle, daemon: &Daemon, tracker: status::Shared) {
    let desktop = daemon.desktop();
    app.manage(settings_panel::SettingsPanel {
        engine: daemon.engine.clone(),
        file: desktop.settings.clone(),
        listen: daemon.addr.to_string(),
        token: daemon.token().clone(),
    });
    app.manage(doctor_panel::DoctorPanel {
        display: daemon.desktop_id().name().to_owned(),
        engine: Arc::clone(&daemon.engine),
    });
    app.manage(activity::ActivityPanel {
        engine: Arc::clone(&daemon.engine),
        tracker,
    });
}

/// Whether a tray host runs (on Linux a StatusNotifierItem watcher on the
/// session bus, or an XEmbed tray on the display); if not, why.
async fn tray_host(desktop: &deskhand_platform::DesktopId) -> Result<(), String> {
    #[cfg(target_os = "linux")]
    if status_notifier_watcher().await {
        return Ok(());
    }
    match deskhand_platform::tray_present(desktop) {
        Ok(true) => Ok(()),
        Ok(false) => Err(format!(
            "No system tray runs here (no StatusNotifierItem host, no XEmbed tray on {desktop}), so this window is deskhand's menu. Closing it hides it: start deskhand again from your applications to bring it back."
        )),
        Err(e) => Err(format!("The system tray could not be looked for: {e}")),
    }
}

#[cfg(target_os = "linux")]
async fn status_notifier_watcher() -> bool {
    let Ok(bus) = zbus::Connection::session().await else {
        return false;
    };
    let Ok(dbus) = zbus::fdo::DBusProxy::new(&bus).await else {
        return false;
    };
    let Ok(name) = zbus::names::BusName::try_from("org.kde.StatusNotifierWatcher") else {
        return false;
    };
    dbus.name_has_owner(name).await.unwrap_or(false)
}

/// A stop signal ends the app as Quit does (everything released).
async fn stop_on_signal(app: AppHandle, mut stop: Shutdown) {
    let signal = stop.recv().await;
    tracing::info!("{signal}: shutting down");
    app.exit(0);
}

/// "Stop all agents" asked by a second start: every takeover ends and
/// everything held is released, as the tray menu's item does.
fn stop_agents(app: &AppHandle) {
    let engine = app
        .try_state::<Running>()
        .and_then(|r| r.0.lock().ok()?.as_ref().map(|d| d.engine.clone()));
    match engine {
        Some(engine) => {
            tracing::warn!("Stop all agents, asked by a second start");
            tauri::async_runtime::spawn(async move { engine.kill_switch().await });
        }
        None => tracing::warn!("Stop all agents asked before deskhand serves: nothing to stop"),
    }
}

/// Stops the daemon once: held input released, connection file removed.
fn stop(app: &AppHandle) {
    let daemon = app
        .try_state::<Running>()
        .and_then(|r| r.0.lock().ok().and_then(|mut d| d.take()));
    if let Some(daemon) = daemon {
        tauri::async_runtime::block_on(daemon.stop());
    }
}
