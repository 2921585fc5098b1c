//! What a run or a sandboxed server granted a secret can read, as the
//! check for the value stored in a file sees it (ADR 0217): which grants
//! are walked whole, which are toolchains looked at in their credential
//! places only, which files are looked at wherever they lie.

use std::path::{Path, PathBuf};

use super::stored_values::Scope;
use crate::policy::{Grant, Policy, SYSTEM_EXEC_DIRS, default_secret_paths};

/// The end of the provenance of a grant holding a program's own
/// installed files (a gateway server installed as `PREFIX/bin/NAME`, not
/// an interpreter's prefix, a virtual environment nor a `node_modules`
/// directory): walked whole by the check for a granted value (atk27k F4:
/// `PREFIX/lib/NAME/defaults.yaml` holding the token was read by the
/// server granted it), unless it lies in or around a toolchain
/// ([`within_toolchain`]).
pub const OWN_INSTALLATION: &str = ": its own installation";

/// Whether a grant is one skarn makes for an installed toolchain (its
/// defaults, a preset, a server's command, interpreter and their
/// installation): tens of thousands of installed files, looked at in
/// their credential places only.
pub(crate) fn is_toolchain(g: &Grant) -> bool {
    let s = g.source.as_str();
    s.starts_with("default")
        || s.starts_with("preset ")
        || (s.contains(": its ") && !s.ends_with(OWN_INSTALLATION))
}

/// Whether `p` (resolved) is a toolchain's tree after all: inside a
/// system directory (granted to every run and never walked: `/usr/local`,
/// `/opt/x`), or in or around a toolchain directory of a preset under
/// `home` (`~/.cargo` for `~/.cargo/bin/NAME`, a version under `~/.nvm`).
fn within_toolchain(p: &Path, home: Option<&Path>) -> bool {
    let canon = |p: &Path| std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf());
    // A home, what holds it and its shared trees are no toolchain's,
    // whatever toolchain lies below them (atk27m F3b: a server's
    // "installation" that was the whole home was looked at shallowly).
    let real = canon(p);
    let user = std::env::var_os("HOME")
        .map(PathBuf::from)
        .filter(|h| h.is_absolute());
    for h in home.map(Path::to_path_buf).into_iter().chain(user) {
        let h = canon(&h);
        if h.starts_with(&real)
            || [".local", ".config", ".local/share"]
                .iter()
                .any(|d| real == h.join(d))
        {
            return false;
        }
    }
    if SYSTEM_EXEC_DIRS.iter().any(|d| p.starts_with(d)) {
        return true;
    }
    let Some(home) = home else {
        return false;
    };
    crate::policy::presets::PRESETS.iter().any(|name| {
        crate::policy::presets::preset_paths(name, home).is_some_and(|[exec, private, _]| {
            exec.iter().chain(&private).any(|t| {
                let t = canon(t);
                t.starts_with(p) || p.starts_with(&t)
            })
        })
    })
}

/// A system directory or one holding them (`/`): granted to every run,
/// too large to walk; their tools' configuration files are looked at
/// instead ([`super::tool_configs`]).
pub(crate) fn is_system(p: &Path) -> bool {
    SYSTEM_EXEC_DIRS.iter().any(|d| Path::new(d).starts_with(p))
}

/// The scope of `policy`: a file holding a value inside `refuse_under`
/// refuses the run; `value_places` are where the secrets are read from
/// ([`skarn_egress::secrets::config::SecretsConfig::value_places`]): the
/// files beside them are looked at too.
pub fn scope(
    policy: &Policy,
    refuse_under: Vec<PathBuf>,
    value_places: &[PathBuf],
    home: Option<&Path>,
) -> Scope {
    let mut s = Scope {
        refuse_under,
        cache_home: home.map(Path::to_path_buf),
        ..Scope::default()
    };
    let canon = |p: &Path| std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf());
    for w in std::iter::once(&policy.workspace).chain(policy.write.iter().map(|g| &g.path)) {
        s.walked.push(canon(w));
    }
    for g in policy
        .read
        .iter()
        .chain(&policy.exec)
        .chain(&policy.overlay)
    {
        let p = canon(&g.path);
        if is_system(&p) {
            continue;
        }
        let own_in_toolchain = g.source.ends_with(OWN_INSTALLATION) && within_toolchain(&p, home);
        if is_toolchain(g) || own_in_toolchain {
            s.toolchains.push(p);
        } else {
            s.walked.push(p);
        }
    }
    s.toolchains
        .extend(policy.cache_dirs.iter().map(|p| canon(p)));
    for list in [&mut s.walked, &mut s.toolchains] {
        list.sort();
        list.dedup();
    }
    let env = |k: &str| std::env::var_os(k);
    s.files = super::tool_configs::config_files(&env, home, &policy.workspace);
    let (trees, files) = around_workspace(&policy.workspace, home);
    s.walked.extend(trees);
    s.files.extend(files);
    s.toolchains.extend(installations());
    for list in [&mut s.walked, &mut s.toolchains] {
        list.sort();
        list.dedup();
    }
    for f in value_places {
        s.files.extend(beside(f));
    }
    s.hidden = policy.deny_read.iter().map(|g| g.path.clone()).collect();
    s.hidden.extend(default_secret_paths(home));
    s
}

