//! `deskhand serve`: attach to a display (or start a virtual one), open the
//! engine over the X11 backend, guard the local port, announce readiness,
//! and on SIGINT/SIGTERM release everything and clean up.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use anyhow::{Context, bail};
use clap::Args;
use deskhand_server::{ServerConfig, Token};
use serde_json::json;
use tokio::net::TcpListener;
use tokio::signal::unix::{SignalKind, signal};

use crate::desktop::{self, DesktopArgs};
use crate::secrets::{self, Secret};
use crate::{control, endpoint, files};

/// Arguments of `deskhand serve`.
#[derive(Debug, Args)]
pub struct ServeArgs {
    #[command(flatten)]
    desktop: DesktopArgs,
    /// Address to listen on; port 0 picks a free port.
    #[arg(long, default_value = "127.0.0.1:48100")]
    listen: SocketAddr,
    /// Allow a non-loopback --listen address (exposes the desktop).
    #[arg(long)]
    allow_non_loopback: bool,
    /// Where to write the connection file (endpoint + token).
    #[arg(long)]
    connection_file: Option<PathBuf>,
    /// Keep the token in this file (0600) instead of the OS keychain.
    #[arg(long)]
    token_file: Option<PathBuf>,
    /// A file (0600) holding another client's own token (repeatable): it
    /// has the same rights, and its MCP sessions are its own.
    #[arg(long = "client-token-file")]
    client_token_files: Vec<PathBuf>,
    /// Origin allowed to connect (repeatable); none by default.
    #[arg(long = "allow-origin")]
    allow_origins: Vec<String>,
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
    let desktop = desktop::open(&args.desktop).await?;
    let (token, kept_in) = secrets::load_or_create(Secret::Token, args.token_file.as_deref())?;
    secrets::release_keychain();
    tracing::info!(kept_in = %kept_in, "token loaded");
    let token = Token::new(token);
    let client_tokens =
        args.client_token_files
            .iter()
            .map(|path| {
                files::read_private_secret(path).map(Token::new).with_context(|| {
                format!(
                    "client token file {} must be ours, private (0600) and hold 64 hex digits",
                    path.display()
                )
            })
            })
            .collect::<anyhow::Result<Vec<_>>>()?;
    let engine = desktop.engine.clone();
    let x_display = desktop.x_display.clone();

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
        "mcp": format!("http://{host}/mcp"),
        "token": token.expose(),
        "display": x_display,
        "pid": std::process::id(),
    });
    files::write_private_atomic(&connection_file, format!("{ready}\n").as_bytes())?;

    let mut config = ServerConfig::new(token);
    config.client_tokens = client_tokens;
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
        desktop::health_source(&x_display),
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
    let _ = std::fs::remove_file(&connection_file);
    desktop.stop().await;
    // Give open connections a moment to see the close, then leave.
    tokio::time::sleep(Duration::from_millis(50)).await;
    tracing::info!("stopped");
    Ok(())
}

#[cfg(test)]
mod tests {
    #[test]
    fn seconds() {
        assert_eq!(
            super::parse_seconds("1.5").expect("secs"),
            super::Duration::from_millis(1500)
        );
        assert!(super::parse_seconds("0").is_err());
        assert!(super::parse_seconds("soon").is_err());
    }
}
