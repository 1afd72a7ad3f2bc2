//! The doctor's registry: what works here and what to fix, as the
//! schema-v2 report of the driver contract. `deskhand doctor` prints it;
//! MCP's `health_report` and the tray app's doctor screen read it.

use deskhand_platform::doctor::{BackendFindings, Platform};
use deskhand_protocol::doctor::{DoctorReport, Findings, Probe, SessionType};

use crate::files;
use crate::secrets::{self, Secret};

/// The health report of desktop `desktop` (MCP `health_report`): the
/// doctor's registry, read when asked.
pub fn health_source(desktop: &str) -> deskhand_server::mcp::HealthSource {
    let desktop = desktop.to_owned();
    std::sync::Arc::new(move || report(Some(&desktop)))
}

/// Builds the report from what the platform's backends find on `desktop`
/// (this session's when `None`; bounded in time) and deskhand's own
/// files. `doctor --json` and MCP's `health_report` both come from here.
pub fn report(desktop: Option<&str>) -> DoctorReport {
    let (platform, found) = deskhand_platform::doctor::findings(desktop);
    assemble(platform, found, file_probes())
}

/// The report of what the backends found, with `more_probes` (deskhand's
/// own files) after theirs.
pub fn assemble(
    platform: Platform,
    found: BackendFindings,
    more_probes: Vec<Probe>,
) -> DoctorReport {
    let mut probes = found.probes;
    probes.extend(more_probes);
    DoctorReport::assemble(
        Findings {
            platform,
            session_type: found.session_type.unwrap_or(SessionType::None),
            backends: found.backends,
            capabilities: found.capabilities,
            permissions: found.permissions,
            probes,
        },
        env!("CARGO_PKG_VERSION"),
    )
}

/// Where the token goes without a keychain, and whether that file is fine.
fn token_file_message(why: &str) -> (bool, String) {
    let token = Secret::Token.default_file();
    match std::fs::symlink_metadata(&token) {
        Ok(m) if deskhand_files::is_owner_only(&m) => (
            true,
            format!("{} (0600); no OS keychain: {why}", token.display()),
        ),
        Ok(_) => (
            false,
            format!(
                "{} is readable by others; deskhand will replace it (no OS keychain: {why})",
                token.display()
            ),
        ),
        Err(_) => (
            true,
            format!(
                "{} (0600) is created on first `deskhand serve`; no OS keychain: {why}",
                token.display()
            ),
        ),
    }
}

/// Where the token is kept: where the running deskhand (this process's,
/// else the one behind the default connection file) keeps it, as its log
/// and the Settings window say; with none running, where the next start
/// will put it.
fn token_store_message() -> (bool, String) {
    let running = secrets::serving()
        .or_else(|| crate::endpoint::token_store(&crate::endpoint::default_path()));
    if let Some(kept_in) = running {
        return (
            true,
            format!("{kept_in}, where the running deskhand keeps it"),
        );
    }
    match secrets::keychain_status() {
        Ok(()) => (true, "the OS keychain (when deskhand starts)".to_owned()),
        Err(why) => token_file_message(&why),
    }
}

/// The audit directory and where the token is kept.
fn file_probes() -> Vec<Probe> {
    let state = files::state_dir();
    let writable = std::fs::create_dir_all(&state).is_ok() && tempfile_in(&state);
    let token_msg = token_store_message();
    vec![
        Probe::new(
            "audit log",
            writable,
            format!(
                "{} {}",
                state.display(),
                if writable { "writable" } else { "not writable" }
            ),
        ),
        Probe::new("token store", token_msg.0, token_msg.1),
    ]
}

fn tempfile_in(dir: &std::path::Path) -> bool {
    let probe = dir.join(format!(".doctor-{}", std::process::id()));
    let ok = std::fs::write(&probe, b"").is_ok();
    let _ = std::fs::remove_file(&probe);
    ok
}
