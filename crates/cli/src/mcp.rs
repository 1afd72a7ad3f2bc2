//! `deskhand mcp`: MCP over stdio. When a deskhand daemon already serves
//! the same display it relays to that daemon's `/mcp` (one desktop, one
//! queue, one indicator); otherwise, or with `--standalone`, it opens an
//! engine of its own. stdout carries only the protocol: logs go to stderr.

use std::path::PathBuf;

use clap::Args;
use tokio::signal::unix::{SignalKind, signal};

use deskhand_host::desktop::{self, DesktopArgs};
use deskhand_host::endpoint::{self, Found};
use deskhand_host::files;

use crate::mcp_relay::{self, Daemon};

/// Arguments of `deskhand mcp`.
#[derive(Debug, Args)]
pub struct McpArgs {
    #[command(flatten)]
    desktop: DesktopArgs,
    /// Open an engine of its own even when a daemon serves this display.
    #[arg(long)]
    standalone: bool,
    /// The running daemon's connection file (default: the one `serve`
    /// writes).
    #[arg(long)]
    connection_file: Option<PathBuf>,
}

/// The daemon serving `display`, per its connection file.
fn daemon_for(path: &std::path::Path, display: &str) -> Option<Daemon> {
    let Found::Live(pid) = endpoint::inspect(path) else {
        return None;
    };
    let found = endpoint::read(path)?;
    if found.display != display {
        tracing::info!(pid, "the running daemon serves another display");
        return None;
    }
    Some(Daemon {
        authority: found.authority,
        token: std::sync::Arc::new(std::sync::Mutex::new(found.token)),
        pid,
        connection_file: path.to_owned(),
    })
}

pub async fn run(args: McpArgs) -> anyhow::Result<()> {
    let d = &args.desktop;
    let display = d
        .display
        .clone()
        .or_else(|| std::env::var("DISPLAY").ok())
        .filter(|s| !s.is_empty());
    if !args.standalone && !desktop::wants_virtual(d.display.as_deref(), d.virtual_size.as_deref())
    {
        let path = args
            .connection_file
            .clone()
            .unwrap_or_else(|| files::runtime_dir().join("endpoint.json"));
        if let Some(daemon) = display.as_deref().and_then(|x| daemon_for(&path, x)) {
            tracing::info!(pid = daemon.pid, endpoint = %daemon.authority, "relaying MCP to the running deskhand daemon");
            return mcp_relay::run(daemon).await;
        }
    }
    let mut term = signal(SignalKind::terminate())?;
    let mut int = signal(SignalKind::interrupt())?;
    let desktop = desktop::open(&args.desktop, None).await?;
    tracing::info!(x_display = %desktop.x_display, "serving MCP on stdio with an engine of its own");
    let shared = deskhand_server::mcp::McpShared::new(
        desktop.engine.clone(),
        deskhand_host::doctor::health_source(&desktop.x_display),
    );
    tokio::select! {
        r = deskhand_server::mcp::serve_stdio(shared) => {
            if let Err(e) = r {
                tracing::warn!(error = %e, "the MCP connection failed");
            }
            tracing::info!("the MCP client closed the connection");
        }
        _ = term.recv() => tracing::info!("SIGTERM: shutting down"),
        _ = int.recv() => tracing::info!("SIGINT: shutting down"),
    }
    desktop.stop().await;
    Ok(())
}
