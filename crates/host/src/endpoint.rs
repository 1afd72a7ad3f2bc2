//! The connection file (`endpoint.json`: the address, the token and the
//! daemon's pid). One a daemon killed without its clean-up left behind is
//! replaced at the next start; one whose daemon still runs is not.

use std::path::Path;

use crate::HostError;
use crate::error::refuse;

/// What a connection file found at start-up says.
#[derive(Debug, PartialEq, Eq)]
pub enum Found {
    /// No file: nothing to replace.
    Nothing,
    /// A file whose daemon is gone (or that names no daemon): replaced.
    Stale(Option<u32>),
    /// The file of a deskhand that is still running.
    Live(u32),
}

/// What a connection file says, for a client of the daemon.
#[derive(Debug)]
pub struct Endpoint {
    /// `host:port` of its HTTP address.
    pub authority: String,
    /// The bearer token.
    pub token: String,
    /// The X display it serves.
    pub display: String,
}

/// Reads the connection file at `path`; `None` when it is missing or
/// malformed.
pub fn read(path: &Path) -> Option<Endpoint> {
    let text = std::fs::read_to_string(path).ok()?;
    let v: serde_json::Value = serde_json::from_str(&text).ok()?;
    Some(Endpoint {
        authority: v["http"].as_str()?.strip_prefix("http://")?.to_owned(),
        token: v["token"].as_str()?.to_owned(),
        display: v["display"].as_str()?.to_owned(),
    })
}

/// Who serves `addr` when it is taken: the deskhand still running behind
/// the connection file at `path` (its pid and desktop) when it is the
/// one, else another program; for the error that says so.
pub fn taken_by(path: &Path, addr: std::net::SocketAddr) -> String {
    let ours = match (inspect(path), read(path)) {
        (Found::Live(pid), Some(e)) if e.authority.ends_with(&format!(":{}", addr.port())) => {
            Some((pid, e.display))
        }
        _ => None,
    };
    match ours {
        Some((pid, desktop)) => format!(
            "another deskhand (pid {pid}, serving {desktop}; its connection file {})",
            path.display()
        ),
        None => "another program".to_owned(),
    }
}

/// The connection file when no `--connection-file` names another.
pub fn default_path() -> std::path::PathBuf {
    crate::files::runtime_dir().join("endpoint.json")
}

/// Where the deskhand still running behind the connection file at `path`
/// keeps its token.
pub fn token_store(path: &Path) -> Option<crate::secrets::KeptIn> {
    let Found::Live(_) = inspect(path) else {
        return None;
    };
    let text = std::fs::read_to_string(path).ok()?;
    crate::secrets::KeptIn::from_connection(&serde_json::from_str(&text).ok()?)
}

/// Looks at the connection file at `path` before this daemon writes its
/// own.
pub fn inspect(path: &Path) -> Found {
    let Ok(text) = std::fs::read_to_string(path) else {
        return Found::Nothing;
    };
    let pid = serde_json::from_str::<serde_json::Value>(&text)
        .ok()
        .and_then(|v| v.get("pid")?.as_u64())
        .and_then(|p| u32::try_from(p).ok());
    match pid {
        Some(pid) if pid != std::process::id() && deskhand_platform::runs_deskhand(pid) => {
            Found::Live(pid)
        }
        _ => Found::Stale(pid),
    }
}

/// Refuses to start over the connection file of a deskhand that still
/// runs; says so when a stale one is about to be replaced.
pub fn claim(path: &Path) -> Result<(), HostError> {
    match inspect(path) {
        Found::Nothing => Ok(()),
        Found::Stale(pid) => {
            tracing::info!(path = %path.display(), pid, "replacing a connection file its daemon left behind");
            Ok(())
        }
        Found::Live(pid) => refuse!(
            "another deskhand (pid {pid}) is serving with the connection file {}; stop it, or give this one its own --connection-file",
            path.display()
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file_with(name: &str, content: &str) -> std::path::PathBuf {
        let dir = std::env::temp_dir().join(format!("dh-endpoint-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("dir");
        let path = dir.join("endpoint.json");
        std::fs::write(&path, content).expect("write");
        path
    }

    #[test]
    fn a_dead_or_foreign_pid_is_stale() {
        assert_eq!(
            inspect(Path::new("/nonexistent/endpoint.json")),
            Found::Nothing
        );
        // pid 1 runs, but is not deskhand; this test's own process is not
        // either (its executable is the test binary).
        for pid in [1, std::process::id()] {
            let path = file_with(&format!("p{pid}"), &format!("{{\"pid\": {pid}}}\n"));
            assert_eq!(inspect(&path), Found::Stale(Some(pid)));
            assert!(claim(&path).is_ok());
        }
        let path = file_with("garbage", "not json");
        assert_eq!(inspect(&path), Found::Stale(None));
    }
}
