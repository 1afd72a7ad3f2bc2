//! `deskhand serve`: attach to a display (or start a virtual one), open the
//! engine over the X11 backend, guard the local port, announce readiness,
//! and on SIGINT/SIGTERM release everything and clean up.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, bail};
use clap::Args;
use deskhand_backend_x11::VirtualDesktop;
use deskhand_engine::{AuditLog, ClipboardPolicy, Consent, Engine};
use deskhand_server::{ServerConfig, Token};
use serde_json::json;
use tokio::net::TcpListener;
use tokio::signal::unix::{SignalKind, signal};

use crate::secrets::{self, Secret};
use crate::{control, endpoint, files};

/// Arguments of `deskhand serve`.
#[derive(Debug, Args)]
pub struct ServeArgs {
    /// X display to drive, e.g. `:0` (default: $DISPLAY).
    #[arg(long, conflicts_with = "virtual_size")]
    display: Option<String>,
    /// Start a virtual desktop (Xvfb + window manager) of this size.
    #[arg(long = "virtual", value_name = "WxH", num_args = 0..=1, default_missing_value = "1280x800")]
    virtual_size: Option<String>,
    /// Address to listen on; port 0 picks a free port.
    #[arg(long, default_value = "127.0.0.1:48100")]
    listen: SocketAddr,
    /// Allow a non-loopback --listen address (exposes the desktop).
    #[arg(long)]
    allow_non_loopback: bool,
    /// Consent policy file, e.g. `{"input": true}`.
    #[arg(long)]
    consent: Option<PathBuf>,
    /// Audit log (JSON lines).
    #[arg(long)]
    audit_log: Option<PathBuf>,
    /// Where to write the connection file (endpoint + token).
    #[arg(long)]
    connection_file: Option<PathBuf>,
    /// Keep the token in this file (0600) instead of the OS keychain.
    #[arg(long)]
    token_file: Option<PathBuf>,
    /// Origin allowed to connect (repeatable); none by default.
    #[arg(long = "allow-origin")]
    allow_origins: Vec<String>,
    /// Let agents write the clipboard, paste, and read back what deskhand
    /// itself wrote in the last 30 s.
    #[arg(long)]
    enable_clipboard: bool,
    /// Also let agents read what others copied (never concealed or
    /// credential-looking text).
    #[arg(long, requires = "enable_clipboard")]
    enable_clipboard_read_foreign: bool,
    /// Approve every foreign clipboard read in advance (headless: there is
    /// no one to ask per read).
    #[arg(long, requires = "enable_clipboard_read_foreign")]
    approve_clipboard_reads: bool,
    /// The hotkey that ends every takeover and releases everything.
    #[arg(long, default_value = "ctrl+alt+Escape")]
    kill_switch: String,
    /// Seconds without a request before a connection is closed (tests).
    #[arg(long, hide = true, value_parser = parse_seconds)]
    idle_timeout: Option<Duration>,
    /// Seconds a connection has to send its headers and token (tests).
    #[arg(long, hide = true, value_parser = parse_seconds)]
    header_timeout: Option<Duration>,
}

fn parse_seconds(s: &str) -> anyhow::Result<Duration> {
    let secs: f64 = s.parse().context("a number of seconds")?;
    if !(0.01..=86_400.0).contains(&secs) {
        bail!("{secs} s is out of range (0.01..=86400)");
    }
    Ok(Duration::from_secs_f64(secs))
}

fn parse_size(s: &str) -> anyhow::Result<(u32, u32)> {
    let (w, h) = s
        .split_once(['x', 'X'])
        .context("virtual size must look like 1920x1080")?;
    let (w, h): (u32, u32) = (w.parse()?, h.parse()?);
    if !(64..=16384).contains(&w) || !(64..=16384).contains(&h) {
        bail!("virtual size {w}x{h} is out of range (64..=16384)");
    }
    Ok((w, h))
}

/// The display to drive and, when deskhand started it, the virtual desktop.
pub fn open_display(
    display: Option<String>,
    virtual_size: Option<&str>,
) -> anyhow::Result<(String, Option<VirtualDesktop>)> {
    let wants_virtual = virtual_size.is_some()
        || (display.is_none() && std::env::var("DISPLAY").map_or(true, |d| d.is_empty()));
    if wants_virtual {
        if virtual_size.is_none() {
            tracing::info!("no DISPLAY set: starting a virtual desktop");
        }
        let (w, h) = parse_size(virtual_size.unwrap_or("1280x800"))?;
        let vd = VirtualDesktop::start(w, h)?;
        return Ok((vd.display().to_owned(), Some(vd)));
    }
    let name = display
        .or_else(|| std::env::var("DISPLAY").ok())
        .context("no display")?;
    Ok((name, None))
}

