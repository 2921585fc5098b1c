//! Toolchains and Python environments the host runs later, wherever their
//! files really are (issue 22, attack atk22e/f B and A).
//!
//! A version manager keeps one directory per toolchain (`rustup toolchain
//! link dev ~/proj/build`, a pyenv version or an nvm node linked to a local
//! build, a conda, poetry or hatch environment): the host runs the programs
//! there by name later (`cargo +dev`, `pyenv shell`, `poetry run`), and a
//! Python environment's interpreter loads its `.pth` files and modules at
//! every start. When such a directory, or a link inside it, leads into a
//! writable grant, the command could rewrite what the host runs next.
//!
//! [`places`] lists those directories as the tools themselves find them:
//! their home variables (`RUSTUP_HOME`, `PYENV_ROOT`, `NVM_DIR`,
//! `WORKON_HOME`, `MAMBA_ROOT_PREFIX`, ...), their default places, conda's
//! own list of environments (`~/.conda/environments.txt`), and the single
//! environments users keep (`~/.venv`, `$VIRTUAL_ENV`, `/opt/venv`). Each
//! link met on the way down (the entry itself, and a bounded number of
//! levels below it) is resolved, and its target kept as a directory tree
//! the host trusts: the planner keeps it read-only where it lies in a
//! writable grant.

use std::path::{Path, PathBuf};

use crate::policy::canonical::CanonicalCache;
use crate::protect::trusted::{Tree, Trusted};

/// Entries looked at by one scan, in all; past it the rest is said.
pub const MAX_ENTRIES: usize = 40_000;

/// Entries looked at below one toolchain or environment.
const PER_PLACE: usize = 4096;

/// Directory levels looked at below each toolchain or environment
/// (`env/lib/python3.12/site-packages/<entry>` is four).
const DEPTH: usize = 4;

/// Directories whose entries are toolchains or environments: the
/// variable that moves the tool's home (if any), its default below the
/// home, and the path below that home. The first ones (up to
/// [`TOOLCHAIN_DIRS`]) hold installed toolchains, which no command
/// installs into: one lying in a writable grant is kept read-only whole.
/// The others hold Python environments, which `pip install` writes: one
/// lying in a grant is guarded as every environment there is
/// ([`crate::protect::venv_guard`]); only the links are followed here.
const VERSION_DIRS: &[(Option<&str>, &str, &str)] = &[
    (Some("RUSTUP_HOME"), ".rustup", "toolchains"),
    (Some("PYENV_ROOT"), ".pyenv", "versions"),
    (Some("NVM_DIR"), ".nvm", "versions/node"),
    (Some("NVM_DIR"), ".nvm", "versions/io.js"),
    (Some("RBENV_ROOT"), ".rbenv", "versions"),
    (Some("NODENV_ROOT"), ".nodenv", "versions"),
    (Some("GOENV_ROOT"), ".goenv", "versions"),
    (None, ".jenv", "versions"),
    (Some("ASDF_DATA_DIR"), ".asdf", "installs/*"),
    (Some("SDKMAN_DIR"), ".sdkman", "candidates/*"),
    (None, ".local/share/mise", "installs/*"),
    (None, ".local/share/fnm", "node-versions"),
    (Some("UV_PYTHON_INSTALL_DIR"), ".local/share/uv/python", ""),
    (None, ".local/share/uv", "tools"),
    (Some("WORKON_HOME"), ".virtualenvs", ""),
    (None, ".local/share/virtualenvs", ""),
    (None, ".cache/pypoetry", "virtualenvs"),
    (None, ".local/share/pdm", "venvs"),
    (None, ".local/share/hatch", "env/virtual/*"),
    (None, ".local/share/pipx", "venvs"),
    (None, ".local/pipx", "venvs"),
    (Some("MAMBA_ROOT_PREFIX"), "micromamba", "envs"),
    (None, ".local/share/mamba", "envs"),
    (None, ".pixi", "envs"),
    (None, ".conda", "envs"),
    (None, "miniconda3", "envs"),
    (None, "anaconda3", "envs"),
    (None, "miniforge3", "envs"),
    (None, "mambaforge", "envs"),
];

