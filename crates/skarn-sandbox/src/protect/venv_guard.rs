//! Python virtual environments inside writable grants (a project's
//! `.venv`, activated or not): host python started from one (an IDE's
//! interpreter discovery on open, `uv run`, a later activation) runs every
//! `.pth` line that starts with `import`, and `sitecustomize.py` /
//! `usercustomize.py`, before any project code. Before a run the existing
//! ones are kept read-only (with `pyvenv.cfg`); after it, a `.pth` file
//! with such a line, or a customize module, made or changed during the run
//! is set aside. A `.pth` of plain paths (what editable installs of
//! src-layout projects by pip, hatchling or flit write) is kept, so
//! `pip install -e .` inside works and stays installed.
//!
//! Every `lib*/*/site-packages` of an environment is looked at, by its
//! real path (`lib64 -> lib` once; a link the run made to another
//! directory of the grants leads to that directory, which is vetted), and
//! every entry of each is matched by name: no list is cut silently
//! (attack atk24d F10). The `lib*` directories and their entries are
//! counted against [`MAX_LIB_ENTRIES`]; past it the check is incomplete, which
//! fails the run.

use std::collections::HashSet;
use std::ffi::OsStr;
use std::path::{Path, PathBuf};

/// `lib*` directories of the environments and their entries looked at in
/// all by one check (each may name a site-packages directory); past it the check
/// after a run is incomplete and the run fails.
pub(crate) const MAX_LIB_ENTRIES: usize = crate::protect::grant_walk::MAX_VETTED;

/// Start-up files kept read-only before a run, at most, in all: past it
/// the others stay writable during the run (one changed is still set
/// aside after it: the check after the run has no such bound).
const MAX_PROTECTED: usize = 4096;

pub use crate::protect::grant_walk::is_venv;

/// The site-packages directories found so far (real paths, each once).
struct Sites {
    /// `lib*` entries looked at, at most.
    limit: usize,
    seen_libs: HashSet<PathBuf>,
    seen: HashSet<PathBuf>,
    dirs: Vec<PathBuf>,
    /// `lib*` entries looked at.
    looked: usize,
    /// Stopped at [`MAX_LIB_ENTRIES`].
    incomplete: bool,
}

impl Sites {
    fn new(limit: usize) -> Sites {
        Sites {
            limit,
            seen_libs: HashSet::new(),
            seen: HashSet::new(),
            dirs: Vec::new(),
            looked: 0,
            incomplete: false,
        }
    }

    /// Add the site-packages directories of the environment `env`
    /// (`lib/python3.X/site-packages`, `lib64/...`, any `lib*/*/`), by
    /// their real paths.
    fn add(&mut self, env: &Path) {
        let Ok(rd) = std::fs::read_dir(env) else {
            return;
        };
        for e in rd.flatten() {
            if !e.file_name().as_encoded_bytes().starts_with(b"lib") {
                continue;
            }
            if self.looked >= self.limit {
                self.incomplete = true;
                return;
            }
            self.looked += 1;
            // (`lib64 -> lib`, what `python3 -m venv` makes: the same
            // files, listed once, attack atk24d F7.)
            let Ok(lib) = std::fs::canonicalize(e.path()) else {
                continue;
            };
            if !lib.is_dir() || !self.seen_libs.insert(lib.clone()) {
                continue;
            }
            let Ok(rd) = std::fs::read_dir(&lib) else {
                continue;
            };
            for v in rd.flatten() {
                if self.looked >= self.limit {
                    self.incomplete = true;
                    return;
                }
                self.looked += 1;
                let Ok(sp) = std::fs::canonicalize(v.path().join("site-packages")) else {
                    continue;
                };
                if sp.is_dir() && self.seen.insert(sp.clone()) {
                    self.dirs.push(sp);
                }
            }
        }
    }
}

