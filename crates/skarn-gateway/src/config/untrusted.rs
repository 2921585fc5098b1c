//! A configuration the user has not trusted (`skarn trust`, see
//! `skarn_sandbox::policy::trust`): a cloned repository's `skarn.toml` or one the
//! agent wrote. Its servers still run, but never unconfined and never with
//! more than the default server sandbox: `sandbox.enabled = false` becomes
//! required, grants, a network wider than `deny` and limits above the
//! defaults are dropped, variables copied from skarn's own environment
//! (`from_env`) and the user's secrets (`{ secret = ... }`) are not
//! passed, an HTTP server may not reach private
//! addresses nor get a token from skarn's environment (`auth`), `execute`
//! keeps its confined worker (`isolation = "in_process"` is ignored),
//! `[gateway] workspace` is ignored, and `[gateway]` bounds above the
//! defaults (Code Mode limits, timeouts, caps) are the defaults
//! (`untrusted_gateway`). Narrowing settings stay.

use skarn_sandbox::NetPolicy;
use skarn_sandbox::policy::Limits;

use super::{Config, EnvValue, ServerTransport};

impl Config {
    /// Load `path` as `skarn serve`, `skarn exec --config` and `skarn
    /// doctor` use it: when the user has not trusted its exact content
    /// (`skarn trust`, `$HOME`'s record), narrowed, with one warning text
    /// naming what was ignored.
    pub fn load_checked(
        path: &std::path::Path,
    ) -> Result<(Config, Option<String>), super::ConfigError> {
        let (mut cfg, text) = Config::load_text(path)?;
        let home = std::env::var_os("HOME")
            .map(std::path::PathBuf::from)
            .filter(|h| h.is_absolute());
        let store = skarn_sandbox::policy::trust::TrustStore::for_home(home.as_deref());
        if store.trusts(path, text.as_bytes()) {
            // Trusted, but an unconfined server whose code lies where a
            // sandboxed command may write runs confined (ADR 0237).
            let notes = cfg.confine_writable_code();
            if notes.is_empty() {
                return Ok((cfg, None));
            }
            let mut w = format!("{}: trusted, but:", path.display());
            for n in notes {
                w.push_str("\n  ");
                w.push_str(&n);
            }
            return Ok((cfg, Some(w)));
        }
        let notes = cfg.narrow_untrusted();
        if notes.is_empty() {
            return Ok((cfg, None));
        }
        let mut w = format!(
            "{} is not trusted: these settings are ignored until you check it and run \
             `skarn trust {}`:",
            path.display(),
            path.display()
        );
        for n in notes {
            w.push_str("\n  ");
            w.push_str(&n);
        }
        Ok((cfg, Some(w)))
    }

