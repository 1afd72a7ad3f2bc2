//! `deskhand doctor`: what works here and what to fix, for people (exit 0
//! when every requested capability is ready, 78 when one lacks what it
//! needs) and, with `--json`, the schema-v2 report of the driver contract
//! (exit 0 ready, 1 not ready). It never touches the network and never
//! prompts.

use std::os::unix::fs::PermissionsExt;

use clap::{Args, ValueEnum};
use deskhand_backend_x11::DisplayProbe;
use deskhand_protocol::doctor::{
    Availability, BackendEntry, CONTRACT_VERSION, CapabilityEntry, DOCTOR_JSON_SCHEMA,
    DOCTOR_SCHEMA_NAME, DOCTOR_SCHEMA_VERSION, DoctorReport, NetworkBlock, NextStep,
    PermissionEntry, Probe,
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

const ACTION_NO_DISPLAY: &str = "Run deskhand inside your desktop session, or start it with `deskhand serve --virtual` to get a virtual desktop.";
const ACTION_WAYLAND: &str = "Log in to an X11 session (\"Ubuntu on Xorg\" or similar at the login screen); Wayland sessions are not supported yet.";
const ACTION_XTEST: &str = "Enable the XTEST extension of your X server (it is on by default; check xorg.conf for Option \"XTEST\" \"off\").";
const ACTION_XINPUT2: &str = "Use an X server with XInput 2.1 or newer (any current Xorg or Xvfb).";
const ACTION_ATSPI: &str = "Turn on assistive technologies in your desktop's accessibility settings, then sign out and in again.";
const ACTION_OVERLAY: &str = "Build the indicator next to deskhand (cargo build --release -p deskhand-overlay) or set DESKHAND_OVERLAY to its path.";
const ACTION_COMPOSITE: &str =
    "Enable the Composite extension of your X server (it is on by default).";
const ACTION_NOT_BUILT: &str = "This part of deskhand is not built yet; a later version adds it.";
const ACTION_PORTAL: &str = "The Wayland portals backend is planned; use an X11 session for now.";

fn entry(
    status: Availability,
    reason: Option<&str>,
    action: Option<&str>,
) -> (Availability, Option<String>, Option<String>) {
    (status, reason.map(str::to_owned), action.map(str::to_owned))
}

fn probe_line(label: &str, ok: bool, message: String) -> Probe {
    Probe {
        label: label.into(),
        status: if ok { "ok" } else { "warn" }.into(),
        message,
    }
}

/// Builds the report from the environment and a probe of the display.
pub fn report(display: Option<&str>) -> DoctorReport {
    let wayland = std::env::var_os("WAYLAND_DISPLAY").is_some()
        || std::env::var("XDG_SESSION_TYPE").is_ok_and(|t| t == "wayland");
    let display = display
        .map(str::to_owned)
        .or_else(|| std::env::var("DISPLAY").ok())
        .filter(|d| !d.is_empty());
    let probed: Option<Result<DisplayProbe, String>> = display
        .as_deref()
        .map(|d| deskhand_backend_x11::probe(d).map_err(|e| e.to_string()));
    let x = probed.as_ref().and_then(|p| p.as_ref().ok());
    let session_type = match (wayland, x) {
        (true, _) => "wayland",
        (false, Some(_)) => "x11",
        (false, None) => "none",
    };
    let mut probes = Vec::new();
    probes.push(match &probed {
        Some(Ok(p)) => probe_line(
            "display server",
            true,
            format!("X11 {} ({})", p.display, p.vendor),
        ),
        Some(Err(e)) => Probe {
            label: "display server".into(),
            status: "fail".into(),
            message: e.clone(),
        },
        None => Probe {
            label: "display server".into(),
            status: "fail".into(),
            message: "no DISPLAY".into(),
        },
    });
    probes.push(probe_line(
        "session type",
        session_type == "x11",
        session_type.into(),
    ));

    let (x11_status, x11_reason, x11_action) = match (wayland, x) {
        (true, _) => entry(
            Availability::Unavailable,
            Some("wayland_session_unsupported"),
            Some(ACTION_WAYLAND),
        ),
        (false, Some(_)) => entry(Availability::Available, None, None),
        (false, None) => entry(
            Availability::Unavailable,
            Some("display_unreachable"),
            Some(ACTION_NO_DISPLAY),
        ),
    };
    let x11_ok = x11_status == Availability::Available;
    let backends = vec![
        BackendEntry {
            id: "x11".into(),
            status: x11_status,
            required: true,
            reason_code: x11_reason.clone(),
            action: x11_action.clone(),
        },
        BackendEntry {
            id: "atspi".into(),
            status: Availability::Planned,
            required: false,
            reason_code: Some("not_built".into()),
            action: Some(ACTION_NOT_BUILT.into()),
        },
        BackendEntry {
            id: "wayland-portal".into(),
            status: Availability::Planned,
            required: false,
            reason_code: Some("wayland_portal_not_built".into()),
            action: Some(ACTION_PORTAL.into()),
        },
    ];

    let ext = x.map(|p| p.extensions.clone()).unwrap_or_default();
    if let Some(p) = x {
        for (name, ok) in [
            ("XTEST", ext.xtest),
            ("MIT-SHM", ext.shm),
            ("Composite", ext.composite),
            ("RandR", ext.randr),
            ("XFIXES", ext.xfixes),
        ] {
            probes.push(probe_line(
                &format!("extension {name}"),
                ok,
                if ok { "present" } else { "missing" }.into(),
            ));
        }
        let spare = p.spare_keycodes.unwrap_or(0);
        probes.push(probe_line(
            "spare keycodes",
            spare > 0,
            match p.spare_keycodes {
                Some(0) => "none free: characters that no key produces cannot be typed (another program has mapped them all)".into(),
                Some(n) => format!("{n} free for characters that no key produces"),
                None => "the keymap could not be read".into(),
            },
        ));
        let xi = ext
            .xinput
            .map_or("missing".into(), |(a, b)| format!("{a}.{b}"));
        probes.push(probe_line(
            "extension XInput",
            ext.xinput.is_some_and(|v| v >= (2, 1)),
            xi,
        ));
        probes.push(probe_line(
            "window manager",
            p.window_manager.is_some(),
            p.window_manager
                .clone()
                .unwrap_or_else(|| "none announced".into()),
        ));
        let overlay = deskhand_backend_x11::overlay_program();
        probes.push(probe_line(
            "takeover indicator",
            overlay.is_some(),
            match &overlay {
                Some(path) => format!(
                    "{} (kill switch: ctrl+alt+Escape by default)",
                    path.display()
                ),
                None => {
                    "deskhand-overlay not found next to deskhand, on PATH or in $DESKHAND_OVERLAY"
                        .into()
                }
            },
        ));
        probes.push(probe_line(
            "AT-SPI bus",
            p.atspi_bus,
            if p.atspi_bus {
                "advertised"
            } else {
                "not advertised on the root window"
            }
            .into(),
        ));
    }
    let unavailable_like_x11 = || {
        entry(
            Availability::Unavailable,
            x11_reason.as_deref(),
            x11_action.as_deref(),
        )
    };
    let not_built = || {
        entry(
            Availability::Planned,
            Some("not_built"),
            Some(ACTION_NOT_BUILT),
        )
    };
    let cap = |name: &str,
               (status, reason_code, action): (Availability, Option<String>, Option<String>),
               consent: &str| CapabilityEntry {
        name: name.into(),
        status,
        reason_code,
        action,
        consent: consent.into(),
    };
    let available = || entry(Availability::Available, None, None);
    let handback = if !x11_ok {
        unavailable_like_x11()
    } else if ext.xinput.is_none_or(|v| v < (2, 1)) {
        entry(
            Availability::Unavailable,
            Some("xinput2_missing"),
            Some(ACTION_XINPUT2),
        )
    } else {
        available()
    };
    let indicator = if !x11_ok {
        unavailable_like_x11()
    } else if !ext.composite {
        entry(
            Availability::Unavailable,
            Some("composite_missing"),
            Some(ACTION_COMPOSITE),
        )
    } else if deskhand_backend_x11::overlay_program().is_none() {
        entry(
            Availability::Unavailable,
            Some("not_built"),
            Some(ACTION_OVERLAY),
        )
    } else {
        available()
    };
    // Synthetic input only within a takeover: XTEST, the indicator and
    // hand-back are all needed.
    let input = if !x11_ok {
        unavailable_like_x11()
    } else if !ext.xtest {
        entry(
            Availability::Unavailable,
            Some("xtest_missing"),
            Some(ACTION_XTEST),
        )
    } else if indicator.0 != Availability::Available {
        indicator.clone()
    } else if handback.0 != Availability::Available {
        handback.clone()
    } else {
        available()
    };
    let no_api = || entry(Availability::Unsupported, Some("no_platform_api"), None);
    // The CLIPBOARD selection exists on every X server; whether agents may
    // use it is the person's opt-in (`serve --enable-clipboard`).
    let clipboard = || {
        if x11_ok {
            entry(Availability::Available, None, None)
        } else {
            unavailable_like_x11()
        }
    };
    let capabilities = vec![
        cap("read_tree", not_built(), "session"),
        cap("act_semantic", not_built(), "session"),
        cap(
            "capture_window",
            if x11_ok {
                entry(Availability::Available, None, None)
            } else {
                unavailable_like_x11()
            },
            "session",
        ),
        cap("input_takeover", input, "takeover"),
        cap("takeover_indicator", indicator, "takeover"),
        cap("takeover_handback", handback, "takeover"),
        cap("list_notifications", no_api(), "session"),
        cap("dismiss_notification", no_api(), "session"),
        cap("invoke_notification_action", no_api(), "session"),
        cap("clipboard_read", clipboard(), "separate"),
        cap("clipboard_write", clipboard(), "session"),
    ];
    let atspi = x.is_some_and(|p| p.atspi_bus);
    let permissions = vec![
        PermissionEntry {
            name: "accessibility".into(),
            status: if !x11_ok {
                "unknown"
            } else if atspi {
                "granted"
            } else {
                "missing"
            }
            .into(),
            reason_code: (x11_ok && !atspi).then(|| "atspi_bus_not_advertised".into()),
            action: (x11_ok && !atspi).then(|| ACTION_ATSPI.into()),
        },
        PermissionEntry {
            name: "screen_capture".into(),
            status: "not_applicable".into(),
            reason_code: None,
            action: None,
        },
    ];
    probes.extend(file_probes());

    let mut next_steps: Vec<NextStep> = Vec::new();
    for b in backends
        .iter()
        .filter(|b| b.status == Availability::Unavailable)
    {
        if let (Some(reason), Some(action)) = (&b.reason_code, &b.action) {
            next_steps.push(NextStep {
                reason_code: reason.clone(),
                backend: Some(b.id.clone()),
                permission: None,
                required: b.required,
                action: action.clone(),
            });
        }
    }
    for p in permissions.iter().filter(|p| p.status == "missing") {
        let (Some(reason), Some(action)) = (&p.reason_code, &p.action) else {
            continue;
        };
        match next_steps.iter_mut().find(|s| &s.reason_code == reason) {
            Some(step) => step.permission = Some(p.name.clone()),
            None => next_steps.push(NextStep {
                reason_code: reason.clone(),
                backend: None,
                permission: Some(p.name.clone()),
                required: false,
                action: action.clone(),
            }),
        }
    }
    let ready = backends
        .iter()
        .filter(|b| b.required)
        .all(|b| b.status == Availability::Available);
    DoctorReport {
        schema: DOCTOR_SCHEMA_NAME.into(),
        schema_version: DOCTOR_SCHEMA_VERSION,
        driver_version: env!("CARGO_PKG_VERSION").into(),
        contract_version: CONTRACT_VERSION.into(),
        platform: "linux".into(),
        session_type: session_type.into(),
        ready,
        backends,
        capabilities,
        permissions,
        next_steps,
        network: NetworkBlock {
            code_paths: "none".into(),
            telemetry: false,
            update_check: false,
        },
        ok: ready,
        probes,
    }
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
        probe_line(
            "audit log",
            writable,
            format!(
                "{} {}",
                state.display(),
                if writable { "writable" } else { "not writable" }
            ),
        ),
        probe_line("token store", token_msg.0, token_msg.1),
        probe_line(
            "clipboard",
            true,
            "X11 CLIPBOARD selection; off unless `deskhand serve --enable-clipboard` \
             (foreign reads also need --enable-clipboard-read-foreign)"
                .into(),
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
        Wanted::Input => r
            .capabilities
            .iter()
            .any(|c| c.name == "input_takeover" && c.status == Availability::Available),
    }
}

/// Runs the doctor; returns the exit status.
pub fn run(args: DoctorArgs) -> anyhow::Result<i32> {
    if args.schema {
        println!("{DOCTOR_JSON_SCHEMA}");
        return Ok(0);
    }
    let r = report(args.display.as_deref());
    if args.json {
        println!("{}", serde_json::to_string_pretty(&r)?);
        return Ok(if r.ready { 0 } else { 1 });
    }
    for p in &r.probes {
        let mark = match p.status.as_str() {
            "ok" => "✓",
            "warn" => "⚠",
            _ => "✗",
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
            step.reason_code,
            step.action
        );
    }
    Ok(if all { 0 } else { EXIT_NOT_READY })
}
