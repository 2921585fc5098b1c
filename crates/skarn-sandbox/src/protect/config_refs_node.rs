//! Node's resolution of the specifiers of a protected configuration that
//! are not relative (atk22n F2): a package name (`@acme/eslint-config`,
//! `x/sub`) found by walking up the `node_modules` directories and
//! following their links, then the package's `exports` (the conditions
//! `node`, `import`, `require`, `module-sync`, `default`) or `main`; and a
//! subpath import (`#rules`) through the nearest `package.json`'s
//! `imports`. Only what lies in a workspace package counts (a directory
//! of the workspace outside any `node_modules`: what pnpm, yarn and npm
//! workspaces link); an installed package is the dependency tree's
//! (see SECURITY.md). A package whose entry cannot be found statically is
//! protected whole; a `#x` without a mapping is said.

use std::path::{Component, Path, PathBuf};

use serde_json::Value;

/// The conditions node matches by default (for `import` and `require`).
const CONDITIONS: &[&str] = &["node", "import", "require", "module-sync", "default"];

/// How a relative specifier is resolved from a directory (the file, the
/// names tried before it).
pub(crate) type ResolveJs = fn(&Path, &str) -> (Option<PathBuf>, Vec<PathBuf>);

/// What one specifier leads to inside the workspace.
#[derive(Debug, Default)]
pub(crate) struct Hit {
    /// Files (with the names tried before them), as [`ResolveJs`] gives.
    pub found: Vec<(Option<PathBuf>, Vec<PathBuf>)>,
    /// Workspace packages protected whole (an entry not found statically).
    pub trees: Vec<PathBuf>,
    /// The specifier cannot be resolved statically (said in the report).
    pub unresolved: bool,
}

/// The workspace, as written and as resolved.
pub(crate) struct Ws<'a> {
    pub path: &'a Path,
    pub real: &'a Path,
    pub resolve_js: ResolveJs,
}

impl Ws<'_> {
    /// `p` (resolved) as a path below the workspace's written name, when
    /// it lies in the workspace outside every `node_modules`.
    fn inside(&self, p: &Path) -> Option<PathBuf> {
        let rel = p.strip_prefix(self.real).ok()?;
        let in_deps = rel
            .components()
            .any(|c| c == Component::Normal("node_modules".as_ref()));
        (!in_deps).then(|| self.path.join(rel))
    }
}

fn read_json(p: &Path) -> Option<Value> {
    use std::io::Read;
    let f = std::fs::File::open(p).ok()?;
    let mut b = Vec::new();
    f.take(1 << 20).read_to_end(&mut b).ok()?;
    serde_json::from_slice(&b).ok()
}

/// The targets a conditions value gives (every default condition: the
/// host may load the configuration by `import` or by `require`).
fn conditions(v: &Value, out: &mut Vec<String>) {
    match v {
        Value::String(s) => out.push(s.clone()),
        Value::Array(a) => a.iter().for_each(|x| conditions(x, out)),
        Value::Object(o) => o
            .iter()
            .filter(|(k, _)| CONDITIONS.contains(&k.as_str()))
            .for_each(|(_, x)| conditions(x, out)),
        _ => {}
    }
}

/// The targets of `key` in an `exports` or `imports` map (exact, then a
/// `*` pattern); `None` when no entry matches.
fn mapped(map: &serde_json::Map<String, Value>, key: &str) -> Option<Vec<String>> {
    let mut out = Vec::new();
    if let Some(v) = map.get(key) {
        conditions(v, &mut out);
        return Some(out);
    }
    for (k, v) in map {
        let Some((pre, post)) = k.split_once('*') else {
            continue;
        };
        if key.len() >= pre.len() + post.len() && key.starts_with(pre) && key.ends_with(post) {
            let star = &key[pre.len()..key.len() - post.len()];
            conditions(v, &mut out);
            return Some(out.into_iter().map(|t| t.replace('*', star)).collect());
        }
    }
    None
}

/// `spec` (a package name or `#x`) from the directory `dir`.
pub(crate) fn resolve(ws: &Ws, dir: &Path, spec: &str) -> Hit {
    let mut hit = Hit::default();
    if spec.starts_with('#') {
        imports(ws, dir, spec, &mut hit);
    } else {
        package(ws, dir, spec, &mut hit);
    }
    hit
}

