//! One engine per display. Every engine a host opens (`serve`, the tray
//! app, `deskhand mcp` with an engine of its own) holds an exclusive lock
//! on `display-<tag>.lock` in the runtime directory while it runs; a
//! second engine on that display is refused, whatever connection file it
//! names, so that it can neither lift the person's pause nor fight the
//! first over the pointer. The lock goes with the process (also when it
//! is killed). Who holds it is in a record beside it (`display-<tag>.json`,
//! written once the lock is taken): the pid and, for a daemon, its
//! connection file, where `deskhand mcp` finds the port to relay to. The
//! record is a file of its own because a locked file cannot be read on
//! Windows; a record left by a holder that was killed names a process
//! that no longer runs deskhand, and is not believed.

use std::fs::{File, TryLockError};
use std::path::{Path, PathBuf};
use std::time::Duration;

use deskhand_platform::DesktopId;
use serde_json::{Value, json};

use crate::HostError;
use crate::error::{io, refuse};
use crate::files;

/// Who drives a display, as its lock file says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Holder {
    /// Its pid, when the file names one.
    pub pid: Option<u32>,
    /// Its connection file, when it serves a port.
    pub connection_file: Option<PathBuf>,
}

impl Holder {
    /// Why a second engine on `display` is refused, naming the running one.
    pub fn refusal(&self, display: &str) -> String {
        let who = self.pid.map_or_else(
            || "another deskhand".to_owned(),
            |p| format!("deskhand (pid {p})"),
        );
        match &self.connection_file {
            Some(file) => format!(
                "{who} already serves display {display} (connection file {}); one display has \
                 one engine: run `deskhand mcp` without --standalone to relay to it, or stop it first",
                file.display()
            ),
            None => format!(
                "{who} already drives display {display} with an engine of its own (deskhand mcp \
                 --standalone); one display has one engine: stop it first"
            ),
        }
    }
}

/// The lock of a display this process drives; released when dropped.
#[derive(Debug)]
pub struct DisplayClaim {
    /// Held while this process drives the display.
    _lock: File,
    /// The holder record beside the lock.
    record: PathBuf,
    display: String,
}

fn lock_path(id: &DesktopId) -> PathBuf {
    files::runtime_dir().join(format!("display-{}.lock", id.tag()))
}

/// The holder record of the lock at `lock`.
fn record_path(lock: &Path) -> PathBuf {
    lock.with_extension("json")
}

/// Locks `file` without waiting (`flock(2)` on unix, `LockFileEx` on
/// Windows); whether the lock was taken.
fn try_lock(file: &File, exclusive: bool) -> std::io::Result<bool> {
    let locked = if exclusive {
        file.try_lock()
    } else {
        file.try_lock_shared()
    };
    match locked {
        Ok(()) => Ok(true),
        Err(TryLockError::WouldBlock) => Ok(false),
        Err(TryLockError::Error(e)) => Err(e),
    }
}

/// What a lock file says: its holder's pid and connection file.
fn parse_holder(text: &str) -> Option<Holder> {
    let v: Value = serde_json::from_str(text).ok()?;
    Some(Holder {
        pid: v["pid"].as_u64().and_then(|p| u32::try_from(p).ok()),
        connection_file: v["connection_file"].as_str().map(PathBuf::from),
    })
}

/// Who drives desktop `id` now, if anyone (in this user's runtime
/// directory).
pub fn holder(id: &DesktopId) -> Option<Holder> {
    holder_at(&lock_path(id))
}

