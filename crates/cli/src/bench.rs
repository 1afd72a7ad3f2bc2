//! `deskhand bench` (filled in below).

use clap::Args;

/// Arguments of `deskhand bench`.
#[derive(Debug, Args)]
pub struct BenchArgs {}

pub async fn run(_args: BenchArgs) -> anyhow::Result<()> {
    anyhow::bail!("bench is not built yet")
}
