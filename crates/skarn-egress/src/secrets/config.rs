//! `[secrets.NAME]` in the user's configuration
//! (`~/.config/skarn/config.toml`; never a workspace file, which a cloned
//! repository could write) and the sources a value is read from.
//!
//! ```toml
//! [secrets.github]
//! from_env = "GITHUB_TOKEN"        # or file = "~/.config/gh/token",
//!                                  # or command = ["op", "read", "op://vault/gh/token"],
//!                                  # or keyring = { service = "gh", user = "me" }
//! hosts = ["api.github.com", "github.com"]
//! methods = ["GET", "POST"]        # optional: any method when absent
//! paths = ["/repos/me/*"]          # optional: any path when absent
//! header = "Authorization"         # optional: the only header that may carry it
//! env = "GITHUB_TOKEN"             # the variable inside (default: the from_env
//!                                  # variable, else NAME upper-cased)
//!
//! [run]
//! secrets = ["github"]             # granted to every run (or --secret NAME)
//! ```

use std::collections::BTreeMap;
use std::io::Read;
use std::path::{Path, PathBuf};

use serde::Deserialize;
use zeroize::Zeroizing;

use super::SecretSpec;

use super::command::run_command;
pub use super::command::{COMMAND_TIMEOUT, MAX_VALUE};
use super::source_view::SourceView;

/// A secret that cannot be configured or read. Never carries the value.
#[derive(Debug, thiserror::Error)]
pub enum SecretError {
    /// The configuration file is malformed.
    #[error("{path}: {msg}")]
    Config {
        /// File.
        path: String,
        /// What is wrong.
        msg: String,
    },
    /// A granted secret is not configured.
    #[error("secret {0:?} is not configured: add [secrets.{0}] to ~/.config/skarn/config.toml")]
    Unknown(String),
    /// The secret's settings are wrong.
    #[error("secret {name:?}: {msg}")]
    Invalid {
        /// Secret.
        name: String,
        /// What is wrong.
        msg: String,
    },
    /// The source could not be read.
    #[error("secret {name:?}: cannot read its value: {msg}")]
    Source {
        /// Secret.
        name: String,
        /// Why (never the value).
        msg: String,
    },
}

/// A keyring entry.
#[derive(Debug, Clone, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct KeyringRef {
    /// Service name.
    pub service: String,
    /// User (account) name.
    pub user: String,
}

/// One `[secrets.NAME]` table.
#[derive(Debug, Clone, Default, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct SecretConfig {
    /// Read from this variable of the caller's environment.
    pub from_env: Option<String>,
    /// Read from this file (`~/` = home); one trailing newline is dropped.
    pub file: Option<String>,
    /// Run this program (no shell) and take its standard output.
    pub command: Option<Vec<String>>,
    /// Read from the system keyring.
    pub keyring: Option<KeyringRef>,
    /// Host patterns the value may be sent to.
    #[serde(default)]
    pub hosts: Vec<String>,
    /// HTTP methods (empty: any).
    #[serde(default)]
    pub methods: Vec<String>,
    /// URL path globs (empty: any).
    #[serde(default)]
    pub paths: Vec<String>,
    /// The only request header that may carry it.
    pub header: Option<String>,
    /// The variable inside that holds the placeholder (default: the
    /// `from_env` variable, else the secret's name in capitals).
    pub env: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
struct Shape {
    #[serde(default)]
    secrets: BTreeMap<String, SecretConfig>,
    #[serde(default)]
    run: Option<toml::Table>,
}

/// The secrets part of the user's configuration.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SecretsConfig {
    /// `[secrets.NAME]` tables.
    pub secrets: BTreeMap<String, SecretConfig>,
    /// `[run] secrets`: granted to every run.
    pub run_secrets: Vec<String>,
}