/// How many of [`VERSION_DIRS`] hold toolchains (the rest: environments).
const TOOLCHAIN_DIRS: usize = 13;

/// Single environments below the home (each is itself one).
const HOME_ENVS: &[&str] = &[".venv", "venv", ".local/venv"];

/// Single environments outside the home.
const SYSTEM_ENVS: &[&str] = &["/opt/venv"];

/// Variables naming one environment of the caller's.
const ENV_VARS: &[&str] = &["VIRTUAL_ENV", "CONDA_PREFIX", "PIXI_PROJECT_ROOT"];

/// One toolchain or environment directory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Place {
    /// As the tool names it.
    pub path: PathBuf,
    /// What it is, for the report.
    pub what: String,
    /// An installed toolchain (kept read-only whole where it lies in a
    /// writable grant), not an environment.
    pub toolchain: bool,
}

/// The toolchain and environment directories of the home `home` (with
/// the environment read through `var`).
pub fn places(home: &Path, var: &dyn Fn(&str) -> Option<String>) -> Vec<Place> {
    let abs = |k: &str| var(k).map(PathBuf::from).filter(|p| p.is_absolute());
    let mut out: Vec<Place> = Vec::new();
    let mut put = |path: PathBuf, what: String, toolchain: bool| {
        out.push(Place {
            path,
            what,
            toolchain,
        })
    };
    for (i, (v, default, below)) in VERSION_DIRS.iter().enumerate() {
        // The tool's variable moves its home; the default place is looked
        // at too (a host shell without the variable uses it).
        let mut bases = vec![home.join(default)];
        bases.extend(v.and_then(abs).filter(|b| *b != bases[0]));
        for dir in bases.iter().flat_map(|b| expand(b, below)) {
            for e in entries(&dir) {
                let toolchain = i < TOOLCHAIN_DIRS;
                let kind = if toolchain {
                    "a toolchain"
                } else {
                    "an environment"
                };
                put(e, format!("{kind} of {}", dir.display()), toolchain);
            }
        }
    }
    // Poetry's own setting for where its environments live.
    if let Some(d) = poetry_path(home, var) {
        for e in entries(&d) {
            put(e, format!("a poetry environment of {}", d.display()), false);
        }
    }
    // Conda's own list of the environments it made, wherever they are.
    if let Ok(Some(b)) =
        crate::protect::small_file::read_bytes(&home.join(".conda/environments.txt"))
    {
        for l in String::from_utf8_lossy(&b).lines().take(256) {
            let p = PathBuf::from(l.trim());
            if p.is_absolute() {
                put(
                    p,
                    "an environment listed in ~/.conda/environments.txt".into(),
                    false,
                );
            }
        }
    }
    for rel in HOME_ENVS {
        put(home.join(rel), "an environment of the home".into(), false);
    }
    for p in SYSTEM_ENVS {
        put(PathBuf::from(p), "a system environment".into(), false);
    }
    for k in ENV_VARS {
        if let Some(p) = abs(k) {
            put(p, format!("the environment ${k} names"), false);
        }
    }
    out
}

