//! How every host hears that it should stop: SIGTERM and SIGINT (and,
//! for a relay tied to a terminal, SIGHUP) on unix; Ctrl+C, Ctrl+Break
//! and the console closing on Windows. Listening starts when
//! [`Shutdown::listen`] returns, so that a signal that comes right after
//! a host's ready line still stops it cleanly.

/// The stop signals this process listens to.
pub struct Shutdown {
    #[cfg(unix)]
    term: tokio::signal::unix::Signal,
    #[cfg(unix)]
    int: tokio::signal::unix::Signal,
    #[cfg(unix)]
    hup: Option<tokio::signal::unix::Signal>,
    #[cfg(windows)]
    ctrl_c: tokio::signal::windows::CtrlC,
    #[cfg(windows)]
    ctrl_break: tokio::signal::windows::CtrlBreak,
    #[cfg(windows)]
    ctrl_close: tokio::signal::windows::CtrlClose,
}

impl Shutdown {
    /// Listens from now on (inside a tokio runtime); `hangup` adds SIGHUP
    /// where there is one.
    pub fn listen(hangup: bool) -> std::io::Result<Self> {
        #[cfg(unix)]
        {
            use tokio::signal::unix::{SignalKind, signal};
            Ok(Self {
                term: signal(SignalKind::terminate())?,
                int: signal(SignalKind::interrupt())?,
                hup: hangup.then(|| signal(SignalKind::hangup())).transpose()?,
            })
        }
        #[cfg(windows)]
        {
            let _ = hangup;
            use tokio::signal::windows;
            Ok(Self {
                ctrl_c: windows::ctrl_c()?,
                ctrl_break: windows::ctrl_break()?,
                ctrl_close: windows::ctrl_close()?,
            })
        }
    }

    /// Waits for the next stop signal and names it.
    pub async fn recv(&mut self) -> &'static str {
        #[cfg(unix)]
        {
            let hup = async {
                match self.hup.as_mut() {
                    Some(hup) => hup.recv().await,
                    None => std::future::pending().await,
                }
            };
            tokio::select! {
                _ = self.term.recv() => "SIGTERM",
                _ = self.int.recv() => "SIGINT",
                _ = hup => "SIGHUP",
            }
        }
        #[cfg(windows)]
        {
            tokio::select! {
                _ = self.ctrl_c.recv() => "Ctrl+C",
                _ = self.ctrl_break.recv() => "Ctrl+Break",
                _ = self.ctrl_close.recv() => "the console closing",
            }
        }
    }
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_signal_is_heard_and_named() {
        let mut stop = Shutdown::listen(true).expect("listening");
        // SAFETY: raise only sends a signal to this process, whose
        // handler tokio installed above.
        unsafe { libc::raise(libc::SIGHUP) };
        let name = tokio::time::timeout(std::time::Duration::from_secs(5), stop.recv())
            .await
            .expect("heard");
        assert_eq!(name, "SIGHUP");
    }
}
