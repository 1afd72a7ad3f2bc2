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
            format!("{} (0600); no OS keychain: {why}", files::shown(&token)),
        ),
        Ok(_) => (
            false,
            format!(
                "{} is readable by others; deskhand will replace it (no OS keychain: {why})",
                files::shown(&token)
            ),
        ),
        Err(_) => (
            true,
            format!(
                "{} (0600) is created on first `deskhand serve`; no OS keychain: {why}",
                files::shown(&token)
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
    .into_iter()
    .chain(crate::kill_switch_state::probe())
    .chain(wine_probe())
    .collect()
}

/// Under Wine: what protects deskhand's secrets and files from other Unix
/// accounts, as Wine reports it (the Unix owner's and others' bits; Wine
/// reports no group bits), and what its registry file still holds.
#[cfg(windows)]
fn wine_probe() -> Option<Probe> {
    let version = deskhand_files::wine::version()?;
    let registry = files::wine_registry_file();
    let reg_open = deskhand_files::wine::dos_path(std::path::Path::new(&registry))
        .and_then(|p| deskhand_files::acl::sddl_of(&p).ok())
        .and_then(|sddl| deskhand_files::acl::open_to_all(&sddl));
    let left = secrets::left_in_keychain();
    let open_dirs: Vec<String> = [files::config_dir(), files::state_dir()]
        .iter()
        .filter_map(|dir| {
            let sddl = deskhand_files::acl::sddl_of(dir).ok()?;
            deskhand_files::acl::open_to_all(&sddl).map(|o| format!("{} ({o})", files::shown(dir)))
        })
        .collect();
    let mut message = format!(
        "Wine {version}: the token and the audit key are kept in owner-only files in {} \
         (folders 0700, files 0600 on the Unix side), not in the Credential Manager: Wine keeps \
         that in {registry}, which {}",
        files::shown(&files::config_dir()),
        match &reg_open {
            Some(o) => format!("every Unix account may read ({o})"),
            None => "Wine reports as not open to other accounts (it reports no group bits)".into(),
        }
    );
    match left.as_slice() {
        [] => message.push_str(", and which holds none of deskhand's secrets"),
        held => message.push_str(&format!(
            ", and which still holds deskhand's {} (`deskhand serve` removes them and makes new ones)",
            held.join(" and ")
        )),
    }
    if !open_dirs.is_empty() {
        message.push_str(&format!(
            "; open to other accounts: {} (`deskhand serve` makes them 0700)",
            open_dirs.join(", ")
        ));
    }
    Some(Probe::new(
        "wine",
        left.is_empty() && open_dirs.is_empty(),
        message,
    ))
}

#[cfg(not(windows))]
fn wine_probe() -> Option<Probe> {
    None
}

fn tempfile_in(dir: &std::path::Path) -> bool {
    let probe = dir.join(format!(".doctor-{}", std::process::id()));
    let ok = std::fs::write(&probe, b"").is_ok();
    let _ = std::fs::remove_file(&probe);
    ok
}
