//! The local files a protected code-running configuration loads (attack
//! atk22m F9, b22f's left item). A `.pnpmfile.cjs` that is
//! `module.exports = require('./hooks/pnpm.js')`, an `eslint.config.js`
//! importing `./rules/x.js`, `"prettier": "./fmt.cjs"` in `package.json`,
//! RuboCop's `inherit_from`, pylint's `load-plugins` of a local module,
//! pytest's `addopts = -p local_plugin`, `deno.json`'s lint plugins: the
//! host tool loads those files as it loads the configuration, so they are
//! kept read-only like it. The references are followed as the loaders
//! resolve them (node's relative specifiers with its extension and
//! directory-index search, a configuration's directory for the others,
//! Python's package-before-module order), transitively through the
//! JavaScript modules found. Package names and `#` imports (`import x
//! from '@acme/eslint-config'`, `'#rules'`, `"prettier":
//! "@acme/prettier-config"`, ESLint's `extends`; atk22n F2) are resolved
//! as node resolves them ([`crate::protect::config_refs_node`]) and
//! followed where they lead to a workspace package. The names a loader
//! would try first and that do not exist (`./x` before `./x.js`, a
//! package `x/` before `x.py`) are reserved too. Past [`MAX_FILES`] or
//! [`MAX_DEPTH`], the directory of each module not followed is kept
//! read-only whole, and the report says so naming the configuration; a
//! reference that is not a literal (`require(name)`) or a `#` import
//! without a mapping cannot be followed: the configuration itself stays
//! protected, as before, and the report says so. Configurations at the
//! workspace's top (and the pnpmfile its settings name) are read; nested
//! ones are not (a start-up walk of the tree is not made, issue 30).

use std::path::{Component, Path, PathBuf};

use crate::protect::config_refs_node as node;
use crate::protect::config_refs_read::{self as read, JS_EXTS, Refs};

/// JavaScript modules followed from one configuration, in depth.
pub const MAX_DEPTH: usize = 16;
/// Files found from the workspace's configurations in all.
pub const MAX_FILES: usize = 1024;
/// Bytes read of one file.
const MAX_BYTES: u64 = 512 << 10;

/// The extensions node (and the TypeScript loaders configurations use)
/// try after a relative specifier's exact name, in order.
const NODE_EXTS: &[&str] = &[
    ".js", ".json", ".node", ".cjs", ".mjs", ".ts", ".mts", ".cts",
];

/// Configurations read at the workspace's top besides
/// [`crate::protect::persistence::ENTRIES`].
const EXTRA: &[&str] = &[
    "package.json",
    "pyproject.toml",
    "setup.cfg",
    "tox.ini",
    "pytest.ini",
    ".pytest.ini",
    "deno.json",
    "deno.jsonc",
];

/// `package.json` keys editor-run tools read as their configuration
/// (as [`crate::protect::tool_keys`]).
const PACKAGE_KEYS: &[&str] = &[
    "prettier",
    "eslintConfig",
    "stylelint",
    "babel",
    "xo",
    "standard",
    "remarkConfig",
    "commitlint",
    "lint-staged",
];

/// One file found: where it is (or would be, for a reserved name) and
/// the configuration that loads it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Found {
    /// The file (missing: a name the loader tries first, to reserve).
    pub path: PathBuf,
    /// The configuration that names it (directly or through a module).
    pub via: PathBuf,
}

/// What the workspace's configurations load, and the configurations with
/// a reference that cannot be followed.
/// A module past a bound, and a package whose entry cannot be found
/// statically, are protected whole as directories (`trees`); those and
/// what cannot be followed are said (`notes`, each naming the
/// configuration).
#[derive(Debug, Default)]
pub struct Loaded {
    pub files: Vec<Found>,
    pub dynamic: Vec<PathBuf>,
    pub trees: Vec<Found>,
    pub notes: Vec<String>,
}

impl Loaded {
    fn tree(&mut self, dir: PathBuf, via: &Path) {
        if !self.trees.iter().any(|t| t.path == dir) {
            self.trees.push(Found {
                path: dir,
                via: via.to_path_buf(),
            });
        }
    }

