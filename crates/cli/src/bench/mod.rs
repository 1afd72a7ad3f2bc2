//! `deskhand bench`: measures deskhand over a real WebSocket client, as an
//! agent drives it, and prints one table with medians, p95s and (where a
//! reference tool exists) ratios. On X11 on a virtual desktop of its own
//! beside the reference tools (`x11.rs`); on Windows, and in a Wayland
//! session with `--session`, on the session's desktop, in a text window
//! it starts (`session.rs`).

#[cfg(target_os = "linux")]
mod a11y;
#[cfg(target_os = "linux")]
mod mcp;
#[cfg(target_os = "linux")]
mod pointer;
mod session;
#[cfg(target_os = "linux")]
mod shot;
#[cfg(target_os = "linux")]
mod takeover;
#[cfg(target_os = "linux")]
mod typing;
mod wire;
#[cfg(target_os = "linux")]
mod x11;

use clap::Args;

#[cfg(target_os = "linux")]
use wire::Stats;
use wire::{Client, LIMIT, Row, Served, print_table, stats, time_ours};
#[cfg(target_os = "linux")]
use x11::{set_wallpaper, time_command, time_commands_once};

/// Arguments of `deskhand bench`.
#[derive(Debug, Args)]
pub struct BenchArgs {
    /// Desktop sizes to measure (X11: virtual desktops of these sizes;
    /// Windows measures the session's desktop as it is).
    #[arg(long, value_delimiter = ',', default_value = "1920x1080,3840x2160")]
    sizes: Vec<String>,
    /// Samples per deskhand measurement.
    #[arg(long, default_value_t = 40)]
    samples: usize,
    /// Samples per reference-tool measurement (they are slow).
    #[arg(long, default_value_t = 10)]
    peer_samples: usize,
    /// Measure this session's desktop as it is (a Wayland session: the
    /// portals ask the person first) instead of virtual X11 desktops
    /// (Windows always measures its session).
    #[arg(long)]
    session: bool,
}

/// Runs the benchmark. The daemon's side (engine and server) runs on
/// `daemon`, a runtime like `deskhand serve`'s; the agent's side on this
/// thread with a runtime of its own, as in an agent's process.
pub fn run(args: BenchArgs, daemon: tokio::runtime::Runtime) -> anyhow::Result<()> {
    if args.samples == 0 || args.peer_samples == 0 {
        anyhow::bail!("--samples and --peer-samples must be at least 1");
    }
    if args.session || cfg!(windows) {
        return session::run(args, daemon);
    }
    #[cfg(target_os = "linux")]
    {
        x11::run(args, daemon)
    }
    #[cfg(not(target_os = "linux"))]
    {
        anyhow::bail!("`deskhand bench` measures this session's desktop here: pass --session")
    }
}
