//! The served port of a host: the desktop, the token, the guarded local
//! listener and the connection file, started and stopped as one. `deskhand
//! serve` and the tray app run the same [`Daemon`].

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use clap::Args;
use deskhand_engine::Engine;
use deskhand_server::mcp::HealthSource;
use deskhand_server::{ServerConfig, Token};
use serde_json::{Value, json};
use tokio::net::TcpListener;
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

use crate::desktop::{self, Desktop, DesktopArgs};
use crate::error::{io, refuse};
use crate::port_token::PortToken;
use crate::secrets::{self, KeptIn, Secret};
use crate::{HostError, endpoint, files};

/// The loopback port unless the command line or the settings file names
/// another.
pub const DEFAULT_PORT: u16 = 48100;

/// How the port is served (the flags of `deskhand serve`).
#[derive(Debug, Clone, Args)]
pub struct DaemonArgs {
    /// The desktop to drive.
    #[command(flatten)]
    pub desktop: DesktopArgs,
    /// Address to listen on; port 0 picks a free port (default:
    /// 127.0.0.1 and the settings file's `listen_port`, else 48100).
    #[arg(long)]
    pub listen: Option<SocketAddr>,
    /// Allow a non-loopback --listen address (exposes the desktop).
    #[arg(long)]
    pub allow_non_loopback: bool,
    /// Where to write the connection file (endpoint + token).
    #[arg(long)]
    pub connection_file: Option<PathBuf>,
    /// Keep the token in this file (0600) instead of the OS keychain.
    #[arg(long)]
    pub token_file: Option<PathBuf>,
    /// A file (0600) holding another client's own token (repeatable): it
    /// has the same rights, and its MCP sessions are its own.
    #[arg(long = "client-token-file")]
    pub client_token_files: Vec<PathBuf>,
    /// Origin allowed to connect (repeatable); none by default.
    #[arg(long = "allow-origin")]
    pub allow_origins: Vec<String>,
    /// Seconds without a request before a connection is closed (tests).
    #[arg(long, hide = true, value_parser = parse_seconds)]
    pub idle_timeout: Option<Duration>,
    /// Seconds an MCP HTTP session may stay unused before it is closed
    /// (tests).
    #[arg(long, hide = true, value_parser = parse_seconds)]
    pub mcp_session_idle: Option<Duration>,
    /// Seconds a connection has to send its headers and token (tests).
    #[arg(long, hide = true, value_parser = parse_seconds)]
    pub header_timeout: Option<Duration>,
}

fn parse_seconds(s: &str) -> Result<Duration, String> {
    let secs: f64 = s
        .parse()
        .map_err(|_| format!("{s:?} is not a number of seconds"))?;
    if !(0.01..=86_400.0).contains(&secs) {
        return Err(format!("{secs} s is out of range (0.01..=86400)"));
    }
    Ok(Duration::from_secs_f64(secs))
}

/// A running port.
pub struct Daemon {
    /// The engine every protocol reaches.
    pub engine: Arc<Engine>,
    /// The ready line (also the connection file's content).
    pub ready: Value,
    /// Where it listens.
    pub addr: SocketAddr,
    connection_file: PathBuf,
    token: PortToken,
    desktop: Desktop,
    stop: Option<oneshot::Sender<()>>,
    server: JoinHandle<Result<(), deskhand_server::ServerError>>,
    /// Keeps the kill switch's state file current (Windows).
    kill_state: Option<JoinHandle<()>>,
}

fn checked_listen(args: &DaemonArgs) -> Result<(), HostError> {
    let Some(listen) = args.listen else {
        return Ok(());
    };
    if !listen.ip().is_loopback() {
        if !args.allow_non_loopback {
            refuse!(
                "refusing to listen on {listen}: only loopback is allowed without --allow-non-loopback"
            );
        }
        tracing::warn!(addr = %listen, "LISTENING BEYOND LOOPBACK: anyone who can reach this address and has the token can drive this desktop");
    }
    Ok(())
}

/// The address this daemon will listen on, when known before the desktop
/// opens: `--listen`, else the settings file's port, else the default.
fn wanted_addr(args: &DaemonArgs) -> SocketAddr {
    args.listen.unwrap_or_else(|| {
        let settings = args
            .desktop
            .settings
            .clone()
            .unwrap_or_else(crate::settings::default_path);
        let port = crate::settings::listen_port(&settings).unwrap_or(DEFAULT_PORT);
        SocketAddr::from((std::net::Ipv4Addr::LOCALHOST, port))
    })
}

/// Refuses, before a virtual desktop starts, a port another program
/// (another deskhand, the tray app) already serves, naming it.
fn port_free(args: &DaemonArgs) -> Result<(), HostError> {
    let addr = wanted_addr(args);
    if addr.port() == 0 {
        return Ok(());
    }
    match std::net::TcpListener::bind(addr) {
        Ok(_) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::AddrInUse => refuse!(
            "{addr} is already served by {}: stop it, or give this one another port (--listen 127.0.0.1:0 picks a free one)",
            endpoint::taken_by(&endpoint::default_path(), addr)
        ),
        Err(_) => Ok(()),
    }
}

fn client_tokens(paths: &[PathBuf]) -> Result<Vec<Token>, HostError> {
    paths
        .iter()
        .map(|path| match files::read_private_secret(path) {
            Some(t) => Ok(Token::new(t)),
            None => Err(HostError::Refused(format!(
                "client token file {} must be ours, private (0600) and hold 64 hex digits",
                path.display()
            ))),
        })
        .collect()
}

