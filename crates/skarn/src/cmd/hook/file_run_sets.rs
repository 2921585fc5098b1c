//! More of what `skarn run` keeps read-only or sets aside, asked of the
//! same sources so the file tools (which write outside any sandbox) are
//! refused there too (attack atk24j F1, F6, F8, F11, F13):
//!
//! - a virtual environment's interpreters and activation scripts
//!   ([`skarn_sandbox::protect::venv_programs`]), and a conda/pixi
//!   environment's (`conda-meta` beside `bin`, its `etc/conda/activate.d`);
//! - the files a project's mise configuration runs or loads
//!   ([`skarn_sandbox::protect::mise_env::named`]);
//! - the names host tools look for in every directory
//!   ([`skarn_sandbox::protect::grant_walk::UPWARD`]: `.lfsconfig`,
//!   `rust-toolchain.toml`, ... below the top too) and Python's customize
//!   modules wherever they lie ([`skarn_sandbox::protect::py_startup`]:
//!   any directory on `sys.path`, an editable install's `src`);
//! - the modules an executable `.pth` line of a `site-packages` imports
//!   (an editable install's `__editable___*_finder.py`): python runs them
//!   at every start, as it runs the `.pth`;
//! - the shape of a git directory below the top (`src/HEAD` beside
//!   `src/objects`): host git anywhere below it would use its
//!   configuration, as `skarn run`'s nested-repository check knows;
//! - the agents' user directories named by `$CLAUDE_CONFIG_DIR`,
//!   `$CODEX_HOME`, `$GEMINI_CLI_HOME/.gemini` (atk24j F9);
//! - a file with another name elsewhere (a hard link: the write changes
//!   every name; `skarn run` keeps the home's protected files read-only by
//!   inode).

use std::path::Path;

use super::file_paths::{fold, fold_name};

/// Files of a git directory, and its directories.
const GIT_FILES: &[&str] = &[
    "head",
    "config",
    "commondir",
    "gitdir",
    "packed-refs",
    "index",
];
const GIT_DIRS: &[&str] = &["objects", "refs", "hooks", "info", "worktrees"];

/// `dir` holds an entry named (as [`fold_name`] compares) one of `names`.
fn holds(dir: &Path, names: &[&str]) -> bool {
    std::fs::read_dir(dir).is_ok_and(|rd| {
        rd.flatten()
            .take(4096)
            .any(|e| names.contains(&fold_name(&e.file_name().to_string_lossy()).as_str()))
    })
}

/// Why `c` (absolute, as it resolves) may not be written; `bases`: the
/// workspace and the repository the file is in.
pub fn refusal(c: &Path, bases: &[std::path::PathBuf], home: Option<&Path>) -> Option<String> {
    #[cfg(not(unix))]
    let _ = (bases, home);
    let name = fold_name(&c.file_name()?.to_string_lossy());
    let parent = c.parent()?;
    if let Some(why) = hard_link(c) {
        return Some(why);
    }
    // The agents' user directories their variables name (atk24j F9).
    for (var, sub) in [
        ("CLAUDE_CONFIG_DIR", ""),
        ("CODEX_HOME", ""),
        ("GEMINI_CLI_HOME", ".gemini"),
    ] {
        if let Some(d) = client_dir(var).map(|d| d.join(sub))
            && [d.clone(), std::fs::canonicalize(&d).unwrap_or_default()]
                .iter()
                .any(|d| d.parent().is_some() && fold(c).starts_with(fold(d)))
        {
            return Some(format!(
                "{} lies in {} (${var}), the agent's own settings: only the user changes them",
                c.display(),
                d.display()
            ));
        }
    }
    #[cfg(unix)]
    {
        use skarn_sandbox::protect::grant_walk::UPWARD;
        if let Some((n, _, why)) = UPWARD
            .iter()
            .find(|(n, inner, _)| inner.is_empty() && fold_name(n) == name)
        {
            return Some(format!(
                "{} is read in whichever directory a tool starts ({n}: {why}); sandboxed \
                 commands cannot leave one either",
                c.display()
            ));
        }
        if skarn_sandbox::protect::py_startup::customize_module(std::ffi::OsStr::new(&name)) {
            return Some(format!(
                "{} is a Python start-up file (a customize module): python imports it at start from any \
                 directory on its path (an editable install's source directory too); \
                 sandboxed commands cannot leave one either",
                c.display()
            ));
        }
    }
    if let Some(why) = environment_program(c, &name, parent) {
        return Some(why);
    }
    if let Some(why) = pth_import(c, parent) {
        return Some(why);
    }
    if let Some(why) = git_shape(c, &name, parent) {
        return Some(why);
    }
    #[cfg(unix)]
    for b in bases {
        let named = skarn_sandbox::protect::mise_env::named(b, home);
        let fc = fold(c);
        if named.files.iter().any(|f| fold(f) == fc)
            || named.path_dirs.iter().any(|d| fc.starts_with(fold(d)))
        {
            return Some(format!(
                "{} is run or loaded by the mise configuration of {} (an [env] _.source, \
                 _.file or _.path, or a hook): mise does so on its own on cd; sandboxed \
                 commands cannot write it either",
                c.display(),
                b.display()
            ));
        }
    }
    None
}

