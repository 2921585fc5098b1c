//! The home's configuration directories walked, pattern words expanded
//! against the disk, and the other files read (user site, crontab).

use std::path::{Path, PathBuf};

use super::pattern::{Comp, glob};
use super::{MAX_ENTRIES, Scanner};
use crate::protect::home_mention_places::{
    ALWAYS_SKIP, LINKS_ONLY, SKIP_DIRS, SOURCED_WHOLE, is_state_name,
};

/// Files a pattern word adds to the reading at most.
const MAX_GLOB_FILES: usize = 256;

impl Scanner {
    /// The directory `dir`, `level` deep; `links_only` below a package
    /// directory or a git checkout in a plugin directory; `whole` in a
    /// directory shells source file by file whatever the names; `shell`
    /// below a shell's directory.
    pub(super) fn walk(
        &mut self,
        dir: &Path,
        level: usize,
        links_only: bool,
        whole: bool,
        shell: bool,
    ) {
        if level == 0 {
            // The directory itself may be a link into a grant.
            self.place_is_inside(dir);
        }
        let Ok(rd) = std::fs::read_dir(dir) else {
            return;
        };
        // A plugin cloned with git: third-party code (only its links are
        // looked at; ADR 0206) — unless the checkout has no remote or the
        // user committed in it: the user's own plugin kept in git is read
        // like the rest (atk22d F12).
        let links_only = links_only || level > 0 && is_clone(dir);
        for e in rd.flatten() {
            self.entries += 1;
            if self.entries > MAX_ENTRIES {
                self.over(format!(
                    "more than {MAX_ENTRIES} entries under the home's configuration \
                     directories (at {})",
                    dir.display()
                ));
                return;
            }
            let Ok(ft) = e.file_type() else { continue };
            let path = e.path();
            let name = e.file_name().to_string_lossy().into_owned();
            if ft.is_symlink() && self.place_is_inside(&path) {
                continue;
            }
            let is_dir = if ft.is_symlink() {
                path.is_dir()
            } else {
                ft.is_dir()
            };
            if is_dir {
                // Program state is skipped where the programs keep it
                // (`~/.vim/view`, `~/.emacs.d/backups`: right below a
                // place), git's own directories anywhere; deeper, a `db`
                // or `sessions` folder is the user's configuration
                // (atk22d F12: nvim's `lua/plugins/db/init.lua`).
                let state = SKIP_DIRS.contains(&name.as_str()) && !(shell && name == "cache");
                if state && (level == 0 || ALWAYS_SKIP.contains(&name.as_str())) {
                    continue;
                }
                let below_links = links_only || LINKS_ONLY.contains(&name.as_str());
                if below_links && level >= 3 || level >= 8 {
                    continue;
                }
                // A linked directory is entered once (its target may
                // also be listed).
                if ft.is_symlink()
                    && let Some(real) = self.cache.resolve(&path)
                    && !self.seen.insert(real)
                {
                    continue;
                }
                let whole = whole || SOURCED_WHOLE.contains(&name.as_str());
                self.walk(&path, level + 1, below_links, whole, shell);
            } else if !links_only && (whole || !is_state_name(&name)) {
                self.todo.push((path, 0));
            }
        }
    }

    /// Whether the real place of `p` lies in a grant (recorded).
    pub(super) fn place_is_inside(&mut self, p: &Path) -> bool {
        if std::fs::symlink_metadata(p).is_err() {
            return false;
        }
        let Some(real) = self.cache.resolve(p) else {
            return false;
        };
        let mut hit = false;
        for t in 0..self.targets.len() {
            if self.targets[t].canons.iter().any(|c| real.starts_with(c)) {
                self.found(t, p, 0, real.display().to_string());
                hit = true;
            }
        }
        hit
    }

    /// The files of the home a pattern word (`~/.bashrc.d/*`,
    /// `~/.config/projdi?`) matches: read next (attack atk22c F1). Past
    /// the bounds the check fails closed.
    pub(super) fn glob_follow(&mut self, w: &[Comp], depth: usize) {
        // Each pattern is expanded once (the same line in many files).
        if !self.globbed.insert(w.to_vec()) {
            return;
        }
        let lead = w.iter().take_while(|c| matches!(c, Comp::Lit(_))).count();
        let mut base = PathBuf::new();
        for c in &w[..lead] {
            if let Comp::Lit(s) = c {
                base.push(s);
            }
        }
        if !base.starts_with(&self.home) || w[lead..].contains(&Comp::Any) {
            return;
        }
        let mut level = vec![base];
        for c in &w[lead..] {
            let mut next = Vec::new();
            for d in &level {
                if let Comp::Lit(s) = c {
                    next.push(d.join(s));
                    continue;
                }
                let Comp::Glob(g) = c else { continue };
                let Ok(rd) = std::fs::read_dir(d) else {
                    continue;
                };
                for e in rd.flatten() {
                    self.entries += 1;
                    if self.entries > MAX_ENTRIES {
                        return self.over(format!(
                            "more than {MAX_ENTRIES} entries looked at for patterns in the \
                             home's configuration (at {})",
                            d.display()
                        ));
                    }
                    let n = e.file_name().to_string_lossy().into_owned();
                    if (!n.starts_with('.') || g.starts_with('.'))
                        && glob(g.as_bytes(), n.as_bytes())
                    {
                        next.push(e.path());
                    }
                }
            }
            if next.len() > MAX_GLOB_FILES {
                return self.over(format!(
                    "a pattern in the home's configuration matches more than {MAX_GLOB_FILES} \
                     files"
                ));
            }
            level = next;
        }
        for p in level {
            if p.is_file() {
                self.follow(&p, depth);
            }
        }
    }
}