fn holder_at(path: &Path) -> Option<Holder> {
    let file = deskhand_files::open_read(path).ok()?;
    if try_lock(&file, false).ok()? {
        return None;
    }
    // The holder writes its record right after it took the lock; one left
    // by a holder that was killed names a pid that runs no deskhand.
    for _ in 0..50 {
        let found = std::fs::read_to_string(record_path(path))
            .ok()
            .and_then(|text| parse_holder(&text))
            .filter(|h| h.pid.is_some_and(is_live_holder));
        if found.is_some() {
            return found;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    Some(Holder {
        pid: None,
        connection_file: None,
    })
}

/// Takes desktop `id` for this process's engine; refused, naming the
/// holder, while another deskhand drives it.
pub fn claim(id: &DesktopId) -> Result<DisplayClaim, HostError> {
    claim_at(&lock_path(id), id.name())
}

fn claim_at(path: &Path, x_display: &str) -> Result<DisplayClaim, HostError> {
    if let Some(dir) = path.parent() {
        files::private_dir(dir)?;
    }
    let file =
        deskhand_files::open_in_place(path).map_err(io(format!("opening {}", path.display())))?;
    // A reader's brief shared lock (`holder`) is waited out; a holder is not.
    let mut tries = 0;
    while !try_lock(&file, true).map_err(io(format!("locking {}", path.display())))? {
        tries += 1;
        match holder_at(path) {
            Some(found) => refuse!("{}", found.refusal(x_display)),
            None if tries < 20 => std::thread::sleep(Duration::from_millis(5)),
            None => refuse!("display {x_display}'s lock {} stays taken", path.display()),
        }
    }
    let claim = DisplayClaim {
        _lock: file,
        record: record_path(path),
        display: x_display.to_owned(),
    };
    claim.record(None)?;
    Ok(claim)
}

/// Whether `pid` may hold a lock: this process (its own claims, in tests
/// too) or a running deskhand.
fn is_live_holder(pid: u32) -> bool {
    pid == std::process::id() || deskhand_platform::runs_deskhand(pid)
}

impl DisplayClaim {
    /// Says in the lock file that this engine serves a port, described by
    /// `connection_file`.
    pub fn serve_with(&self, connection_file: &Path) -> Result<(), HostError> {
        self.record(Some(connection_file))
    }

    fn record(&self, connection_file: Option<&Path>) -> Result<(), HostError> {
        let line = json!({
            "pid": std::process::id(),
            "display": self.display,
            "connection_file": connection_file,
        });
        deskhand_files::write_atomic_unsynced(&self.record, format!("{line}\n").as_bytes())
            .map_err(io(format!("writing {}", self.record.display())))
    }
}

impl Drop for DisplayClaim {
    fn drop(&mut self) {
        // Before the lock goes (the file is closed after this).
        let _ = std::fs::remove_file(&self.record);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lock_in(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("dh-claim-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        dir.join("display-_5.lock")
    }

    #[test]
    fn a_second_claim_is_refused_until_the_first_goes() {
        let path = lock_in("second");
        assert_eq!(holder_at(&path), None, "no file: nobody");
        let first = claim_at(&path, ":5").expect("first");
        first
            .serve_with(Path::new("/run/x/endpoint.json"))
            .expect("record");
        let found = holder_at(&path).expect("held");
        assert_eq!(found.pid, Some(std::process::id()));
        assert_eq!(
            found.connection_file.as_deref(),
            Some(Path::new("/run/x/endpoint.json"))
        );
        let refused = claim_at(&path, ":5").expect_err("second").to_string();
        assert!(refused.contains("already serves display :5"), "{refused}");
        assert!(refused.contains("/run/x/endpoint.json"), "{refused}");
        drop(first);
        assert_eq!(holder_at(&path), None, "a released lock holds nothing");
        let again = claim_at(&path, ":5").expect("after the first went");
        assert_eq!(holder_at(&path).and_then(|h| h.connection_file), None);
        drop(again);
        let _ = std::fs::remove_dir_all(path.parent().expect("dir"));
    }

    #[test]
    fn a_record_beside_a_free_lock_or_naming_a_dead_process_is_not_believed() {
        let path = lock_in("stale");
        let claim = claim_at(&path, ":5").expect("claim");
        assert!(record_path(&path).exists(), "the record is beside the lock");
        drop(claim);
        assert!(!record_path(&path).exists(), "removed with the claim");
        // A holder killed before it could remove its record: the lock is
        // free, so nobody holds the display.
        std::fs::write(record_path(&path), r#"{"pid": 1, "connection_file": "/x"}"#)
            .expect("stale");
        assert_eq!(holder_at(&path), None);
        // Held by someone whose record is not written yet: a holder, but
        // not the one the old record names.
        let lock = deskhand_files::open_in_place(&path).expect("open");
        assert!(try_lock(&lock, true).expect("lock"));
        let unknown = Holder {
            pid: None,
            connection_file: None,
        };
        assert_eq!(holder_at(&path), Some(unknown));
        drop(lock);
        let _ = std::fs::remove_dir_all(path.parent().expect("dir"));
    }

    #[test]
    fn screens_of_one_display_share_its_lock() {
        let lock = |d: &str| lock_path(&DesktopId::x11(d));
        assert_eq!(lock(":0.0"), lock(":0"));
        assert_eq!(lock("unix:0"), lock(":0"));
        assert_ne!(lock(":1"), lock(":10"));
        assert!(lock(":99").ends_with("display-_99.lock"));
    }

    #[test]
    fn refusals_name_the_running_engine() {
        let own = Holder {
            pid: Some(42),
            connection_file: None,
        };
        let text = own.refusal(":3");
        assert!(
            text.contains("pid 42") && text.contains("engine of its own"),
            "{text}"
        );
        assert_eq!(parse_holder("not json"), None);
    }
}
