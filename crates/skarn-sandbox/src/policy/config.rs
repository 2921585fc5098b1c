//! The `[run]` section of `skarn.toml` (workspace) and
//! `~/.config/skarn/config.toml` (user). Errors carry `file:line:column`.
//!
//! ```toml
//! [run]
//! read = ["~/datasets"]          # read-only
//! write = ["~/.cache/my-tool"]   # read-write
//! exec = ["~/tools"]             # read + execute
//! deny_read = [".env"]           # never readable (added to the secret list)
//! net = "deny"                   # deny | loopback | outbound | all | allow:HOST,...
//! allow_hosts = ["example.com"]  # with net allow (implied when net is not set)
//! deny_hosts = ["bad.example.com"]
//! preset = "auto"                # auto | none | rust | node | python, or a list
//! timeout = "10m"               # a bare number is seconds; 0 = none
//! memory = "4G"                  # per process; a bare number is MiB; 0 = none
//! max_procs = 512                # 0 = none
//! max_file_size = 1024           # a bare number is MiB; 0 = none
//! allow_env = ["MY_TOKEN"]
//! protect_persistence = true
//! fail_closed = true
//! private_home = true            # a private, writable, discarded $HOME
//! workspace_layer = "cow"         # the default, or "direct" (ADRs 0130, 0226)
//! walk_max_dirs = 200000         # walk of the writable grants before a run (ADR 0204)
//! state_keep = "1d"              # user file only: how long skarn's state keeps what killed runs left (ADR 0289)
//! scan_cache_max = "4MiB"        # user file only: one record of earlier scans at most; 0 = keep none (ADR 0317)
//! allow_home_workspace = false   # accept a workspace that holds $HOME
//! trust_home_config_workspace = false  # keep a workspace the home's configuration names writable
//! secrets = ["github"]           # user file only: see skarn_egress::secrets::config
//! ```

use std::path::{Path, PathBuf};

use serde::Deserialize;
use toml::Spanned;

pub use super::config_error::ConfigError;

/// One-or-many strings. (Located as a whole: `toml`'s spans do not pass
/// through an untagged enum, which made every `preset` value an error.)
#[derive(Debug, Clone, Deserialize)]
#[serde(untagged)]
pub enum OneOrMany {
    /// A single string.
    One(String),
    /// A list.
    Many(Vec<String>),
}

impl OneOrMany {
    /// The strings.
    pub fn to_vec(&self) -> Vec<String> {
        match self {
            OneOrMany::One(s) => vec![s.clone()],
            OneOrMany::Many(v) => v.clone(),
        }
    }
}

/// The `[run]` table.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RunSection {
    /// Read-only grants.
    #[serde(default)]
    pub read: Vec<Spanned<String>>,
    /// Read-write grants.
    #[serde(default)]
    pub write: Vec<Spanned<String>>,
    /// Read+exec grants.
    #[serde(default)]
    pub exec: Vec<Spanned<String>>,
    /// Secret paths.
    #[serde(default)]
    pub deny_read: Vec<Spanned<String>>,
    /// Network policy.
    pub net: Option<Spanned<String>>,
    /// Hosts reachable through the proxy (implies `net = "allow:..."`).
    #[serde(default)]
    pub allow_hosts: Vec<Spanned<String>>,
    /// Hosts never reachable (win over allowed ones).
    #[serde(default)]
    pub deny_hosts: Vec<Spanned<String>>,
    /// Presets.
    pub preset: Option<Spanned<OneOrMany>>,
    /// Timeout: a duration (bare number = seconds, whole seconds only).
    pub timeout: Option<Spanned<skarn_units::Value>>,
    /// Memory: a size (bare number = MiB, whole MiB only).
    pub memory: Option<Spanned<skarn_units::Value>>,
    /// Max processes.
    pub max_procs: Option<Spanned<u64>>,
    /// Max file size: a size (bare number = MiB, whole MiB only).
    pub max_file_size: Option<Spanned<skarn_units::Value>>,
    /// Secret-looking env vars to keep.
    #[serde(default)]
    pub allow_env: Vec<String>,
    /// Persistence protection.
    pub protect_persistence: Option<bool>,
    /// Fail closed.
    pub fail_closed: Option<bool>,
    /// Accept a workspace that holds the home directory.
    pub allow_home_workspace: Option<bool>,
    /// Keep a workspace writable although a home configuration file
    /// names it (the user's own file only).
    pub trust_home_config_workspace: Option<bool>,
    /// Private writable home (default true).
    pub private_home: Option<bool>,
    /// How the workspace is written: `direct` (default) or `cow`.
    pub workspace_layer: Option<Spanned<String>>,
    /// Directories the walk of the writable grants before a run reads at
    /// most (ADR 0204).
    pub walk_max_dirs: Option<Spanned<u64>>,
    /// How long records of killed runs over other workspaces stay in
    /// skarn's state (a duration; user file only, ADR 0289).
    pub state_keep: Option<Spanned<skarn_units::Value>>,
    /// Bytes of one record of earlier scans in skarn's state at most (a
    /// size, bare number = bytes; user file only, ADR 0317).
    pub scan_cache_max: Option<Spanned<skarn_units::Value>>,
    /// Secrets granted to every run (`[secrets.NAME]`, issue 27): read
    /// from the user's file only; a workspace file's list is ignored.
    #[serde(default)]
    pub secrets: Vec<String>,
}