/// Where Python environments under the home keep their `site-packages`,
/// as `lib/python*/site-packages` below each match: the user site, pyenv
/// versions and their virtualenvs, pipx and uv tool environments,
/// virtualenvwrapper and pipenv, conda environments (attack atk22d F2:
/// editable installs there name the project).
const ENV_ROOTS: &[&str] = &[
    ".local",
    ".pyenv/versions/*",
    ".pyenv/versions/*/envs/*",
    ".local/share/pipx/venvs/*",
    ".local/pipx/venvs/*",
    ".local/share/uv/tools/*",
    ".virtualenvs/*",
    ".local/share/virtualenvs/*",
    ".conda/envs/*",
    "miniconda3",
    "miniconda3/envs/*",
    "anaconda3",
    "anaconda3/envs/*",
    "miniforge3",
    "miniforge3/envs/*",
];

/// Environments looked at per root, and entries per `site-packages`.
const MAX_ENVS: usize = 64;
const MAX_SITE_ENTRIES: usize = 10_000;

/// Directories matching `rel` below `home` (`*` a whole component),
/// bounded.
fn expand(home: &Path, rel: &str) -> Vec<PathBuf> {
    let mut level = vec![home.to_path_buf()];
    for c in rel.split('/') {
        let mut next = Vec::new();
        for d in &level {
            if c == "*" {
                if let Ok(rd) = std::fs::read_dir(d) {
                    next.extend(rd.flatten().take(MAX_ENVS).map(|e| e.path()));
                }
            } else {
                next.push(d.join(c));
            }
        }
        level = next;
    }
    level
}

/// What the Python environments under the home load at every start or
/// import from elsewhere: `.pth` files, `*.egg-link`, the editable
/// finders (`__editable__*.py`), `*customize.py` (read as start-up
/// files), and the links among their entries (a module linked into a
/// project).
pub(super) fn site_files(home: &Path) -> (Vec<PathBuf>, Vec<PathBuf>) {
    let (mut files, mut links) = (Vec::new(), Vec::new());
    let mut envs: Vec<(PathBuf, &str)> = ENV_ROOTS
        .iter()
        .flat_map(|root| expand(home, root))
        .map(|e| (e, "site-packages"))
        .collect();
    envs.extend(path_prefixes());
    for (env, dir) in envs {
        {
            let Ok(rd) = std::fs::read_dir(env.join("lib")) else {
                continue;
            };
            for py in rd.flatten().take(MAX_ENVS) {
                let site = py.path().join(dir);
                let Ok(rd) = std::fs::read_dir(&site) else {
                    continue;
                };
                for e in rd.flatten().take(MAX_SITE_ENTRIES) {
                    let n = e.file_name().to_string_lossy().into_owned();
                    if e.file_type().is_ok_and(|t| t.is_symlink()) {
                        links.push(e.path());
                    } else if n.ends_with(".pth")
                        || n.ends_with(".egg-link")
                        || n.starts_with("__editable__") && n.ends_with(".py")
                        || n == "usercustomize.py"
                        || n == "sitecustomize.py"
                    {
                        files.push(e.path());
                    }
                }
            }
        }
    }
    (files, links)
}

/// The prefixes of the Python interpreters on `PATH` (at most 32
/// directories), with the name of their site directories: an editable
/// install made with `sudo pip install -e .` into `/usr/local` or
/// `/opt/python` names the project as one in the home does (attack atk22h
/// F33). For `<prefix>/bin`: `<prefix>/lib/python*/site-packages` and
/// `dist-packages`, and Debian's `<prefix>/local/lib/python*/dist-packages`.
fn path_prefixes() -> Vec<(PathBuf, &'static str)> {
    let mut out = Vec::new();
    let Some(path) = std::env::var_os("PATH") else {
        return out;
    };
    for d in std::env::split_paths(&path).take(32) {
        let pythons: Vec<PathBuf> = std::fs::read_dir(&d)
            .map(|rd| {
                rd.flatten()
                    .take(4096)
                    .filter(|e| e.file_name().as_encoded_bytes().starts_with(b"python"))
                    .take(16)
                    .map(|e| e.path())
                    .collect()
            })
            .unwrap_or_default();
        if pythons.is_empty() {
            continue;
        }
        // The prefix beside the PATH directory, and the one each
        // interpreter really starts from: python finds its prefix from
        // its executable with links resolved, so `/usr/local/bin/python3
        // -> /opt/py/bin/python3` uses `/opt/py` (attack atk22h F33).
        let mut prefixes: Vec<PathBuf> = d.parent().map(Path::to_path_buf).into_iter().collect();
        for py in &pythons {
            if let Some(p) = std::fs::canonicalize(py)
                .ok()
                .and_then(|r| r.parent()?.parent().map(Path::to_path_buf))
                && !prefixes.contains(&p)
            {
                prefixes.push(p);
            }
        }
        for prefix in prefixes {
            add_prefix(&mut out, &prefix);
        }
    }
    out
}