/// Gemini CLI loads the first `.gemini/.env` or `.env` it finds from its
/// working directory up into its own environment, which every command it
/// starts inherits (the hook's and the confined command's `bash -c`, which
/// sources `BASH_ENV` on the host): a `.env` in `cwd` or above is its own
/// settings (atk24j F12).
pub fn gemini_env(c: &Path, cwd: &Path) -> Option<String> {
    let name = fold_name(&c.file_name()?.to_string_lossy());
    let dir = fold(c.parent()?);
    (name == ".env" && fold(cwd).starts_with(&dir)).then(|| {
        format!(
            "{} is Gemini CLI's own environment file (it loads the first .env from its \
             directory up into every command it starts, BASH_ENV and LD_PRELOAD included, \
             before skarn runs them): only the user changes it",
            c.display()
        )
    })
}

/// An existing file with more than one name.
#[cfg(unix)]
fn hard_link(c: &Path) -> Option<String> {
    use std::os::unix::fs::MetadataExt;
    let m = std::fs::symlink_metadata(c).ok()?;
    (m.is_file() && m.nlink() > 1).then(|| {
        format!(
            "{} has another name elsewhere (a hard link, {} names): writing it changes the file \
             under every name, which may be one the sandbox protects",
            c.display(),
            m.nlink()
        )
    })
}

#[cfg(not(unix))]
fn hard_link(_c: &Path) -> Option<String> {
    None
}

/// An environment's interpreter or activation script (`bin/python*`,
/// `bin/activate*`, `Scripts/` too), or a conda environment's activation
/// hooks.
fn environment_program(c: &Path, name: &str, parent: &Path) -> Option<String> {
    let env = parent.parent()?;
    let dir = fold_name(&parent.file_name()?.to_string_lossy());
    let venv = env.join("pyvenv.cfg").is_file();
    let conda = env.join("conda-meta").is_dir();
    if (dir == "bin" || dir == "scripts") && (venv || conda) && entry_point(name) {
        return Some(format!(
            "{} is an environment's interpreter or activation script: the host runs or \
             sources it by that path (an IDE, `source activate`); sandboxed commands cannot \
             write it either",
            c.display()
        ));
    }
    // `<env>/etc/conda/activate.d/*` (and deactivate.d): sourced by
    // `conda activate`, `pixi shell`.
    let conda_hook = c.ancestors().skip(1).find(|a| {
        let f = fold(a);
        (f.ends_with("etc/conda/activate.d") || f.ends_with("etc/conda/deactivate.d"))
            && a.ancestors()
                .nth(3)
                .is_some_and(|e| e.join("conda-meta").is_dir())
    });
    conda_hook.map(|_| {
        format!(
            "{} is a conda environment's activation script (sourced by conda activate, pixi \
             shell); sandboxed commands cannot write it either",
            c.display()
        )
    })
}

/// A module an executable line of a `.pth` beside it imports.
fn pth_import(c: &Path, parent: &Path) -> Option<String> {
    let sp = parent.ancestors().find(|a| {
        a.file_name()
            .is_some_and(|n| fold_name(&n.to_string_lossy()) == "site-packages")
    })?;
    let rel = c.strip_prefix(sp).ok()?;
    let first = rel.components().next()?.as_os_str().to_string_lossy();
    let module = fold_name(first.strip_suffix(".py").unwrap_or(&first));
    let rd = std::fs::read_dir(sp).ok()?;
    for e in rd.flatten().take(4096) {
        let n = e.file_name().to_string_lossy().into_owned();
        if !fold_name(&n).ends_with(".pth") {
            continue;
        }
        let Ok(text) = std::fs::read_to_string(e.path()) else {
            continue;
        };
        for line in text.lines().take(1000) {
            let Some(rest) = line
                .strip_prefix("import ")
                .or_else(|| line.strip_prefix("import\t"))
            else {
                continue;
            };
            // Only the `import` statement itself names modules; `rest`
            // before `;`: `a, b.c as d`.
            let stmt = rest.split(';').next().unwrap_or_default();
            let hit = stmt.split(',').any(|m| {
                let top = m.trim().split([' ', '\t', '.']).next().unwrap_or_default();
                !top.is_empty() && fold_name(top) == module
            });
            if hit {
                return Some(format!(
                    "{} is imported by {} at every start of that python (an executable .pth \
                     line); sandboxed commands cannot plant the .pth either",
                    c.display(),
                    e.path().display()
                ));
            }
        }
    }
    None
}

