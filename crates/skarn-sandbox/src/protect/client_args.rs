//! What the agent's client was told on its command line to load (attack
//! atk24m F2, F8, F15; ADR 0287): Claude Code's `--plugin-dir DIR` (a
//! plugin's hooks, skills, agents, commands and the scripts they run),
//! `--settings FILE` (settings with hooks), `--mcp-config FILE...` (MCP
//! servers it starts) and `--add-dir DIR...` (whose `.claude` skills it
//! loads), and a relative `$CLAUDE_CONFIG_DIR` / `$CODEX_HOME` (resolved
//! against the client's working directory). Nothing in a hook's input or
//! the environment names them, but the client is an ancestor of the hook
//! and of every command it runs, so on Linux its command line and working
//! directory are read from `/proc` (a bounded walk up the parents).
//! `skarn run` keeps these places read-only and the hook's file guard
//! refuses writes to them ([`crate::protect::host_places::collect`]), so
//! the agent cannot plant what the next session runs on the host.
//! Elsewhere, or when `/proc` cannot be read, none are found (`skarn
//! doctor` and docs/hook.md say so).

use std::path::{Path, PathBuf};

/// How many ancestors are looked at (the tool's shell, the client, ...).
#[cfg(target_os = "linux")]
const MAX_DEPTH: usize = 8;

/// Most values taken from one variadic option.
const MAX_VALUES: usize = 32;

/// What a client's command line names.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct ClientArgs {
    /// `--plugin-dir` directories (each wholly loaded).
    pub plugin_dirs: Vec<PathBuf>,
    /// `--settings` files (a JSON text given inline is left out).
    pub settings: Vec<PathBuf>,
    /// `--mcp-config` files (inline JSON left out).
    pub mcp_configs: Vec<PathBuf>,
    /// `--add-dir` directories.
    pub add_dirs: Vec<PathBuf>,
    /// The ancestors' working directories (a relative configuration
    /// directory variable is resolved against each).
    pub cwds: Vec<PathBuf>,
}

/// The options read, and whether each takes several values.
const OPTIONS: &[(&str, bool)] = &[
    ("--plugin-dir", false),
    ("--settings", false),
    ("--mcp-config", true),
    ("--add-dir", true),
];

impl ClientArgs {
    /// Read one NUL-separated command line whose process runs in `cwd`.
    pub fn add_cmdline(&mut self, cmdline: &[u8], cwd: Option<&Path>) {
        let args: Vec<String> = cmdline
            .split(|b| *b == 0)
            .map(|a| String::from_utf8_lossy(a).into_owned())
            .collect();
        let mut i = 0;
        while i < args.len() {
            let a = &args[i];
            i += 1;
            let Some((opt, many, glued)) = OPTIONS.iter().find_map(|(o, many)| {
                if a == o {
                    Some((*o, *many, None))
                } else {
                    a.strip_prefix(o)
                        .and_then(|r| r.strip_prefix('='))
                        .map(|v| (*o, *many, Some(v.to_string())))
                }
            }) else {
                continue;
            };
            let mut values = Vec::new();
            match glued {
                Some(v) => values.push(v),
                None => {
                    while i < args.len() && !args[i].starts_with('-') {
                        values.push(args[i].clone());
                        i += 1;
                        if !many || values.len() >= MAX_VALUES {
                            break;
                        }
                    }
                }
            }
            for v in values {
                // Inline JSON (`--settings '{...}'`) is no file.
                if v.is_empty() || v.trim_start().starts_with('{') {
                    continue;
                }
                let p = PathBuf::from(&v);
                let p = match (p.is_absolute(), cwd) {
                    (true, _) => p,
                    (false, Some(c)) => c.join(p),
                    (false, None) => continue,
                };
                match opt {
                    "--plugin-dir" => self.plugin_dirs.push(p),
                    "--settings" => self.settings.push(p),
                    "--mcp-config" => self.mcp_configs.push(p),
                    _ => self.add_dirs.push(p),
                }
            }
        }
        if let Some(c) = cwd
            && !self.cwds.iter().any(|x| x == c)
        {
            self.cwds.push(c.to_path_buf());
        }
    }

