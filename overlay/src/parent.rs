//! The overlay ends with deskhand, even when deskhand was killed.

/// Exits as soon as the process that started the overlay (deskhand) is
/// gone, even when it was killed and its end of stdin is still held open
/// elsewhere: a thread waits on a pidfd of the parent. `PR_SET_PDEATHSIG`
/// would fire when the parent's *thread* that spawned the overlay exits
/// (deskhand starts it from a pooled thread), not the parent itself.
pub fn exit_with_parent() {
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
