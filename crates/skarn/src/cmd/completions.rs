//! `skarn completions SHELL`: print a completion script on stdout.

use std::process::ExitCode;

use clap::CommandFactory;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Shell to generate completions for.
    #[arg(value_enum)]
    pub shell: clap_complete::Shell,
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let mut cmd = crate::cli::Cli::command();
    clap_complete::generate(args.shell, &mut cmd, "skarn", &mut std::io::stdout());
    Ok(ExitCode::SUCCESS)
}
