//! `deskhand-overlay`: the takeover indicator, in a process of its own so
//! that the daemon never links a GUI toolkit. It reads commands as JSON
//! lines on stdin (`show`, `pause`, `resume`, `hide`, `quit`) and writes
//! events as JSON lines on stdout (`ready`, `shown`, `changed`, `hidden`,
//! `continue_clicked`, `lost`). It exits when stdin closes or deskhand
//! dies. What differs per desktop is in its platform module (X11,
//! Windows, macOS); on Wayland compositors with the wlr layer shell the
//! frame is drawn by `layer`, without winit.

#[cfg(target_os = "macos")]
mod macos;
// The macOS display mapping is plain code: its tests run everywhere.
#[cfg(target_os = "linux")]
mod layer;
#[cfg(all(test, not(target_os = "macos")))]
#[allow(dead_code)]
#[path = "macos/screens.rs"]
mod macos_screens;
#[cfg(target_os = "linux")]
mod parent;
#[cfg(windows)]
mod windows;
#[cfg(target_os = "linux")]
mod x11;

use deskhand_overlay::app::{App, UserEvent};
use deskhand_overlay::desktop::{Desktop, WindowNews};
use deskhand_overlay::emit;
use deskhand_protocol::overlay::Event;
use winit::event_loop::{EventLoop, EventLoopProxy};

#[cfg(target_os = "linux")]
fn main() -> anyhow::Result<()> {
    use deskhand_protocol::overlay::{LAYER_SHELL, SURFACE_ENV};
    use winit::platform::x11::EventLoopBuilderExtX11;

    parent::exit_with_parent();
    if std::env::var(SURFACE_ENV).as_deref() == Ok(LAYER_SHELL) {
        return layer::run();
    }
    let event_loop = EventLoop::<UserEvent>::with_user_event()
        .with_x11()
        .build()?;
    if let Err(e) = x11::quiet::stop_device_events(&event_loop) {
        // Only costs CPU: the overlay works as before. (stdout carries
        // the protocol, and nothing may come before `ready`.)
        eprintln!("deskhand-overlay: still woken by every input event: {e:#}");
    }
    run(event_loop, x11::X11Side::connect()?)
}

#[cfg(windows)]
fn main() -> anyhow::Result<()> {
    let event_loop = EventLoop::<UserEvent>::with_user_event().build()?;
    run(event_loop, windows::WindowsSide::default())
}

#[cfg(target_os = "macos")]
fn main() -> anyhow::Result<()> {
    use winit::platform::macos::{ActivationPolicy, EventLoopBuilderExtMacOS};

    macos::exit_with_parent();
    // An accessory app: no Dock icon, no menu bar, and started without
    // taking the keyboard from the person's app.
    let event_loop = EventLoop::<UserEvent>::with_user_event()
        .with_activation_policy(ActivationPolicy::Accessory)
        .with_default_menu(false)
        .with_activate_ignoring_other_apps(false)
        .build()?;
    run(event_loop, macos::MacSide::from_env())
}

#[cfg(not(any(target_os = "linux", windows, target_os = "macos")))]
fn main() -> anyhow::Result<()> {
    anyhow::bail!(
        "deskhand-overlay has no platform module for this OS yet (X11, Windows and macOS so far)"
    )
}

/// Feeds stdin's commands and the desktop's news to the app, says
/// `ready`, and runs the event loop until it ends.
#[cfg_attr(
    not(any(target_os = "linux", windows, target_os = "macos")),
    allow(dead_code)
)]
fn run<D: Desktop>(event_loop: EventLoop<UserEvent>, desktop: D) -> anyhow::Result<()> {
    let proxy = event_loop.create_proxy();
    std::thread::spawn(move || read_commands(&proxy));
    let proxy = event_loop.create_proxy();
    let watcher = desktop.clone();
    std::thread::spawn(move || {
        loop {
            let news = watcher.next();
            let closed = news == WindowNews::Closed;
            if proxy.send_event(UserEvent::News(news)).is_err() || closed {
                return;
            }
        }
    });
    emit(&Event::Ready);
    let mut app = App::new(desktop);
    event_loop.run_app(&mut app)?;
    Ok(())
}

/// Reads command lines from stdin until it closes.
#[cfg_attr(
    not(any(target_os = "linux", windows, target_os = "macos")),
    allow(dead_code)
)]
fn read_commands(proxy: &EventLoopProxy<UserEvent>) {
    deskhand_overlay::read_commands(|cmd| {
        let event = cmd.map_or(UserEvent::StdinClosed, UserEvent::Command);
        proxy.send_event(event).is_ok()
    });
}
