//! `deskhand mcp`: MCP over stdio. When a deskhand daemon already serves
//! the display it relays to that daemon's `/mcp` (one desktop, one queue,
//! one indicator). With no display named (an MCP client starts its servers
//! with a bare environment) it relays to the person's running deskhand,
//! found by its connection file in the user's runtime directory; with
//! none running, every call says how to start deskhand, and no desktop is
//! started. An engine of its own opens only when asked (`--standalone`,
//! `--virtual`) or on a named display no daemon serves, and never on a
//! display another engine drives. stdout carries only the protocol: logs
//! go to stderr.

use std::path::{Path, PathBuf};

use anyhow::bail;
use clap::Args;

use deskhand_host::desktop::{self, DesktopArgs};
use deskhand_host::display_claim;
use deskhand_host::endpoint::{self, Found};
use deskhand_platform::DesktopId;

use crate::mcp_relay::{self, Daemon};

/// Arguments of `deskhand mcp`.
#[derive(Debug, Args)]
pub struct McpArgs {
    #[command(flatten)]
    desktop: DesktopArgs,
    /// Open an engine of its own instead of relaying to a running daemon
    /// (refused on a display a daemon serves).
    #[arg(long)]
    standalone: bool,
    /// The running daemon's connection file (default: the one `serve`
    /// writes).
    #[arg(long)]
    connection_file: Option<PathBuf>,
}

/// Where the MCP requests of this process go.
#[derive(Debug, PartialEq, Eq)]
enum Plan {
    /// To the daemon of this connection file.
    Relay(PathBuf),
    /// To an engine of its own.
    OwnEngine,
    /// Nowhere: no deskhand runs and no desktop was named or asked for.
    Absent,
}

/// What is known when `deskhand mcp` starts.
struct Situation<'a> {
    /// `--standalone`: an engine of its own was asked for.
    standalone: bool,
    /// `--virtual`: a desktop of its own was asked for.
    virtual_asked: bool,
    /// The desktop named (`--display`, else `$DISPLAY`).
    display: Option<&'a DesktopId>,
    /// Who drives that display, per its lock.
    holder: Option<display_claim::Holder>,
    /// The connection file given (or the default one).
    connection_file: &'a Path,
    /// The pid of its live daemon and the desktop it serves, if one runs.
    connection_daemon: Option<(u32, DesktopId)>,
}

/// Relay or an engine of its own: a named display goes to the daemon that
/// serves it; no display goes to the daemon of the connection file; the
/// own engine only when asked or when no daemon serves, and never on a
/// display a daemon serves.
fn plan(s: &Situation<'_>) -> anyhow::Result<Plan> {
    if s.virtual_asked {
        return Ok(Plan::OwnEngine);
    }
    let Some(display) = s.display else {
        return Ok(match &s.connection_daemon {
            _ if s.standalone => Plan::OwnEngine,
            Some(_) => Plan::Relay(s.connection_file.to_owned()),
            None => Plan::Absent,
        });
    };
    let holder = s.holder.clone().or_else(|| match &s.connection_daemon {
        // The same desktop however spelt (`unix:0` is `:0`).
        Some((pid, served)) if served == display => Some(display_claim::Holder {
            pid: Some(*pid),
            connection_file: Some(s.connection_file.to_owned()),
        }),
        _ => None,
    });
    match holder {
        Some(holder) if s.standalone => bail!("{}", holder.refusal(display.name())),
        Some(display_claim::Holder {
            connection_file: Some(file),
            ..
        }) => return Ok(Plan::Relay(file)),
        Some(holder) => bail!("{}", holder.refusal(display.name())),
        None => {}
    }
    if let Some((_, served)) = &s.connection_daemon {
        tracing::info!(%served, "the running daemon serves another display");
    }
    Ok(Plan::OwnEngine)
}

/// The live daemon of the connection file at `path`.
fn daemon_at(path: &Path) -> Option<(Daemon, String)> {
    let Found::Live(pid) = endpoint::inspect(path) else {
        return None;
    };
    let found = endpoint::read(path)?;
    let daemon = Daemon {
        authority: found.authority,
        token: std::sync::Arc::new(std::sync::Mutex::new(found.token)),
        pid,
        connection_file: path.to_owned(),
        display: found.display.clone(),
    };
    Some((daemon, found.display))
}

pub async fn run(args: McpArgs) -> anyhow::Result<()> {
    let d = &args.desktop;
    let desktop = deskhand_platform::session_desktop(d.display.as_deref());
    let connection_file = args
        .connection_file
        .clone()
        .unwrap_or_else(deskhand_host::endpoint::default_path);
    let situation = Situation {
        standalone: args.standalone,
        virtual_asked: d.virtual_size.is_some(),
        display: desktop.as_ref(),
        holder: desktop.as_ref().and_then(display_claim::holder),
        connection_file: &connection_file,
        connection_daemon: daemon_at(&connection_file).and_then(|(d, shown)| {
            deskhand_platform::session_desktop(Some(&shown)).map(|id| (d.pid, id))
        }),
    };
    let plan = plan(&situation)?;
    if plan == Plan::Absent {
        let why = absent(&connection_file);
        tracing::warn!(why, "no deskhand to relay to");
        return deskhand_server::mcp::serve_stdio_absent(why)
            .await
            .map_err(Into::into);
    }
    if let Plan::Relay(file) = plan {
        let Some((daemon, _)) = daemon_at(&file) else {
            bail!(
                "the deskhand daemon of {} cannot be reached (its connection file is gone or names no running deskhand)",
                file.display()
            );
        };
        tracing::info!(pid = daemon.pid, endpoint = %daemon.authority, desktop = %daemon.display, "relaying MCP to the running deskhand daemon");
        return mcp_relay::run(daemon).await;
    }
    own_engine(&args.desktop).await
}

