//! The walk of a run's grants for a granted secret's value (ADR 0217):
//! every regular file of the writable grants and of the non-system read
//! grants, up to [`SMALL`] bytes each, looked at in every form the proxy's
//! scrubber knows, within a [`Budget`] of files, bytes and time. A walk
//! that runs out of its budget is an error (the caller refuses the run
//! naming the grant), never a silent pass.

use std::collections::HashSet;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use super::egress_secrets::RunSecrets;

/// Largest file read by the walk; a larger one is looked at only when it
/// is named like a credential file (it then counts as holding the value).
pub const SMALL: u64 = 1 << 20;

/// What one check of the grants may spend.
#[derive(Debug, Clone, Copy)]
pub struct Budget {
    /// Entries (files and directories) looked at.
    pub entries: u64,
    /// Bytes read.
    pub bytes: u64,
    /// Wall-clock time.
    pub time: Duration,
}

impl Default for Budget {
    fn default() -> Budget {
        Budget {
            entries: 200_000,
            bytes: 1 << 30,
            time: Duration::from_secs(20),
        }
    }
}

/// The walk stopped before looking at everything.
#[derive(Debug, thiserror::Error)]
#[error(
    "the grants hold more than the check for a granted secret's value may read ({what}; \
     stopped in {}): the value could not be ruled out there; grant fewer or smaller \
     directories",
    at.display()
)]
pub struct Exhausted {
    /// Which part of the budget ran out.
    pub what: &'static str,
    /// Where the walk was.
    pub at: PathBuf,
}

/// One walk over several roots, sharing one budget.
pub struct Walk<'a> {
    secrets: &'a RunSecrets,
    budget: Budget,
    started: Instant,
    entries: u64,
    bytes: u64,
    /// Paths not descended into (hidden anyway).
    skip: HashSet<PathBuf>,
    /// Files (device, inode) hidden anyway (a `file` source, a denied
    /// path, under other names).
    skip_ids: HashSet<(u64, u64)>,
    seen_dirs: HashSet<(u64, u64)>,
    /// Files found holding a value.
    pub found: Vec<PathBuf>,
    /// Other names (hard links) of files hidden anyway, wherever the walk
    /// met them: each is to be hidden too (atk27h F6), since the grant
    /// they lie in may be one no other-names walk covers (a read grant)
    /// or one whose walk stopped at its time bound.
    pub other_names: Vec<PathBuf>,
    /// Earlier checks' clean verdicts (ADR 0230).
    cache: Option<super::value_cache::Cache>,
}

impl<'a> Walk<'a> {
    /// A walk skipping `hidden` (paths hidden from the run anyway) and
    /// listing their other names in [`Walk::other_names`].
    pub fn new(secrets: &'a RunSecrets, budget: Budget, hidden: &[PathBuf]) -> Walk<'a> {
        let skip_ids = hidden
            .iter()
            .filter_map(|p| std::fs::metadata(p).ok())
            .filter(|m| m.is_file())
            .map(|m| (m.dev(), m.ino()))
            .collect();
        Walk {
            secrets,
            budget,
            started: Instant::now(),
            entries: 0,
            bytes: 0,
            skip: hidden.iter().cloned().collect(),
            skip_ids,
            seen_dirs: HashSet::new(),
            found: Vec::new(),
            other_names: Vec::new(),
            cache: None,
        }
    }

    /// Skip files an earlier check found clean and that have not changed
    /// since, and keep this walk's clean verdicts ([`Walk::save`]).
    pub fn with_cache(mut self, cache: Option<super::value_cache::Cache>) -> Walk<'a> {
        self.cache = cache;
        self
    }

    /// Keep the clean verdicts of what was looked at (also after a walk
    /// that ran out of its budget: the next one starts further on).
    pub fn save(&mut self) {
        if let Some(c) = self.cache.take() {
            c.save();
        }
    }

