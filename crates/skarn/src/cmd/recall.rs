//! `skarn recall`: print the full raw output saved under a compression
//! handle (the id at the end of compressed text).

use std::io::Write;
use std::process::ExitCode;
use std::time::SystemTime;

use anyhow::Context;
use skarn_compress::Store;

use crate::cmd::compress::StoreArgs;

#[derive(Debug, clap::Args)]
#[command(
    after_help = "Exit status: 0 when the output was printed, 2 for an invalid or unknown id."
)]
pub struct Args {
    /// The id from a "[skarn: ... skarn recall ID]" line.
    #[arg(value_name = "ID", required_unless_present = "list")]
    pub id: Option<String>,
    /// List saved outputs (id, size, age) instead.
    #[arg(long)]
    pub list: bool,
    #[command(flatten)]
    pub store: StoreArgs,
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    // Reading needs no workspace check: it never writes.
    let store = Store::open(args.store.config()?, None)?;
    if args.list {
        let _ = store.prune();
        let mut rows = Vec::new();
        for e in std::fs::read_dir(store.dir()).context("listing the recall directory")? {
            let Ok(e) = e else { continue };
            let name = e.file_name().to_string_lossy().into_owned();
            let Some(id) = name.strip_suffix(".log") else {
                continue;
            };
            if !skarn_compress::store::valid_id(id) {
                continue;
            }
            let Ok(meta) = e.metadata() else { continue };
            let age = meta
                .modified()
                .ok()
                .and_then(|m| SystemTime::now().duration_since(m).ok())
                .map(|d| d.as_secs())
                .unwrap_or(0);
            rows.push((age, id.to_string(), meta.len()));
        }
        rows.sort();
        for (age, id, len) in rows {
            println!("{id}  {len:>10} bytes  {}m ago", age / 60);
        }
        return Ok(ExitCode::SUCCESS);
    }
    let id = args.id.unwrap_or_default();
    let raw = store.load(id.trim())?;
    let mut out = std::io::stdout().lock();
    out.write_all(&raw)?;
    out.flush()?;
    Ok(ExitCode::SUCCESS)
}
