//! `skarn cache`: inspect and clear the workspaces' stores, where what
//! sandboxed runs fetch into the toolchains' caches is kept for the next
//! run in the same workspace (ADR 0175).

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context;
use skarn_sandbox::linux::store;
use skarn_sandbox::{Workspace, WorkspaceRoot};

/// Exit status when a store is in use by a running `skarn run`.
const EXIT_IN_USE: u8 = 3;

#[derive(Debug, clap::Args)]
#[command(
    after_help = "Stores live in ~/.local/state/skarn/store, one per workspace (keyed by \
its canonical path), owner-only; no host tool reads them.\n\nExit status: 0 on success \
(also when there was nothing to clear), 2 for a usage error (no HOME, a workspace that does \
not exist, clear without --workspace or --all), 3 when a store is in use by a running \
`skarn run` (nothing of it was removed)."
)]
pub struct Args {
    #[command(subcommand)]
    pub action: Action,
}

#[derive(Debug, clap::Subcommand)]
pub enum Action {
    /// List the stores: workspace, size, caches, and whether a run holds it.
    List {
        /// Only this workspace's store.
        #[arg(long, value_name = "DIR")]
        workspace: Option<PathBuf>,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Remove a workspace's store (its next run fetches again), or all.
    Clear {
        /// The workspace whose store to remove (as `skarn run --workspace
        /// DIR` names it).
        #[arg(long, value_name = "DIR", required_unless_present = "all")]
        workspace: Option<PathBuf>,
        /// Remove every store, also those of workspaces that are gone.
        #[arg(long, conflicts_with = "workspace")]
        all: bool,
    },
}

fn home() -> anyhow::Result<PathBuf> {
    std::env::var_os("HOME")
        .map(PathBuf::from)
        .filter(|h| h.is_absolute())
        .context("HOME is not set to an absolute path")
}

/// The store of the workspace `dir` names, as `skarn run` keys it.
fn store_of(home: &Path, dir: &Path) -> anyhow::Result<(PathBuf, PathBuf)> {
    let cwd = std::env::current_dir().context("current directory")?;
    let ws = Workspace::resolve(Some(dir), WorkspaceRoot::Repo, &cwd, Some(home))
        .map_err(|e| anyhow::anyhow!("{e}"))?;
    Ok((store::dir_for(home, &ws.path), ws.path))
}

fn human(b: u64) -> String {
    match b {
        b if b >= 1 << 30 => format!("{:.1} GiB", b as f64 / (1u64 << 30) as f64),
        b if b >= 1 << 20 => format!("{:.1} MiB", b as f64 / (1u64 << 20) as f64),
        b => format!("{:.1} KiB", b as f64 / 1024.0),
    }
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let home = home()?;
    match args.action {
        Action::List { workspace, json } => {
            let mut all = store::list(&home);
            if let Some(w) = workspace {
                let (dir, _) = store_of(&home, &w)?;
                all.retain(|e| e.dir == dir);
            }
            if json {
                println!("{}", serde_json::to_string_pretty(&all)?);
                return Ok(ExitCode::SUCCESS);
            }
            if all.is_empty() {
                eprintln!("skarn: no store under {}", store::root(&home).display());
            }
            for e in all {
                let ws = e
                    .workspace
                    .as_ref()
                    .map_or("(unknown workspace)".into(), |w| w.display().to_string());
                println!(
                    "{ws}{}{}  {}  {}",
                    if e.workspace_exists { "" } else { " (gone)" },
                    if e.in_use { " (in use)" } else { "" },
                    human(e.bytes),
                    e.dir.display()
                );
                for (c, b) in e.caches.iter().filter(|(_, b)| *b > 0) {
                    println!("    {}  {}", c.display(), human(*b));
                }
            }
            Ok(ExitCode::SUCCESS)
        }
        Action::Clear { workspace, all } => {
            let dirs: Vec<(PathBuf, String)> = if all {
                store::list(&home)
                    .into_iter()
                    .map(|e| {
                        let name = e
                            .workspace
                            .map_or("(unknown workspace)".into(), |w| w.display().to_string());
                        (e.dir, name)
                    })
                    .collect()
            } else {
                let w = workspace.context("--workspace DIR or --all")?;
                let (dir, ws) = store_of(&home, &w)?;
                vec![(dir, ws.display().to_string())]
            };
            let mut busy = false;
            for (dir, ws) in dirs {
                let existed = dir.exists();
                match store::clear(&dir) {
                    Ok(()) if existed => eprintln!("skarn: cleared the store of {ws}"),
                    Ok(()) => eprintln!("skarn: {ws} has no store"),
                    Err(e @ store::StoreError::InUse(_)) => {
                        eprintln!("skarn: error: {e}; not cleared");
                        busy = true;
                    }
                    Err(e) => return Err(e.into()),
                }
            }
            Ok(if busy {
                ExitCode::from(EXIT_IN_USE)
            } else {
                ExitCode::SUCCESS
            })
        }
    }
}
