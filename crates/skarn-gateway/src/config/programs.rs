//! Where an unconfined server's code comes from (ADR 0237): a trusted
//! file's server with `sandbox.enabled = false` runs unconfined only when
//! nothing it runs lies where a sandboxed command may write. Otherwise it
//! runs confined (`sandbox.enabled = true`, the file's other settings
//! kept) and stderr says why.
//!
//! A digest of the named files (ADR 0096) could not cover what an
//! interpreter loads beside them (a module next to the script, a new
//! `json.py` that shadows the standard one, `node_modules` up the tree) nor
//! a program planted in a `PATH` directory searched before the real one:
//! the place decides, not the content.
//!
//! Looked at, against the server's `cwd`, the gateway's directory and the
//! file's directory: the command (a bare name through the `PATH` the
//! server gets: every directory searched before the program is found, and
//! the program's own file); every argument that names an existing path,
//! or looks like a script (`./x`, `../x`, a script extension); the paths in
//! the variables that make an interpreter load code (`PYTHONPATH`,
//! `NODE_OPTIONS`, `LD_PRELOAD`, `HOME`, ...). A place a sandboxed command
//! may write is a directory with an ancestor (or itself) that `skarn run`
//! accepts as a workspace (`workspace_kind::non_project` is `None`).

use std::path::{Path, PathBuf};

use super::{Config, EnvValue, ServerTransport};

/// Variables whose values make an interpreter or the loader run code from
/// the paths they name.
const CODE_VARS: &[&str] = &[
    "PATH",
    "HOME",
    "PYTHONPATH",
    "PYTHONHOME",
    "PYTHONSTARTUP",
    "PYTHONUSERBASE",
    "NODE_PATH",
    "NODE_OPTIONS",
    "LD_PRELOAD",
    "LD_LIBRARY_PATH",
    "DYLD_INSERT_LIBRARIES",
    "DYLD_LIBRARY_PATH",
    "PERL5LIB",
    "PERL5OPT",
    "RUBYLIB",
    "RUBYOPT",
    "GEM_HOME",
    "GEM_PATH",
    "CLASSPATH",
    "BASH_ENV",
    "ENV",
];

/// Programs that load code from the directory they start in (a project's
/// `node_modules`, `pyproject.toml`, build files, import maps): run
/// unconfined there, the project decides what runs.
const CWD_RUNNERS: &[&str] = &[
    "npx", "pnpx", "bunx", "npm", "pnpm", "yarn", "bun", "deno", "uv", "poetry", "pipenv", "pdm",
    "hatch", "cargo", "go", "make", "just", "rake", "bundle", "composer", "mvn", "gradle",
    "dotnet",
];

/// Script extensions: an argument with one names a file the interpreter
/// runs, even before it exists.
const SCRIPT_EXT: &[&str] = &[
    "py", "pyc", "js", "mjs", "cjs", "ts", "mts", "rb", "pl", "pm", "php", "lua", "sh", "bash",
    "jar", "tcl", "r", "jl",
];

impl Config {
    /// Each enabled unconfined stdio server that runs code from a place a
    /// sandboxed command may write, with the reason; in alias order.
    pub fn unconfined_from_writable(&self) -> Vec<(String, String)> {
        let home = std::env::var_os("HOME")
            .map(PathBuf::from)
            .filter(|h| h.is_absolute());
        let file_dir = self
            .path
            .as_ref()
            .and_then(|p| std::path::absolute(p).ok())
            .and_then(|p| p.parent().map(Path::to_path_buf));
        let here = std::env::current_dir().ok();
        let mut out = Vec::new();
        for s in self.servers.iter().filter(|s| s.enabled) {
            let ServerTransport::Stdio {
                command,
                args,
                cwd,
                sandbox,
                env,
                ..
            } = &s.transport
            else {
                continue;
            };
            if sandbox.enabled != Some(false) {
                continue;
            }
            let cwd = cwd.as_ref().map(|c| match &here {
                Some(h) => h.join(c),
                None => c.clone(),
            });
            let bases: Vec<&Path> = [cwd.as_deref(), here.as_deref(), file_dir.as_deref()]
                .into_iter()
                .flatten()
                .collect();
            let value = |name: &str| -> Option<std::ffi::OsString> {
                match env.get(name) {
                    Some(EnvValue::Literal(v)) => Some(v.into()),
                    Some(EnvValue::FromEnv(f)) => std::env::var_os(&f.from_env),
                    Some(_) => None,
                    // Only the base variables reach the server.
                    None if crate::child_env::is_base(name) => std::env::var_os(name),
                    None => None,
                }
            };
            let w = Writable {
                home: home.as_deref(),
            };
            let start = cwd.as_deref().or(here.as_deref());
            let why = w
                .command(command, &bases, value("PATH").as_deref())
                .or_else(|| start.and_then(|d| w.start_dir(command, args, d)))
                .or_else(|| args.iter().find_map(|a| w.argument(a, &bases)))
                .or_else(|| w.script(command, args, &bases))
                .or_else(|| {
                    CODE_VARS.iter().filter(|v| **v != "PATH").find_map(|v| {
                        let val = value(v)?;
                        w.variable(v, &val.to_string_lossy(), &bases)
                    })
                })
                // Every variable the entry sets, whatever its name: a
                // search path (`PATH`, for the programs the server runs
                // too), a program (`GIT_SSH_COMMAND`, `PAGER`), a
                // configuration that names one (`GIT_CONFIG_GLOBAL`,
                // `JAVA_TOOL_OPTIONS`) (atk24o F8).
                .or_else(|| {
                    env.keys().find_map(|k| {
                        let val = value(k)?;
                        w.variable(k, &val.to_string_lossy(), &bases)
                    })
                });
            if let Some(why) = why {
                out.push((s.alias.clone(), why));
            }
        }
        out
    }

