//! The definition files of the programs a trusted line may run (ADR
//! 0328): make's makefiles and what they include, a package manager's
//! `package.json` and its configuration, `just`'s and `task`'s files. Each
//! is kept read-only (missing ones reserved: a new `makefile` is read
//! before `Makefile`), and the commands of the recipes and scripts the
//! line runs are judged as the line is ([`crate::protect::trusted_lines`]).

use std::path::{Path, PathBuf};

/// Judges a recipe's or script's command text (the caller's judge).
pub type JudgeText<'a> = &'a dyn Fn(&str, &Path, usize, &mut Judged);

/// How a trusted line's programs stand.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Judged {
    /// Why the line cannot stay trusted (it runs the project's own code).
    pub refused: Option<String>,
    /// Programs skarn does not know (the line stays trusted; warned).
    pub unknown: Vec<String>,
    /// Definition files kept read-only (missing ones reserved).
    pub inputs: Vec<PathBuf>,
    /// Definition texts whose words name more files, with their directory.
    pub texts: Vec<(String, PathBuf)>,
}

/// Bytes read per definition file, at most.
const MAX_BYTES: u64 = 1 << 20;

/// A package manager's files in the package's directory.
const PACKAGE_FILES: &[&str] = &[
    "package.json",
    ".npmrc",
    ".yarnrc",
    ".yarnrc.yml",
    ".pnpmfile.cjs",
    "pnpm-workspace.yaml",
    "bunfig.toml",
];

/// Package manager commands that run packages' code (install scripts,
/// local packages).
const PACKAGE_RUNNERS: &[&str] = &[
    "install",
    "i",
    "ci",
    "add",
    "exec",
    "x",
    "dlx",
    "create",
    "init",
    "rebuild",
    "link",
    "pack",
    "publish",
    "update",
    "up",
    "upgrade",
    "remove",
    "rm",
    "uninstall",
    "dedupe",
    "prune",
];

/// Package manager commands that run a script of that name.
const SCRIPT_COMMANDS: &[&str] = &["test", "t", "tst", "start", "stop", "restart"];

/// The files `just` reads.
const JUSTFILES: &[&str] = &["justfile", "Justfile", ".justfile", "JUSTFILE"];

/// The files `task` reads.
const TASKFILES: &[&str] = &[
    "Taskfile.yml",
    "Taskfile.yaml",
    "taskfile.yml",
    "taskfile.yaml",
    "Taskfile.dist.yml",
    "Taskfile.dist.yaml",
];

fn read(p: &Path) -> Option<String> {
    let m = std::fs::metadata(p).ok()?;
    if !m.is_file() || m.len() > MAX_BYTES {
        return None;
    }
    std::fs::read(p)
        .ok()
        .map(|b| String::from_utf8_lossy(&b).into_owned())
}

/// The value after an option (`-C dir`, `--prefix=dir`).
fn option<'a>(args: &[&'a str], names: &[&str]) -> Option<&'a str> {
    for (i, a) in args.iter().enumerate() {
        for n in names {
            if a == n {
                return args.get(i + 1).copied();
            }
            if let Some(v) = a.strip_prefix(&format!("{n}=")) {
                return Some(v);
            }
        }
    }
    None
}

/// Judge `name args` (one of the programs that run their definition
/// files' commands) run in `cwd`.
pub(crate) fn defined(
    name: &str,
    args: &[&str],
    cwd: &Path,
    depth: usize,
    j: &mut Judged,
    judge_text: JudgeText<'_>,
) {
    match name {
        "make" | "gmake" => make(args, cwd, depth, j, judge_text),
        "just" => listed(JUSTFILES, cwd, depth, j, judge_text, |l| {
            l.starts_with([' ', '\t']).then(|| l.trim().to_string())
        }),
        "task" => listed(TASKFILES, cwd, depth, j, judge_text, |l| {
            let t = l.trim_start();
            t.strip_prefix("- ")
                .or_else(|| t.strip_prefix("cmd:"))
                .map(|c| c.trim().to_string())
                .filter(|c| !c.contains(':') || c.contains(' '))
        }),
        _ => package(name, args, cwd, depth, j, judge_text),
    }
}

/// `just` and `task`: their files kept, every command line they hold
/// judged (whatever recipe it belongs to: fails closed).
fn listed(
    names: &[&str],
    cwd: &Path,
    depth: usize,
    j: &mut Judged,
    judge_text: JudgeText<'_>,
    command: impl Fn(&str) -> Option<String>,
) {
    for n in names {
        let p = cwd.join(n);
        j.inputs.push(p.clone());
        if let Some(text) = read(&p) {
            for c in text.lines().filter_map(&command) {
                judge_text(&c, cwd, depth, j);
            }
            j.texts.push((text, cwd.to_path_buf()));
        }
    }
}