#[derive(Debug, Deserialize)]
struct FileShape {
    run: Option<RunSection>,
    // Not `Spanned`: toml cannot span a table that only a dotted header
    // (`[secrets.github]` without `[secrets]`) creates.
    #[serde(flatten)]
    other: std::collections::BTreeMap<String, toml::Value>,
}

/// The first unknown top-level key of a configuration file, with the
/// error to give for it (`None` when every key is known).
pub fn unknown_top_level(
    keys: impl IntoIterator<Item = String>,
    text: &str,
) -> Option<(String, (usize, usize))> {
    let name = keys
        .into_iter()
        .find(|k| !KNOWN_TABLES.contains(&k.as_str()))?;
    // Where it is written: a `[name]`/`[name.x]`/`[[name]]` header or a
    // `name = ` / `name.x = ` line (first match; the start otherwise).
    let mut offset = 0;
    for line in text.split_inclusive('\n') {
        let t = line.trim_start().trim_start_matches('[').trim_start();
        let t = t.trim_start_matches('"');
        if let Some(rest) = t.strip_prefix(name.as_str())
            && rest.trim_start().starts_with(['.', ']', '=', '"'])
        {
            offset += line.len() - line.trim_start().len();
            return Some((name, line_col(text, offset)));
        }
        offset += line.len();
    }
    Some((name, (1, 1)))
}

/// The message for an unknown top-level key.
pub fn unknown_top_level_message(name: &str) -> String {
    format!(
        "unknown top-level key `{name}` (a Skarn configuration holds only {})",
        KNOWN_TABLES
            .iter()
            .map(|t| format!("[{t}]"))
            .collect::<Vec<_>>()
            .join(", ")
    )
}

/// The top-level tables a Skarn configuration file may hold; each is read
/// by its owner (`[run]` here, `[gateway]`/`[servers]` by the gateway,
/// `[secrets]` by the egress proxy, `[hook]` by `skarn hook`). Anything
/// else is a typo that would otherwise be ignored in silence.
pub(crate) const KNOWN_TABLES: &[&str] = &["run", "gateway", "servers", "secrets", "hook"];

/// A loaded `[run]` section plus what is needed to locate its values.
#[derive(Debug, Clone)]
pub struct RunConfig {
    /// Path of the file.
    pub path: PathBuf,
    /// Directory relative paths resolve against.
    pub base: PathBuf,
    /// File text (for line/column lookups).
    pub text: String,
    /// The section (default when absent).
    pub run: RunSection,
}

/// 1-based (line, column) of a byte offset.
pub fn line_col(text: &str, offset: usize) -> (usize, usize) {
    let offset = offset.min(text.len());
    let before = &text[..offset];
    let line = before.matches('\n').count() + 1;
    let col = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    (line, col)
}

pub use super::config_read::{MAX_CONFIG_FILE, read_text};

impl RunConfig {
    /// Load `path`; `Ok(None)` when it does not exist (see [`read_text`]).
    pub fn load(path: &Path, base: &Path) -> Result<Option<RunConfig>, ConfigError> {
        match read_text(path)? {
            Some(text) => RunConfig::parse(text, path, base).map(Some),
            None => Ok(None),
        }
    }

    /// Parse `text`, read from `path`.
    pub fn parse(text: String, path: &Path, base: &Path) -> Result<RunConfig, ConfigError> {
        let shape: FileShape = toml::from_str(&text).map_err(|e| {
            let (line, column) = e.span().map_or((1, 1), |s| line_col(&text, s.start));
            ConfigError::At {
                path: path.display().to_string(),
                line,
                column,
                msg: e.message().to_string(),
            }
        })?;
        if let Some((name, (line, column))) = unknown_top_level(shape.other.into_keys(), &text) {
            return Err(ConfigError::At {
                path: path.display().to_string(),
                line,
                column,
                msg: unknown_top_level_message(&name),
            });
        }
        Ok(RunConfig {
            path: path.to_path_buf(),
            base: base.to_path_buf(),
            run: shape.run.unwrap_or_default(),
            text,
        })
    }

    /// `file:line:column` of a spanned value.
    pub fn at(&self, span: std::ops::Range<usize>) -> String {
        let (l, c) = line_col(&self.text, span.start);
        format!("{}:{l}:{c}", self.path.display())
    }

