//! `deskhand bench`: measures deskhand over a real WebSocket client, as an
//! agent drives it, and prints one table with medians, p95s and (where a
//! reference tool exists) ratios. On X11 on a virtual desktop of its own
//! beside the reference tools (`x11.rs`); on Windows on the session's
//! desktop, in a notepad it starts (`windows.rs`).

#[cfg(target_os = "linux")]
mod a11y;
#[cfg(target_os = "linux")]
mod mcp;
#[cfg(target_os = "linux")]
mod pointer;
#[cfg(target_os = "linux")]
mod shot;
#[cfg(target_os = "linux")]
mod takeover;
#[cfg(target_os = "linux")]
mod typing;
#[cfg(windows)]
mod windows;
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
}

/// Runs the benchmark. The daemon's side (engine and server) runs on
/// `daemon`, a runtime like `deskhand serve`'s; the agent's side on this
/// thread with a runtime of its own, as in an agent's process.
pub fn run(args: BenchArgs, daemon: tokio::runtime::Runtime) -> anyhow::Result<()> {
    if args.samples == 0 || args.peer_samples == 0 {
        anyhow::bail!("--samples and --peer-samples must be at least 1");
    }
    #[cfg(target_os = "linux")]
    {
        x11::run(args, daemon)
    }
    #[cfg(windows)]
    {
        windows::run(args, daemon)
    }
}
