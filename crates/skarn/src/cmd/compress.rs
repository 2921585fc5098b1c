//! `skarn compress`: compress output captured elsewhere for an agent, losing
//! no diagnostic, and save the raw output for `skarn recall`.
//!
//! Also home of [`CompressOpts`] and [`run_compressed`], which `skarn run
//! --compress` uses to capture a command's interleaved output and print the
//! compressed text.

use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, ExitCode};
use std::time::Duration;

use anyhow::{Context, bail};
use skarn_compress::{Compressor, Outcome, Store, StoreConfig, capture, tokens};

/// Where raw output is kept for `skarn recall`, and for how long.
#[derive(Debug, Clone, clap::Args)]
pub struct StoreArgs {
    /// Directory for saved raw output [default: $XDG_STATE_HOME/skarn/recall,
    /// else ~/.local/state/skarn/recall]. Never inside the workspace.
    #[arg(long, env = "SKARN_RECALL_DIR", value_name = "DIR")]
    pub state_dir: Option<PathBuf>,
    /// Saved output older than this is pruned (e.g. 30m, 12h, 7d; a bare number is seconds).
    #[arg(long, default_value = "7d", value_name = "AGE", value_parser = parse_age)]
    pub max_age: Duration,
    /// Cap on one saved output (head and tail kept), e.g. 16M (a bare number is MiB).
    #[arg(long, default_value = "16M", value_name = "SIZE", value_parser = parse_size)]
    pub max_entry_size: u64,
    /// Cap on all saved output together (oldest pruned first), e.g. 256M (a bare number is MiB).
    #[arg(long, default_value = "256M", value_name = "SIZE", value_parser = parse_size)]
    pub max_store_size: u64,
}

impl StoreArgs {
    pub fn config(&self) -> anyhow::Result<StoreConfig> {
        let dir = match &self.state_dir {
            Some(d) if d.is_absolute() => d.clone(),
            Some(d) => std::env::current_dir()
                .context("resolving --state-dir")?
                .join(d),
            None => StoreConfig::default_dir()?,
        };
        Ok(StoreConfig {
            dir,
            max_age: self.max_age,
            max_entry_bytes: self.max_entry_size,
            max_total_bytes: self.max_store_size,
        })
    }

    /// Open the store for saving (checked against the current directory).
    pub fn open(&self) -> anyhow::Result<Store> {
        let cwd = std::env::current_dir().ok();
        Ok(Store::open(self.config()?, cwd.as_deref())?)
    }
}

/// Compression options shared by `skarn compress` and `skarn run --compress`.
#[derive(Debug, Clone, clap::Args)]
pub struct CompressOpts {
    /// Print token counts before/after (o200k_base), the profile and the
    /// recall handle on stderr.
    #[arg(long)]
    pub stats: bool,
    /// Use this profile instead of choosing one from the command line.
    #[arg(long, value_name = "NAME")]
    pub profile: Option<String>,
    /// User rules file laid over the built-in rules
    /// [default: $XDG_CONFIG_HOME/skarn/compress.toml or ~/.config/skarn/compress.toml, if present].
    #[arg(long, env = "SKARN_COMPRESS_RULES", value_name = "FILE")]
    pub rules: Option<PathBuf>,
    /// Output under this many tokens (estimated) passes unchanged.
    #[arg(long, default_value_t = skarn_compress::DEFAULT_SHORT_TOKENS, value_name = "N")]
    pub short_tokens: usize,
    /// Cap on output held in memory while capturing (head and tail kept);
    /// a bare number is MiB.
    #[arg(long, default_value = "64M", value_name = "SIZE", value_parser = parse_size)]
    pub max_capture: u64,
    #[command(flatten)]
    pub store: StoreArgs,
}