    /// Every file under `root` (a directory or a file; links not
    /// followed).
    pub fn walk(&mut self, root: &Path) -> Result<(), Exhausted> {
        let mut stack = vec![root.to_path_buf()];
        while let Some(p) = stack.pop() {
            self.spend(&p, 0)?;
            if self.skip.contains(&p) {
                continue;
            }
            let Ok(md) = std::fs::symlink_metadata(&p) else {
                continue;
            };
            if md.is_dir() {
                // A dependency tree (`node_modules`: hundreds of thousands
                // of files a package manager installed) is looked at like
                // a toolchain, where a user's credential lands: its top,
                // `bin`/`etc`/`conf` and files named like credential files
                // (atk27k F15: a large one refused every granted run).
                if p != root && p.file_name().is_some_and(|n| n == DEPENDENCY_TREE) {
                    // Its build caches (`.cache/babel-loader`, `.vite`,
                    // `.prisma`: what host builds wrote, environment
                    // values inlined) are walked whole first (atk27l F7).
                    for c in build_caches(&p) {
                        self.walk(&c)?;
                    }
                    self.walk_toolchain(&p)?;
                    continue;
                }
                if !self.seen_dirs.insert((md.dev(), md.ino())) || is_git_objects(&p) {
                    continue;
                }
                let Ok(rd) = std::fs::read_dir(&p) else {
                    continue;
                };
                for e in rd.flatten() {
                    stack.push(e.path());
                }
            } else if md.is_file() {
                self.file(&p, &md)?;
            }
        }
        Ok(())
    }

    /// The places of a toolchain grant (a version manager's tree, a
    /// preset's directory: tens of thousands of installed files) where a
    /// user's credential lands: every file of the grant's top, of each
    /// `bin`, `etc` and `conf` directory (wrapper scripts, `etc/npmrc`),
    /// and each file named like a credential file (`pip.conf`, `.condarc`,
    /// `npmrc`, ...), down to [`TOOLCHAIN_DEPTH`] levels.
    pub fn walk_toolchain(&mut self, root: &Path) -> Result<(), Exhausted> {
        let mut stack = vec![(root.to_path_buf(), 0usize, true)];
        while let Some((p, depth, all_files)) = stack.pop() {
            self.spend(&p, 0)?;
            if self.skip.contains(&p) {
                continue;
            }
            let Ok(md) = std::fs::symlink_metadata(&p) else {
                continue;
            };
            if md.is_file() {
                self.file(&p, &md)?;
                continue;
            }
            if !md.is_dir() || !self.seen_dirs.insert((md.dev(), md.ino())) {
                continue;
            }
            let Ok(rd) = std::fs::read_dir(&p) else {
                continue;
            };
            for e in rd.flatten() {
                let Ok(ft) = e.file_type() else { continue };
                let path = e.path();
                if ft.is_dir() && depth < TOOLCHAIN_DEPTH {
                    let name = e.file_name();
                    let whole = matches!(
                        name.to_str(),
                        Some("bin" | "sbin" | "etc" | "conf" | "condarc.d" | "Scripts")
                    );
                    stack.push((path, depth + 1, whole));
                } else if ft.is_file()
                    && (all_files || depth == 0 || super::value_file::is_credential_name(&path))
                {
                    stack.push((path, depth + 1, false));
                }
            }
        }
        Ok(())
    }

    /// Look at one file (also outside any walked root: a configuration
    /// file a tool reads).
    pub fn file(&mut self, p: &Path, md: &std::fs::Metadata) -> Result<(), Exhausted> {
        if self.skip_ids.contains(&(md.dev(), md.ino())) {
            if !self.skip.contains(p) && !self.other_names.iter().any(|f| f == p) {
                self.other_names.push(p.to_path_buf());
            }
            return self.spend(p, 0);
        }
        if self.found.iter().any(|f| f == p) {
            return Ok(());
        }
        if md.len() > SMALL {
            if super::value_file::is_place_name(p) {
                self.found.push(p.to_path_buf());
            }
            return Ok(());
        }
        if let Some(c) = &mut self.cache
            && c.is_clean(md)
        {
            return self.spend(p, 0);
        }
        self.spend(p, md.len())?;
        if super::value_file::holds(self.secrets, p, true) {
            self.found.push(p.to_path_buf());
        } else if let Some(c) = &mut self.cache {
            c.note_clean(md);
        }
        Ok(())
    }

    fn spend(&mut self, at: &Path, bytes: u64) -> Result<(), Exhausted> {
        self.entries += 1;
        self.bytes += bytes;
        let what = if self.entries > self.budget.entries {
            "entries"
        } else if self.bytes > self.budget.bytes {
            "bytes"
        } else if self.entries.is_multiple_of(256) && self.started.elapsed() > self.budget.time {
            "time"
        } else {
            return Ok(());
        };
        Err(Exhausted {
            what,
            at: at.to_path_buf(),
        })
    }
}

/// The directory name of a package manager's dependency tree, walked
/// like a toolchain.
const DEPENDENCY_TREE: &str = "node_modules";

/// The package stores a dependency tree keeps in its dot-directories
/// (pnpm's, deno's, npm's and yarn's: installed packages, walked like the
/// rest of the tree) and its links to programs.
const PACKAGE_STORES: &[&str] = &[
    ".pnpm", ".deno", ".bin", ".ignored", ".staging", ".store", ".yarn",
];

