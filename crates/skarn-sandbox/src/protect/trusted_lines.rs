//! What a trusted line runs besides the files it names (attack atk24t
//! F3; ADR 0328). A line listed in `[hook] trusted_hooks` runs on the
//! host, unconfined, whenever the client runs the hook, skill line or
//! command it stands for. `make lint`, `npm run lint` or `pytest` name no
//! file, yet run what the project defines: a Makefile recipe, a
//! `package.json` script, every test file and `conftest.py`. A confined
//! command that rewrites those runs code on the host at the next trusted
//! run. So each trusted line's program is judged:
//!
//! - a program that runs its definition files' commands (`make`, `npm
//!   run`, `just`, `task`): those files are kept read-only in runs
//!   (missing ones reserved) with the scripts their text names
//!   ([`inputs`]), and the commands of the recipes and scripts are
//!   judged in turn;
//! - a program that runs the project's own code by design (test runners,
//!   build tools, `npx`): nothing short of the whole project could be
//!   kept, so the line is not trusted ([`refusal`]): the client's entry
//!   is then wrapped or refused like any other, and `skarn init` says so;
//! - a script, an interpreter's script (`sh x.sh`, `python3 -m tools.e`)
//!   or a known harmless program: as before (the files named are kept);
//! - any other program: kept trusted, and `skarn init` warns that skarn
//!   does not know what it reads.

use std::path::{Path, PathBuf};

pub use crate::protect::trusted_inputs::Judged;

/// Programs that run the project's own code by design: tests, build
/// scripts, plugins, local packages.
const RUNNERS: &[&str] = &[
    "pytest",
    "py.test",
    "tox",
    "nox",
    "cargo",
    "go",
    "gradle",
    "gradlew",
    "mvn",
    "mvnw",
    "jest",
    "vitest",
    "mocha",
    "ava",
    "karma",
    "playwright",
    "cypress",
    "npx",
    "pnpx",
    "bunx",
    "deno",
    "rake",
    "bundle",
    "rspec",
    "phpunit",
    "composer",
    "poetry",
    "uv",
    "uvx",
    "pipenv",
    "hatch",
    "pdm",
    "dotnet",
    "swift",
    "cmake",
    "ctest",
    "meson",
    "ninja",
    "bazel",
    "bazelisk",
    "buck2",
    "sbt",
    "lein",
    "mix",
    "rebar3",
    "stack",
    "cabal",
    "eslint",
    "prettier",
    "tsc",
    "webpack",
    "vite",
    "rollup",
    "pre-commit",
    "pip",
    "pip3",
    "setup.py",
    "manage.py",
    "ant",
    "scons",
];

/// `python -m` modules that run the project's code.
const PY_RUNNERS: &[&str] = &[
    "pytest",
    "unittest",
    "tox",
    "nox",
    "pip",
    "build",
    "setuptools",
    "doctest",
    "behave",
    "nose2",
    "hatch",
    "poetry",
    "mypy",
    "pylint",
    "flake8",
];

/// Programs that run the commands of their definition files.
const DEFINED: &[&str] = &[
    "make", "gmake", "npm", "pnpm", "yarn", "bun", "just", "task",
];

/// Programs that read nothing of the project that runs code.
const HARMLESS: &[&str] = &[
    "echo",
    "printf",
    "true",
    "false",
    ":",
    "ls",
    "cat",
    "pwd",
    "date",
    "whoami",
    "id",
    "uname",
    "git",
    "notify-send",
    "osascript",
    "say",
    "jq",
    "grep",
    "rg",
    "head",
    "tail",
    "wc",
    "sort",
    "uniq",
    "sed",
    "test",
    "[",
    "sleep",
    "mkdir",
    "touch",
    "tee",
    "tr",
    "cut",
    "which",
    "cd",
    "exit",
    "basename",
    "dirname",
    "realpath",
    "readlink",
    "stat",
    "find",
    "tput",
    "logger",
    "cp",
    "mv",
    "rm",
    "diff",
    "hostname",
    "env",
    "export",
    "read",
    "wait",
];

/// Deepest recipe or script followed.
const MAX_DEPTH: usize = 4;

/// Judge the trusted `line` run in `dir` (the project's top).
pub fn judge(line: &str, dir: &Path) -> Judged {
    let mut j = Judged::default();
    judge_in(
        &crate::protect::trusted_shell::project_vars(line, dir),
        dir,
        0,
        &mut j,
    );
    j
}

/// Why `line`, run in `dir`, cannot stay trusted, if it cannot.
pub fn refusal(line: &str, dir: &Path) -> Option<String> {
    judge(line, dir).refused
}

/// The trusted lines of the user's `~/.config/skarn/config.toml` (`[hook]
/// trusted_hooks`; none when it cannot be read).
pub fn user_lines() -> Vec<String> {
    let Some(home) = std::env::var_os("HOME")
        .map(PathBuf::from)
        .filter(|h| h.is_absolute())
    else {
        return Vec::new();
    };
    let Ok(Some(text)) = crate::policy::config::read_text(&home.join(".config/skarn/config.toml"))
    else {
        return Vec::new();
    };
    let Ok(v) = toml::from_str::<toml::Value>(&text) else {
        return Vec::new();
    };
    v.get("hook")
        .and_then(|h| h.get("trusted_hooks"))
        .and_then(|t| t.as_array())
        .map(|a| {
            a.iter()
                .filter_map(|x| x.as_str().map(String::from))
                .collect()
        })
        .unwrap_or_default()
}