    /// The places to keep from the agent: (path, a whole directory tree,
    /// how the client reaches it). `var` reads the caller's environment.
    pub fn places(&self, var: &dyn Fn(&str) -> Option<String>) -> Vec<(PathBuf, bool, String)> {
        let mut out = Vec::new();
        for d in &self.plugin_dirs {
            out.push((
                d.clone(),
                true,
                "a plugin directory the agent's client loads (--plugin-dir: its hooks run on \
                 the host)"
                    .into(),
            ));
        }
        for f in &self.settings {
            out.push((
                f.clone(),
                false,
                "a settings file the agent's client loads (--settings: its hooks run on the host)"
                    .into(),
            ));
        }
        for f in &self.mcp_configs {
            out.push((
                f.clone(),
                false,
                "an MCP configuration the agent's client loads (--mcp-config: it starts those \
                 servers on the host)"
                    .into(),
            ));
        }
        for d in &self.add_dirs {
            out.push((
                d.join(".claude"),
                true,
                "the .claude directory of a directory the agent's client adds (--add-dir: its \
                 skills' hooks run on the host)"
                    .into(),
            ));
        }
        for name in RELATIVE_DIRS {
            let Some(v) = var(name).filter(|v| !v.is_empty() && !Path::new(v).is_absolute()) else {
                continue;
            };
            for c in &self.cwds {
                out.push((
                    c.join(&v),
                    true,
                    format!(
                        "${name} (relative: the client resolves it against its working directory)"
                    ),
                ));
            }
        }
        out
    }
}

/// The clients' configuration directory variables a relative value of
/// which the client resolves against its own working directory.
pub const RELATIVE_DIRS: &[&str] = &["CLAUDE_CONFIG_DIR", "CODEX_HOME"];

/// The command lines of this process's ancestors.
#[cfg(target_os = "linux")]
pub fn from_parents() -> ClientArgs {
    let mut out = ClientArgs::default();
    let mut pid = std::process::id();
    if let Ok(c) = std::env::current_dir() {
        out.cwds.push(c);
    }
    for _ in 0..MAX_DEPTH {
        let Some(ppid) = parent(pid) else { break };
        if ppid <= 1 {
            break;
        }
        let cwd = std::fs::read_link(format!("/proc/{ppid}/cwd")).ok();
        if let Ok(cmdline) = std::fs::read(format!("/proc/{ppid}/cmdline")) {
            out.add_cmdline(&cmdline, cwd.as_deref());
        }
        pid = ppid;
    }
    out
}

/// Elsewhere none are found (docs/hook.md and `skarn doctor` say so);
/// the working directory still resolves a relative variable.
#[cfg(not(target_os = "linux"))]
pub fn from_parents() -> ClientArgs {
    let mut out = ClientArgs::default();
    if let Ok(c) = std::env::current_dir() {
        out.cwds.push(c);
    }
    out
}

/// Whether this system lets skarn read the client's command line.
pub const READS_PARENTS: bool = cfg!(target_os = "linux");

/// The parent of `pid` (`/proc/PID/stat`, the field after the command's
/// closing parenthesis).
#[cfg(target_os = "linux")]
fn parent(pid: u32) -> Option<u32> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let rest = &stat[stat.rfind(')')? + 1..];
    rest.split_whitespace().nth(1)?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_form_is_read() {
        let mut a = ClientArgs::default();
        a.add_cmdline(
            b"node\0/usr/bin/claude\0--plugin-dir\0/opt/p1\0--plugin-dir=rel/p2\0--settings\0\
              c/dev.json\0--settings={\"a\":1}\0--mcp-config\0m1.json\0/m2.json\0-p\0x\0\
              --add-dir=../lib\0",
            Some(Path::new("/w")),
        );
        assert_eq!(
            a.plugin_dirs,
            vec![PathBuf::from("/opt/p1"), PathBuf::from("/w/rel/p2")]
        );
        assert_eq!(a.settings, vec![PathBuf::from("/w/c/dev.json")]);
        assert_eq!(
            a.mcp_configs,
            vec![PathBuf::from("/w/m1.json"), PathBuf::from("/m2.json")]
        );
        assert_eq!(a.add_dirs, vec![PathBuf::from("/w/../lib")]);
        let var = |k: &str| (k == "CLAUDE_CONFIG_DIR").then(|| "cc2".to_string());
        let p = a.places(&var);
        assert!(p.iter().any(|(p, t, _)| *p == Path::new("/w/cc2") && *t));
        let mut b = ClientArgs::default();
        b.add_cmdline(b"claude\0--plugin-dir\0", None);
        assert!(b.plugin_dirs.is_empty());
    }
}