    /// Confine each trusted unconfined server whose code lies where a
    /// sandboxed command may write; one line per server for stderr.
    pub fn confine_writable_code(&mut self) -> Vec<String> {
        let found = self.unconfined_from_writable();
        let mut notes = Vec::new();
        for (alias, why) in found {
            if let Some(s) = self.servers.iter_mut().find(|s| s.alias == alias)
                && let ServerTransport::Stdio { sandbox, .. } = &mut s.transport
            {
                sandbox.enabled = Some(true);
                notes.push(format!(
                    "[servers.{alias}] sandbox.enabled = false is ignored: it runs confined, \
                     because {why}; a sandboxed command (the agent's) could change what it runs. \
                     Install it where no sandbox may write (a system directory, ~/.local) to run \
                     it unconfined"
                ));
            }
        }
        notes
    }
}

/// Options of the interpreters that take the next word as their value.
const VALUE_OPTS: &[&str] = &[
    "-r",
    "--require",
    "--import",
    "--loader",
    "--experimental-loader",
    "-C",
    "--conditions",
    "--env-file",
    "--input-type",
    "--title",
    "-W",
    "-X",
    "-Q",
    "-I",
    "-o",
    "-O",
];

/// Options whose value is the code itself, or a module found from the
/// start directory (judged by [`Writable::start_dir`]): no script word.
const INLINE_OPTS: &[&str] = &["-c", "-e", "-E", "-p", "-m", "--eval", "--print"];

/// The interpreter `command` (or `env`'s program) and its arguments,
/// when it is one that runs a script named by a word.
fn interpreter_of<'a>(command: &'a str, args: &'a [String]) -> Option<(&'a str, &'a [String])> {
    let mut name = Path::new(command).file_name()?.to_str()?;
    let mut rest = args;
    if name == "env" {
        let i = args
            .iter()
            .position(|a| !a.starts_with('-') && !a.contains('='))?;
        name = Path::new(&args[i]).file_name()?.to_str()?;
        rest = &args[i + 1..];
    }
    let base = name.trim_end_matches(|c: char| c.is_ascii_digit() || c == '.');
    let known = [
        "node", "nodejs", "python", "pypy", "ruby", "perl", "php", "lua", "luajit", "sh", "bash",
        "dash", "zsh", "ksh", "Rscript", "tclsh", "wish",
    ];
    known.contains(&base).then_some((name, rest))
}

struct Writable<'a> {
    home: Option<&'a Path>,
}