/// Whether `p` is or holds the home (the run sees a private home there).
fn about_home(p: &Path, home: Option<&Path>) -> bool {
    home.is_some_and(|h| h.starts_with(p) || p.starts_with(h))
}

/// What a run reads around its workspace (atk27q F10: a workspace under
/// `/opt`, the repository's `.env` above it): the trees to walk whole —
/// the workspace's ancestors in the system's readable directories, up
/// to the repository's top (the nearest one holding `.git`) or, without
/// a repository, the highest of them — and the files directly in each
/// ancestor above (`/opt/.env`). The walk's budget bounds them; past it
/// the run is refused (ADR 0217), never let through.
fn around_workspace(workspace: &Path, home: Option<&Path>) -> (Vec<PathBuf>, Vec<PathBuf>) {
    let ws = std::fs::canonicalize(workspace).unwrap_or_else(|_| workspace.to_path_buf());
    let readable = |a: &Path| {
        a != Path::new("/")
            && SYSTEM_EXEC_DIRS.iter().any(|d| a.starts_with(d))
            && !about_home(a, home)
    };
    let top = ws.ancestors().find(|a| a.join(".git").exists());
    let mut trees = Vec::new();
    let mut files = Vec::new();
    let mut whole: Option<&Path> = None;
    for a in ws.ancestors().skip(1) {
        if !readable(a) {
            continue;
        }
        let below_top = top.is_none_or(|t| a.starts_with(t));
        if !is_system(a) && below_top {
            whole = Some(a);
        } else if let Ok(rd) = std::fs::read_dir(a) {
            files.extend(
                rd.flatten()
                    .take(BESIDE_MAX)
                    .filter(|e| e.file_type().is_ok_and(|t| t.is_file()))
                    .map(|e| e.path()),
            );
        }
    }
    trees.extend(whole.map(Path::to_path_buf));
    (trees, files)
}

/// Entries of `/usr/local` holding the system's installed code, not an
/// installation of its own.
const USR_LOCAL_CODE: &[&str] = &[
    "bin", "sbin", "lib", "lib64", "include", "man", "libexec", "games", "share", "src",
];

/// The installations every run reads (atk27q F10): each directory under
/// `/opt`, `/usr/local` (other than its code), `/usr/src` and
/// `/usr/local/src`, looked at like a toolchain (its top, `bin`, `etc`,
/// `conf`, files named like credential files).
fn installations() -> Vec<PathBuf> {
    let list = |d: &str| -> Vec<PathBuf> {
        std::fs::read_dir(d)
            .into_iter()
            .flatten()
            .flatten()
            .take(4096)
            .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
            .map(|e| e.path())
            .collect()
    };
    let mut out = list("/opt");
    out.extend(list("/usr/local").into_iter().filter(|p| {
        p.file_name()
            .and_then(|n| n.to_str())
            .is_some_and(|n| !USR_LOCAL_CODE.contains(&n))
    }));
    out.extend(list("/usr/src"));
    out.extend(list("/usr/local/src"));
    out
}

/// Most entries of a directory looked at beside a secret's source; a
/// larger directory (`/usr/bin` beside a program) gives the usual names
/// of copies of the file only.
const BESIDE_MAX: usize = 256;

/// `f` and the files beside it: every file of its directory when that is
/// small (a directory of secrets: an editor's backup, an older copy), or
/// the names editors and tools give copies (`f~`, `.f.swp`, `#f#`,
/// `f.bak`, `f.orig`, `f.old`, `f.save`).
fn beside(f: &Path) -> Vec<PathBuf> {
    let mut out = vec![f.to_path_buf()];
    let (Some(dir), Some(name)) = (f.parent(), f.file_name().and_then(|n| n.to_str())) else {
        return out;
    };
    if let Ok(rd) = std::fs::read_dir(dir) {
        let all: Vec<PathBuf> = rd
            .flatten()
            .take(BESIDE_MAX + 1)
            .map(|e| e.path())
            .collect();
        if all.len() <= BESIDE_MAX {
            out.extend(all);
            return out;
        }
    }
    for n in [
        format!("{name}~"),
        format!(".{name}.swp"),
        format!(".{name}.swo"),
        format!("#{name}#"),
        format!(".#{name}"),
        format!("{name}.bak"),
        format!("{name}.orig"),
        format!("{name}.old"),
        format!("{name}.save"),
    ] {
        out.push(dir.join(n));
    }
    out
}