    /// An error located at `span`.
    pub fn error(&self, span: std::ops::Range<usize>, msg: impl Into<String>) -> ConfigError {
        let (line, column) = line_col(&self.text, span.start);
        ConfigError::At {
            path: self.path.display().to_string(),
            line,
            column,
            msg: msg.into(),
        }
    }

    /// The `timeout`, `memory`, `max_procs` and `max_file_size` keys that
    /// are set, as (key, value in seconds or MiB or count, location).
    pub fn limits(&self) -> Result<Vec<(&'static str, u64, String)>, ConfigError> {
        let r = &self.run;
        let mut out = Vec::new();
        if let Some(v) = &r.timeout {
            let n = v
                .get_ref()
                .duration_secs()
                .map_err(|e| self.error(v.span(), format!("timeout: {e}")))?;
            out.push(("timeout", n, self.at(v.span())));
        }
        for (key, val) in [("memory", &r.memory), ("max_file_size", &r.max_file_size)] {
            if let Some(v) = val {
                let n = v
                    .get_ref()
                    .size_mib()
                    .map_err(|e| self.error(v.span(), format!("{key}: {e}")))?;
                out.push((key, n, self.at(v.span())));
            }
        }
        if let Some(v) = &r.max_procs {
            out.push(("max_procs", *v.get_ref(), self.at(v.span())));
        }
        Ok(out)
    }

    /// Resolve a configured path: `~/` is the home directory, relative
    /// paths are relative to the file's base directory.
    pub fn resolve(&self, raw: &str, home: Option<&Path>) -> PathBuf {
        expand_path(raw, &self.base, home)
    }
}

/// `~` expansion and base-relative resolution, lexically normalised.
pub fn expand_path(raw: &str, base: &Path, home: Option<&Path>) -> PathBuf {
    let p = if raw == "~" {
        home.map(Path::to_path_buf)
            .unwrap_or_else(|| PathBuf::from(raw))
    } else if let (Some(rest), Some(h)) = (raw.strip_prefix("~/"), home) {
        h.join(rest)
    } else {
        base.join(raw)
    };
    normalize(&p)
}

/// Remove `.` and resolve `..` lexically.
pub fn normalize(p: &Path) -> PathBuf {
    use std::path::Component;
    let mut out = PathBuf::new();
    for c in p.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            other => out.push(other),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errors_carry_line_and_column() {
        let tmp = skarn_test_support::TempDir::new("cfg");
        let d = tmp.path().to_path_buf();
        std::fs::create_dir_all(&d).unwrap();
        let f = d.join("skarn.toml");
        std::fs::write(&f, "[run]\nread = [\"a\"]\ntimeout = \"soon\"\n").unwrap();
        let c = RunConfig::load(&f, &d).unwrap().unwrap();
        let e = c.limits().unwrap_err().to_string();
        assert!(e.starts_with(&format!("{}:3:11:", f.display())), "{e}");
        assert!(e.contains("invalid duration"), "{e}");
        std::fs::write(&f, "[run]\nbogus = 1\n").unwrap();
        let e = RunConfig::load(&f, &d).unwrap_err().to_string();
        assert!(e.contains(":2:1:") && e.contains("bogus"), "{e}");
        std::fs::write(&f, "[serve]\nx = 1\n").unwrap();
        let e = RunConfig::load(&f, &d).unwrap_err().to_string();
        assert!(
            e.contains(":1:") && e.contains("unknown top-level key `serve`"),
            "{e}"
        );
        std::fs::write(&f, "[gateway]\nx = 1\n[run]\nread = [\"sub\", \"~/x\"]\n").unwrap();
        let c = RunConfig::load(&f, &d).unwrap().unwrap();
        assert_eq!(c.resolve("sub", Some(Path::new("/h"))), d.join("sub"));
        assert_eq!(
            c.resolve("~/x", Some(Path::new("/h"))),
            PathBuf::from("/h/x")
        );
        assert_eq!(c.at(c.run.read[1].span()), format!("{}:4:16", f.display()));
        std::fs::write(
            &f,
            "[run]\ntimeout = \"2m\"\nmemory = \"1G\"\nmax_file_size = 64\nmax_procs = 9\n",
        )
        .unwrap();
        let c = RunConfig::load(&f, &d).unwrap().unwrap();
        let l: Vec<_> = c
            .limits()
            .unwrap()
            .into_iter()
            .map(|(k, n, _)| (k, n))
            .collect();
        assert_eq!(
            l,
            [
                ("timeout", 120),
                ("memory", 1024),
                ("max_file_size", 64),
                ("max_procs", 9)
            ]
        );
        std::fs::write(&f, "[run]\nmemory = \"100K\"\n").unwrap();
        let c = RunConfig::load(&f, &d).unwrap().unwrap();
        let e = c.limits().unwrap_err().to_string();
        assert!(
            e.contains(":2:10: memory:") && e.contains("whole number of MiB"),
            "{e}"
        );
    }
}