impl Writable<'_> {
    /// The directory holding `p` (or `p`, a directory) may be written by a
    /// sandboxed command: it or an ancestor may be a workspace. A missing
    /// path is judged by its nearest existing ancestor.
    fn place(&self, p: &Path) -> Option<PathBuf> {
        let mut at = std::path::absolute(p).ok()?;
        let real = loop {
            if let Ok(r) = std::fs::canonicalize(&at) {
                break r;
            }
            if !at.pop() {
                return None;
            }
        };
        let mut dir = if real.is_dir() {
            real.clone()
        } else {
            real.parent()?.to_path_buf()
        };
        loop {
            if skarn_sandbox::policy::workspace_kind::non_project(&dir, self.home).is_none() {
                return Some(dir);
            }
            if !dir.pop() {
                return None;
            }
        }
    }

    fn named(&self, what: &str, p: &Path) -> Option<String> {
        let d = self.place(p)?;
        Some(format!(
            "{what} {}, in {}, a directory a sandboxed command may write",
            p.display(),
            d.display()
        ))
    }

    fn command(
        &self,
        command: &str,
        bases: &[&Path],
        path: Option<&std::ffi::OsStr>,
    ) -> Option<String> {
        if command.contains('/') || Path::new(command).is_absolute() {
            return bases
                .iter()
                .find_map(|b| self.named("its program", &b.join(command)));
        }
        let path = path?;
        for d in std::env::split_paths(path) {
            if !d.is_absolute() {
                return Some(format!(
                    "its PATH has the relative entry {:?}: a program put in the directory it \
                     names would run in place of {command}",
                    d.display().to_string()
                ));
            }
            let f = d.join(command);
            if f.is_file() {
                return self.named("its program", &f);
            }
            if let Some(w) = self.place(&d) {
                return Some(format!(
                    "its PATH directory {} (searched before {command} is found) lies in {}, \
                     where a sandboxed command may write: a program put there would run in \
                     its place",
                    d.display(),
                    w.display()
                ));
            }
        }
        None
    }

    /// A program that loads code from its start directory `dir` (a
    /// package runner, a build tool, `python -m`/`-c`) started in a place
    /// a sandboxed command may write.
    fn start_dir(&self, command: &str, args: &[String], dir: &Path) -> Option<String> {
        let name = Path::new(command).file_name()?.to_str()?;
        let python = name.starts_with("python")
            && args.iter().take_while(|a| a.starts_with('-')).any(|a| {
                a == "-m"
                    || a == "-c"
                    || (a.starts_with('-') && !a.starts_with("--") && a.ends_with(['m', 'c']))
            });
        if !(CWD_RUNNERS.contains(&name) || python) {
            return None;
        }
        let w = self.place(dir)?;
        Some(format!(
            "{name} loads code from the directory it starts in ({}, in {}, a directory a \
             sandboxed command may write: a project's node_modules, build or package files)",
            dir.display(),
            w.display()
        ))
    }

    /// The script an interpreter runs (atk24u F6), judged as a path even
    /// when the word names nothing there: Node resolves `srv` to `srv.js`,
    /// `srv/index.js` or `srv/package.json`'s `main`, Python runs a
    /// directory's or zip's `__main__.py`, and a missing file in a place
    /// a sandboxed command may write can be created there.
    fn script(&self, command: &str, args: &[String], bases: &[&Path]) -> Option<String> {
        let (name, rest) = interpreter_of(command, args)?;
        let mut words = rest.iter();
        while let Some(a) = words.next() {
            if a == "--" {
                continue;
            }
            if a.starts_with('-') {
                if INLINE_OPTS.contains(&a.as_str()) {
                    return None;
                }
                if VALUE_OPTS.contains(&a.as_str()) {
                    words.next();
                }
                continue;
            }
            return bases
                .iter()
                .find_map(|b| self.named(&format!("the script {name} runs,"), &b.join(a)));
        }
        None
    }

    fn argument(&self, arg: &str, bases: &[&Path]) -> Option<String> {
        let v = match arg.split_once('=') {
            Some((k, v)) if k.starts_with('-') => v,
            _ if arg.starts_with('-') => return None,
            _ => arg,
        };
        if v.is_empty() || v.contains("://") {
            return None;
        }
        let scriptish = v.starts_with("./")
            || v.starts_with("../")
            || Path::new(v)
                .extension()
                .and_then(|e| e.to_str())
                .is_some_and(|e| SCRIPT_EXT.contains(&e.to_ascii_lowercase().as_str()));
        bases.iter().find_map(|b| {
            let p = b.join(v);
            if scriptish || std::fs::symlink_metadata(&p).is_ok() {
                self.named("its argument", &p)
            } else {
                None
            }
        })
    }

    /// A path `value` names (any part of it split at `:`, `;`, `=`,
    /// `,`, quotes and spaces that holds a `/` or starts with `~`; for a
    /// search path, whose name holds `PATH`, each `:` entry, an empty one
    /// meaning the start directory) in a place a sandboxed command may
    /// write.
    fn variable(&self, name: &str, value: &str, bases: &[&Path]) -> Option<String> {
        let search = name.to_ascii_uppercase().contains("PATH");
        let entries: Vec<&str> = if search {
            value
                .split(':')
                .map(|e| if e.is_empty() { "." } else { e })
                .collect()
        } else {
            value
                .split([':', ';', ' ', '=', ',', '"', '\'', '\t', '\n'])
                .filter(|p| p.contains('/') || p.starts_with('~'))
                .collect()
        };
        entries.into_iter().find_map(|part| {
            let part = match (part.strip_prefix("~/"), self.home) {
                (Some(rest), Some(h)) => h.join(rest),
                _ => PathBuf::from(part),
            };
            bases
                .iter()
                .find_map(|b| self.named(&format!("{name} names"), &b.join(&part)))
        })
    }
}

#[cfg(test)]
#[path = "programs_tests.rs"]
mod tests;
