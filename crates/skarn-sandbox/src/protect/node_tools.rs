//! The project's own copies of the tools editors load from `node_modules`
//! (atk22l F11), and every package beside them (atk22o F2: ESLint loads
//! its parser and config loader from sibling packages): the Prettier, ESLint, Stylelint, Tailwind and TypeScript
//! extensions load the project's package when a file is opened or saved,
//! and `npx <tool>` runs the project's `node_modules/.bin/<tool>` first.
//! `node_modules` is ignored by git, so a change there shows nowhere. The
//! copy-on-write layer refuses, for every package, a file the run changed
//! or added while the package's version stayed the host's (an install
//! changes the version, a reinstall writes the same bytes), and a
//! `node_modules/.bin` entry that differs from the host's or, new and
//! named like one of these tools, does not lead into that `node_modules`
//! directory. (The direct mode does not
//! compare them: SECURITY.md.)

use std::ffi::OsStr;
use std::path::Path;

/// The packages editors load from the project, by directory below
/// `node_modules` (a scope and its package: two names).
const TOOLS: &[&str] = &[
    "prettier",
    "eslint",
    "stylelint",
    "typescript",
    "tailwindcss",
    "@biomejs/biome",
];

/// The programs those packages put in `node_modules/.bin`, which editors,
/// `npx` and commit hooks run by name.
const TOOL_BINS: &[&str] = &[
    "prettier",
    "eslint",
    "stylelint",
    "tsc",
    "tsserver",
    "tailwindcss",
    "tailwind",
    "biome",
];

/// Where `n` (workspace names) lies relative to its innermost
/// `node_modules`: the index of that directory.
fn node_modules_at(n: &[&OsStr]) -> Option<usize> {
    n.iter().rposition(|c| *c == "node_modules")
}

/// The number of names of the package `n[k + 1..]` starts with (a scope
/// and its package: two), for a path below the package's directory; not
/// for the package manager's own entries (`.bin`, `.pnpm`, `.cache`,
/// `.package-lock.json`: a leading dot). Every package, not only the
/// tools: a tool loads its dependencies from the same `node_modules`
/// (ESLint's parser `espree`, its scope analyser, its config loader:
/// atk22o F2), so what the editor loads is every package there.
fn package_len(rest: &[&OsStr]) -> Option<usize> {
    let first = rest.first()?.to_string_lossy();
    if first.starts_with('.') {
        return None;
    }
    let len = if first.starts_with('@') { 2 } else { 1 };
    (rest.len() > len).then_some(len)
}

fn version(p: &Path) -> Result<Option<String>, ()> {
    match crate::protect::small_file::read_bytes(p) {
        Ok(None) => Ok(None),
        Ok(Some(b)) => Ok(serde_json::from_slice::<serde_json::Value>(&b)
            .ok()
            .and_then(|v| v.get("version").and_then(|x| x.as_str()).map(String::from))),
        Err(_) => Err(()),
    }
}

/// Why the change at workspace names `n` (`upper`: the layer's entry,
/// `abs`: the host's path; `delete`: a removal) is refused.
pub fn check_layer_change(
    n: &[&OsStr],
    upper: &Path,
    abs: &Path,
    delete: bool,
) -> Result<(), String> {
    // A `.bin` entry wherever it was written: a `node_modules` reached
    // through the host's link to a directory of another name has its
    // `.bin` there (atk22o F5; the run's own links there are refused,
    // [`crate::protect::searched_dirs`]).
    if n.len() >= 2 && n[n.len() - 2] == ".bin" {
        return bin_entry(upper, abs, delete);
    }
    let Some(k) = node_modules_at(n) else {
        return Ok(());
    };
    let rest = &n[k + 1..];
    if rest.len() == 1 || (rest.len() == 2 && rest[0].to_string_lossy().starts_with('@')) {
        return package_dir(rest, upper, abs, delete);
    }
    let Some(len) = package_len(rest) else {
        return Ok(());
    };
    // The package directory, in the layer and on the host.
    let below = rest.len() - len;
    let (Some(up), Some(host)) = (upper.ancestors().nth(below), abs.ancestors().nth(below)) else {
        return Ok(());
    };
    let Ok(Some(host_version)) = version(&host.join("package.json")) else {
        // Not on the host: an install.
        return Ok(());
    };
    let replaced = match version(&up.join("package.json")) {
        Ok(None) => false,
        Ok(Some(v)) => v != host_version,
        // A whiteout: the package removed whole.
        Err(()) => true,
    };
    if replaced || (!delete && same_bytes(upper, abs)) {
        return Ok(());
    }
    Err(format!(
        "a file of the project's {} package changed in place (its version is the host's): \
         editors load the tools of node_modules when a file is opened or saved, and the \
         tools load the packages beside them (an install changes the version, a reinstall \
         writes the same bytes)",
        rest[..len]
            .iter()
            .map(|c| c.to_string_lossy())
            .collect::<Vec<_>>()
            .join("/")
    ))
}