/// The site directories of the Python prefix `prefix`, added to `out`.
fn add_prefix(out: &mut Vec<(PathBuf, &'static str)>, prefix: &Path) {
    {
        for (p, dir) in [
            (prefix.to_path_buf(), "site-packages"),
            (prefix.to_path_buf(), "dist-packages"),
            (prefix.join("local"), "dist-packages"),
        ] {
            if !out.iter().any(|(q, n)| *q == p && *n == dir) {
                out.push((p, dir));
            }
        }
    }
}

/// The caller's crontab in the spool, when readable (root's, usually).
pub(super) fn crontab_files() -> Vec<PathBuf> {
    let Some(name) = user_name() else {
        return Vec::new();
    };
    ["/var/spool/cron/crontabs", "/var/spool/cron"]
        .iter()
        .map(|d| Path::new(d).join(&name))
        .collect()
}

/// The caller's user name from the password database.
fn user_name() -> Option<String> {
    let mut buf = vec![0 as libc::c_char; 4096];
    // SAFETY: zeroed passwd is a valid out-parameter.
    let mut pw: libc::passwd = unsafe { std::mem::zeroed() };
    let mut out: *mut libc::passwd = std::ptr::null_mut();
    // SAFETY: getuid has no preconditions; every pointer is valid for the
    // call and buf outlives its use.
    let rc = unsafe {
        libc::getpwuid_r(
            libc::getuid(),
            &mut pw,
            buf.as_mut_ptr(),
            buf.len(),
            &mut out,
        )
    };
    if rc != 0 || out.is_null() || pw.pw_name.is_null() {
        return None;
    }
    // SAFETY: pw_name points into buf, NUL-terminated by getpwuid_r.
    let n = unsafe { std::ffi::CStr::from_ptr(pw.pw_name) };
    let n = n.to_str().ok()?;
    (!n.is_empty() && !n.contains('/')).then(|| n.to_owned())
}

/// Whether `dir` is a git checkout cloned from somewhere (its
/// configuration names a remote); a checkout without one is the user's
/// own.
fn is_clone(dir: &Path) -> bool {
    let git = dir.join(".git");
    if std::fs::symlink_metadata(&git).is_err() {
        return false;
    }
    let config = if git.is_dir() {
        git.join("config")
    } else {
        // A `gitdir:` file (a submodule): its configuration is elsewhere;
        // counted as a clone, as before.
        return true;
    };
    let Ok(md) = std::fs::metadata(&config) else {
        return false;
    };
    if md.len() > 1 << 20 {
        return true;
    }
    let remote = std::fs::read_to_string(&config)
        .map(|t| {
            crate::protect::git::gitconfig::parse(&t)
                .items
                .iter()
                .any(|i| i.section == "remote")
        })
        .unwrap_or(true);
    // The user's own plugin, pushed somewhere: they committed in it (a
    // plugin manager clones, pulls and checks out, never commits).
    remote && !has_own_commits(&git)
}

/// Most bytes of a checkout's `logs/HEAD` read (its end).
const MAX_REFLOG: u64 = 256 << 10;

/// Whether the reflog of the git directory `git` records a commit made
/// in it (`commit:`, `commit (initial):`, `(amend)`, `(merge)`).
fn has_own_commits(git: &Path) -> bool {
    use std::io::{Read, Seek, SeekFrom};
    let Ok(mut f) = std::fs::File::open(git.join("logs/HEAD")) else {
        return false;
    };
    let len = f.metadata().map(|m| m.len()).unwrap_or(0);
    if len > MAX_REFLOG && f.seek(SeekFrom::Start(len - MAX_REFLOG)).is_err() {
        return false;
    }
    let mut b = Vec::new();
    if f.take(MAX_REFLOG).read_to_end(&mut b).is_err() {
        return false;
    }
    b.split(|&c| c == b'\n').any(|l| {
        l.iter()
            .position(|&c| c == b'\t')
            .is_some_and(|i| l[i + 1..].starts_with(b"commit"))
    })
}