/// Modules Python imports at every start from a site-packages directory:
/// the customize hooks, and the one every pip-made environment's
/// `distutils-precedence.pth` imports (atk24e F4), and those start-up
/// imports when the interpreter lacks them (`readline` for an interactive
/// python, `apport_python_hook` for Debian's `sitecustomize`).
const START_UP_MODULES: &[&[u8]] = &[
    b"sitecustomize",
    b"usercustomize",
    b"_distutils_hack",
    b"readline",
    b"apport_python_hook",
];

/// Whether `name` is one Python's start-up reads in a site-packages
/// directory: a `.pth`, or a start-up module in any form the import
/// system loads (`.py`, `.pyc`, an extension module, a package
/// directory; atk24e F3).
pub(crate) fn start_up_name(n: &OsStr) -> bool {
    let n = n.as_encoded_bytes();
    n.ends_with(b".pth")
        || START_UP_MODULES.iter().any(|m| {
            n == *m
                || n.strip_prefix(*m)
                    .is_some_and(|rest| rest.starts_with(b"."))
        })
}

/// Directories Python's start-up reads `.pth` files and customize
/// modules from (`dist-packages`: Debian's name for the system ones).
const SITE_DIRS: &[&str] = &["site-packages", "dist-packages"];

/// Whether `p` names one of the files [`protected`] and [`set_aside`]
/// keep from being planted, in whatever environment it lies, existing or
/// not yet made: a `pyvenv.cfg` (it makes its directory an environment and
/// names the interpreter), or a start-up name ([`start_up_name`]: a `.pth`,
/// a customize module in any form) directly inside a site-packages
/// directory. For writers that bypass the sandbox (an agent's own file
/// tools, judged by `skarn hook`), which no check after a run follows.
pub fn start_up_path(p: &Path) -> bool {
    if p.file_name().is_some_and(|n| n == "pyvenv.cfg") {
        return true;
    }
    let names: Vec<&OsStr> = p.iter().collect();
    names
        .windows(2)
        .any(|w| SITE_DIRS.iter().any(|d| w[0] == *d) && start_up_name(w[1]))
}

/// The files to keep read-only before a run: `pyvenv.cfg` and each
/// `.pth` and customize module of the environment `env` (real paths
/// inside it only: a path through a link cannot be bound read-only).
pub fn protected(env: &Path) -> Vec<PathBuf> {
    let mut out = vec![env.join("pyvenv.cfg")];
    let Ok(real_env) = std::fs::canonicalize(env) else {
        return out;
    };
    let mut sites = Sites::new(MAX_LIB_ENTRIES);
    sites.add(env);
    for sp in sites.dirs.iter().filter(|s| s.starts_with(&real_env)) {
        let Ok(rd) = std::fs::read_dir(sp) else {
            continue;
        };
        let imported = crate::protect::pth_imports::of_dir(sp);
        for e in rd.flatten() {
            if out.len() > MAX_PROTECTED {
                return out;
            }
            let n = e.file_name();
            if start_up_name(&n) || imported.has_entry(n.as_encoded_bytes()) {
                out.push(e.path());
            }
        }
    }
    out
}

/// Whether `.pth` text has a line Python executes (`import ...`), with
/// lines split as any Python splits them (`\r`, `\n`, and
/// `str.splitlines()`'s other breaks; a byte-order mark at the start
/// dropped; atk24e F2, atk22k F7).
pub fn runs_code(text: &str) -> bool {
    crate::protect::pth_imports::python_lines(text)
        .any(|l| l.starts_with("import ") || l.starts_with("import\t"))
}

/// Whether the start-up file `name` (`.pth` or customize module, its
/// content at `p`) would run code: a customize module always; a `.pth`
/// with an `import` line, or one that cannot be read as text within the
/// size bound.
pub fn start_up_runs_code(name: &OsStr, p: &Path) -> bool {
    if !name.as_encoded_bytes().ends_with(b".pth") {
        return true;
    }
    let bytes = crate::protect::small_file::read_bytes(p).ok().flatten();
    bytes.is_none_or(|b| {
        crate::protect::pth_imports::decodings(&b)
            .iter()
            .any(|t| runs_code(t))
    })
}