/// A `#x` specifier: the nearest `package.json`'s `imports`.
fn imports(ws: &Ws, dir: &Path, spec: &str, hit: &mut Hit) {
    let Some(pkg) = dir.ancestors().find(|d| d.join("package.json").is_file()) else {
        hit.unresolved = true;
        return;
    };
    let map = read_json(&pkg.join("package.json"))
        .and_then(|v| v.get("imports").and_then(Value::as_object).cloned());
    let Some(targets) = map.and_then(|m| mapped(&m, spec)) else {
        hit.unresolved = true;
        return;
    };
    for t in targets {
        if t.starts_with("./") {
            target(ws, pkg, &t, hit);
        } else if !t.starts_with('#') && crate::protect::config_refs_read::bare(&t) {
            package(ws, pkg, &t, hit);
        }
    }
}

/// A file a package's map names (`./x`), kept when in the workspace.
fn target(ws: &Ws, pkg: &Path, t: &str, hit: &mut Hit) {
    let (file, before) = (ws.resolve_js)(pkg, t);
    let keep = |p: &Path| {
        std::fs::canonicalize(p)
            .ok()
            .or_else(|| Some(p.parent()?.canonicalize().ok()?.join(p.file_name()?)))
            .and_then(|r| ws.inside(&r))
    };
    let file = file.and_then(|f| keep(&f));
    let before: Vec<PathBuf> = before.iter().filter_map(|b| keep(b)).collect();
    if file.is_some() || !before.is_empty() {
        hit.found.push((file, before));
    }
}

/// A package name (with a subpath): the `node_modules` walk, then the
/// package's `exports` or `main`.
fn package(ws: &Ws, dir: &Path, spec: &str, hit: &mut Hit) {
    let n = if spec.starts_with('@') { 2 } else { 1 };
    let parts: Vec<&str> = spec.splitn(n + 1, '/').collect();
    if parts.len() < n {
        return;
    }
    let name = parts[..n].join("/");
    let sub = parts.get(n).map(|s| format!("./{s}"));
    let Some(found) = dir
        .ancestors()
        .map(|d| d.join("node_modules").join(&name))
        .find(|c| c.is_dir())
    else {
        return;
    };
    let Ok(real) = std::fs::canonicalize(&found) else {
        return;
    };
    let Some(pkg) = ws.inside(&real) else {
        return;
    };
    let manifest = read_json(&real.join("package.json"));
    let key = sub.clone().unwrap_or_else(|| ".".into());
    if let Some(exports) = manifest.as_ref().and_then(|m| m.get("exports")) {
        let targets = match exports {
            Value::Object(o) if o.keys().any(|k| k.starts_with('.')) => mapped(o, &key),
            other => (key == ".").then(|| {
                let mut out = Vec::new();
                conditions(other, &mut out);
                out
            }),
        };
        match targets {
            Some(ts) if !ts.is_empty() && ts.iter().all(|t| t.starts_with("./")) => {
                ts.iter().for_each(|t| target(ws, &real, t, hit));
            }
            _ => hit.trees.push(pkg),
        }
        return;
    }
    let main = manifest
        .as_ref()
        .and_then(|m| m.get("main"))
        .and_then(Value::as_str)
        .map(|m| format!("./{}", m.trim_start_matches("./")));
    let before = hit.found.len();
    match (sub, main) {
        (Some(s), _) => target(ws, &real, &s, hit),
        (None, Some(m)) => {
            target(ws, &real, &m, hit);
            if hit.found.len() == before || hit.found.last().is_some_and(|f| f.0.is_none()) {
                target(ws, &real, ".", hit);
            }
        }
        (None, None) => target(ws, &real, ".", hit),
    }
    if hit.found.len() == before {
        hit.trees.push(pkg);
    }
}

/// The package names a data configuration's word may stand for (ESLint's
/// and Babel's short names: `acme` for `eslint-config-acme`, `@acme` for
/// `@acme/eslint-config`, `plugin:acme/x` for `eslint-plugin-acme`).
pub(crate) fn names(word: &str) -> Vec<String> {
    let plugin = word.strip_prefix("plugin:");
    let w = match plugin {
        Some(p) if p.starts_with('@') => p.split('/').next().unwrap_or(p),
        Some(p) => p.split('/').next().unwrap_or(p),
        None => word,
    };
    let kinds = [
        "eslint-config",
        "eslint-plugin",
        "babel-preset",
        "babel-plugin",
    ];
    let mut out = vec![w.to_string()];
    match w.split_once('/') {
        None if w.starts_with('@') => out.extend(kinds.iter().map(|k| format!("{w}/{k}"))),
        None => out.extend(kinds.iter().map(|k| format!("{k}-{w}"))),
        Some((scope, rest)) if scope.starts_with('@') => {
            out.extend(kinds.iter().map(|k| format!("{scope}/{k}-{rest}")));
        }
        Some(_) => {}
    }
    out
}