pub async fn run(args: ServeArgs) -> anyhow::Result<()> {
    // Handlers first: a SIGTERM at any point from here on shuts down
    // cleanly (connection file removed, virtual desktop stopped).
    let mut term = signal(SignalKind::terminate())?;
    let mut int = signal(SignalKind::interrupt())?;
    if !args.listen.ip().is_loopback() {
        if !args.allow_non_loopback {
            bail!(
                "refusing to listen on {}: only loopback is allowed without --allow-non-loopback",
                args.listen
            );
        }
        tracing::warn!(addr = %args.listen, "LISTENING BEYOND LOOPBACK: anyone who can reach this address and has the token can drive this desktop");
    }
    let connection_file = args
        .connection_file
        .clone()
        .unwrap_or_else(|| files::runtime_dir().join("endpoint.json"));
    endpoint::claim(&connection_file)?;
    if let Some(dir) = connection_file.parent() {
        files::private_dir(dir)?;
    }
    let (x_display, mut virtual_desktop) =
        open_display(args.display, args.virtual_size.as_deref())?;
    let consent = match (&args.consent, &virtual_desktop) {
        (Some(path), _) => Consent::from_file(path)?,
        (None, Some(_)) => Consent::sandbox(),
        (None, None) => Consent::none(),
    }
    .with_clipboard(ClipboardPolicy {
        enabled: args.enable_clipboard,
        read_foreign: args.enable_clipboard_read_foreign,
        foreign_reads_approved: args.approve_clipboard_reads,
    });
    let (audit_key, _) = secrets::load_or_create(Secret::AuditKey, None)?;
    deskhand_engine::audit::set_text_key(secrets::secret_bytes(&audit_key)?);
    let audit_path = args
        .audit_log
        .unwrap_or_else(|| files::state_dir().join("audit.jsonl"));
    let audit = AuditLog::open(&audit_path)
        .with_context(|| format!("opening audit log {}", audit_path.display()))?;
    let (token, kept_in) = secrets::load_or_create(Secret::Token, args.token_file.as_deref())?;
    secrets::release_keychain();
    tracing::info!(kept_in = %kept_in, "token loaded");
    let token = Token::new(token);

    // Held input and remapped keycodes survive a crash: a copy of each
    // list per display.
    let display_tag: String = x_display
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect();
    let state = files::state_dir();
    files::private_dir(&state)?;
    let options = deskhand_backend_x11::X11Options {
        kill_switch: Some(args.kill_switch.clone()),
        remap_file: Some(state.join(format!("remapped-keys-{display_tag}.json"))),
    };
    let backend = deskhand_backend_x11::open_with(Some(&x_display), &options)?;
    let engine = Arc::new(Engine::new(backend, consent, audit));
    let ledger = state.join(format!("held-input-{display_tag}.json"));
    engine.keep_held_input_in(ledger).await?;

    let listener = TcpListener::bind(args.listen)
        .await
        .with_context(|| format!("binding {}", args.listen))?;
    let addr = listener.local_addr()?;
    let host = match addr {
        SocketAddr::V6(_) => format!("[{}]:{}", addr.ip(), addr.port()),
        SocketAddr::V4(_) => addr.to_string(),
    };
    let ready = json!({
        "event": "ready",
        "ws": format!("ws://{host}/v1/ws"),
        "http": format!("http://{host}"),
        "token": token.expose(),
        "display": x_display,
        "pid": std::process::id(),
    });
    files::write_private_atomic(&connection_file, format!("{ready}\n").as_bytes())?;

    let mut config = ServerConfig::new(token);
    config.allowed_origins = args.allow_origins;
    if let Some(idle) = args.idle_timeout {
        config.idle_timeout = idle;
    }
    if let Some(headers) = args.header_timeout {
        config.header_timeout = headers;
    }
    let (stop_tx, stop_rx) = tokio::sync::oneshot::channel::<()>();
    let server = tokio::spawn(deskhand_server::serve(
        listener,
        engine.clone(),
        config,
        async {
            let _ = stop_rx.await;
        },
    ));

    control::emit(&ready);
    tokio::spawn(control::forward_events(engine.clone()));
    tokio::spawn(control::read_commands(engine.clone()));
    tracing::info!(%addr, x_display = x_display.as_str(), connection_file = %connection_file.display(), "deskhand is ready");

    tokio::select! {
        _ = term.recv() => tracing::info!("SIGTERM: shutting down"),
        _ = int.recv() => tracing::info!("SIGINT: shutting down"),
        r = server => {
            tracing::error!(result = ?r, "server stopped on its own");
        }
    }
    let _ = stop_tx.send(());
    // Release everything held before anything else goes away.
    let engine_for_stop = engine.clone();
    let _ = tokio::task::spawn_blocking(move || engine_for_stop.shutdown()).await;
    let _ = std::fs::remove_file(&connection_file);
    if let Some(vd) = virtual_desktop.as_mut() {
        vd.stop();
    }
    // Give open connections a moment to see the close, then leave.
    tokio::time::sleep(Duration::from_millis(50)).await;
    tracing::info!("stopped");
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::parse_size;

    #[test]
    fn seconds() {
        assert_eq!(
            super::parse_seconds("1.5").expect("secs"),
            super::Duration::from_millis(1500)
        );
        assert!(super::parse_seconds("0").is_err());
        assert!(super::parse_seconds("soon").is_err());
    }

    #[test]
    fn sizes() {
        assert_eq!(parse_size("1920x1080").expect("size"), (1920, 1080));
        assert!(parse_size("10x10").is_err());
        assert!(parse_size("wide").is_err());
    }
}