/// What the check after a run did to virtual environments.
#[derive(Debug, Default)]
pub struct Checked {
    /// One line per file set aside.
    pub lines: Vec<String>,
    /// Stopped at [`MAX_LIB_ENTRIES`]: a site-packages directory may be
    /// unvetted, so the run must fail.
    pub incomplete: bool,
}

/// After a run: set aside, in each environment of `envs`, every `.pth`
/// that runs code and every customize module made or changed at or after
/// `since`, in each site-packages directory that lies inside `roots` (the
/// writable grants: the run wrote nowhere else); one line each.
pub fn set_aside(roots: &[PathBuf], envs: &[PathBuf], since: std::time::SystemTime) -> Checked {
    set_aside_within(roots, envs, since, MAX_LIB_ENTRIES)
}

fn set_aside_within(
    roots: &[PathBuf],
    envs: &[PathBuf],
    since: std::time::SystemTime,
    limit: usize,
) -> Checked {
    let mut out = Checked::default();
    let roots: Vec<PathBuf> = roots
        .iter()
        .map(|r| std::fs::canonicalize(r).unwrap_or_else(|_| r.clone()))
        .collect();
    let mut sites = Sites::new(limit);
    for env in envs {
        sites.add(env);
        if sites.incomplete {
            break;
        }
    }
    for sp in sites
        .dirs
        .iter()
        .filter(|s| roots.iter().any(|r| s.starts_with(r)))
    {
        let Ok(rd) = std::fs::read_dir(sp) else {
            continue;
        };
        // The modules the import lines of its `.pth` files name run at
        // every start too (atk22g F9): those of the `.pth` files as they
        // are now (one the run made or changed is itself set aside).
        let imported = crate::protect::pth_imports::of_dir(sp);
        for e in rd.flatten() {
            let p = e.path();
            let n = e.file_name();
            let start = start_up_name(&n) || imported.has_entry(n.as_encoded_bytes());
            if !start || !tree_changed_since(&p, since) || !start_up_runs_code(&e.file_name(), &p) {
                continue;
            }
            let aside = crate::protect::set_aside::set_aside(&p, "skarn-set-aside");
            out.lines.push(format!(
                "{} was written during the run and the environment's python runs it at \
                 every start (host too); {}",
                p.display(),
                aside.describe("review it before renaming it back or using that python")
            ));
        }
    }
    if sites.incomplete {
        out.incomplete = true;
        out.lines.push(format!(
            "the check of the virtual environments after the run stopped after {} entries of \
             their lib directories: site-packages directories past them were not vetted for \
             .pth files and customize modules that host python runs at start, so the run \
             fails; review {} before using their python",
            limit,
            envs.iter()
                .map(|e| e.display().to_string())
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    out
}

thread_local! {
    /// While one layer is vetted ([`vetting_layer`]): the `.pth` import
    /// lines of each site-packages directory, host and layer read together
    /// at its first file. Read again for each file, a site-packages
    /// directory of N entries was listed N times (30,000 took minutes).
    static PTH_CACHE: std::cell::RefCell<Option<PthCache>> =
        const { std::cell::RefCell::new(None) };
}

type PthCache = std::collections::HashMap<
    (Option<PathBuf>, Option<PathBuf>),
    Vec<crate::protect::pth_imports::Imported>,
>;

/// Keep [`check_layer_change`]'s reading of `.pth` files for the length of
/// `f`, one layer's vetting and applying. Sound while the layer is
/// applied: both sides are read at once, and applying only moves a `.pth`
/// from the layer to the host, so what was read covers both afterwards.
pub fn vetting_layer<T>(f: impl FnOnce() -> T) -> T {
    PTH_CACHE.with(|c| *c.borrow_mut() = Some(PthCache::new()));
    // (And the packages the layer's modules lie in, as they were before.)
    let out = crate::protect::stdlib_shadow::scoped(f);
    PTH_CACHE.with(|c| *c.borrow_mut() = None);
    out
}

/// Whether an import line of a `.pth` file of the site-packages directory
/// `host` (on the host) or `upper` (in the layer) names `module`.
fn pth_named(host: Option<PathBuf>, upper: Option<PathBuf>, module: &[u8]) -> bool {
    let read = |h: &Option<PathBuf>, u: &Option<PathBuf>| -> Vec<_> {
        [h, u]
            .into_iter()
            .flatten()
            .map(|d| crate::protect::pth_imports::of_dir(d))
            .collect()
    };
    PTH_CACHE.with(|c| match c.borrow_mut().as_mut() {
        None => read(&host, &upper).iter().any(|i| i.has_entry(module)),
        Some(m) => m
            .entry((host.clone(), upper.clone()))
            .or_insert_with(|| read(&host, &upper))
            .iter()
            .any(|i| i.has_entry(module)),
    })
}

/// The rule of [`set_aside`] for one change in a copy-on-write layer other
/// than a directory (`names`: its path relative to the workspace; `file`:
/// a regular file, read at `upper`; else a link or special file): `Err` when host python
/// would run it at start. Applied in every `site-packages` directory of
/// the layer (a venv's `lib64` or `python3.X` may be a link to one
/// anywhere), and to a link in place of a site-packages directory.
pub fn check_layer_change(
    names: &[&OsStr],
    file: bool,
    upper: &Path,
    host: bool,
    host_path: &Path,
) -> Result<(), String> {
    let Some((last, dir)) = names.split_last() else {
        return Ok(());
    };
    // A module (or a file of a package) an import line of a `.pth` of its
    // site-packages directory names, on the host or in the layer (atk22g
    // F9).
    if let Some(i) = names
        .iter()
        .position(|d| SITE_DIRS.iter().any(|s| *d == *s))
        && let Some(module) = names.get(i + 1)
    {
        let up = names.len() - 1 - i;
        let site = |p: &Path| p.ancestors().nth(up).map(Path::to_path_buf);
        let named = pth_named(site(host_path), site(upper), module.as_encoded_bytes());
        if named {
            return Err(format!(
                "{}: a module an import line of a .pth file of its site-packages directory \
                 names (python runs it at every start, host too)",
                module.to_string_lossy()
            ));
        }
    }
    if !file && *last == "site-packages" {
        return Err(
            "a link in place of a site-packages directory (python reads the .pth \
                    files and customize modules of where it leads at every start)"
                .into(),
        );
    }
    if *last == "pyvenv.cfg" && host {
        return Err("a virtual environment's pyvenv.cfg (where its python is taken from)".into());
    }
    // Inside a start-up package (`site-packages/_distutils_hack/...`).
    if let Some(i) = dir.iter().position(|d| *d == "site-packages")
        && dir.get(i + 1).is_some_and(|m| start_up_name(m))
    {
        return Err(
            "a file of a module python imports at every start from a site-packages \
             directory (host too)"
                .into(),
        );
    }
    if dir.last().is_some_and(|d| *d == "site-packages")
        && start_up_name(last)
        && (!file || start_up_runs_code(last, upper))
    {
        return Err(
            "a .pth file that runs code, or a customize module, of a site-packages directory \
             (python runs it at every start, host too)"
                .into(),
        );
    }
    Ok(())
}

/// Whether `p`, or anything below it when it is a directory (a start-up
/// package), changed at or after `since`; past 10,000 entries, yes.
fn tree_changed_since(p: &Path, since: std::time::SystemTime) -> bool {
    if crate::protect::grant_walk::changed_since(p, since) {
        return true;
    }
    let mut stack = vec![p.to_path_buf()];
    let mut seen = 0usize;
    while let Some(d) = stack.pop() {
        if !std::fs::symlink_metadata(&d).is_ok_and(|m| m.is_dir()) {
            continue;
        }
        let Ok(rd) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in rd.flatten() {
            seen += 1;
            if seen > 10_000 {
                return true;
            }
            let q = e.path();
            if crate::protect::grant_walk::changed_since(&q, since) {
                return true;
            }
            stack.push(q);
        }
    }
    false
}

#[cfg(test)]
#[path = "venv_guard_tests.rs"]
mod tests;
