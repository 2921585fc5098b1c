//! What the configured secrets make skarn run or read on the host
//! (attack atk27d F5, F6): kept read-only, or reserved, inside the
//! writable grants of every run and sandboxed server.

use std::path::{Path, PathBuf};

use super::config::{SecretConfig, SecretsConfig, expand};
use super::shell_word::expand_word;

impl SecretsConfig {
    /// What the configured secrets (granted or not) make skarn run or read
    /// on the host, as (path, why, secret): each `command` source's
    /// program and scripts ([`SecretConfig::command_files`]) and each
    /// absolute `file` source that does not exist yet (to be reserved: a
    /// link planted there would make another file the secret, atk27d F6).
    pub fn host_places(&self, home: Option<&Path>) -> Vec<(PathBuf, String, bool)> {
        let mut out = Vec::new();
        for (name, s) in &self.secrets {
            for p in s.command_files(home) {
                let why = format!("the command of secret {name} (run on the host)");
                out.push((p, why, false));
            }
            // Every absolute `file` source, existing or not: hidden in
            // every run, a missing one reserved, and the links on the way
            // to it kept read-only inside writable grants (a re-pointed
            // link would unhide the old file and make another one the
            // secret, atk27j F5).
            if let Some(f) = s.source_file(home)
                && f.is_absolute()
            {
                let why = if std::fs::symlink_metadata(&f).is_err() {
                    format!("the file source of secret {name} (not created yet)")
                } else {
                    format!("the file source of secret {name}")
                };
                // Copies of the value beside it (an editor's `tok~`,
                // `tok.bak`): hidden in every run too (atk27j F6).
                for c in super::known::copies_beside(s, &f, home) {
                    let why = format!("a copy of secret {name}'s file source");
                    out.push((c, why, true));
                }
                out.push((f, why, true));
            }
            // The files a `command` source reads its value from: hidden in
            // every run, granted that secret or not, like a `file` source
            // (atk27j F6).
            for p in s.command_value_files(home) {
                let why = format!("a file the command of secret {name} names");
                out.push((p, why, true));
            }
        }
        out
    }
}

impl SecretsConfig {
    /// Where the configured secrets' values are read from on the host
    /// (atk27g F3): each `file` source, and every file a `command` source
    /// names (an argument, or a word of an argument a shell is given:
    /// `sh -c "cat /path/tok"`). The run looks at these and the files
    /// next to them (an editor's `tok~`) for the value.
    pub fn value_places(&self, home: Option<&Path>) -> Vec<PathBuf> {
        let mut out = Vec::new();
        for s in self.secrets.values() {
            out.extend(s.source_file(home));
            // Not the system's programs and libraries a source names
            // (`env /bin/sh -c ...`): hiding those, or what lies beside
            // them, would break every run, and they hold no value
            // (atk27n F3). A file under `/etc` still counts.
            out.extend(s.command_named_files(home).into_iter().filter(|p| {
                let real = std::fs::canonicalize(p).unwrap_or_else(|_| p.clone());
                [&real, p]
                    .iter()
                    .all(|q| !is_system_place(q) || q.starts_with("/etc"))
            }));
        }
        out.sort();
        out.dedup();
        out
    }
}

impl SecretConfig {
    /// Every existing file a `command` source's arguments name (absolute
    /// or `~/`, also a word of an argument a shell is given: `sh -c "cat
    /// /path/tok"`).
    fn command_named_files(&self, home: Option<&Path>) -> Vec<PathBuf> {
        let mut out = Vec::new();
        for a in self.command.iter().flatten().skip(1) {
            let words = a.split(|c: char| {
                c.is_whitespace()
                    || matches!(
                        c,
                        '"' | '\'' | ';' | '|' | '&' | '<' | '>' | '(' | ')' | '=' | '`'
                    )
            });
            // `$HOME/...`, `${VAR}/...` as the shell reads them (atk27k F2).
            for p in words.filter_map(|w| expand_word(w, home)) {
                let p = PathBuf::from(p);
                if p.is_absolute() && p.is_file() {
                    out.push(p);
                }
            }
        }
        // As the shell reads them: quoted, after a `cd` (atk27l F4b).
        let args = self.command.as_deref().unwrap_or_default();
        for p in super::shell_paths::reached(args.get(1..).unwrap_or_default(), home) {
            if p.is_file() {
                out.push(p);
            }
        }
        out
    }

    /// The files a `command` source reads its value from, to hide in
    /// every run ([`Self::command_named_files`]), without the system's
    /// programs and libraries (`sh -c "/usr/bin/op read ..."`): hiding
    /// those would break every run, and they hold no value.
    pub fn command_value_files(&self, home: Option<&Path>) -> Vec<PathBuf> {
        let mut out: Vec<PathBuf> = self
            .command_named_files(home)
            .into_iter()
            .filter(|p| {
                let real = std::fs::canonicalize(p).unwrap_or_else(|_| p.clone());
                !is_system_place(&real) && !is_system_place(p)
            })
            .collect();
        out.sort();
        out.dedup();
        out
    }
}

