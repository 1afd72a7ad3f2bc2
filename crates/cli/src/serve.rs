//! `deskhand serve`: the host's [`Daemon`] on a display (or a virtual one
//! it starts), the ready line and the control pipe on stdio, and on
//! SIGINT/SIGTERM everything released and cleaned up.

use std::io::IsTerminal;

use clap::Args;
use deskhand_host::daemon::{Daemon, DaemonArgs};
use deskhand_host::shutdown::Shutdown;

use deskhand_host::doctor;

use crate::control;

/// Arguments of `deskhand serve`.
#[derive(Debug, Args)]
pub struct ServeArgs {
    #[command(flatten)]
    daemon: DaemonArgs,
}

pub async fn run(args: ServeArgs) -> anyhow::Result<()> {
    // Handlers first: a SIGTERM at any point from here on shuts down
    // cleanly (connection file removed, virtual desktop stopped).
    let mut stop = Shutdown::listen(false)?;
    let mut daemon = Daemon::start(args.daemon, doctor::health_source).await?;
    // `serve` never replaces its token: the keychain's connection goes.
    deskhand_host::secrets::release_keychain();
    // The token only on a terminal: a pipe may be the journal (the systemd
    // unit) or a container's log; readers take it from the connection file.
    control::emit(&daemon.printed_ready(std::io::stdout().is_terminal()));
    tokio::spawn(control::forward_events(daemon.engine.clone()));
    tokio::spawn(control::read_commands(daemon.engine.clone()));
    tokio::select! {
        signal = stop.recv() => tracing::info!("{signal}: shutting down"),
        () = daemon.failed() => {}
    }
    daemon.stop().await;
    Ok(())
}
