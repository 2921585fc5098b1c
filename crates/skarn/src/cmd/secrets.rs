//! `skarn secrets`: the user's side of the secrets' exposure records
//! (ADR 0314): a secret a sandboxed command probed for (a piece of its
//! value in a request or in a file it could write) refuses every run
//! granted it until the user clears it here.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;

#[derive(Debug, clap::Args)]
#[command(
    after_help = "Records live in ~/.local/state/skarn/exposed, one file per secret and value \
(NAME.HASH), each saying what held a piece of the value and when; no sandboxed run can read \
or remove them. Before clearing, read the record, remove the piece, and rotate the secret \
unless you put it there yourself.\n\nExit status: 0 on success (also when there was nothing \
to clear), 2 for a usage error (no HOME)."
)]
pub struct Args {
    #[command(subcommand)]
    pub action: Action,
}

#[derive(Debug, clap::Subcommand)]
pub enum Action {
    /// Let runs be granted secret NAME again after it was recorded as exposed.
    ClearExposed {
        /// The secret's name (as in `[secrets.NAME]`).
        name: String,
    },
}

fn home() -> anyhow::Result<PathBuf> {
    std::env::var_os("HOME")
        .map(PathBuf::from)
        .filter(|h| h.is_absolute())
        .context("HOME is not set to an absolute path")
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    match args.action {
        Action::ClearExposed { name } => {
            let home = home()?;
            let gone = skarn_sandbox::secrets::exposed::clear(&home, &name)
                .context("cannot remove the exposure records")?;
            if gone.is_empty() {
                println!("secret {name}: no exposure record");
            }
            for g in gone {
                println!("secret {name}: removed {}", g.display());
            }
            Ok(ExitCode::SUCCESS)
        }
    }
}
