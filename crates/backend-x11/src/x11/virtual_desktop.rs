//! A virtual desktop deskhand starts itself: Xvfb on a free display
//! (picked by the server through `-displayfd`) plus a small window manager.
//! Both die with deskhand (PR_SET_PDEATHSIG) and are stopped on drop.

use std::fs::File;
use std::io::Read;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::process::CommandExt;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::X11Error;

/// Window managers tried in order; the first one installed is used.
const WINDOW_MANAGERS: &[&[&str]] = &[
    &["openbox", "--sm-disable"],
    &["matchbox-window-manager", "-use_titlebar", "no"],
    &["twm"],
];

/// A running Xvfb and its window manager.
#[derive(Debug)]
pub struct VirtualDesktop {
    display: String,
    xvfb: Child,
    wm: Option<Child>,
}

impl VirtualDesktop {
    /// Starts `Xvfb` at `width`×`height` (24-bit) and a window manager.
    pub fn start(width: u32, height: u32) -> Result<Self, X11Error> {
        let (read_end, write_end) = pipe()?;
        let write_fd = write_end.as_raw_fd();
        let mut cmd = Command::new("Xvfb");
        cmd.args(["-displayfd", &write_fd.to_string()])
            .args(["-screen", "0", &format!("{width}x{height}x24")])
            .args(["-nolisten", "tcp", "-noreset", "+extension", "RANDR"])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        // SAFETY: only async-signal-safe calls between fork and exec.
        unsafe {
            cmd.pre_exec(move || {
                libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGTERM);
                // Let the child inherit the write end across exec.
                let flags = libc::fcntl(write_fd, libc::F_GETFD);
                libc::fcntl(write_fd, libc::F_SETFD, flags & !libc::FD_CLOEXEC);
                Ok(())
            });
        }
        let mut xvfb = cmd
            .spawn()
            .map_err(|e| X11Error::Virtual(format!("cannot start Xvfb (is it installed?): {e}")))?;
        drop(write_end);
        let number = match read_display_number(read_end) {
            Ok(n) => n,
            Err(e) => {
                let _ = xvfb.kill();
                let _ = xvfb.wait();
                return Err(e);
            }
        };
        let name = format!(":{number}");
        tracing::info!(display = %name, width, height, "virtual desktop started (Xvfb)");
        let wm = start_window_manager(&name);
        let desktop = Self {
            display: name,
            xvfb,
            wm,
        };
        desktop.wait_for_window_manager();
        Ok(desktop)
    }

    /// The X display name, e.g. `:7`.
    pub fn display(&self) -> &str {
        &self.display
    }

    /// Waits briefly until the window manager has taken the root
    /// (`_NET_SUPPORTING_WM_CHECK`), so that windows opened next are managed.
    fn wait_for_window_manager(&self) {
        use x11rb::connection::Connection;
        use x11rb::protocol::xproto::{AtomEnum, ConnectionExt};
        if self.wm.is_none() {
            return;
        }
        let Ok((conn, screen)) = x11rb::connect(Some(&self.display)) else {
            return;
        };
        let root = conn.setup().roots[screen].root;
        let Ok(atom) = conn
            .intern_atom(false, b"_NET_SUPPORTING_WM_CHECK")
            .map_err(|_| ())
            .and_then(|c| c.reply().map_err(|_| ()))
        else {
            return;
        };
        let deadline = Instant::now() + Duration::from_secs(5);
        while Instant::now() < deadline {
            let found = conn
                .get_property(false, root, atom.atom, AtomEnum::WINDOW, 0, 1)
                .ok()
                .and_then(|c| c.reply().ok())
                .is_some_and(|p| !p.value.is_empty());
            if found {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        tracing::warn!("window manager did not announce itself within 5 s");
    }

    /// Stops the window manager and Xvfb and waits for them.
    pub fn stop(&mut self) {
        if let Some(mut wm) = self.wm.take() {
            terminate(&mut wm);
        }
        terminate(&mut self.xvfb);
        tracing::info!(display = %self.display, "virtual desktop stopped");
    }
}

impl Drop for VirtualDesktop {
    fn drop(&mut self) {
        if matches!(self.xvfb.try_wait(), Ok(None)) {
            self.stop();
        }
    }
}

fn terminate(child: &mut Child) {
    if let Ok(pid) = i32::try_from(child.id()) {
        // SAFETY: sending a signal to our own child.
        unsafe {
            libc::kill(pid, libc::SIGTERM);
        }
    }
    let deadline = Instant::now() + Duration::from_secs(3);
    while Instant::now() < deadline {
        if let Ok(Some(_)) = child.try_wait() {
            return;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    let _ = child.kill();
    let _ = child.wait();
}

fn pipe() -> Result<(OwnedFd, OwnedFd), X11Error> {
    let mut fds = [0i32; 2];
    // SAFETY: pipe2 fills two fds we then own.
    let rc = unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) };
    if rc != 0 {
        return Err(X11Error::Virtual("pipe2 failed".into()));
    }
    // SAFETY: both fds are fresh and owned by nobody else.
    Ok(unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) })
}

fn read_display_number(read_end: OwnedFd) -> Result<u32, X11Error> {
    let mut file = File::from(read_end);
    let mut buf = String::new();
    // Xvfb writes "N\n" once it accepts connections; EOF means it died.
    file.read_to_string(&mut buf)
        .map_err(|e| X11Error::Virtual(format!("reading Xvfb's display number: {e}")))?;
    buf.trim()
        .parse()
        .map_err(|_| X11Error::Virtual(format!("Xvfb did not start (said {:?})", buf.trim())))
}

fn start_window_manager(display: &str) -> Option<Child> {
    for argv in WINDOW_MANAGERS {
        let mut cmd = Command::new(argv[0]);
        cmd.args(&argv[1..])
            .env("DISPLAY", display)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        // SAFETY: only async-signal-safe calls between fork and exec.
        unsafe {
            cmd.pre_exec(|| {
                libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGTERM);
                Ok(())
            });
        }
        if let Ok(child) = cmd.spawn() {
            tracing::info!(wm = argv[0], "window manager started");
            return Some(child);
        }
    }
    tracing::warn!("no window manager found (openbox, matchbox, twm); windows stay unmanaged");
    None
}