/// Why there is nothing to relay to, and what the person can do.
fn absent(connection_file: &Path) -> String {
    format!(
        "no deskhand is running for this user (no live connection file at {}), and this MCP server was started with no desktop named, so it drives none. Start the deskhand app on your desktop (`deskhand-app`, or deskhand in your applications), then reconnect deskhand in your MCP client. For a virtual desktop that nobody sees instead, give this server the arguments `mcp --virtual`.",
        connection_file.display()
    )
}

/// Serves MCP on stdio with an engine of its own.
async fn own_engine(args: &DesktopArgs) -> anyhow::Result<()> {
    let mut stop = deskhand_host::shutdown::Shutdown::listen(false)?;
    let desktop = desktop::open(args, None).await?;
    let site = &desktop.site;
    tracing::info!(desktop = %site.id(), is_virtual = site.is_virtual(), "serving MCP on stdio with an engine of its own");
    let note = if site.is_virtual() {
        format!(
            "This is `deskhand mcp` with an engine of its own on a virtual desktop it started ({}), seen by no person: nothing it does shows on the person's screen.",
            site.describe()
        )
    } else {
        format!(
            "This is `deskhand mcp` with an engine of its own on {} (no deskhand daemon serves it).",
            site.describe()
        )
    };
    let shared = deskhand_server::mcp::McpShared::naming_desktop(
        desktop.engine.clone(),
        deskhand_host::doctor::health_source(desktop.id().name()),
        note,
    );
    tokio::select! {
        r = deskhand_server::mcp::serve_stdio(shared) => {
            if let Err(e) = r {
                tracing::warn!(error = %e, "the MCP connection failed");
            }
            tracing::info!("the MCP client closed the connection");
        }
        signal = stop.recv() => tracing::info!("{signal}: shutting down"),
    }
    desktop.stop().await;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use deskhand_host::display_claim::Holder;

    fn situation<'a>(display: Option<&'a DesktopId>, served: Option<&str>) -> Situation<'a> {
        Situation {
            standalone: false,
            virtual_asked: false,
            display,
            holder: None,
            connection_file: Path::new("/run/endpoint.json"),
            connection_daemon: served.map(|d| (5, DesktopId::x11(d))),
        }
    }

    fn x(display: &str) -> DesktopId {
        DesktopId::x11(display)
    }

    #[test]
    fn no_display_relays_to_the_running_daemon() {
        let relay = Plan::Relay("/run/endpoint.json".into());
        assert_eq!(plan(&situation(None, Some(":99"))).expect("plan"), relay);
        assert_eq!(
            plan(&situation(None, None)).expect("plan"),
            Plan::Absent,
            "nothing runs and nothing was named: no desktop of its own"
        );
        assert_eq!(
            plan(&situation(Some(&x(":99")), Some(":99"))).expect("plan"),
            relay
        );
        assert_eq!(
            plan(&situation(Some(&x("unix:99.0")), Some(":99"))).expect("plan"),
            relay,
            "one display however spelt"
        );
        assert_eq!(
            plan(&situation(Some(&x(":0")), Some(":99"))).expect("plan"),
            Plan::OwnEngine,
            "a daemon of another display does not serve this one"
        );
    }

    #[test]
    fn the_displays_holder_decides_before_the_connection_file() {
        let seven = x(":7");
        let mut s = situation(Some(&seven), None);
        s.holder = Some(Holder {
            pid: Some(9),
            connection_file: Some("/elsewhere/endpoint.json".into()),
        });
        assert_eq!(
            plan(&s).expect("plan"),
            Plan::Relay("/elsewhere/endpoint.json".into())
        );
        s.holder = Some(Holder {
            pid: Some(9),
            connection_file: None,
        });
        let refused = plan(&s).expect_err("no port to relay to").to_string();
        assert!(
            refused.contains("pid 9") && refused.contains(":7"),
            "{refused}"
        );
    }

    #[test]
    fn an_own_engine_only_when_asked_and_never_on_a_served_display() {
        let mut s = situation(None, Some(":99"));
        s.standalone = true;
        assert_eq!(plan(&s).expect("plan"), Plan::OwnEngine);
        s.connection_daemon = None;
        assert_eq!(plan(&s).expect("plan"), Plan::OwnEngine, "asked for");
        let (ninety_nine, zero) = (x(":99"), x(":0"));
        let mut s = situation(Some(&ninety_nine), Some(":99"));
        s.standalone = true;
        let refused = plan(&s).expect_err("served").to_string();
        assert!(
            refused.contains("pid 5") && refused.contains("/run/endpoint.json"),
            "{refused}"
        );
        s.display = Some(&zero);
        assert_eq!(plan(&s).expect("plan"), Plan::OwnEngine);
        let mut s = situation(Some(&ninety_nine), Some(":99"));
        s.virtual_asked = true;
        assert_eq!(plan(&s).expect("plan"), Plan::OwnEngine, "a new display");
    }
}
