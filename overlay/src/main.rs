//! `deskhand-overlay`: the takeover indicator, in a process of its own so
//! that the daemon never links a GUI toolkit. It reads commands as JSON
//! lines on stdin (`show`, `pause`, `resume`, `hide`, `quit`) and writes
//! events as JSON lines on stdout (`ready`, `shown`, `changed`, `hidden`,
//! `continue_clicked`, `lost`). It exits when stdin closes.

#[cfg(target_os = "linux")]
mod app;
mod paint;
#[cfg(target_os = "linux")]
mod quiet;
#[cfg(target_os = "linux")]
mod x11;

use std::io::Write;

use deskhand_protocol::overlay::Event;

/// Writes one event line to stdout.
fn emit(event: &Event) {
    if let Ok(line) = serde_json::to_string(event) {
        let mut out = std::io::stdout().lock();
        let _ = writeln!(out, "{line}");
        let _ = out.flush();
    }
}

#[cfg(target_os = "linux")]
fn main() -> anyhow::Result<()> {
    use std::io::BufRead;
    use winit::event_loop::EventLoop;
    use winit::platform::x11::EventLoopBuilderExtX11;

    let event_loop = EventLoop::<app::UserEvent>::with_user_event()
        .with_x11()
        .build()?;
    if let Err(e) = quiet::stop_device_events(&event_loop) {
        // Only costs CPU: the overlay works as before. (stdout carries
        // the protocol, and nothing may come before `ready`.)
        eprintln!("deskhand-overlay: still woken by every input event: {e:#}");
    }
    let x = x11::X11Side::connect()?;

    let proxy = event_loop.create_proxy();
    std::thread::spawn(move || {
        for line in std::io::stdin().lock().lines() {
            let Ok(line) = line else { break };
            if line.trim().is_empty() {
                continue;
            }
            match serde_json::from_str(&line) {
                Ok(cmd) => {
                    if proxy.send_event(app::UserEvent::Command(cmd)).is_err() {
                        return;
                    }
                }
                Err(e) => emit(&Event::Error {
                    message: format!("bad command: {e}"),
                }),
            }
        }
        let _ = proxy.send_event(app::UserEvent::StdinClosed);
    });
    let proxy = event_loop.create_proxy();
    let watcher = x.clone();
    std::thread::spawn(move || {
        loop {
            let news = watcher.next();
            let closed = news == x11::WindowNews::Closed;
            if proxy.send_event(app::UserEvent::News(news)).is_err() || closed {
                return;
            }
        }
    });

    emit(&Event::Ready);
    let mut app = app::App::new(x);
    event_loop.run_app(&mut app)?;
    Ok(())
}

#[cfg(not(target_os = "linux"))]
fn main() -> anyhow::Result<()> {
    anyhow::bail!("deskhand-overlay runs on X11 only; macOS and Windows come later")
}