/// Poetry's `virtualenvs.path` from its configuration file, if set.
fn poetry_path(home: &Path, var: &dyn Fn(&str) -> Option<String>) -> Option<PathBuf> {
    if let Some(p) = var("POETRY_VIRTUALENVS_PATH").map(PathBuf::from) {
        return Some(p);
    }
    let cfg = var("POETRY_CONFIG_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| home.join(".config/pypoetry"))
        .join("config.toml");
    let b = crate::protect::small_file::read_bytes(&cfg)
        .ok()
        .flatten()?;
    let v: toml::Value = toml::from_str(&String::from_utf8_lossy(&b)).ok()?;
    let p = v.get("virtualenvs")?.get("path")?.as_str()?;
    let p = match p.strip_prefix("~/") {
        Some(rest) => home.join(rest),
        None => PathBuf::from(p),
    };
    p.is_absolute().then_some(p)
}

/// `base/below` with `*` standing for every entry (at most 256).
fn expand(base: &Path, below: &str) -> Vec<PathBuf> {
    let mut level = vec![base.to_path_buf()];
    for c in below.split('/').filter(|c| !c.is_empty()) {
        let mut next = Vec::new();
        for d in &level {
            if c == "*" {
                next.extend(entries(d));
            } else {
                next.push(d.join(c));
            }
        }
        level = next;
    }
    level
}

/// The entries of `dir` (at most 256).
fn entries(dir: &Path) -> Vec<PathBuf> {
    std::fs::read_dir(dir)
        .map(|rd| rd.flatten().take(256).map(|e| e.path()).collect())
        .unwrap_or_default()
}

/// What [`scan`] found.
#[derive(Debug, Default)]
pub struct Found {
    /// Each link's target, kept as a tree.
    pub trusted: Vec<Trusted>,
    /// Where the bounded walk stopped.
    pub unfinished: Vec<PathBuf>,
}

/// Every link at or below each of `places` (the place itself, its
/// ancestors, and [`DEPTH`] levels below it, shallow levels first): its
/// target, as a tree. Each place is looked at within [`PER_PLACE`]
/// entries and all within [`MAX_ENTRIES`]; where a walk stops is said.
pub fn scan(places: &[Place], cache: &mut CanonicalCache) -> Found {
    scan_listed(places, cache, &mut None)
}

/// [`scan`], the directories listed through the record of earlier scans
/// kept below `home` ([`crate::protect::dir_listings`], ADR 0290).
pub fn scan_cached(home: &Path, places: &[Place], cache: &mut CanonicalCache) -> Found {
    let mut l = crate::protect::dir_listings::Listings::open(
        home,
        "toolchains",
        include_str!("toolchain_links.rs"),
        crate::protect::dir_listings::SETTLE,
    );
    let f = scan_listed(places, cache, &mut l);
    if let Some(l) = l {
        l.save();
    }
    f
}

fn scan_listed(
    places: &[Place],
    cache: &mut CanonicalCache,
    listings: &mut Option<crate::protect::dir_listings::Listings>,
) -> Found {
    use crate::protect::dir_listings::Kind;
    let mut f = Found::default();
    let mut budget = MAX_ENTRIES;
    let mut seen = std::collections::HashSet::new();
    for Place {
        path: place,
        what,
        toolchain,
    } in places
    {
        if std::fs::symlink_metadata(place).is_err() {
            continue;
        }
        if budget == 0 {
            if f.unfinished.len() < 8 {
                f.unfinished.push(place.clone());
            }
            break;
        }
        let Some(real) = cache.resolve(place) else {
            continue;
        };
        if real != *place || *toolchain {
            let how = if real != *place {
                ", through a link"
            } else {
                ""
            };
            f.trusted.push(Trusted::tree(
                place,
                real.clone(),
                format!("{} ({what}{how})", place.display()),
                Tree::Dir,
            ));
        }
        if !seen.insert(real.clone()) {
            continue;
        }
        let mut left = PER_PLACE.min(budget);
        let mut queue = std::collections::VecDeque::from([(real, 0usize)]);
        'walk: while let Some((d, level)) = queue.pop_front() {
            let entries = match listings.as_mut() {
                Some(l) => l.list(&d),
                None => std::fs::read_dir(&d).ok().map(|rd| {
                    rd.flatten()
                        .take(PER_PLACE + 1)
                        .map(|e| {
                            let kind = match e.file_type() {
                                Ok(k) if k.is_symlink() => Kind::Link,
                                Ok(k) if k.is_dir() => Kind::Dir,
                                Ok(_) => Kind::Other,
                                Err(_) => Kind::Unknown,
                            };
                            (e.path(), kind)
                        })
                        .collect()
                }),
            };
            let Some(entries) = entries else {
                continue;
            };
            for (p, kind) in entries {
                if left == 0 {
                    if f.unfinished.len() < 8 {
                        f.unfinished.push(d.clone());
                    }
                    break 'walk;
                }
                left -= 1;
                budget -= 1;
                if kind == Kind::Link {
                    if let Some(t) = cache.resolve(&p) {
                        f.trusted.push(Trusted::tree(
                            &p,
                            t,
                            format!("{} (a link in {what} {})", p.display(), place.display()),
                            Tree::Dir,
                        ));
                    }
                } else if kind == Kind::Dir && level + 1 < DEPTH {
                    queue.push_back((p, level + 1));
                }
            }
        }
    }
    f
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn linked_toolchains_and_links_inside_environments_are_found() {
        let tmp = skarn_test_support::TempDir::new("toolchain-links");
        let d = std::fs::canonicalize(tmp.path()).unwrap();
        let (home, ws) = (d.join("home"), d.join("ws"));
        std::fs::create_dir_all(ws.join("tc/bin")).unwrap();
        std::fs::create_dir_all(ws.join("sp")).unwrap();
        std::fs::create_dir_all(home.join(".rustup/toolchains")).unwrap();
        std::os::unix::fs::symlink(ws.join("tc"), home.join(".rustup/toolchains/dev")).unwrap();
        let lib = home.join(".venv/lib/python3.12");
        std::fs::create_dir_all(&lib).unwrap();
        std::os::unix::fs::symlink(ws.join("sp"), lib.join("site-packages")).unwrap();
        let none = |_: &str| None;
        let f = scan(
            &places(&home, &none),
            &mut CanonicalCache::following_dangling_links(),
        );
        let targets: Vec<&Path> = f.trusted.iter().map(|t| t.target.as_path()).collect();
        assert!(targets.contains(&ws.join("tc").as_path()), "{targets:?}");
        assert!(targets.contains(&ws.join("sp").as_path()), "{targets:?}");
        assert!(f.trusted.iter().all(|t| t.tree == Some(Tree::Dir)));
    }

    /// The same links found through the record of earlier listings as
    /// without it, and a link made since in a listed directory found too
    /// (its directory's times moved; ADR 0290).
    #[test]
    fn listings_kept_across_runs_change_no_answer() {
        let tmp = skarn_test_support::TempDir::new("toolchain-listings");
        let d = std::fs::canonicalize(tmp.path()).unwrap();
        let (home, ws) = (d.join("home"), d.join("ws"));
        let lib = home.join(".pyenv/versions/3.12.1/lib/python3.12");
        for p in [
            ws.join("sp"),
            ws.join("later"),
            lib.join("site-packages/pkg"),
        ] {
            std::fs::create_dir_all(p).unwrap();
        }
        std::os::unix::fs::symlink(ws.join("sp"), lib.join("site-packages/linked")).unwrap();
        // (Listings are kept once their directories are 2 s old.)
        std::thread::sleep(std::time::Duration::from_millis(2100));
        let none = |_: &str| None;
        let places = places(&home, &none);
        let targets = |f: Found| {
            let mut t: Vec<PathBuf> = f.trusted.into_iter().map(|t| t.target).collect();
            t.sort();
            t
        };
        let fresh = || CanonicalCache::following_dangling_links();
        let plain = targets(scan(&places, &mut fresh()));
        assert!(plain.contains(&ws.join("sp")), "{plain:?}");
        assert_eq!(targets(scan_cached(&home, &places, &mut fresh())), plain);
        let rec = home.join(crate::protect::home_mentions::SCAN_CACHE);
        assert!(std::fs::read_dir(&rec).unwrap().count() > 0);
        assert_eq!(targets(scan_cached(&home, &places, &mut fresh())), plain);
        std::os::unix::fs::symlink(ws.join("later"), lib.join("site-packages/l")).unwrap();
        let now = targets(scan_cached(&home, &places, &mut fresh()));
        assert!(now.contains(&ws.join("later")), "{now:?}");
        assert_eq!(now, targets(scan(&places, &mut fresh())));
    }
}
