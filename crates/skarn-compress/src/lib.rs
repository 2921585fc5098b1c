//! skarn-compress: token-lean command output that never loses a diagnostic.
//!
//! Guarantees of [`Compressor::compress_recoverable`]:
//! - every line a profile marks as a diagnostic (errors, warnings and their
//!   locations, failing tests, assertion messages, panics, traceback frames
//!   and exception lines, `npm error` lines, rerun hints, final summaries)
//!   is printed verbatim (colour codes removed); repeated diagnostics are
//!   merged only by listing every location under one message, and a
//!   diagnostic that carries its own location is shown once even if the
//!   tool printed it twice;
//! - in every profile, panic lines and failure summaries (`thread '…'
//!   panicked at`, `FAILED…`, `test result: FAILED`, `error: test failed`)
//!   are kept, even inside a capped section, and so are the last 5
//!   non-blank lines of a failed command (inside a section only in
//!   profiles with `other = "drop"`); a kept line longer than 4096 bytes is cut to
//!   its first 2000 bytes and a marker rather than dropped or printed
//!   whole;
//! - noise is removed by the structure of the tool's output, never by bare
//!   words that also appear in summaries;
//! - output under the short threshold (about 400 tokens) passes unchanged,
//!   output never grows, and a successful command never comes back empty;
//! - whenever anything is cut, the raw output is saved in the recall store
//!   (outside the workspace) and the text ends with a one-line handle that
//!   `skarn recall ID` resolves; if saving fails, the raw output is returned.
//!
//! Profiles are data ([`rules`]): an embedded TOML file plus an optional user
//! file that adds or overrides profiles. [`capture`] runs a command with
//! stdout and stderr interleaved on one pipe.

pub mod capture;
mod command;
mod engine;
mod error;
pub mod lines;
mod listing;
mod private_fs;
pub mod rules;
pub mod store;
pub mod tokens;

use std::path::{Path, PathBuf};

pub use error::{CaptureError, RulesError, StoreError};
pub use rules::{Rules, RulesFile};
pub use store::{Store, StoreConfig};

/// Output shorter than this many (estimated) tokens passes unchanged.
pub const DEFAULT_SHORT_TOKENS: usize = 400;

/// Non-blank lines kept from the end of a failed command's output.
pub const FAILED_TAIL: usize = 5;

/// The compressor: compiled rules plus thresholds.
#[derive(Debug)]
pub struct Compressor {
    rules: Rules,
    short_tokens: usize,
    forced: Option<usize>,
}

/// Result of compressing without saving.
#[derive(Debug, Clone)]
pub struct Compressed {
    /// The text to show (the raw text, cleaned, if nothing was cut).
    pub text: String,
    /// Name of the profile used.
    pub profile: String,
    /// Whether anything was cut (if not, `text` is the raw output).
    pub changed: bool,
    pub raw_lines: usize,
    pub kept_lines: usize,
}

/// Result of compressing with the raw output saved for recall.
#[derive(Debug)]
pub struct Outcome {
    /// The text to show, ending with the handle line when anything was cut.
    pub text: String,
    pub profile: String,
    /// Recall id of the saved raw output, when anything was cut.
    pub id: Option<String>,
    /// Set when the raw output could not be saved; `text` is then the raw
    /// output, uncut.
    pub save_error: Option<StoreError>,
    pub raw_lines: usize,
    pub kept_lines: usize,
}

/// The config-dir path of the user rules file:
/// `$XDG_CONFIG_HOME/skarn/compress.toml` or `~/.config/skarn/compress.toml`.
pub fn default_user_rules_path() -> Option<PathBuf> {
    if let Some(x) = std::env::var_os("XDG_CONFIG_HOME").filter(|v| !v.is_empty()) {
        let p = PathBuf::from(x);
        if p.is_absolute() {
            return Some(p.join("skarn").join("compress.toml"));
        }
    }
    std::env::var_os("HOME")
        .filter(|v| !v.is_empty())
        .map(|h| PathBuf::from(h).join(".config/skarn/compress.toml"))
}

/// The handle line appended to compressed text.
pub fn handle_line(id: &str, raw_lines: usize, kept_lines: usize) -> String {
    format!("[skarn: kept {kept_lines} of {raw_lines} lines; full output: skarn recall {id}]")
}

impl Compressor {
    /// The embedded rules only.
    pub fn builtin() -> Self {
        Self::new(Rules::builtin().expect("embedded rules compile (checked by tests)"))
    }

    pub fn new(rules: Rules) -> Self {
        Self {
            rules,
            short_tokens: DEFAULT_SHORT_TOKENS,
            forced: None,
        }
    }