#[derive(Debug, clap::Args)]
#[command(
    after_help = "Example: cargo test 2>&1 | skarn compress --command 'cargo test' --exit-code ${PIPESTATUS[0]}\n\
Exit status: 0 when the text was printed, 2 on a usage, rules or I/O error."
)]
pub struct Args {
    /// The command line that produced the output (chooses the profile).
    #[arg(long, value_name = "CMD", default_value = "")]
    pub command: String,
    /// Exit status of that command (a failure keeps more of the tail).
    #[arg(long, value_name = "N", allow_negative_numbers = true)]
    pub exit_code: Option<i32>,
    /// Read the output from this file instead of stdin.
    #[arg(long, value_name = "FILE")]
    pub input: Option<PathBuf>,
    /// List the profiles (built-in and user) and exit.
    #[arg(long)]
    pub list_profiles: bool,
    #[command(flatten)]
    pub opts: CompressOpts,
}

/// A duration: "30m", "12h", "7d"; a bare number is seconds.
pub fn parse_age(s: &str) -> Result<Duration, String> {
    skarn_units::parse_duration(s, skarn_units::DurationUnit::Secs).map_err(|e| e.to_string())
}

/// A size: "64K", "16M", "1G"; a bare number is MiB.
pub fn parse_size(s: &str) -> Result<u64, String> {
    skarn_units::parse_size(s, skarn_units::SizeUnit::MiB).map_err(|e| e.to_string())
}

fn compressor(opts: &CompressOpts) -> anyhow::Result<Compressor> {
    let mut c = Compressor::with_user_rules(opts.rules.as_deref())?.short_tokens(opts.short_tokens);
    if let Some(name) = &opts.profile {
        c = match c.force_profile(name) {
            Some(c) => c,
            None => bail!("unknown profile {name:?} (see `skarn compress --list-profiles`)"),
        };
    }
    Ok(c)
}

/// Compress `raw` and print it (stdout), plus stats (stderr) if asked.
fn emit(
    c: &Compressor,
    raw: &[u8],
    command: &str,
    exit: Option<i32>,
    opts: &CompressOpts,
) -> anyhow::Result<Outcome> {
    let store = match opts.store.open() {
        Ok(s) => Some(s),
        Err(e) => {
            eprintln!("skarn: warning: raw output cannot be saved ({e:#}); printing it uncut");
            None
        }
    };
    let outcome = c.compress_recoverable(raw, command, exit, store.as_ref());
    if let Some(e) = &outcome.save_error
        && store.is_some()
    {
        eprintln!("skarn: warning: raw output cannot be saved ({e}); printing it uncut");
    }
    let mut out = std::io::stdout().lock();
    // The text goes to an agent's context or a terminal: no control
    // strings (clipboard writes, title reports) from the command.
    out.write_all(&skarn_sandbox::protect::terminal_filter::neutralise(
        outcome.text.as_bytes(),
    ))?;
    out.flush()?;
    if opts.stats {
        let before = tokens::count(&String::from_utf8_lossy(raw));
        let after = tokens::count(&outcome.text);
        let saved = if before > 0 {
            100.0 * (before.saturating_sub(after)) as f64 / before as f64
        } else {
            0.0
        };
        eprintln!(
            "skarn: tokens {before} -> {after} ({saved:.1}% saved, o200k_base), lines {} -> {}, profile {}, handle {}",
            outcome.raw_lines,
            outcome.kept_lines,
            outcome.profile,
            match &outcome.id {
                Some(id) => format!("`skarn recall {id}`"),
                None => "none (nothing cut)".to_string(),
            },
        );
    }
    Ok(outcome)
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let c = compressor(&args.opts)?;
    if args.list_profiles {
        for p in &c.rules().profiles {
            println!("{}", p.name);
        }
        return Ok(ExitCode::SUCCESS);
    }
    let limit = usize::try_from(args.opts.max_capture).unwrap_or(usize::MAX);
    let raw = match &args.input {
        Some(path) => {
            let f =
                std::fs::File::open(path).with_context(|| format!("opening {}", path.display()))?;
            capture::read_capped(f, limit).with_context(|| format!("reading {}", path.display()))?
        }
        None => capture::read_capped(std::io::stdin().lock(), limit).context("reading stdin")?,
    };
    emit(&c, &raw, &args.command, args.exit_code, &args.opts)?;
    Ok(ExitCode::SUCCESS)
}

