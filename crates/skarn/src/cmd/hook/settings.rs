//! What the hook does, from `[hook]` in `~/.config/skarn/config.toml` and
//! from flags (flags win; lists add up).
//!
//! ```toml
//! [hook]
//! decision = "allow"            # allow | ask | none
//! unsandboxed = ["git push", "docker*"]
//! guard_files = true            # refuse the agent's own file tools' writes
//!                               # to skarn's config, agent settings and
//!                               # persistence paths (see `files`)
//! file_boundary = true          # and writes outside the workspace and the
//!                               # [run] write grants (see `file_boundary`)
//! timeout = "20s"               # past this the call is blocked (exit 2)
//! allow_tools = ["mcp_docs_*"]  # tools you know neither write files nor
//!                               # run code, answered nothing instead of
//!                               # refused (unknown tools are refused)
//! edit_lease = "5m"             # how long a path the file guard allowed
//!                               # stays held from sandboxed runs when the
//!                               # client does not say it has written it
//! trusted_hooks = ["notify-send done"] # the agent's own hook commands,
//!                               # word for word, kept running unconfined
//!                               # (every other one runs inside skarn run
//!                               # or the hook refuses; ADR 0255)
//! codex_rewrite = false         # Codex releases that apply a hook's
//!                               # updatedInput: rewrite its commands
//!                               # instead of refusing (older releases run
//!                               # the original command on such an answer)
//! ```

use std::path::Path;

use anyhow::Context;
use serde::Deserialize;

/// The permission the hook gives a command it confined.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum Decision {
    /// Run it without asking: it runs confined under the configured policy.
    Allow,
    /// Ask the user (shown the rewritten command).
    Ask,
    /// Say nothing: the agent's own permission rules decide.
    None,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct HookSection {
    decision: Option<Decision>,
    #[serde(default)]
    unsandboxed: Vec<String>,
    guard_files: Option<bool>,
    file_boundary: Option<bool>,
    timeout: Option<skarn_units::Value>,
    #[serde(default)]
    allow_tools: Vec<String>,
    edit_lease: Option<skarn_units::Value>,
    #[serde(default)]
    trusted_hooks: Vec<String>,
    codex_rewrite: Option<bool>,
}

#[derive(Debug, Deserialize)]
struct FileShape {
    hook: Option<HookSection>,
}

/// The settings in force for one call.
#[derive(Debug, Clone)]
pub struct Settings {
    pub decision: Decision,
    pub unsandboxed: Vec<String>,
    /// Judge the agent's file-writing tools (default true).
    pub guard_files: bool,
    /// Refuse file tool writes outside what `skarn run` could write
    /// (default true; only with `guard_files`).
    pub file_boundary: bool,
    /// Past this the hook blocks the call (exit 2) whatever it was doing:
    /// the agents treat their own hook timeout as a non-blocking error, so
    /// the hook must give up first (default [`DEFAULT_TIMEOUT`]).
    pub timeout: std::time::Duration,
    /// Tool names (a trailing `*`: a prefix) the user allows although the
    /// hook does not know them; every other unknown tool is refused.
    pub allow_tools: Vec<String>,
    /// How long a write the file guard allowed keeps its path held from
    /// sandboxed runs, at most (ADR 0244; default [`DEFAULT_EDIT_LEASE`]):
    /// Claude Code's PostToolUse hook drops the lease as soon as the tool
    /// has written.
    pub edit_lease: std::time::Duration,
    /// The agent's hook commands the user keeps unconfined, word for word
    /// (ADR 0255); every other one must run inside `skarn run`.
    pub trusted_hooks: Vec<String>,
    /// Codex gets the confined command as `updatedInput` with `allow`
    /// instead of a refusal (default false: Codex releases before the
    /// rewrite took such an answer as invalid and ran the original
    /// command, unconfined).
    pub codex_rewrite: bool,
}

impl Settings {
    /// Whether the user allowed the tool `name` (`[hook] allow_tools`).
    pub fn allows_tool(&self, name: &str) -> bool {
        self.allow_tools.iter().any(|p| match p.strip_suffix('*') {
            Some(prefix) => name.starts_with(prefix),
            None => name == p,
        })
    }
}

/// The hook's own time limit: well below the agents' (60 s by default
/// for Claude Code and Gemini CLI, and what `skarn init` writes).
pub const DEFAULT_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(20);

/// How long an allowed file-tool write holds its path by default: long
/// enough for a user to read and approve the edit.
pub const DEFAULT_EDIT_LEASE: std::time::Duration = std::time::Duration::from_secs(300);

/// The longest lease the configuration may set (a day).
pub(crate) const MAX_EDIT_LEASE: std::time::Duration = std::time::Duration::from_secs(24 * 3600);