/// Whether `p` lies in the system's program and library directories.
fn is_system_place(p: &Path) -> bool {
    const SYSTEM: &[&str] = &[
        "/usr",
        "/bin",
        "/sbin",
        "/lib",
        "/lib32",
        "/lib64",
        "/libx32",
        "/nix/store",
        "/etc",
        "/proc",
        "/sys",
        "/dev",
    ];
    SYSTEM.iter().any(|d| p.starts_with(d))
}

impl SecretConfig {
    /// The files a `command` source runs, as far as can be known: its
    /// program (a bare name found through the caller's `PATH`, a relative
    /// one from the current directory) and every argument naming a file
    /// (absolute, `~/`, or an existing relative file: a script an
    /// interpreter is given, also after `=` in an option). A sandboxed
    /// command that could rewrite one would run code on the host at the
    /// next resolution (atk27d F5): the planner keeps them read-only.
    pub fn command_files(&self, home: Option<&Path>) -> Vec<PathBuf> {
        let Some((prog, args)) = self.command.as_deref().and_then(|c| c.split_first()) else {
            return Vec::new();
        };
        let cwd = std::env::current_dir().ok();
        let mut out = Vec::new();
        if prog.contains('/') {
            out.extend(absolute(&expand(prog, home), cwd.as_deref()));
        } else if let Some(path) = std::env::var_os("PATH") {
            let found = std::env::split_paths(&path)
                .filter_map(|d| absolute(&d.join(prog), cwd.as_deref()))
                .find(|p| p.is_file());
            out.extend(found);
        }
        for a in args {
            for part in std::iter::once(a.as_str()).chain(a.split_once('=').map(|(_, v)| v)) {
                if part.is_empty() || part.contains("://") {
                    continue;
                }
                let Some(p) = expand_word(part, home).map(PathBuf::from) else {
                    continue;
                };
                // A directory is no program (a `--dir` option's value).
                if p.is_dir() {
                    continue;
                }
                if p.is_absolute() || (part.contains('/') || p.is_file()) && p.exists() {
                    out.extend(absolute(&p, cwd.as_deref()));
                }
            }
        }
        // As the shell reads them: quoted, after a `cd` (atk27l F4c, F5).
        for p in super::shell_paths::reached(args, home) {
            if p.is_file() {
                out.push(p);
            }
        }
        out.sort();
        out.dedup();
        out
    }
}

impl SecretConfig {
    /// What a `command` source depends on, for the check that none lies
    /// where a sandboxed run may write (atk27j F10, F11): its program as
    /// found (and, for a bare name, every `PATH` directory looked in
    /// before it is found), and every word of its arguments that names an
    /// existing file or directory (absolute, `~/`, or relative to `/`,
    /// where the source runs), also words of a shell string (`sh -c
    /// "python3 /p/get.py"`) and after `=`.
    pub fn command_depends(&self, home: Option<&Path>) -> CommandDepends {
        let mut d = CommandDepends::default();
        let Some((prog, args)) = self.command.as_deref().and_then(|c| c.split_first()) else {
            return d;
        };
        let cwd = std::env::current_dir().ok();
        if prog.contains('/') {
            d.paths
                .extend(absolute(&expand(prog, home), cwd.as_deref()));
        } else {
            d.path_lookup(prog, cwd.as_deref());
        }
        // The interpreter the program's `#!` line names (a project's
        // virtual environment, whose modules a run may change) runs for it
        // on the host too (atk27k F16); `#!/usr/bin/env NAME` looks NAME
        // up on `PATH`.
        if let Some(prog) = d.paths.first().cloned()
            && let Some(words) = shebang(&prog)
        {
            let mut words = words.into_iter();
            if let Some(interp) = words.next() {
                let interp = PathBuf::from(interp);
                let via_env = interp.file_name().is_some_and(|n| n == "env");
                d.paths.push(interp);
                if via_env
                    && let Some(name) = words.find(|w| !w.starts_with('-') && !w.contains('='))
                {
                    d.path_lookup(&name, cwd.as_deref());
                }
            }
        }
        for a in args {
            let words = a.split(|c: char| {
                c.is_whitespace()
                    || matches!(
                        c,
                        '"' | '\'' | ';' | '|' | '&' | '<' | '>' | '(' | ')' | '=' | '`' | ','
                    )
            });
            // A search path (`PATH=<dir>:/usr/bin tok`, `PYTHONPATH=a:b`,
            // a `"a:b".split(":")` in code) is judged entry by entry: each
            // directory is where the source's program or modules may be
            // found (atk27k F1c). A URL keeps its `:`.
            let words = words.flat_map(|w| {
                let parts: Vec<&str> = if w.contains("://") {
                    vec![w]
                } else {
                    w.split(':').collect()
                };
                parts
            });
            for (i, w) in std::iter::once(a.as_str()).chain(words).enumerate() {
                if w.is_empty() || w.contains("://") {
                    continue;
                }
                // `$HOME/...`, `${VAR}` as the shell reads them; a form not
                // followed is reported, to be refused (atk27k F1). (The
                // whole argument, a shell string, is judged by its words.)
                let Some(p) = expand_word(w, home).map(PathBuf::from) else {
                    if i > 0 {
                        d.unknown.push(w.to_string());
                    }
                    continue;
                };
                if p.as_os_str().is_empty() || p == Path::new("/") {
                    continue;
                }
                // An absolute path is judged whether or not it exists: one
                // missing at the check may be created by a concurrent run
                // before the source's shell looks (atk27k F1b).
                if p.is_absolute() {
                    d.paths.push(p);
                    continue;
                }
                let p = Path::new("/").join(p);
                if std::fs::symlink_metadata(&p).is_ok() {
                    d.paths.push(p);
                }
            }
        }
        // As the shell reads them: quoted, after a `cd` (atk27l F4, F5),
        // judged whether or not they exist.
        d.paths.extend(super::shell_paths::reached(args, home));
        // A glob naming a path: what it matches is decided when it runs.
        d.unknown.extend(super::shell_paths::globs(args));
        // A variable the text sets in a form not followed (atk27o F3).
        d.unknown.extend(super::shell_paths::unfollowed(args));
        d.paths.sort();
        d.paths.dedup();
        d
    }
}

