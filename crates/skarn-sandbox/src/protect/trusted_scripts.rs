//! What an interpreter of a trusted line loads, kept as it resolves it
//! (attack atk24u F1, F2): the script its options leave (read by
//! [`crate::protect::trusted_args`]), the file its standard input is
//! redirected or piped from (`sh < x`, `cat x | sh`), `source x`, the
//! files its options load (`--rcfile`, `node -r`), and what the named
//! word leads to: `python3 .` its `__main__.py`, `node srv` its `srv.js`
//! (Node's extension and directory search, `package.json` `main` followed
//! out of the directory). Missing candidates are kept too (reserved: a
//! script created later runs as well). A line whose reading is unsure is
//! not trusted.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use crate::protect::trusted_args::{Kind, read};
use crate::protect::trusted_inputs::{JudgeText, Judged};

/// Extensions Node tries after a bare main name, in its order (and the
/// module forms it runs too).
const NODE_EXTENSIONS: &[&str] = &[
    "", ".js", ".json", ".node", ".mjs", ".cjs", ".ts", ".mts", ".cts",
];

/// A directory's entry files Node runs.
const NODE_INDEX: &[&str] = &[
    "index.js",
    "index.json",
    "index.node",
    "index.mjs",
    "index.cjs",
];

/// `package.json` `main` links followed at most.
const MAX_MAIN: usize = 4;

/// Judge the interpreter `name args` (of kind `k`) run in `cwd`, its
/// standard input read from the files `stdin`.
#[allow(clippy::too_many_arguments)]
pub(crate) fn interpreter(
    k: Kind,
    name: &str,
    args: &[&str],
    cwd: &Path,
    stdin: &[String],
    depth: usize,
    j: &mut Judged,
    judge_text: JudgeText<'_>,
) {
    let r = read(k, name, args);
    let line = || format!("{name} {}", args.join(" "));
    if let Some(why) = r.unsure {
        j.refused = Some(format!(
            "skarn cannot tell which file `{}` runs ({why})",
            line()
        ));
        return;
    }
    let named = r
        .script
        .iter()
        .chain(&r.loads)
        .chain(&r.module)
        .chain(if r.stdin { stdin } else { &[] });
    for w in named {
        if w.contains('$') || w.contains('`') {
            j.refused = Some(format!(
                "a variable or command names the file `{}` runs ({w})",
                line()
            ));
            return;
        }
    }
    if let Some(code) = &r.inline
        && k == Kind::Shell
    {
        judge_text(code, cwd, depth, j);
    }
    for l in &r.loads {
        match k {
            Kind::Node if !l.starts_with(['.', '/']) => {
                keep(j, cwd.join("node_modules").join(l));
            }
            Kind::Node => node(&cwd.join(l), cwd, 0, j),
            Kind::Lua => {
                let m = l.replace('.', "/");
                keep(j, cwd.join(format!("{m}.lua")));
                keep(j, cwd.join(&m).join("init.lua"));
            }
            Kind::Ruby if !l.contains('/') => {}
            _ => keep(j, cwd.join(l)),
        }
    }
    if let Some(m) = &r.module {
        // `python3 -m tools.e`: the module's top package from the start
        // directory (first on its path).
        let top = m.split('.').next().unwrap_or(m);
        keep(j, cwd.join(format!("{top}.py")));
        keep(j, cwd.join(top));
    }
    if let Some(s) = &r.script {
        let p = cwd.join(s);
        match k {
            Kind::Python => python(&p, cwd, j),
            Kind::Node => node(&p, cwd, 0, j),
            _ => keep(j, p),
        }
    } else if r.stdin {
        for f in stdin {
            keep(j, cwd.join(f));
        }
    }
}

fn keep(j: &mut Judged, p: PathBuf) {
    let p = crate::policy::config::normalize(&p);
    if !j.inputs.contains(&p) {
        j.inputs.push(p);
    }
}

/// Python runs a file, or a directory's (or zip's) `__main__`.
fn python(p: &Path, cwd: &Path, j: &mut Judged) {
    let p = crate::policy::config::normalize(p);
    if !p.is_dir() {
        keep(j, p);
        return;
    }
    if p != crate::policy::config::normalize(cwd) {
        // Kept whole (its modules beside `__main__.py`).
        keep(j, p);
        return;
    }
    // The start directory itself (`python3 .`): its `__main__` in every
    // form the import system finds, existing or not.
    for n in ["__main__.py", "__main__.pyc", "__main__", "__main__.so"] {
        keep(j, p.join(n));
    }
    for v in 8..=14 {
        for arch in ["x86_64", "aarch64"] {
            keep(
                j,
                p.join(format!("__main__.cpython-3{v}-{arch}-linux-gnu.so")),
            );
        }
    }
    keep(j, p.join("__main__.abi3.so"));
    if let Ok(rd) = std::fs::read_dir(&p) {
        for e in rd.flatten().take(4096) {
            if e.file_name().to_string_lossy().starts_with("__main__") {
                keep(j, e.path());
            }
        }
    }
}

/// Node runs `p`, `p.js`, ... or a directory's `package.json` `main` or
/// `index.js`.
fn node(p: &Path, cwd: &Path, hops: usize, j: &mut Judged) {
    let p = crate::policy::config::normalize(p);
    let at_start = p == crate::policy::config::normalize(cwd);
    for ext in NODE_EXTENSIONS {
        if ext.is_empty() && at_start {
            continue;
        }
        let mut s = OsString::from(p.as_os_str());
        s.push(ext);
        keep(j, PathBuf::from(s));
    }
    if !p.is_dir() {
        return;
    }
    if at_start {
        keep(j, p.join("package.json"));
        for n in NODE_INDEX {
            keep(j, p.join(n));
        }
    }
    let main = std::fs::read(p.join("package.json"))
        .ok()
        .and_then(|b| serde_json::from_slice::<serde_json::Value>(&b).ok())
        .and_then(|v| v.get("main").and_then(|m| m.as_str()).map(String::from));
    if let Some(m) = main {
        if hops >= MAX_MAIN {
            j.refused = Some(format!(
                "{}: `main` links more than {MAX_MAIN} directories",
                p.display()
            ));
            return;
        }
        node(&p.join(m), cwd, hops + 1, j);
    }
}
