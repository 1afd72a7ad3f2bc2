//! The doctor's registry: what works here and what to fix, as the
//! schema-v2 report of the driver contract. `deskhand doctor` prints it;
//! MCP's `health_report` and the tray app's doctor screen read it.

pub mod atspi;

use std::os::unix::fs::PermissionsExt;

pub use atspi::AtspiFindings;
use deskhand_backend_x11::X11Findings;
use deskhand_protocol::doctor::{
    Availability, BackendEntry, CapabilityEntry, CapabilityName, ConsentKind, DoctorReport,
    Findings, GrantStatus, PermissionEntry, Platform, Probe, ReasonCode, Verdict,
};

use crate::files;
use crate::secrets::{self, Secret};

/// The health report of `x_display` (MCP `health_report`): the doctor's
/// registry, read when asked.
pub fn health_source(x_display: &str) -> deskhand_server::mcp::HealthSource {
    let display = x_display.to_owned();
    std::sync::Arc::new(move || report(Some(&display)))
}

/// Builds the report from the environment, a look at the display and a
/// check of the accessibility bus (bounded in time: see
/// [`atspi::bus_status`]). `doctor --json` and MCP's `health_report` both
/// come from here.
pub fn report(display: Option<&str>) -> DoctorReport {
    let wayland = std::env::var_os("WAYLAND_DISPLAY").is_some()
        || std::env::var("XDG_SESSION_TYPE").is_ok_and(|t| t == "wayland");
    let display = display
        .map(str::to_owned)
        .or_else(|| std::env::var("DISPLAY").ok())
        .filter(|d| !d.is_empty());
    let x11 = deskhand_backend_x11::x11_findings(display.as_deref(), wayland);
    let a11y = atspi::findings(&atspi::bus_status());
    assemble(x11, a11y, file_probes())
}

/// The report of what the X11 and AT-SPI checks found, with `more_probes`
/// (deskhand's own files) after theirs.
pub fn assemble(x11: X11Findings, a11y: AtspiFindings, more_probes: Vec<Probe>) -> DoctorReport {
    let planned = Verdict::because(Availability::Planned, ReasonCode::WaylandPortalNotBuilt);
    let backends = vec![
        x11.backend,
        a11y.backend,
        BackendEntry::new("wayland-portal", false, planned),
    ];
    let no_api = Verdict::because(Availability::Unsupported, ReasonCode::NoPlatformApi);
    let mut capabilities = a11y.capabilities;
    capabilities.extend(x11.capabilities);
    for name in [
        CapabilityName::ListNotifications,
        CapabilityName::DismissNotification,
        CapabilityName::InvokeNotificationAction,
    ] {
        capabilities.push(CapabilityEntry::new(name, no_api, ConsentKind::Session));
    }
    let permissions = vec![
        a11y.permission,
        PermissionEntry::new("screen_capture", GrantStatus::NotApplicable, None),
    ];
    let mut probes = x11.probes;
    probes.push(a11y.probe);
    probes.extend(more_probes);
    DoctorReport::assemble(
        Findings {
            platform: Platform::Linux,
            session_type: x11.session_type,
            backends,
            capabilities,
            permissions,
            probes,
        },
        env!("CARGO_PKG_VERSION"),
    )
}

/// Where the token goes without a keychain, and whether that file is fine.
fn token_file_message(why: &str) -> (bool, String) {
    let token = Secret::Token.default_file();
    match std::fs::symlink_metadata(&token) {
        Ok(m) if m.permissions().mode() & 0o077 == 0 => (
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
        Probe::new(
            "clipboard",
            true,
            "X11 CLIPBOARD selection; off unless `deskhand serve --enable-clipboard` \
             (foreign reads also need --enable-clipboard-read-foreign)",
        ),
    ]
}

fn tempfile_in(dir: &std::path::Path) -> bool {
    let probe = dir.join(format!(".doctor-{}", std::process::id()));
    let ok = std::fs::write(&probe, b"").is_ok();
    let _ = std::fs::remove_file(&probe);
    ok
}