impl Settings {
    /// Defaults < `[hook]` in `file` (when given and present) < flags.
    pub fn load(
        file: Option<&Path>,
        decision: Option<Decision>,
        unsandboxed: &[String],
    ) -> anyhow::Result<Settings> {
        let mut s = Settings {
            decision: Decision::Allow,
            unsandboxed: Vec::new(),
            guard_files: true,
            file_boundary: true,
            timeout: DEFAULT_TIMEOUT,
            allow_tools: Vec::new(),
            edit_lease: DEFAULT_EDIT_LEASE,
            trusted_hooks: Vec::new(),
            codex_rewrite: false,
        };
        if let Some(f) = file {
            // A file with other names (hard links) may be written under one
            // of them where the agent's tools or commands can: its `[hook]`
            // section would switch the guard off (atk24j F8). `skarn run`
            // ignores such a file's `[run]`; the hook blocks until the user
            // removes the other names.
            if hard_linked(f) {
                anyhow::bail!(
                    "{} has other names (hard links), one of which may lie where the agent \
                     can write: the hook does not read it, and blocks every call until the \
                     other names are removed",
                    f.display()
                );
            }
            // Never blocks: a FIFO or device is an error (the hook then
            // blocks the call), not a hang past the client's timeout.
            match skarn_sandbox::policy::config::read_text(f) {
                Ok(Some(text)) => {
                    let shape: FileShape = toml::from_str(&text)
                        .with_context(|| format!("{}: [hook]", f.display()))?;
                    if let Some(h) = shape.hook {
                        if let Some(d) = h.decision {
                            s.decision = d;
                        }
                        s.unsandboxed = h.unsandboxed;
                        s.allow_tools = h.allow_tools;
                        // A line running the project's own code is not
                        // trusted (atk24t F3, ADR 0328): `skarn init` says so.
                        let here = std::env::current_dir().unwrap_or_default();
                        s.trusted_hooks = h
                            .trusted_hooks
                            .into_iter()
                            .filter(|l| {
                                skarn_sandbox::protect::trusted_lines::refusal(l, &here).is_none()
                            })
                            .collect();
                        s.codex_rewrite = h.codex_rewrite.unwrap_or(false);
                        if let Some(g) = h.guard_files {
                            s.guard_files = g;
                        }
                        if let Some(b) = h.file_boundary {
                            s.file_boundary = b;
                        }
                        if let Some(t) = h.edit_lease {
                            let d = t
                                .duration(skarn_units::DurationUnit::Secs)
                                .with_context(|| format!("{}: [hook] edit_lease", f.display()))?;
                            if d.is_zero() || d > MAX_EDIT_LEASE {
                                anyhow::bail!(
                                    "{}: [hook] edit_lease must be between 1 s and 24 h",
                                    f.display()
                                );
                            }
                            s.edit_lease = d;
                        }
                        if let Some(t) = h.timeout {
                            s.timeout = t
                                .duration(skarn_units::DurationUnit::Secs)
                                .with_context(|| format!("{}: [hook] timeout", f.display()))?;
                        }
                    }
                }
                Ok(None) => {}
                Err(e) => return Err(e).context("cannot read the hook settings"),
            }
        }
        if let Some(d) = decision {
            s.decision = d;
        }
        s.unsandboxed.extend(unsandboxed.iter().cloned());
        Ok(s)
    }
}

/// Whether `p` is a file with more than one name.
fn hard_linked(p: &Path) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.nlink() > 1)
    }
    #[cfg(not(unix))]
    {
        let _ = p;
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_then_flags() {
        let d = tempfile::tempdir().unwrap();
        let f = d.path().join("config.toml");
        std::fs::write(
            &f,
            "[run]\nnet = \"deny\"\n[hook]\ndecision = \"ask\"\nunsandboxed = [\"git\"]\n",
        )
        .unwrap();
        let s = Settings::load(Some(&f), None, &["make".into()]).unwrap();
        assert_eq!(s.decision, Decision::Ask);
        assert_eq!(s.unsandboxed, ["git", "make"]);
        let s = Settings::load(Some(&f), Some(Decision::None), &[]).unwrap();
        assert_eq!(s.decision, Decision::None);
        std::fs::write(&f, "[hook]\ndecision = \"maybe\"\n").unwrap();
        let e = format!("{:#}", Settings::load(Some(&f), None, &[]).unwrap_err());
        assert!(e.contains("maybe"), "{e}");
        let s = Settings::load(Some(&d.path().join("none.toml")), None, &[]).unwrap();
        assert_eq!(s.decision, Decision::Allow);
    }
}