/// The files the trusted lines run in `base` read as their definition,
/// with the texts whose words name more.
pub fn inputs(base: &Path) -> (Vec<PathBuf>, Vec<(String, PathBuf)>) {
    let (mut files, mut texts) = (Vec::new(), Vec::new());
    for l in user_lines().iter().take(256) {
        let j = judge(l, base);
        files.extend(j.inputs);
        texts.extend(j.texts);
    }
    (files, texts)
}

fn judge_in(line: &str, dir: &Path, depth: usize, j: &mut Judged) {
    if j.refused.is_some() {
        return;
    }
    if depth > MAX_DEPTH {
        j.refused = Some(format!(
            "its recipes and scripts call each other more than {MAX_DEPTH} levels deep"
        ));
        return;
    }
    let mut cwd = dir.to_path_buf();
    // Read as the shell reads it (atk24u F1): a stage's standard input
    // comes from its redirections, else from the stage before it.
    for pipeline in crate::protect::trusted_shell::pipelines(line) {
        let mut before: Vec<String> = Vec::new();
        for stage in pipeline {
            let words = &stage.words;
            // Assignments and wrappers before the program.
            let i = match crate::protect::trusted_shell::program_start(words) {
                Ok(i) => i,
                Err(why) => {
                    j.refused = Some(why);
                    return;
                }
            };
            let rest: Vec<&str> = words[i.min(words.len())..]
                .iter()
                .map(String::as_str)
                .collect();
            let stdin = if stage.stdin.is_empty() {
                std::mem::take(&mut before)
            } else {
                stage.stdin.clone()
            };
            // What this stage may feed the next one: its file operands.
            before = rest
                .iter()
                .skip(1)
                .filter(|w| !w.starts_with('-'))
                .map(|w| w.to_string())
                .chain(stage.stdin.iter().cloned())
                .collect();
            let Some(first) = rest.first() else { continue };
            // (Make's recipe prefixes.)
            let first = first.trim_start_matches(['@', '-', '+']);
            if first == "cd" || first == "pushd" {
                if let Some(d) = rest.get(1) {
                    cwd = crate::policy::config::normalize(&cwd.join(d));
                }
                continue;
            }
            judge_command(first, &rest[1..], &cwd, &stdin, depth, j);
            if j.refused.is_some() {
                return;
            }
        }
    }
}

fn judge_command(
    first: &str,
    args: &[&str],
    cwd: &Path,
    stdin: &[String],
    depth: usize,
    j: &mut Judged,
) {
    let name = first.rsplit('/').next().unwrap_or(first);
    // A make variable naming the program (`$(MAKE)` is make).
    let name = match name {
        "$(MAKE)" | "${MAKE}" => "make",
        n => n,
    };
    // `go run gen.go`: an interpreter's script (kept as a named file).
    if name == "go"
        && args.first() == Some(&"run")
        && args
            .iter()
            .skip(1)
            .all(|a| a.ends_with(".go") || a.starts_with('-'))
    {
        return;
    }
    // A program skarn does not read that runs another (`xargs`, `sudo`).
    if let Some(why) = crate::protect::trusted_wrappers::refusal(name, args) {
        j.refused = Some(why);
        return;
    }
    if RUNNERS.contains(&name) {
        j.refused = Some(format!(
            "`{name}` runs the project's own code (tests, build scripts, plugins), which a \
             confined command may rewrite"
        ));
        return;
    }
    if crate::protect::trusted_args::kind(name) == Some(crate::protect::trusted_args::Kind::Python)
        && let Some(m) = crate::protect::trusted_args::read(
            crate::protect::trusted_args::Kind::Python,
            name,
            args,
        )
        .module
    {
        let m = m.split('.').next().unwrap_or(&m).to_string();
        if PY_RUNNERS.contains(&m.as_str()) {
            j.refused = Some(format!(
                "`{name} -m {m}` runs the project's own code (tests, conftest.py, plugins), \
                 which a confined command may rewrite"
            ));
            return;
        }
    }
    // A local package's program (npm scripts put `node_modules/.bin`
    // first on PATH): the project's own code.
    if !first.contains('/')
        && std::fs::symlink_metadata(cwd.join("node_modules/.bin").join(name)).is_ok()
    {
        j.refused = Some(format!(
            "`{name}` is the project's node_modules/.bin/{name}, which a confined command may \
             rewrite"
        ));
        return;
    }
    if name.contains('$') || name.contains('`') {
        j.refused = Some(format!("a variable or command names the program ({first})"));
        return;
    }
    // An interpreter: what it loads, as it reads its options and
    // resolves its script (atk24u F1, F2).
    if let Some(k) = crate::protect::trusted_args::kind(name) {
        crate::protect::trusted_scripts::interpreter(
            k,
            name,
            args,
            cwd,
            stdin,
            depth,
            j,
            &judge_text,
        );
        return;
    }
    if first.contains('/') || HARMLESS.contains(&name) {
        return;
    }
    if DEFINED.contains(&name) {
        crate::protect::trusted_inputs::defined(name, args, cwd, depth, j, &judge_text);
        return;
    }
    if !j.unknown.iter().any(|u| u == name) {
        j.unknown.push(name.to_string());
    }
}

/// Judge a recipe's or script's command text one level deeper.
fn judge_text(text: &str, dir: &Path, depth: usize, j: &mut Judged) {
    judge_in(text, dir, depth + 1, j);
}

#[cfg(test)]
#[path = "trusted_lines_tests.rs"]
mod tests;
