//! `node_modules/.bin` entries named like host programs (attack atk22n
//! F6). npm, pnpm, yarn and npx put every `node_modules/.bin` above the
//! package first on `PATH` for each script they run (`npm test`, the
//! `prepare` script of `npm install`, `npx`): a `.bin/node` or `.bin/git`
//! the run left there runs for every `node ...` or `git ...` of those
//! scripts on the host, and git ignores `node_modules`. Such an entry is
//! kept only when it is a link into the package of that `node_modules`
//! whose `package.json` declares that program name at that path (what
//! npm, yarn and bun make for an installed package).

use std::ffi::OsStr;
use std::path::{Component, Path, PathBuf};

/// Programs a script may start by name that need not be files on `PATH`
/// (shell built-ins that `env`, `xargs` or `find -exec` look up there).
const BUILTIN_LIKE: &[&str] = &[
    "sh", "bash", "env", "echo", "test", "[", "true", "false", "printf", "cd", "pwd", "kill",
    "command", "exec", "type", "read", "node", "npm", "npx", "git", "yarn", "pnpm",
];

/// Directories searched besides the caller's `PATH` (the host's next
/// script may run with the system's `PATH`).
const SYSTEM_BIN: &[&str] = &[
    "/usr/local/sbin",
    "/usr/local/bin",
    "/usr/sbin",
    "/usr/bin",
    "/sbin",
    "/bin",
];

/// `PATH` entries looked at, at most.
const MAX_PATH_ENTRIES: usize = 1000;

fn bin_dirs() -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = SYSTEM_BIN.iter().map(PathBuf::from).collect();
    if let Some(p) = std::env::var_os("PATH") {
        v.extend(
            std::env::split_paths(&p)
                .take(MAX_PATH_ENTRIES)
                .filter(|d| d.is_absolute()),
        );
    }
    v
}

/// Whether `name` is a program of the host's `PATH` (caller's or the
/// system's) or a built-in-like name scripts run.
pub(crate) fn host_program(name: &OsStr) -> bool {
    if BUILTIN_LIKE.iter().any(|b| name == *b) {
        return true;
    }
    let s = name.to_string_lossy();
    if s.is_empty() || s.contains('/') {
        return false;
    }
    bin_dirs().iter().any(|d| {
        std::fs::metadata(d.join(name)).is_ok_and(|m| {
            use std::os::unix::fs::PermissionsExt;
            m.is_file() && m.permissions().mode() & 0o111 != 0
        })
    })
}

/// Whether the link target `t` of the new `.bin` entry `name` (layer
/// entry `upper`, host path `abs`) leads into a package of the same
/// `node_modules` whose `package.json` declares `name` at that path.
pub(crate) fn declared_by_package(upper: &Path, abs: &Path, t: &Path, name: &OsStr) -> bool {
    if !into_node_modules(t) {
        return false;
    }
    let parts: Vec<&OsStr> = t
        .components()
        .skip(1)
        .filter_map(|c| match c {
            Component::Normal(n) => Some(n),
            _ => None,
        })
        .collect();
    let scoped = parts
        .first()
        .is_some_and(|p| p.to_string_lossy().starts_with('@'));
    let len = if scoped { 2 } else { 1 };
    if parts.len() <= len {
        return false;
    }
    let pkg: PathBuf = parts[..len].iter().collect();
    let inside: PathBuf = parts[len..].iter().collect();
    // The package as the run left it (the layer), else the host's.
    let json = [upper, abs]
        .iter()
        .filter_map(|b| {
            b.parent()?
                .parent()
                .map(|nm| nm.join(&pkg).join("package.json"))
        })
        .find_map(|p| crate::protect::small_file::read_bytes(&p).ok().flatten());
    let Some(v) = json.and_then(|b| serde_json::from_slice::<serde_json::Value>(&b).ok()) else {
        return false;
    };
    let pkg_name = v.get("name").and_then(|n| n.as_str()).unwrap_or_default();
    let declared = match v.get("bin") {
        Some(serde_json::Value::String(p)) => {
            let short = pkg_name.rsplit('/').next().unwrap_or_default();
            (name == short).then(|| p.clone())
        }
        Some(serde_json::Value::Object(m)) => name
            .to_str()
            .and_then(|n| m.get(n))
            .and_then(|p| p.as_str())
            .map(String::from),
        _ => None,
    };
    declared.is_some_and(|p| same_inside(&p, &inside))
}

/// Whether the `bin` path `declared` (relative to the package) names
/// `inside`.
fn same_inside(declared: &str, inside: &Path) -> bool {
    let d: PathBuf = Path::new(declared)
        .components()
        .filter(|c| !matches!(c, Component::CurDir))
        .collect();
    d == inside
}

/// Whether the relative link target `t` (from `node_modules/.bin`) stays
/// inside `node_modules`, outside `.bin`.
pub(crate) fn into_node_modules(t: &Path) -> bool {
    use std::path::Component;
    let mut c = t.components();
    c.next() == Some(Component::ParentDir)
        && c.clone().next().is_some_and(|x| x.as_os_str() != ".bin")
        && c.all(|x| matches!(x, Component::Normal(_)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_host_program_name_needs_its_package() {
        let tmp = skarn_test_support::TempDir::new("node-bin-names");
        let nm = tmp.path().join("node_modules");
        std::fs::create_dir_all(nm.join(".bin")).unwrap();
        std::fs::create_dir_all(nm.join("node/bin")).unwrap();
        std::fs::write(
            nm.join("node/package.json"),
            r#"{"name":"node","bin":{"node":"./bin/node"}}"#,
        )
        .unwrap();
        let e = nm.join(".bin/node");
        assert!(host_program(OsStr::new("node")));
        assert!(host_program(OsStr::new("sh")));
        assert!(!host_program(OsStr::new("no-such-program-fx22a")));
        let n = OsStr::new("node");
        assert!(declared_by_package(
            &e,
            &e,
            Path::new("../node/bin/node"),
            n
        ));
        assert!(!declared_by_package(
            &e,
            &e,
            Path::new("../node/bin/other"),
            n
        ));
        assert!(!declared_by_package(
            &e,
            &e,
            Path::new("../git/bin/node"),
            n
        ));
        assert!(!declared_by_package(&e, &e, Path::new("/usr/bin/node"), n));
    }
}