/// The other dot-directories directly in dependency tree `tree`: build
/// tools' caches and generated code (`.cache`, `.vite`, `.prisma`, ...),
/// which hold what a host build wrote rather than installed packages.
fn build_caches(tree: &Path) -> Vec<std::path::PathBuf> {
    let Ok(rd) = std::fs::read_dir(tree) else {
        return Vec::new();
    };
    rd.flatten()
        .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
        .filter(|e| {
            e.file_name()
                .to_str()
                .is_some_and(|n| n.starts_with('.') && n.len() > 1 && !PACKAGE_STORES.contains(&n))
        })
        .map(|e| e.path())
        .collect()
}

/// How deep [`Walk::walk_toolchain`] looks (`~/.nvm/versions/node/vX/
/// etc/npmrc` is at depth 5).
pub const TOOLCHAIN_DEPTH: usize = 6;

/// A repository's object store: compressed, no simple form of a value
/// shows there (pack files are larger than [`SMALL`] anyway).
fn is_git_objects(p: &Path) -> bool {
    p.file_name().is_some_and(|n| n == "objects")
        && p.parent()
            .and_then(|d| d.file_name())
            .is_some_and(|n| n == ".git")
}

#[cfg(test)]
mod tests {
    use super::*;

    const VALUE: &str = "sk-live-Abc123Def456Ghi789Jkl012Mno345";

    fn secrets() -> RunSecrets {
        RunSecrets::for_tests(VALUE, None, "example.test")
    }

    /// A walk past its budget is an error naming what ran out, never a
    /// pass; within it, every file holding the value is found, at any
    /// depth and under any name, and a hidden file's other name is listed
    /// apart, to be hidden (atk27h F6).
    #[test]
    fn the_walk_finds_every_file_and_fails_closed_past_its_budget() {
        let dir = skarn_test_support::TempDir::new("value_scan");
        let root = dir.path().to_path_buf();
        for i in 0..40 {
            let d = root.join(format!("d{}/e{}", i % 4, i % 3));
            std::fs::create_dir_all(&d).unwrap();
            std::fs::write(d.join(format!("f{i}")), "nothing here\n").unwrap();
        }
        std::fs::write(root.join("d1/e2/notes.txt"), format!("x {VALUE}\n")).unwrap();
        std::fs::write(root.join("src"), format!("{VALUE}\n")).unwrap();
        std::fs::hard_link(root.join("src"), root.join("d0/other-name")).unwrap();
        let s = secrets();
        let mut w = Walk::new(&s, Budget::default(), &[root.join("src")]);
        w.walk(&root).unwrap();
        assert_eq!(w.found, [root.join("d1/e2/notes.txt")]);
        assert_eq!(w.other_names, [root.join("d0/other-name")]);
        for (budget, what) in [
            (
                Budget {
                    entries: 20,
                    ..Budget::default()
                },
                "entries",
            ),
            (
                Budget {
                    bytes: 100,
                    ..Budget::default()
                },
                "bytes",
            ),
        ] {
            let mut w = Walk::new(&s, budget, &[]);
            let e = w.walk(&root).unwrap_err();
            assert_eq!(e.what, what);
            assert!(e.to_string().contains("could not be ruled out"), "{e}");
        }
    }

    /// A toolchain's tree is looked at in its credential places only: its
    /// top, `bin` and `etc`, files named like credential files.
    #[test]
    fn a_toolchain_is_looked_at_in_its_credential_places() {
        let dir = skarn_test_support::TempDir::new("value_scan_tc");
        let root = dir.path().to_path_buf();
        let put = |rel: &str| {
            let p = root.join(rel);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(&p, format!("{VALUE}\n")).unwrap();
        };
        for rel in [
            "versions/node/v20.0.0/etc/npmrc",
            "versions/3.12.0/pip.conf",
            "versions/3.12.0/bin/wrapper",
            "top-level-file",
            "lib/python3.12/site-packages/pkg/module.py",
        ] {
            put(rel);
        }
        let s = secrets();
        let mut w = Walk::new(&s, Budget::default(), &[]);
        w.walk_toolchain(&root).unwrap();
        let mut got: Vec<String> = w
            .found
            .iter()
            .map(|p| p.strip_prefix(&root).unwrap().display().to_string())
            .collect();
        got.sort();
        assert_eq!(
            got,
            [
                "top-level-file",
                "versions/3.12.0/bin/wrapper",
                "versions/3.12.0/pip.conf",
                "versions/node/v20.0.0/etc/npmrc",
            ]
        );
    }
}
