//! The app's log: tracing to stderr and to a file rolled daily in the
//! state directory (`logs/`, the last 7 kept). No telemetry, no update
//! check: nothing leaves the machine.

use tracing_appender::non_blocking::WorkerGuard;
use tracing_appender::rolling::{RollingFileAppender, Rotation};
use tracing_subscriber::fmt::writer::MakeWriterExt as _;

/// Installs the subscriber; the guard flushes the file when dropped.
pub fn init() -> anyhow::Result<WorkerGuard> {
    let dir = deskhand_host::files::state_dir().join("logs");
    deskhand_host::files::private_dir(&dir)?;
    let file = RollingFileAppender::builder()
        .rotation(Rotation::DAILY)
        .filename_prefix("deskhand-app")
        .filename_suffix("log")
        .max_log_files(7)
        .build(&dir)?;
    let (file, guard) = tracing_appender::non_blocking(file);
    let filter = tracing_subscriber::EnvFilter::try_from_env("DESKHAND_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(deskhand_host::DEFAULT_LOG_FILTER));
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_ansi(false)
        .with_writer(std::io::stderr.and(file))
        .init();
    tracing::info!(dir = %dir.display(), "logging to a file rolled daily");
    Ok(guard)
}