fn make(args: &[&str], cwd: &Path, depth: usize, j: &mut Judged, judge_text: JudgeText<'_>) {
    let dir = option(args, &["-C", "--directory"])
        .map(|d| crate::policy::config::normalize(&cwd.join(d)))
        .unwrap_or_else(|| cwd.to_path_buf());
    let files: Vec<PathBuf> = match option(args, &["-f", "--file", "--makefile"]) {
        Some(f) => vec![crate::policy::config::normalize(&dir.join(f))],
        None => crate::protect::make_include::MAKEFILES
            .iter()
            .map(|m| dir.join(m))
            .collect(),
    };
    j.inputs.extend(files.iter().cloned());
    j.inputs
        .extend(crate::protect::make_include::included_files(&dir));
    let mut recipes: Vec<(Vec<String>, Vec<String>, Vec<String>)> = Vec::new();
    for f in files
        .iter()
        .chain(&crate::protect::make_include::included_files(&dir))
    {
        let Some(text) = read(f) else { continue };
        for (recipe, l) in crate::protect::make_include::logical_lines(&text) {
            if recipe {
                if let Some(r) = recipes.last_mut() {
                    r.2.push(l.trim().to_string());
                }
            } else if let Some((t, p)) = l.split_once(':')
                && !p.starts_with('=')
                && !t.contains('=')
                && !l.starts_with('#')
            {
                let p = p.split(';').next().unwrap_or("");
                recipes.push((
                    t.split_whitespace().map(String::from).collect(),
                    p.split_whitespace().map(String::from).collect(),
                    Vec::new(),
                ));
            }
        }
        j.texts.push((text, dir.clone()));
    }
    let mut goals: Vec<String> = args
        .iter()
        .filter(|a| !a.starts_with('-') && !a.contains('='))
        .filter(|a| option(args, &["-C", "-f", "--file", "--directory"]) != Some(**a))
        .map(|a| a.to_string())
        .collect();
    if goals.is_empty()
        && let Some(first) = recipes
            .iter()
            .flat_map(|r| r.0.iter())
            .find(|t| !t.starts_with('.'))
    {
        goals.push(first.clone());
    }
    let mut done: Vec<String> = Vec::new();
    while let Some(g) = goals.pop() {
        if done.contains(&g) || done.len() > 256 {
            continue;
        }
        done.push(g.clone());
        for r in recipes
            .iter()
            .filter(|r| r.0.iter().any(|t| *t == g || t.contains('%')))
        {
            goals.extend(r.1.iter().cloned());
            for c in &r.2 {
                judge_text(c, &dir, depth, j);
            }
        }
    }
}

fn package(
    name: &str,
    args: &[&str],
    cwd: &Path,
    depth: usize,
    j: &mut Judged,
    judge_text: JudgeText<'_>,
) {
    let dir = option(args, &["--prefix", "-C", "--cwd", "--dir"])
        .map(|d| crate::policy::config::normalize(&cwd.join(d)))
        .unwrap_or_else(|| cwd.to_path_buf());
    let plain: Vec<&str> = args
        .iter()
        .copied()
        .filter(|a| !a.starts_with('-'))
        .filter(|a| option(args, &["--prefix", "-C", "--cwd", "--dir"]) != Some(*a))
        .collect();
    let Some(sub) = plain.first().copied() else {
        // `yarn` alone installs.
        if name == "yarn" {
            j.refused = Some("`yarn` installs, running packages' code".into());
        }
        return;
    };
    if PACKAGE_RUNNERS.contains(&sub) || name == "bun" && sub.contains('.') {
        j.refused = Some(format!(
            "`{name} {sub}` runs packages' or the project's own code, which a confined command \
             may rewrite"
        ));
        return;
    }
    let script = if matches!(sub, "run" | "run-script" | "rum" | "urn") {
        let Some(s) = plain.get(1) else { return };
        s.to_string()
    } else if SCRIPT_COMMANDS.contains(&sub) {
        if matches!(sub, "t" | "tst") {
            "test"
        } else {
            sub
        }
        .to_string()
    } else if name == "npm" {
        // npm's other commands run no script.
        return;
    } else {
        sub.to_string()
    };
    j.inputs.extend(PACKAGE_FILES.iter().map(|f| dir.join(f)));
    let Some(text) = read(&dir.join("package.json")) else {
        return;
    };
    let Ok(v) = serde_json::from_str::<serde_json::Value>(&text) else {
        j.refused = Some(format!(
            "{} is not JSON: its scripts cannot be read",
            dir.join("package.json").display()
        ));
        return;
    };
    for s in [
        format!("pre{script}"),
        script.clone(),
        format!("post{script}"),
    ] {
        if let Some(c) = v
            .get("scripts")
            .and_then(|x| x.get(&s))
            .and_then(|c| c.as_str())
        {
            judge_text(c, &dir, depth, j);
            j.texts.push((c.to_string(), dir.clone()));
        }
    }
}