/// A package's directory itself made a link (pnpm's layout): a tool's
/// only to where the host's led, another's to there or to another
/// version.
fn package_dir(rest: &[&OsStr], upper: &Path, abs: &Path, delete: bool) -> Result<(), String> {
    let name = rest
        .iter()
        .map(|c| c.to_string_lossy())
        .collect::<Vec<_>>()
        .join("/");
    let Ok(new) = std::fs::read_link(upper) else {
        return Ok(());
    };
    if delete || std::fs::symlink_metadata(abs).is_err() {
        return Ok(());
    }
    if std::fs::read_link(abs).is_ok_and(|old| old == new) {
        return Ok(());
    }
    // Any other package (issue 22, eighth round: a tool loads the
    // packages beside it): an install links another version.
    let linked = [upper, abs]
        .iter()
        .filter_map(|b| Some(b.parent()?.join(&new).join("package.json")))
        .find_map(|p| version(&p).ok().flatten());
    if !TOOLS.contains(&name.as_str())
        && let (Ok(Some(was)), Some(now)) = (version(&abs.join("package.json")), linked)
        && was != now
    {
        return Ok(());
    }
    Err(format!(
        "the project's {name} package made a link elsewhere: editors load it when a file is \
         opened or saved"
    ))
}

fn same_bytes(a: &Path, b: &Path) -> bool {
    use crate::protect::small_file::read_bytes;
    matches!((read_bytes(a), read_bytes(b)), (Ok(Some(x)), Ok(Some(y))) if x == y)
}

/// A `node_modules/.bin` entry: the host's may change only to what it
/// was; a new one named like a tool ([`TOOL_BINS`]) must be a link into
/// the same `node_modules` directory (what npm, yarn and bun make).
fn bin_entry(upper: &Path, abs: &Path, delete: bool) -> Result<(), String> {
    let host = std::fs::symlink_metadata(abs).is_ok();
    if delete {
        return Ok(());
    }
    let ok = if host {
        let new_link = std::fs::read_link(upper).ok();
        match (&new_link, std::fs::read_link(abs).ok()) {
            (Some(a), Some(b)) => *a == b,
            (None, None) => same_bytes(upper, abs),
            _ => false,
        }
    } else {
        return new_bin(upper, abs);
    };
    if ok {
        return Ok(());
    }
    Err(
        "a node_modules/.bin program other than the host's, or a new one that is not a link \
         to an installed package (npx and the package scripts run it first)"
            .into(),
    )
}

/// The direct mode's check of the `node_modules/.bin` entry `p` the run
/// made or changed: judged as a new one (the host's is gone).
pub fn check_direct_bin(p: &Path) -> Result<(), String> {
    new_bin(p, p)
}

/// A new `.bin` entry (`upper`: as the run left it, `abs`: its place).
fn new_bin(upper: &Path, abs: &Path) -> Result<(), String> {
    let new_link = std::fs::read_link(upper).ok();
    let ok = {
        // A new program of its own name (a script the project's tooling
        // made) is the project's; one named like the tools editors and
        // hooks run must lead into an installed package.
        let name = abs.file_name().unwrap_or_default();
        let tool_name = TOOL_BINS.iter().any(|b| name == *b);
        if crate::protect::node_bin_names::host_program(name) {
            // Named like a host program (`node`, `git`, `sh`): the package
            // managers put `.bin` first on PATH for every script, so only
            // a link into the package that declares that program (atk22n
            // F6).
            if new_link.is_some_and(|t| {
                crate::protect::node_bin_names::declared_by_package(upper, abs, &t, name)
            }) {
                return Ok(());
            }
            return Err(format!(
                "a new node_modules/.bin program named like the host program {:?} that is not \
                 a link to an installed package declaring it (npm, pnpm, yarn and npx put \
                 node_modules/.bin first on PATH for every package script)",
                name.to_string_lossy()
            ));
        } else {
            !tool_name
                || new_link.is_some_and(|t| crate::protect::node_bin_names::into_node_modules(&t))
        }
    };
    if ok {
        return Ok(());
    }
    Err(
        "a node_modules/.bin program other than the host's, or a new one that is not a link \
         to an installed package (npx and the package scripts run it first)"
            .into(),
    )
}