    /// The embedded rules with a user rules file laid over them. `path`
    /// `None` uses the default location, where a missing file is fine; an
    /// explicit path must exist.
    pub fn with_user_rules(path: Option<&Path>) -> Result<Self, RulesError> {
        let base = RulesFile::parse(rules::DEFAULT_RULES, "built-in rules")?;
        let merged = match path {
            Some(p) => base.merge(RulesFile::load(p)?),
            None => match default_user_rules_path() {
                Some(p) if p.is_file() => base.merge(RulesFile::load(&p)?),
                _ => base,
            },
        };
        Ok(Self::new(Rules::compile(merged)?))
    }

    /// Change the short-output threshold (in estimated tokens).
    pub fn short_tokens(mut self, n: usize) -> Self {
        self.short_tokens = n;
        self
    }

    /// Always use the profile `name` (None if there is no such profile).
    pub fn force_profile(mut self, name: &str) -> Option<Self> {
        self.forced = Some(self.rules.profiles.iter().position(|p| p.name == name)?);
        Some(self)
    }

    fn select(&self, command_line: &str) -> &rules::Profile {
        match self.forced {
            Some(i) => &self.rules.profiles[i],
            None => self.rules.select(command_line),
        }
    }

    /// The compiled rules.
    pub fn rules(&self) -> &Rules {
        &self.rules
    }

    /// Name of the profile chosen for a command line.
    pub fn profile_for(&self, command_line: &str) -> &str {
        &self.select(command_line).name
    }

    /// Compress `raw` (the interleaved output of `command_line`, which
    /// exited with `exit`). Does not save anything: callers that cut must
    /// use [`Compressor::compress_recoverable`].
    pub fn compress(&self, raw: &[u8], command_line: &str, exit: Option<i32>) -> Compressed {
        let profile = self.select(command_line);
        let text = String::from_utf8_lossy(raw);
        let lines = lines::clean(&text);
        let raw_lines = lines.len();
        let unchanged = |text: String| Compressed {
            text,
            profile: profile.name.clone(),
            changed: false,
            raw_lines,
            kept_lines: raw_lines,
        };
        if tokens::estimate(&text) < self.short_tokens {
            return unchanged(text.into_owned());
        }
        // A failed command keeps its last non-blank lines whatever the
        // rules say (an unforeseen error message is usually last), in every
        // profile; a profile that drops unknown lines keeps the last line
        // of a successful one. Inside a section (a passing test's captured
        // log, say) only profiles that drop unknown lines force them: the
        // others follow the section's rules there, which keep every panic
        // and failure summary anyway.
        let failed = exit.is_some_and(|c| c != 0);
        let mut forced = vec![false; lines.len()];
        let mut tail_n = match (profile.other, failed) {
            (_, true) => FAILED_TAIL,
            (rules::OtherMode::Drop, false) => 1,
            _ => 0,
        };
        for (i, l) in lines.iter().enumerate().rev() {
            if tail_n == 0 {
                break;
            }
            if !l.trim().is_empty() {
                forced[i] = true;
                tail_n -= 1;
            }
        }
        let in_sections = profile.other == rules::OtherMode::Drop;
        let res = engine::run(profile, &lines, forced, in_sections);
        let mut out = res.text;
        if out.trim().is_empty() {
            out = format!("ok, {raw_lines} lines of output omitted\n");
        }
        // Never grow, and do not bother for a marginal saving.
        if out.len() + 80 >= text.len() * 9 / 10 {
            return unchanged(text.into_owned());
        }
        Compressed {
            text: out,
            profile: profile.name.clone(),
            changed: true,
            raw_lines,
            kept_lines: res.kept_lines,
        }
    }

    /// Compress and, if anything was cut, save the raw output in `store` and
    /// end the text with the recall handle. Without a store, or if saving
    /// fails, nothing is cut.
    pub fn compress_recoverable(
        &self,
        raw: &[u8],
        command_line: &str,
        exit: Option<i32>,
        store: Option<&Store>,
    ) -> Outcome {
        let c = self.compress(raw, command_line, exit);
        let raw_text = || String::from_utf8_lossy(raw).into_owned();
        if !c.changed {
            return Outcome {
                text: c.text,
                profile: c.profile,
                id: None,
                save_error: None,
                raw_lines: c.raw_lines,
                kept_lines: c.kept_lines,
            };
        }
        let saved = match store {
            Some(s) => s.save(raw),
            None => Err(StoreError::NoStateDir),
        };
        match saved {
            Ok(id) => {
                let mut text = c.text;
                text.push_str(&handle_line(&id, c.raw_lines, c.kept_lines));
                text.push('\n');
                Outcome {
                    text,
                    profile: c.profile,
                    id: Some(id),
                    save_error: None,
                    raw_lines: c.raw_lines,
                    kept_lines: c.kept_lines,
                }
            }
            Err(e) => Outcome {
                text: raw_text(),
                profile: c.profile,
                id: None,
                save_error: Some(e),
                raw_lines: c.raw_lines,
                kept_lines: c.raw_lines,
            },
        }
    }
}
