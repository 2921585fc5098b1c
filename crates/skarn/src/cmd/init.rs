//! `skarn init` (skeleton; built by its issue).

use std::process::ExitCode;

#[derive(Debug, clap::Args)]
pub struct Args {}

pub fn run(_args: Args) -> anyhow::Result<ExitCode> {
    anyhow::bail!("`skarn init` is not built yet")
}