    /// A bound reached: `dir` (holding a file not followed) protected
    /// whole, and said.
    fn bound(&mut self, dir: &Path, via: &Path) {
        self.tree(dir.to_path_buf(), via);
        self.note(format!(
            "{} loads more local modules than skarn follows ({MAX_FILES} files, {MAX_DEPTH} \
             levels): the directories of those not followed are kept read-only whole; what \
             they load outside those directories is not protected",
            via.display()
        ));
    }

    fn note(&mut self, n: String) {
        if !self.notes.contains(&n) && self.notes.len() < 16 {
            self.notes.push(n);
        }
    }
}

fn read_text(p: &Path) -> Option<String> {
    use std::io::Read;
    let f = std::fs::File::open(p).ok()?;
    if !f.metadata().ok()?.is_file() {
        return None;
    }
    let mut b = Vec::new();
    f.take(MAX_BYTES).read_to_end(&mut b).ok()?;
    Some(String::from_utf8_lossy(&b).into_owned())
}

fn ext(p: &Path) -> &str {
    p.extension().and_then(|e| e.to_str()).unwrap_or("")
}

/// What the file `p` names, by its kind.
fn refs_of(p: &Path) -> Refs {
    let Some(text) = read_text(p) else {
        return Refs::default();
    };
    let name = p.file_name().and_then(|n| n.to_str()).unwrap_or("");
    let lower = name.to_ascii_lowercase();
    if JS_EXTS.contains(&ext(p)) {
        return read::js(&text);
    }
    match lower.as_str() {
        "package.json" => read::package_json(&text, PACKAGE_KEYS),
        "deno.json" | "deno.jsonc" => read::deno(&text),
        ".rubocop.yml" | ".standard.yml" | ".erb_lint.yml" | ".erb-lint.yml"
        | ".solargraph.yml" => read::ruby(&text),
        n if n.contains("pylintrc")
            || n.contains("mypy.ini")
            || n.contains("pytest.ini")
            || matches!(n, "pyproject.toml" | "setup.cfg" | "tox.ini") =>
        {
            read::python(&text)
        }
        _ => read::data(&text),
    }
}

/// `p` with `.` and `..` removed as written.
fn lexical(p: &Path) -> PathBuf {
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

fn is_file(p: &Path) -> bool {
    std::fs::metadata(p).is_ok_and(|m| m.is_file())
}

/// Node's resolution of the relative specifier `spec` from `dir`: the
/// file found (if any), and the names tried before it that do not exist.
fn resolve_js(dir: &Path, spec: &str) -> (Option<PathBuf>, Vec<PathBuf>) {
    let x = lexical(&dir.join(spec));
    let mut before = Vec::new();
    let mut tries = vec![x.clone()];
    tries.extend(
        NODE_EXTS
            .iter()
            .map(|e| PathBuf::from(format!("{}{e}", x.display()))),
    );
    // A TypeScript source imported by its output's name (`./x.js`).
    if let Some(stem) = x.to_str().and_then(|s| s.strip_suffix(".js")) {
        tries.extend(
            [".ts", ".tsx"]
                .iter()
                .map(|e| PathBuf::from(format!("{stem}{e}"))),
        );
    }
    tries.extend(
        [
            "index.js",
            "index.json",
            "index.cjs",
            "index.mjs",
            "index.ts",
        ]
        .iter()
        .map(|i| x.join(i)),
    );
    for t in tries {
        if is_file(&t) {
            return (Some(t), before);
        }
        if std::fs::symlink_metadata(&t).is_err() && t.parent().is_some_and(Path::is_dir) {
            before.push(t);
        }
    }
    (None, Vec::new())
}

/// Python's finding of the module `m` from `dir`: the file found, and a
/// package directory's name tried before a module file.
fn resolve_module(dir: &Path, m: &str) -> (Option<PathBuf>, Vec<PathBuf>) {
    let base = dir.join(m.replace('.', "/"));
    let init = base.join("__init__.py");
    if is_file(&init) {
        return (Some(init), Vec::new());
    }
    let file = base.with_extension("py");
    let file = if m.contains('.') {
        PathBuf::from(format!("{}.py", base.display()))
    } else {
        file
    };
    if is_file(&file) {
        let before = (std::fs::symlink_metadata(&base).is_err())
            .then_some(base)
            .into_iter()
            .collect();
        return (Some(file), before);
    }
    (None, Vec::new())
}

/// The configurations at the top of `ws` that host tools load as code.
fn roots(ws: &Path) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = crate::protect::persistence::ENTRIES
        .iter()
        .map(|e| e.path)
        .chain(EXTRA.iter().copied())
        .map(|n| ws.join(n))
        .filter(|p| is_file(p))
        .collect();
    for p in crate::protect::pnpm_file::named(ws) {
        if is_file(&p) && !out.contains(&p) {
            out.push(p);
        }
    }
    out.sort();
    out.dedup();
    out
}

