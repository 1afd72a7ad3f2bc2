//! `deskhand-overlay`: the takeover indicator, in a process of its own so
//! that the daemon never links a GUI toolkit. It reads commands as JSON
//! lines on stdin (`show`, `pause`, `resume`, `hide`, `quit`) and writes
//! events as JSON lines on stdout (`ready`, `shown`, `changed`, `hidden`,
//! `continue_clicked`, `lost`). It exits when stdin closes or deskhand
//! dies.

// The frame is drawn on X11 only so far: the Windows and macOS overlays
// come with their backends and will share `app` and `paint`.
#[cfg(target_os = "linux")]
mod app;
#[cfg(target_os = "linux")]
mod paint;
#[cfg(target_os = "linux")]
mod quiet;
#[cfg(target_os = "linux")]
mod x11;

#[cfg(target_os = "linux")]
use std::io::Write;

#[cfg(target_os = "linux")]
use deskhand_protocol::overlay::Event;

/// Writes one event line to stdout.
#[cfg(target_os = "linux")]
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

    exit_with_parent();
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

/// Exits as soon as the process that started the overlay (deskhand) is
/// gone, even when it was killed and its end of stdin is still held open
/// elsewhere: a thread waits on a pidfd of the parent. `PR_SET_PDEATHSIG`
/// would fire when the parent's *thread* that spawned the overlay exits
/// (deskhand starts it from a pooled thread), not the parent itself.
#[cfg(target_os = "linux")]
fn exit_with_parent() {
    // SAFETY: getppid has no preconditions.
    let parent = unsafe { libc::getppid() };
    // SAFETY: pidfd_open takes a pid and flags; it returns a new fd or -1.
    let fd = unsafe { libc::syscall(libc::SYS_pidfd_open, parent, 0) };
    // Reparented already: the parent died before the pidfd named it (and
    // the pid may name another process now).
    // SAFETY: as above.
    if unsafe { libc::getppid() } != parent {
        std::process::exit(0);
    }
    let Ok(fd) = libc::c_int::try_from(fd) else {
        return;
    };
    let watch = move || {
        if fd < 0 {
            // No pidfd (Linux before 5.3): look at the parent now and then.
            // SAFETY: as above.
            while unsafe { libc::getppid() } == parent {
                std::thread::sleep(std::time::Duration::from_millis(200));
            }
        } else {
            let mut pfd = libc::pollfd {
                fd,
                events: libc::POLLIN,
                revents: 0,
            };
            // SAFETY: one valid pollfd; a pidfd is readable once the
            // process has exited.
            while unsafe { libc::poll(&mut pfd, 1, -1) } < 0 {
                if std::io::Error::last_os_error().kind() != std::io::ErrorKind::Interrupted {
                    return; // cannot wait: stdin's end still stops the overlay
                }
            }
        }
        std::process::exit(0);
    };
    if std::thread::Builder::new()
        .name("parent-watch".into())
        .spawn(watch)
        .is_err()
    {
        eprintln!("deskhand-overlay: cannot watch deskhand; relying on stdin");
    }
}

#[cfg(not(target_os = "linux"))]
fn main() -> anyhow::Result<()> {
    anyhow::bail!("deskhand-overlay runs on X11 only; macOS and Windows come later")
}