    /// Drop what widens; one line per server changed, naming what was
    /// ignored.
    pub fn narrow_untrusted(&mut self) -> Vec<String> {
        let mut notes = Vec::new();
        if self.gateway.workspace.take().is_some() {
            notes.push("[gateway] workspace (the run tool works in the file's directory)".into());
        }
        if self.gateway.isolation == skarn_worker::Isolation::InProcess {
            // In-process drops the confined worker, one of execute's two
            // layers.
            self.gateway.isolation = skarn_worker::Isolation::Auto;
            notes.push("[gateway] isolation = \"in_process\" (auto is used)".into());
        }
        notes.extend(super::untrusted_gateway::narrow(&mut self.gateway));
        let dir = self
            .path
            .as_ref()
            .and_then(|p| std::path::absolute(p).ok())
            .and_then(|p| p.parent().and_then(|d| std::fs::canonicalize(d).ok()));
        for s in &mut self.servers {
            let mut dropped: Vec<&str> = Vec::new();
            match &mut s.transport {
                ServerTransport::Stdio {
                    env, sandbox, cwd, ..
                } => {
                    // Its working directory is readable to it: only inside
                    // the file's own directory.
                    if let (Some(c), Some(d)) = (cwd.as_ref(), &dir)
                        && !std::fs::canonicalize(c).is_ok_and(|c| c.starts_with(d))
                    {
                        *cwd = None;
                        dropped.push("cwd outside the file's directory");
                    }
                    // What its arguments and installation grant: only
                    // inside the file's directory (or a real interpreter
                    // installation), never any file the file names.
                    sandbox.project_only =
                        Some(dir.clone().unwrap_or_else(|| "/nonexistent".into()));
                    if sandbox.enabled != Some(true) {
                        if sandbox.enabled == Some(false) {
                            dropped.push("sandbox.enabled = false");
                        }
                        sandbox.enabled = Some(true);
                    }
                    for (key, list) in [
                        ("sandbox.read", &mut sandbox.read),
                        ("sandbox.write", &mut sandbox.write),
                        ("sandbox.exec", &mut sandbox.exec),
                    ] {
                        if !list.is_empty() {
                            list.clear();
                            dropped.push(key);
                        }
                    }
                    if sandbox.net != NetPolicy::DenyAll {
                        sandbox.net = NetPolicy::DenyAll;
                        dropped.push("sandbox.net");
                    }
                    let d = Limits::default();
                    for (key, v, max) in [
                        ("sandbox.memory", &mut sandbox.memory_mb, d.memory_mb),
                        ("sandbox.max_procs", &mut sandbox.max_procs, d.max_procs),
                        (
                            "sandbox.max_file_size",
                            &mut sandbox.max_file_size_mb,
                            d.max_file_size_mb,
                        ),
                    ] {
                        if let (Some(n), Some(m)) = (*v, max)
                            && (n == 0 || n > m)
                        {
                            *v = None;
                            dropped.push(key);
                        }
                    }
                    let before = env.len();
                    env.retain(|_, v| !matches!(v, EnvValue::FromEnv(_)));
                    if env.len() != before {
                        dropped.push("env from_env");
                    }
                    // The user's secrets are granted by the user's files
                    // only: a repository's server would otherwise act with
                    // the user's credential on its bound hosts.
                    let before = env.len();
                    env.retain(|_, v| !matches!(v, EnvValue::Secret(_)));
                    if env.len() != before {
                        dropped.push("env secret");
                    }
                }
                ServerTransport::Http {
                    allow_private,
                    auth,
                    ..
                } => {
                    if *allow_private {
                        *allow_private = false;
                        dropped.push("allow_private");
                    }
                    // A token from skarn's environment, sent to a URL the
                    // file chose.
                    if auth.take().is_some() {
                        dropped.push("auth (bearer_env)");
                    }
                }
            }
            if !dropped.is_empty() {
                notes.push(format!("[servers.{}]: {}", s.alias, dropped.join(", ")));
            }
        }
        notes
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn everything_that_widens_is_dropped() {
        let text = r#"
[gateway]
workspace = "/"
isolation = "in_process"
[servers.a]
command = "sh"
env = { T = { from_env = "SECRET" }, G = { secret = "github" }, L = "x" }
[servers.a.sandbox]
enabled = false
write = ["/out"]
net = "all"
memory = "900G"
[servers.h]
url = "https://h.example/mcp"
auth = { bearer_env = "GH_TOKEN" }
allow_private = true
"#;
        let mut c = Config::parse(text, "skarn.toml").unwrap();
        let notes = c.narrow_untrusted().join("\n");
        for w in [
            "workspace",
            "in_process",
            "sandbox.enabled",
            "sandbox.write",
            "sandbox.net",
            "env secret",
        ] {
            assert!(notes.contains(w), "{w}: {notes}");
        }
        assert!(c.gateway.workspace.is_none());
        assert_eq!(c.gateway.isolation, skarn_worker::Isolation::Auto);
        let ServerTransport::Stdio { env, sandbox, .. } = &c.servers[0].transport else {
            panic!()
        };
        assert_eq!(sandbox.enabled, Some(true));
        assert!(sandbox.write.is_empty() && sandbox.net == NetPolicy::DenyAll);
        assert_eq!(sandbox.memory_mb, None);
        assert_eq!(env.len(), 1, "the literal stays");
        let ServerTransport::Http {
            auth,
            allow_private,
            ..
        } = &c.servers[1].transport
        else {
            panic!()
        };
        assert!(auth.is_none() && !allow_private);
    }
}