impl SecretsConfig {
    /// Parse configuration text (`path` for messages).
    pub fn parse(text: &str, path: &str) -> Result<SecretsConfig, SecretError> {
        let err = |msg: String| SecretError::Config {
            path: path.to_string(),
            msg,
        };
        let s: Shape = toml::from_str(text).map_err(|e| err(e.message().to_string()))?;
        let run_secrets = match s.run.and_then(|r| r.get("secrets").cloned()) {
            Some(v) => v
                .try_into::<Vec<String>>()
                .map_err(|e| err(format!("[run] secrets: {}", e.message())))?,
            None => Vec::new(),
        };
        Ok(SecretsConfig {
            secrets: s.secrets,
            run_secrets,
        })
    }

    /// Load the user's file (absent: empty). Only a regular file of at
    /// most 1 MiB is read; it is opened without blocking, so a name that
    /// leads to a FIFO (a link a repository shipped) is an error, not a
    /// hang.
    pub fn load(path: &Path) -> Result<SecretsConfig, SecretError> {
        match read_config(path) {
            Ok(t) => SecretsConfig::parse(&t, &path.display().to_string()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(SecretsConfig::default()),
            Err(e) => Err(SecretError::Config {
                path: path.display().to_string(),
                msg: e.to_string(),
            }),
        }
    }

    /// Resolve the secrets named in `[run] secrets` and `extra` (flags),
    /// each once, in order.
    pub fn resolve_granted(
        &self,
        extra: &[String],
        home: Option<&Path>,
        view: &SourceView,
    ) -> Result<Vec<SecretSpec>, SecretError> {
        let mut names: Vec<&String> = Vec::new();
        for n in self.run_secrets.iter().chain(extra) {
            if !names.contains(&n) {
                names.push(n);
            }
        }
        let mut out: Vec<SecretSpec> = Vec::new();
        for n in names {
            let c = self
                .secrets
                .get(n)
                .ok_or_else(|| SecretError::Unknown(n.clone()))?;
            let s = resolve(n, c, home, view)?;
            super::command::keep_reads(n);
            if out.iter().any(|o| o.env == s.env) {
                return Err(SecretError::Invalid {
                    name: n.clone(),
                    msg: format!("another granted secret also sets {}", s.env),
                });
            }
            out.push(s);
        }
        Ok(out)
    }
}

fn valid_env_name(n: &str) -> bool {
    let mut c = n.chars();
    c.next()
        .is_some_and(|f| f.is_ascii_alphabetic() || f == '_')
        && c.all(|x| x.is_ascii_alphanumeric() || x == '_')
}

/// The variable a secret's placeholder goes into by default.
pub fn default_env(name: &str) -> String {
    name.to_ascii_uppercase().replace(['-', '.'], "_")
}

/// Check the settings, read the value, make the placeholder.
/// A `command` or `keyring` source is started as `view` says (ADR 0283).
pub fn resolve(
    name: &str,
    c: &SecretConfig,
    home: Option<&Path>,
    view: &SourceView,
) -> Result<SecretSpec, SecretError> {
    let invalid = |msg: &str| SecretError::Invalid {
        name: name.to_string(),
        msg: msg.to_string(),
    };
    if c.hosts.is_empty() {
        return Err(invalid("hosts is empty: say where it may be sent"));
    }
    for h in &c.hosts {
        crate::Pattern::parse(h).map_err(|e| invalid(&e.to_string()))?;
    }
    for p in &c.paths {
        super::PathGlob::parse(p).map_err(|e| invalid(&e))?;
    }
    if c.methods
        .iter()
        .any(|m| m.is_empty() || !m.bytes().all(|b| b.is_ascii_uppercase()))
    {
        return Err(invalid("methods are upper-case words (GET, POST, ...)"));
    }
    // A `from_env` source's placeholder goes into the variable the value
    // came from unless `env` says otherwise: the user's tools already read
    // it there (`_authToken=${NPM_TOKEN}`), as a gateway server's `env` key
    // gives it (atk27k F17).
    let env = c
        .env
        .clone()
        .or_else(|| c.from_env.clone())
        .unwrap_or_else(|| default_env(name));
    if !valid_env_name(&env) {
        return Err(invalid(&format!("{env:?} is not a variable name")));
    }
    let value = read_value(name, c, home, view)?;
    if value.bytes().any(|b| b < 0x20 || b == 0x7f) {
        return Err(invalid(
            "the value holds control characters (a line break would split a request)",
        ));
    }
    let placeholder = super::placeholder::make(&value).ok_or_else(|| {
        invalid(&format!(
            "the value is shorter than {} bytes: too short to stand in for",
            super::placeholder::MIN_LEN
        ))
    })?;
    Ok(SecretSpec {
        name: name.to_string(),
        env,
        placeholder,
        value,
        hosts: c.hosts.clone(),
        methods: c.methods.clone(),
        paths: c.paths.clone(),
        header: c.header.clone(),
    })
}

fn read_value(
    name: &str,
    c: &SecretConfig,
    home: Option<&Path>,
    view: &SourceView,
) -> Result<Zeroizing<String>, SecretError> {
    let fail = |msg: String| SecretError::Source {
        name: name.to_string(),
        msg,
    };
    let given = [
        c.from_env.is_some(),
        c.file.is_some(),
        c.command.is_some(),
        c.keyring.is_some(),
    ];
    if given.iter().filter(|g| **g).count() != 1 {
        return Err(SecretError::Invalid {
            name: name.to_string(),
            msg: "give exactly one source: from_env, file, command or keyring".into(),
        });
    }
    let raw: Zeroizing<String> = if let Some(v) = &c.from_env {
        Zeroizing::new(
            std::env::var(v).map_err(|_| fail(format!("environment variable {v} is not set")))?,
        )
    } else if let Some(f) = &c.file {
        // Relative to what? The caller's directory changes from run to
        // run, and a planted `rel/tok` there would become the secret
        // (atk27d F6): refused.
        if !(f.starts_with('/') || f.starts_with("~/")) {
            return Err(SecretError::Invalid {
                name: name.to_string(),
                msg: format!("file = {f:?}: give an absolute path or one starting with ~/"),
            });
        }
        let p = expand(f, home);
        read_file(&p).map_err(|e| fail(format!("{}: {e}", p.display())))?
    } else if let Some(cmd) = &c.command {
        // `~/` opening the program or an argument is the home, as the
        // checks of what the source runs read it (atk27l F9).
        let argv: Vec<String> = cmd
            .iter()
            .map(|w| match w.starts_with("~/") {
                true => expand(w, home).to_string_lossy().into_owned(),
                false => w.clone(),
            })
            .collect();
        run_command(&argv, view).map_err(fail)?
    } else if let Some(k) = &c.keyring {
        super::keyring::read(&k.service, &k.user, view).map_err(fail)?
    } else {
        return Err(fail("no source".into()));
    };
    let trimmed = raw.trim_end_matches(['\n', '\r']);
    if trimmed.is_empty() {
        return Err(fail("the value is empty".into()));
    }
    Ok(Zeroizing::new(trimmed.to_string()))
}

impl SecretConfig {
    /// The file the value is read from, if that is its source (`~/`
    /// expanded): hidden from sandboxed commands like the value itself.
    pub fn source_file(&self, home: Option<&Path>) -> Option<PathBuf> {
        self.file.as_deref().map(|f| expand(f, home))
    }
}

/// `~/` opening `f` expanded by `home_word`, the one expansion the run
/// and every check share (text joined: `~//x` is `<home>//x`, atk27m F1).
pub(super) fn expand(f: &str, home: Option<&Path>) -> PathBuf {
    match home {
        Some(h) if f.starts_with("~/") => {
            super::shell_word::home_word(f, h).unwrap_or_else(|| PathBuf::from(f))
        }
        _ => PathBuf::from(f),
    }
}

/// A `file` source's text, read as resolution reads it.
pub(super) fn read_source_file(p: &Path) -> std::io::Result<Zeroizing<String>> {
    read_file(p)
}

fn read_file(p: &Path) -> std::io::Result<Zeroizing<String>> {
    let f = std::fs::File::open(p)?;
    let mut buf = Zeroizing::new(Vec::new());
    f.take(MAX_VALUE as u64 + 1).read_to_end(&mut buf)?;
    if buf.len() > MAX_VALUE {
        return Err(std::io::Error::other("larger than 64 KiB"));
    }
    let s = std::str::from_utf8(&buf).map_err(|_| std::io::Error::other("not UTF-8"))?;
    Ok(Zeroizing::new(s.to_string()))
}

/// The text of the regular file `path` (at most 1 MiB), opened without
/// blocking.
fn read_config(path: &Path) -> std::io::Result<String> {
    use std::io::Read;
    const MAX: u64 = 1 << 20;
    let mut o = std::fs::OpenOptions::new();
    o.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        o.custom_flags(libc::O_NONBLOCK);
    }
    let f = o.open(path)?;
    let md = f.metadata()?;
    if !md.is_file() {
        return Err(std::io::Error::other("not a regular file"));
    }
    let mut text = String::new();
    f.take(MAX + 1).read_to_string(&mut text)?;
    if text.len() as u64 > MAX {
        return Err(std::io::Error::other("larger than 1 MiB"));
    }
    Ok(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_and_resolve_each_source() {
        let d = std::env::temp_dir().join(format!("skarn-sec-{}", std::process::id()));
        std::fs::create_dir_all(&d).unwrap();
        std::fs::write(d.join("tok"), "file-token-123456\n").unwrap();
        let text = r#"
[run]
secrets = ["f"]
net = "deny"
[secrets.f]
file = "~/tok"
hosts = ["api.test"]
[secrets.c]
command = ["printf", "cmd-token-123456"]
hosts = ["api.test"]
env = "C_TOK"
[secrets.bad]
file = "~/tok"
from_env = "X"
hosts = ["api.test"]
"#;
        let c = SecretsConfig::parse(text, "cfg").unwrap();
        assert_eq!(c.run_secrets, vec!["f".to_string()]);
        let got = c
            .resolve_granted(&["c".into(), "f".into()], Some(&d), &SourceView::direct())
            .unwrap();
        assert_eq!(got.len(), 2);
        assert_eq!(got[0].env, "F");
        assert_eq!(&got[0].value[..], "file-token-123456");
        assert_eq!(&got[1].value[..], "cmd-token-123456");
        assert_eq!(got[1].env, "C_TOK");
        let e = c
            .resolve_granted(&["bad".into()], Some(&d), &SourceView::direct())
            .unwrap_err();
        assert!(e.to_string().contains("exactly one source"), "{e}");
        let e = c
            .resolve_granted(&["nope".into()], Some(&d), &SourceView::direct())
            .unwrap_err();
        assert!(matches!(e, SecretError::Unknown(_)));
        std::fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn values_with_line_breaks_or_too_short_are_refused_without_showing_them() {
        let d = std::env::temp_dir().join(format!("skarn-sec2-{}", std::process::id()));
        std::fs::create_dir_all(&d).unwrap();
        std::fs::write(d.join("nl"), "abc-SECRETVALUE\r\nInjected: 1").unwrap();
        std::fs::write(d.join("short"), "abc").unwrap();
        for (f, why) in [("nl", "control"), ("short", "shorter")] {
            let c = SecretConfig {
                file: Some(d.join(f).display().to_string()),
                hosts: vec!["api.test".into()],
                ..Default::default()
            };
            let e = resolve("x", &c, None, &SourceView::direct())
                .unwrap_err()
                .to_string();
            assert!(e.contains(why), "{e}");
            assert!(!e.contains("SECRETVALUE"));
        }
        std::fs::remove_dir_all(&d).unwrap();
    }
}