/// The flags `skarn run` flattens in: `--compress` and two companions,
/// prefixed so they cannot clash with the sandbox's own flags. Everything
/// else (rules file, recall dir) comes from the environment or defaults.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct RunCompressArgs {
    /// Capture stdout+stderr (interleaved), print them compressed for an
    /// agent, and keep the raw output for `skarn recall`.
    #[arg(long)]
    pub compress: bool,
    /// With --compress: print token counts, profile and recall id on stderr.
    #[arg(long, requires = "compress")]
    pub compress_stats: bool,
    /// With --compress: use this compression profile.
    #[arg(long, requires = "compress", value_name = "NAME")]
    pub compress_profile: Option<String>,
}

impl RunCompressArgs {
    /// Full options: these flags plus defaults, `SKARN_COMPRESS_RULES` and
    /// `SKARN_RECALL_DIR` from the environment.
    pub fn opts(&self) -> CompressOpts {
        let env_path = |k: &str| {
            std::env::var_os(k)
                .filter(|v| !v.is_empty())
                .map(PathBuf::from)
        };
        CompressOpts {
            stats: self.compress_stats,
            profile: self.compress_profile.clone(),
            rules: env_path("SKARN_COMPRESS_RULES"),
            short_tokens: skarn_compress::DEFAULT_SHORT_TOKENS,
            max_capture: skarn_compress::capture::DEFAULT_MAX_CAPTURE as u64,
            store: StoreArgs {
                state_dir: env_path("SKARN_RECALL_DIR"),
                max_age: skarn_compress::store::DEFAULT_MAX_AGE,
                max_entry_size: skarn_compress::store::DEFAULT_MAX_ENTRY_BYTES,
                max_store_size: skarn_compress::store::DEFAULT_MAX_TOTAL_BYTES,
            },
        }
    }
}

/// For callers that capture output themselves (e.g. through the sandbox's
/// own spawner, with [`skarn_compress::capture::one_pipe`]): compress `raw`
/// and print it, stats on stderr if asked.
#[allow(dead_code)]
pub fn print_compressed(
    raw: &[u8],
    command_line: &str,
    exit_code: i32,
    opts: &CompressOpts,
) -> anyhow::Result<()> {
    let c = compressor(opts)?;
    emit(&c, raw, command_line, Some(exit_code), opts)?;
    Ok(())
}

/// For `skarn run --compress`: run `cmd` with stdout and stderr interleaved
/// on one pipe, print the compressed output, and return the command's exit
/// status (128 + signal when killed; 127 not found, 126 not executable, as
/// a shell would).
pub fn run_compressed(
    cmd: Command,
    command_line: &str,
    opts: &CompressOpts,
) -> anyhow::Result<ExitCode> {
    let c = compressor(opts)?;
    let max = usize::try_from(opts.max_capture).unwrap_or(usize::MAX);
    let cap = match capture::capture(cmd, max) {
        Ok(cap) => cap,
        Err(skarn_compress::CaptureError::Spawn { program, source }) => {
            eprintln!("skarn: {program}: {source}");
            let code = if source.kind() == std::io::ErrorKind::NotFound {
                127
            } else {
                126
            };
            return Ok(ExitCode::from(code));
        }
        Err(e) => return Err(e.into()),
    };
    let code = capture::exit_code(&cap.status);
    emit(&c, &cap.output, command_line, Some(code), opts)?;
    Ok(ExitCode::from(u8::try_from(code).unwrap_or(1)))
}

/// The argv as one command line for profile choice, quoting words that a
/// shell would split (`cargo test 'a b'`).
pub fn command_line(argv: &[std::ffi::OsString]) -> String {
    argv.iter()
        .map(|a| {
            let s = a.to_string_lossy();
            let plain = !s.is_empty()
                && s.chars()
                    .all(|c| c.is_ascii_alphanumeric() || "-_./=:+,@%^".contains(c));
            if plain {
                s.into_owned()
            } else {
                format!("'{}'", s.replace('\'', "'\\''"))
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}