/// What the configurations at the top of the workspace `ws` load, inside
/// `ws` (see the module's text).
pub fn loaded(ws: &Path) -> Loaded {
    let ws = lexical(ws);
    let real = std::fs::canonicalize(&ws).unwrap_or_else(|_| ws.clone());
    let node = node::Ws {
        path: &ws,
        real: &real,
        resolve_js,
    };
    let mut out = Loaded::default();
    // Breadth first: a bound ends the walk at its deepest modules.
    let mut queue: std::collections::VecDeque<(PathBuf, PathBuf, usize)> =
        roots(&ws).into_iter().map(|r| (r.clone(), r, 0)).collect();
    let mut seen: Vec<PathBuf> = queue.iter().map(|(p, _, _)| p.clone()).collect();
    while let Some((p, via, depth)) = queue.pop_front() {
        let Some(dir) = p.parent() else { continue };
        if out.files.len() >= MAX_FILES || depth > MAX_DEPTH {
            // A bound: the module's directory is protected whole, and said.
            out.bound(dir, &via);
            continue;
        }
        let r = refs_of(&p);
        if r.dynamic && !out.dynamic.contains(&p) {
            out.dynamic.push(p.clone());
            out.note(format!(
                "{} (loaded by {}) loads a module named by a value skarn cannot read \
                 statically: that module is not protected",
                p.display(),
                via.display()
            ));
        }
        let mut found: Vec<(Option<PathBuf>, Vec<PathBuf>)> = Vec::new();
        found.extend(r.js.iter().map(|s| resolve_js(dir, s)));
        found.extend(r.modules.iter().map(|m| resolve_module(dir, m)));
        found.extend(r.paths.iter().map(|s| {
            let f = lexical(&dir.join(s));
            (is_file(&f).then_some(f), Vec::new())
        }));
        for s in &r.bare {
            let hit = node::resolve(&node, dir, s);
            if hit.unresolved {
                out.note(format!(
                    "{} (loaded by {}) imports `{s}`, which skarn cannot resolve statically: \
                     what it leads to is not protected",
                    p.display(),
                    via.display()
                ));
            }
            hit.trees.into_iter().for_each(|t| out.tree(t, &via));
            found.extend(hit.found);
        }
        for w in &r.names {
            for n in node::names(w) {
                let hit = node::resolve(&node, dir, &n);
                hit.trees.into_iter().for_each(|t| out.tree(t, &via));
                found.extend(hit.found);
            }
        }
        for (file, before) in found {
            for f in before.into_iter().chain(file.clone()) {
                if !f.starts_with(&ws) || seen.contains(&f) {
                    continue;
                }
                seen.push(f.clone());
                let js = JS_EXTS.contains(&ext(&f));
                if js && Some(&f) == file.as_ref() {
                    // Read (or, past a bound, protected whole) in turn.
                    queue.push_back((f.clone(), via.clone(), depth + 1));
                }
                if out.files.len() >= MAX_FILES {
                    if let Some(d) = f.parent() {
                        out.bound(d, &via);
                    }
                    continue;
                }
                out.files.push(Found {
                    path: f,
                    via: via.clone(),
                });
            }
        }
    }
    out
}

#[cfg(test)]
#[path = "config_refs_tests.rs"]
mod tests;