/// A file or directory that makes (or fills) a git directory below the
/// top: a git directory's file beside `objects`/`refs`/`HEAD`, or
/// anything in `objects`/`refs`/`hooks`/... beside a `HEAD`.
fn git_shape(c: &Path, name: &str, parent: &Path) -> Option<String> {
    let says = |d: &Path| {
        format!(
            "{} would make {} a git directory (HEAD beside objects and refs): host git run \
             anywhere below it uses its configuration (fsmonitor, hooks, pager); sandboxed \
             commands cannot leave one either",
            c.display(),
            d.display()
        )
    };
    if GIT_FILES.contains(&name)
        && (holds(parent, &["objects", "refs"]) || (name != "head" && holds(parent, &["head"])))
    {
        return Some(says(parent));
    }
    for a in c.ancestors().skip(1) {
        let Some(n) = a.file_name() else { break };
        if GIT_DIRS.contains(&fold_name(&n.to_string_lossy()).as_str())
            && let Some(d) = a.parent()
            && holds(d, &["head"])
        {
            return Some(says(d));
        }
    }
    None
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    #[test]
    fn what_skarn_run_keeps_is_refused_and_ordinary_files_are_not() {
        let t = skarn_test_support::TempDir::new("hook_run_sets");
        let ws = t.dir("ws");
        let no = |p: &str| refusal(&ws.join(p), std::slice::from_ref(&ws), None).is_some();
        // Environments.
        std::fs::create_dir_all(ws.join(".venv/bin")).unwrap();
        std::fs::write(ws.join(".venv/pyvenv.cfg"), "home = /usr/bin\n").unwrap();
        assert!(no(".venv/bin/activate"));
        assert!(no(".venv/bin/python3"));
        assert!(!no(".venv/bin/pytest"));
        std::fs::create_dir_all(ws.join("env/conda-meta")).unwrap();
        assert!(no("env/bin/python"));
        assert!(no("env/etc/conda/activate.d/x.sh"));
        // Names read in any directory; customize modules anywhere.
        assert!(no("sub/.lfsconfig"));
        assert!(no("src/sitecustomize.py"));
        assert!(!no("src/site.py"));
        // The module an executable .pth line imports.
        let sp = ws.join(".venv/lib/python3.12/site-packages");
        std::fs::create_dir_all(&sp).unwrap();
        std::fs::write(
            sp.join("__editable__.p.pth"),
            "import __editable___p_finder; __editable___p_finder.install('x')\n",
        )
        .unwrap();
        let rel = ".venv/lib/python3.12/site-packages";
        assert!(no(&format!("{rel}/__editable___p_finder.py")));
        assert!(!no(&format!("{rel}/requests/api.py")));
        // A git directory's shape, in either order.
        std::fs::create_dir_all(ws.join("src/objects")).unwrap();
        assert!(no("src/HEAD"));
        assert!(no("src/config"));
        std::fs::create_dir_all(ws.join("lib")).unwrap();
        std::fs::write(ws.join("lib/HEAD"), "ref: refs/heads/main\n").unwrap();
        assert!(no("lib/refs/heads/main"));
        assert!(no("lib/config"));
        assert!(!no("docs/config"));
        // A hard link.
        std::fs::write(ws.join("a.txt"), "x").unwrap();
        assert!(!no("a.txt"));
        std::fs::hard_link(ws.join("a.txt"), t.dir("out").join("b")).unwrap();
        assert!(no("a.txt"));
        // mise.
        std::fs::write(
            ws.join("mise.toml"),
            "[env]\n_.source = \"scripts/env.sh\"\n",
        )
        .unwrap();
        assert!(no("scripts/env.sh"));
        assert!(!no("scripts/other.sh"));
    }
}

/// A client's configuration directory an absolute variable moves
/// (`CLAUDE_CONFIG_DIR`, `CODEX_HOME`).
pub fn client_dir(var: &str) -> Option<std::path::PathBuf> {
    std::env::var_os(var)
        .map(std::path::PathBuf::from)
        .filter(|p| p.is_absolute())
}

/// An environment's interpreter or activation script by name (as
/// `skarn run`'s venv guard reads it, on unix).
#[cfg(unix)]
fn entry_point(name: &str) -> bool {
    skarn_sandbox::protect::venv_programs::entry_point(std::ffi::OsStr::new(name))
}

/// (Elsewhere: the interpreters and activation scripts by their names.)
#[cfg(not(unix))]
fn entry_point(name: &str) -> bool {
    let n = name.to_ascii_lowercase();
    n.starts_with("python") || n.starts_with("activate") || n.starts_with("pip")
}