pub(crate) fn ready_line(
    addr: SocketAddr,
    token: &Token,
    kept_in: &KeptIn,
    desktop: &str,
) -> Value {
    let host = match addr {
        SocketAddr::V6(_) => format!("[{}]:{}", addr.ip(), addr.port()),
        SocketAddr::V4(_) => addr.to_string(),
    };
    let mut line = json!({
        "event": "ready",
        "ws": format!("ws://{host}/v1/ws"),
        "http": format!("http://{host}"),
        "mcp": format!("http://{host}/mcp"),
        "token": token.expose(),
        "display": desktop,
        "pid": std::process::id(),
    });
    if let (Some(line), Value::Object(store)) = (line.as_object_mut(), kept_in.connection_fields())
    {
        line.extend(store);
    }
    line
}

impl Daemon {
    /// Opens the desktop, loads the token, binds the port, writes the
    /// connection file and starts serving. The keychain stays open for a
    /// rotation; a host that never rotates lets it go
    /// ([`secrets::release_keychain`]). `health` gives the doctor's
    /// report of a display.
    pub async fn start(
        args: DaemonArgs,
        health: impl FnOnce(&str) -> HealthSource,
    ) -> Result<Self, HostError> {
        checked_listen(&args)?;
        let connection_file = args
            .connection_file
            .clone()
            .unwrap_or_else(endpoint::default_path);
        endpoint::claim(&connection_file)?;
        port_free(&args)?;
        if let Some(dir) = connection_file.parent() {
            files::private_dir(dir)?;
        }
        let desktop = desktop::open(&args.desktop, args.listen).await?;
        let listen = args.listen.unwrap_or(SocketAddr::from((
            std::net::Ipv4Addr::LOCALHOST,
            desktop.started_with.listen_port,
        )));
        let (token, kept_in) = secrets::load_or_create(Secret::Token, args.token_file.as_deref())?;
        tracing::info!(kept_in = %kept_in, "token loaded");
        secrets::note_serving(&kept_in);
        let token = Token::new(token);
        let client_tokens = client_tokens(&args.client_token_files)?;
        let listener = TcpListener::bind(listen)
            .await
            .map_err(io(format!("binding {listen}")))?;
        let addr = listener
            .local_addr()
            .map_err(io("reading the bound address"))?;
        let ready = ready_line(addr, &token, &kept_in, desktop.id().name());
        files::write_private_atomic(&connection_file, format!("{ready}\n").as_bytes())?;
        desktop.claim.serve_with(&connection_file)?;
        let mut config = ServerConfig::new(token);
        let token = PortToken {
            token: config.token.clone(),
            kept_in,
            connection_file: connection_file.clone(),
            addr,
            desktop: desktop.id().name().to_owned(),
            engine: desktop.engine.clone(),
        };
        config.client_tokens = client_tokens;
        config.allowed_origins = args.allow_origins;
        if let Some(idle) = args.idle_timeout {
            config.idle_timeout = idle;
        }
        if let Some(idle) = args.mcp_session_idle {
            config.mcp_session_idle = idle;
        }
        if let Some(headers) = args.header_timeout {
            config.header_timeout = headers;
        }
        let (stop, stopped) = oneshot::channel::<()>();
        let engine = desktop.engine.clone();
        let server = tokio::spawn(deskhand_server::serve(
            listener,
            engine.clone(),
            config,
            health(desktop.id().name()),
            async {
                let _ = stopped.await;
            },
        ));
        let hotkey = desktop.settings.live.hotkey.clone();
        crate::kill_switch_state::note_serving(&hotkey);
        // Windows: `deskhand doctor` reads whether the chord is in force
        // (another program may hold it) from this file.
        let kill_state = cfg!(windows)
            .then(|| tokio::spawn(crate::kill_switch_state::keep(hotkey, desktop.id().clone())));
        tracing::info!(%addr, desktop = %desktop.id(), connection_file = %connection_file.display(), "deskhand is ready");
        Ok(Self {
            engine,
            ready,
            addr,
            connection_file,
            token,
            desktop,
            stop: Some(stop),
            server,
            kill_state,
        })
    }

    /// The ready line as a host prints it: with the token only for a
    /// terminal's eyes (`show_token`); otherwise naming the connection file
    /// (owner-only) that holds it, since a pipe may lead to a log or the
    /// journal that other accounts read.
    pub fn printed_ready(&self, show_token: bool) -> Value {
        let mut ready = self.ready.clone();
        if let Some(line) = ready.as_object_mut().filter(|_| !show_token) {
            line.remove("token");
            line.insert(
                "connection_file".into(),
                Value::String(self.connection_file.display().to_string()),
            );
        }
        ready
    }

    /// Which desktop it drives.
    pub fn desktop_id(&self) -> &deskhand_platform::DesktopId {
        self.desktop.id()
    }

    /// The desktop it serves (its settings file and audit log).
    pub fn desktop(&self) -> &Desktop {
        &self.desktop
    }

    /// The person's token, to show and replace.
    pub fn token(&self) -> &PortToken {
        &self.token
    }

    /// Resolves when the server stopped on its own (it should not).
    pub async fn failed(&mut self) {
        let r = (&mut self.server).await;
        tracing::error!(result = ?r, "server stopped on its own");
    }

    /// Stops serving: everything held is released before anything else
    /// goes, the connection file is removed, the virtual desktop stopped.
    pub async fn stop(mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        let _ = std::fs::remove_file(&self.connection_file);
        if let Some(task) = self.kill_state.take() {
            task.abort();
            crate::kill_switch_state::forget(self.desktop.id());
        }
        self.desktop.stop().await;
        // Give open connections a moment to see the close.
        tokio::time::sleep(Duration::from_millis(50)).await;
        tracing::info!("stopped");
    }
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