/// [`SecretConfig::command_depends`].
#[derive(Debug, Default)]
pub struct CommandDepends {
    /// The program and every file or directory its arguments name.
    pub paths: Vec<PathBuf>,
    /// The `PATH` directories a bare program name is looked up in, up to
    /// the one it is found in.
    pub path_dirs: Vec<PathBuf>,
    /// Words of its arguments using a shell form not followed
    /// (`${NAME:-...}`, `~user/`): what they name is unknown.
    pub unknown: Vec<String>,
}

impl CommandDepends {
    /// Look the bare program name `prog` up on the caller's `PATH`:
    /// every directory looked in is recorded, and the program found.
    fn path_lookup(&mut self, prog: &str, cwd: Option<&Path>) {
        let Some(path) = std::env::var_os("PATH") else {
            return;
        };
        for dir in std::env::split_paths(&path) {
            let Some(dir) = absolute(&dir, cwd) else {
                continue;
            };
            self.path_dirs.push(dir.clone());
            let p = dir.join(prog);
            if p.is_file() {
                self.paths.push(p);
                break;
            }
        }
    }
}

/// The words of `p`'s `#!` line, if it has one.
fn shebang(p: &Path) -> Option<Vec<String>> {
    use std::io::Read;
    let mut buf = [0u8; 256];
    let n = std::fs::File::open(p).ok()?.read(&mut buf).ok()?;
    let line = buf[..n].strip_prefix(b"#!")?;
    let end = line.iter().position(|c| *c == b'\n').unwrap_or(line.len());
    let text = std::str::from_utf8(&line[..end]).ok()?;
    Some(text.split_whitespace().map(str::to_string).collect())
}

/// `p` made absolute against `cwd` (none: only an absolute `p`).
fn absolute(p: &Path, cwd: Option<&Path>) -> Option<PathBuf> {
    if p.is_absolute() {
        Some(p.to_path_buf())
    } else {
        cwd.map(|c| c.join(p))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// atk27d F5, F6: what a `command` runs and a missing `file` source
    /// are host places; a relative `file` is refused.
    #[test]
    fn command_files_and_missing_sources_are_host_places() {
        let d = std::env::temp_dir().join(format!("skarn-sec-hp-{}", std::process::id()));
        std::fs::create_dir_all(d.join("bin")).unwrap();
        std::fs::write(d.join("bin/tok.sh"), "#!/bin/sh\n").unwrap();
        let text = format!(
            "[secrets.a]\ncommand = [\"sh\", \"{s}\", \"--dir\", \"{d}\", \"--f=~/x.txt\"]\nhosts = [\"h\"]\n\
             [secrets.b]\nfile = \"{m}\"\nhosts = [\"h\"]\n\
             [secrets.c]\nfile = \"rel/tok\"\nhosts = [\"h\"]\n",
            s = d.join("bin/tok.sh").display(),
            d = d.display(),
            m = d.join("missing/tok").display()
        );
        let cfg = SecretsConfig::parse(&text, "t").unwrap();
        let places = cfg.host_places(Some(Path::new("/home/u")));
        let paths: Vec<&Path> = places.iter().map(|(p, _, _)| p.as_path()).collect();
        assert!(
            paths.contains(&d.join("bin/tok.sh").as_path()),
            "{places:?}"
        );
        assert!(paths.contains(&Path::new("/home/u/x.txt")), "{places:?}");
        assert!(!paths.contains(&d.as_path()), "{places:?}");
        assert!(
            places
                .iter()
                .any(|(p, _, secret)| *p == d.join("missing/tok") && *secret),
            "{places:?}"
        );
        let vp = cfg.value_places(Some(Path::new("/home/u")));
        assert!(vp.contains(&d.join("bin/tok.sh")), "{vp:?}");
        assert!(vp.contains(&d.join("missing/tok")), "{vp:?}");
        let e = super::super::config::resolve(
            "c",
            &cfg.secrets["c"],
            None,
            &super::super::source_view::SourceView::direct(),
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("absolute path"), "{e}");
        std::fs::remove_dir_all(&d).unwrap();
    }
}
