//! `deskhand doctor`: what works here and what to fix, for people (exit 0
//! when every requested capability is ready, 78 when one lacks what it
//! needs) and, with `--json`, the schema-v2 report of the driver contract
//! (exit 0 ready, 1 not ready). It never touches the network and never
//! prompts.

use std::os::unix::fs::PermissionsExt;

use clap::{Args, ValueEnum};
use deskhand_protocol::doctor::{
    Availability, BackendEntry, CapabilityEntry, CapabilityName, ConsentKind, DoctorReport,
    Findings, GrantStatus, PermissionEntry, Platform, Probe, ProbeStatus, ReasonCode, Verdict,
};

use crate::files;
use crate::secrets::{self, Secret};

/// Exit status when a requested capability lacks what it needs (EX_CONFIG).
pub const EXIT_NOT_READY: i32 = 78;

/// Capabilities a caller can ask the doctor about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Wanted {
    /// Screenshots.
    Screenshot,
    /// Synthetic pointer and keyboard.
    Input,
    /// Listing and focusing windows.
    Windows,
}

/// Arguments of `deskhand doctor`.
#[derive(Debug, Args)]
pub struct DoctorArgs {
    /// The schema-v2 JSON report instead of the human one.
    #[arg(long)]
    json: bool,
    /// Print the report's JSON schema and exit.
    #[arg(long)]
    schema: bool,
    /// X display to check (default: $DISPLAY).
    #[arg(long)]
    display: Option<String>,
    /// Capabilities that must be ready for exit status 0.
    #[arg(long = "require", value_enum, default_values_t = [Wanted::Screenshot, Wanted::Input])]
    require: Vec<Wanted>,
}

/// Builds the report from the environment and a look at the display.
pub fn report(display: Option<&str>) -> DoctorReport {
    let wayland = std::env::var_os("WAYLAND_DISPLAY").is_some()
        || std::env::var("XDG_SESSION_TYPE").is_ok_and(|t| t == "wayland");
    let display = display
        .map(str::to_owned)
        .or_else(|| std::env::var("DISPLAY").ok())
        .filter(|d| !d.is_empty());
    let x11 = deskhand_backend_x11::x11_findings(display.as_deref(), wayland);
    let planned = |reason| Verdict::because(Availability::Planned, reason);
    let backends = vec![
        x11.backend,
        BackendEntry::new("atspi", false, planned(ReasonCode::NotBuilt)),
        BackendEntry::new(
            "wayland-portal",
            false,
            planned(ReasonCode::WaylandPortalNotBuilt),
        ),
    ];
    let no_api = Verdict::because(Availability::Unsupported, ReasonCode::NoPlatformApi);
    let mut capabilities = vec![
        CapabilityEntry::new(
            CapabilityName::ReadTree,
            planned(ReasonCode::NotBuilt),
            ConsentKind::Session,
        ),
        CapabilityEntry::new(
            CapabilityName::ActSemantic,
            planned(ReasonCode::NotBuilt),
            ConsentKind::Session,
        ),
    ];
    capabilities.extend(x11.capabilities);
    for name in [
        CapabilityName::ListNotifications,
        CapabilityName::DismissNotification,
        CapabilityName::InvokeNotificationAction,
    ] {
        capabilities.push(CapabilityEntry::new(name, no_api, ConsentKind::Session));
    }
    let mut permissions = x11.permissions;
    permissions.push(PermissionEntry::new(
        "screen_capture",
        GrantStatus::NotApplicable,
        None,
    ));
    let mut probes = x11.probes;
    probes.extend(file_probes());
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

/// The audit directory and where the token is kept.
fn file_probes() -> Vec<Probe> {
    let state = files::state_dir();
    let writable = std::fs::create_dir_all(&state).is_ok() && tempfile_in(&state);
    let token_msg = match secrets::keychain_status() {
        Ok(()) => (true, "the OS keychain".to_owned()),
        Err(why) => token_file_message(&why),
    };
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

/// Whether a wanted capability has what it needs.
fn wanted_ready(r: &DoctorReport, want: Wanted) -> bool {
    let x11 = r
        .backends
        .iter()
        .any(|b| b.id == "x11" && b.status == Availability::Available);
    match want {
        Wanted::Screenshot | Wanted::Windows => x11,
        Wanted::Input => {
            r.capability(CapabilityName::InputTakeover) == Some(Availability::Available)
        }
    }
}

/// Runs the doctor; returns the exit status.
pub fn run(args: DoctorArgs) -> anyhow::Result<i32> {
    if args.schema {
        let schema = deskhand_protocol::doctor::json_schema();
        println!("{}", serde_json::to_string_pretty(&schema)?);
        return Ok(0);
    }
    let r = report(args.display.as_deref());
    if args.json {
        println!("{}", serde_json::to_string_pretty(&r)?);
        return Ok(if r.ready { 0 } else { 1 });
    }
    for p in &r.probes {
        let mark = match p.status {
            ProbeStatus::Ok => "✓",
            ProbeStatus::Warn => "⚠",
            ProbeStatus::Fail => "✗",
        };
        println!("{mark} {}: {}", p.label, p.message);
    }
    let mut all = true;
    for want in &args.require {
        let ok = wanted_ready(&r, *want);
        all &= ok;
        println!(
            "{} {want:?}: {}",
            if ok { "✓" } else { "✗" },
            if ok { "ready" } else { "not ready" }
        );
    }
    for step in &r.next_steps {
        println!(
            "→ {} ({}): {}",
            step.backend
                .as_deref()
                .or(step.permission.as_deref())
                .unwrap_or("-"),
            serde_json::to_value(step.reason_code)
                .ok()
                .and_then(|v| v.as_str().map(str::to_owned))
                .unwrap_or_default(),
            step.action
        );
    }
    Ok(if all { 0 } else { EXIT_NOT_READY })
}
