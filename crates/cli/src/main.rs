//! `deskhand`: the headless host. It only wires the engine, a backend and
//! the server together.

mod audit_cmd;
#[cfg(any(target_os = "linux", windows))]
mod bench;
mod control;
mod doctor;
mod lines;
mod mcp;
mod mcp_config;
mod mcp_relay;
mod serve;

use clap::{Parser, Subcommand};

/// deskhand lets AI agents use a desktop while the person stays in charge.
#[derive(Debug, Parser)]
#[command(name = "deskhand", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

// Parsed once at start-up; the size difference does not matter.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Subcommand)]
enum Command {
    /// Serve the local port (WebSocket wire ops on /v1/ws, MCP on /mcp).
    Serve(serve::ServeArgs),
    /// Serve MCP on stdio (relayed to a daemon already serving the display).
    Mcp(mcp::McpArgs),
    /// Print the entry an MCP client needs to run `deskhand mcp`, or merge
    /// it into the client's config file.
    McpConfig(mcp_config::McpConfigArgs),
    /// Measure screenshot and input latency against reference tools (on
    /// virtual X11 desktops it starts).
    #[cfg(any(target_os = "linux", windows))]
    Bench(bench::BenchArgs),
    /// Read the audit log.
    Audit(audit_cmd::AuditArgs),
    /// Check what works here and what to fix.
    Doctor(doctor::DoctorArgs),
}

fn init_tracing() {
    let filter = tracing_subscriber::EnvFilter::try_from_env("DESKHAND_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(deskhand_host::DEFAULT_LOG_FILTER));
    use std::io::IsTerminal;
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_ansi(std::io::stderr().is_terminal())
        .with_writer(std::io::stderr)
        .init();
}

/// Keeps large buffers (captured bitmaps, PNGs, replies of several MiB) in the heap
/// instead of mapping fresh pages for each: glibc's default maps every
/// allocation over 128 KiB and unmaps it on free, so every screenshot reply
/// would fault its pages in again (`docs/performance.md`).
fn keep_large_buffers() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: mallopt only changes allocator tunables; called before any
    // other thread exists.
    unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, 256 << 20);
        libc::mallopt(libc::M_TRIM_THRESHOLD, 512 << 20);
    }
}

fn runtime() -> std::io::Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
}

fn main() -> anyhow::Result<()> {
    keep_large_buffers();
    let cli = Cli::parse();
    init_tracing();
    match cli.command {
        Command::Serve(args) => {
            let rt = runtime()?;
            let result = rt.block_on(serve::run(args));
            // The control pipe's reader blocks in read(2) on a thread of its
            // own: do not wait for it.
            rt.shutdown_background();
            result
        }
        Command::Mcp(args) => {
            let rt = runtime()?;
            let result = rt.block_on(mcp::run(args));
            rt.shutdown_background();
            result
        }
        #[cfg(any(target_os = "linux", windows))]
        Command::Bench(args) => bench::run(args, runtime()?),
        Command::McpConfig(args) => mcp_config::run(args),
        Command::Audit(args) => audit_cmd::run(args),
        Command::Doctor(args) => {
            let code = doctor::run(args)?;
            std::process::exit(code);
        }
    }
}
