//! The programs of a virtual environment the host runs by path (issue 22,
//! item A): `bin/python*` (an IDE's interpreter discovery on open, `uv
//! run`, a shebang line of every console script there) and the
//! `bin/activate*` scripts a shell sources. A run that replaced one of
//! them (a link to the system python turned into a script) would have the
//! host run its code next. `pip install` inside never writes them, so they
//! are kept read-only when they are files, and one made or changed during
//! the run (a link cannot be bound read-only) is set aside after it
//! (refused in the copy-on-write layer).

use std::ffi::OsStr;
use std::path::{Path, PathBuf};

/// Whether `name`, in an environment's `bin` directory, is one of its
/// interpreters or activation scripts.
pub fn entry_point(name: &OsStr) -> bool {
    let n = name.as_encoded_bytes();
    n.starts_with(b"python") || n.starts_with(b"activate") || n.starts_with(b"Activate")
}

/// The environment's own configuration of the tools run from it (atk22g
/// F24), relative to it: pip's site file (`find-links` to planted
/// packages, `no-build-isolation`), conda's, and the Jupyter and IPython
/// configuration and kernel specs (Python run and programs started by a
/// front end started from that environment).
pub const CONFIG: &[&str] = &[
    "pip.conf",
    ".condarc",
    "condarc",
    "etc/jupyter",
    "etc/ipython",
    "share/jupyter/kernels",
    // A conda prefix's activation (issue 22; `conda activate`, `mamba
    // activate`, `pixi shell`, `pixi run`): the scripts of `activate.d`
    // and `deactivate.d` are sourced in the host's shell, and the
    // variables of `env_vars.d` and of `conda-meta/state` (`conda env
    // config vars set`) are exported into it (`LD_PRELOAD`, `BASH_ENV`).
    "etc/conda/activate.d",
    "etc/conda/deactivate.d",
    "etc/conda/env_vars.d",
    "conda-meta/state",
];

/// The entry points of the environment `env` (at most 64), and its
/// [`CONFIG`] files present.
fn entries(env: &Path) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = std::fs::read_dir(env.join("bin"))
        .map(|rd| {
            rd.flatten()
                .filter(|e| entry_point(&e.file_name()))
                .take(64)
                .map(|e| e.path())
                .collect()
        })
        .unwrap_or_default();
    out.extend(
        CONFIG
            .iter()
            .map(|c| env.join(c))
            .filter(|p| std::fs::symlink_metadata(p).is_ok()),
    );
    out
}

/// Entry points and configuration to keep read-only before a run: the
/// regular files and directories (a link cannot be bound read-only; it is
/// checked after the run).
pub fn protected(env: &Path) -> Vec<PathBuf> {
    let mut v = entries(env);
    if crate::protect::grant_walk::is_conda_env(env) {
        v.extend(conda_runtime(env));
    }
    v.into_iter()
        .filter(|p| std::fs::symlink_metadata(p).is_ok_and(|m| m.is_file() || m.is_dir()))
        .collect()
}

/// Whether `name`, in a conda prefix's `lib`, is a Python standard
/// library directory (`python3.11`), or the interpreter's shared library.
fn runtime_name(name: &OsStr) -> bool {
    let n = name.as_encoded_bytes();
    n.starts_with(b"python") || n.starts_with(b"libpython")
}

/// Whether `name`, in a standard library directory, is where packages go
/// (writable: `conda install`, `pixi add`, `pip install`).
fn package_dir(name: &OsStr) -> bool {
    name == "site-packages" || name == "dist-packages"
}

/// A conda prefix's own Python runtime (attack atk22h F11): unlike a
/// virtual environment's, its standard library (`lib/python3.X/*` but
/// `site-packages`: `encodings` is imported at every start, `lib-dynload`
/// loaded) and `lib/libpython*` lie inside the prefix, so in the
/// workspace for pixi (`.pixi/envs/`) and `conda create -p ./env`. Kept
/// read-only entry by entry (at most 1,024); packages stay installable.
fn conda_runtime(env: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let Ok(rd) = std::fs::read_dir(env.join("lib")) else {
        return out;
    };
    for e in rd
        .flatten()
        .filter(|e| runtime_name(&e.file_name()))
        .take(16)
    {
        let p = e.path();
        if !e.file_type().is_ok_and(|t| t.is_dir()) {
            out.push(p);
            continue;
        }
        if let Ok(inner) = std::fs::read_dir(&p) {
            out.extend(
                inner
                    .flatten()
                    .filter(|i| !package_dir(&i.file_name()))
                    .take(1024)
                    .map(|i| i.path()),
            );
        }
    }
    out
}

/// Whether the entry `p` of the environment `env` was made or changed at
/// or after `since`: itself, a file below it (a directory's scripts: one
/// rewritten in place leaves the directory's times alone; past 10,000
/// entries, yes), or a link on the way from `env` (`etc -> elsewhere`,
/// which leads the activation to other scripts).
fn changed(env: &Path, p: &Path, since: std::time::SystemTime) -> bool {
    use crate::protect::grant_walk::changed_since;
    if changed_since(p, since) {
        return true;
    }
    if let Ok(rel) = p.strip_prefix(env) {
        let mut at = env.to_path_buf();
        for c in rel.iter() {
            at.push(c);
            if std::fs::symlink_metadata(&at).is_ok_and(|m| m.file_type().is_symlink())
                && changed_since(&at, since)
            {
                return true;
            }
        }
    }
    let mut stack = vec![p.to_path_buf()];
    let mut seen = 0usize;
    while let Some(d) = stack.pop() {
        let Ok(rd) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in rd.flatten() {
            seen += 1;
            if seen > 10_000 || changed_since(&e.path(), since) {
                return true;
            }
            if e.file_type().is_ok_and(|t| t.is_dir()) {
                stack.push(e.path());
            }
        }
    }
    false
}

/// After a run: set aside each entry point of `env` made or changed at or
/// after `since`; one line each. An interpreter that is a link to one the
/// host has outside the `writable` grants, with a `pyvenv.cfg` whose
/// `home` is such a one's directory, is what `venv` makes: kept (attack
/// atk22l F10); a `pyvenv.cfg` whose `home` is not is set aside.
pub fn set_aside(env: &Path, since: std::time::SystemTime, writable: &[PathBuf]) -> Vec<String> {
    use crate::protect::venv_new::{judge_cfg, trusted_interpreter};
    let mut out = Vec::new();
    let cfg = env.join("pyvenv.cfg");
    let cfg_text = std::fs::read(&cfg).unwrap_or_default();
    let cfg_bad = judge_cfg(&String::from_utf8_lossy(&cfg_text), writable);
    if let Some(why) = &cfg_bad
        && crate::protect::grant_walk::changed_since(&cfg, since)
    {
        let aside = crate::protect::set_aside::set_aside(&cfg, "skarn-set-aside");
        out.push(format!(
            "{}: {why}; {}",
            cfg.display(),
            aside.describe("review it before renaming it back or using that environment")
        ));
    }
    for p in entries(env) {
        if !changed(env, &p, since) || already_aside(&p) {
            continue;
        }
        let interpreter = p
            .file_name()
            .is_some_and(|n| n.as_encoded_bytes().starts_with(b"python"));
        let link = std::fs::symlink_metadata(&p).is_ok_and(|m| m.file_type().is_symlink());
        if interpreter && link && cfg_bad.is_none() && trusted_interpreter(&p, writable) {
            continue;
        }
        let aside = crate::protect::set_aside::set_aside(&p, "skarn-set-aside");
        out.push(format!(
            "{} was made or changed during the run: it is the environment's interpreter, \
             activation script or tool configuration, which host programs run, source or read \
             by that path; {}",
            p.display(),
            aside.describe("review it before renaming it back or using that environment")
        ));
    }
    out
}

/// Whether `p` is an entry already set aside (by an earlier check).
fn already_aside(p: &Path) -> bool {
    p.file_name()
        .is_some_and(|n| n.to_string_lossy().contains(".skarn-set-aside"))
}

/// The rule of [`set_aside`] for one change in a copy-on-write layer
/// (`names`: its path relative to the workspace `ws`): `Err` for an entry
/// point of an environment the host already has.
pub fn check_layer_change(ws: &Path, names: &[&OsStr], delete: bool) -> Result<(), String> {
    // The marker of a conda environment the host has: removing it would
    // un-protect the environment for the next run (attack atk22h F13);
    // its records inside stay writable (`conda install`, `pixi add`).
    if delete
        && let [dir @ .., last] = names
        && *last == "conda-meta"
    {
        let env: PathBuf = std::iter::once(ws.as_os_str())
            .chain(dir.iter().copied())
            .collect();
        if crate::protect::grant_walk::is_conda_env(&env) {
            return Err(
                "a conda environment's conda-meta (without it the environment's activation and interpreter would not be protected in the next run)"
                    .into(),
            );
        }
    }
    // The environment's tool configuration ([`CONFIG`]), at any depth
    // below an environment the host has; the activation directories at
    // any depth whatever is there (an environment assembled over several
    // runs: the scripts first, `conda-meta` later; atk22h F13).
    for k in 0..names.len() {
        for c in CONFIG {
            let comps: Vec<&str> = c.split('/').collect();
            let rest = &names[k..];
            if rest.len() >= comps.len() && rest.iter().zip(&comps).all(|(a, b)| *a == *b) {
                let env: PathBuf = std::iter::once(ws.as_os_str())
                    .chain(names[..k].iter().copied())
                    .collect();
                let activation = crate::protect::grant_walk::CONDA_ACTIVATION.contains(c)
                    && rest.len() > comps.len();
                if activation || crate::protect::grant_walk::is_python_env(&env) {
                    return Err(format!(
                        "a Python or conda environment's {c} (the tools run from it, or its \
                         activation in the host's shell, read or run it)"
                    ));
                }
            }
        }
    }
    // A conda prefix's standard library and interpreter library.
    for k in (0..names.len()).filter(|k| names[*k] == "lib") {
        let runtime = names.get(k + 1).is_some_and(|n| runtime_name(n))
            && !names.get(k + 2).is_some_and(|n| package_dir(n));
        let env: PathBuf = std::iter::once(ws.as_os_str())
            .chain(names[..k].iter().copied())
            .collect();
        if runtime && crate::protect::grant_walk::is_conda_env(&env) {
            return Err(
                "a conda environment's Python standard library or interpreter library (its \
                 python loads it at every start)"
                    .into(),
            );
        }
    }
    let [dir @ .., bin, last] = names else {
        return Ok(());
    };
    if *bin != "bin" || !entry_point(last) {
        return Ok(());
    }
    let env: PathBuf = std::iter::once(ws.as_os_str())
        .chain(dir.iter().copied())
        .collect();
    if std::fs::symlink_metadata(env.join("pyvenv.cfg")).is_ok()
        || crate::protect::grant_walk::is_conda_env(&env)
    {
        return Err(
            "a virtual environment's interpreter or activation script (host programs run or \
             source it by path)"
                .into(),
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_changed_interpreter_link_is_set_aside_and_console_scripts_kept() {
        let tmp = skarn_test_support::TempDir::new("venv-programs");
        let env = tmp.path().join(".venv");
        std::fs::create_dir_all(env.join("bin")).unwrap();
        std::fs::write(env.join("pyvenv.cfg"), "home = /usr/bin\n").unwrap();
        std::fs::write(env.join("bin/activate"), "# sourced\n").unwrap();
        std::os::unix::fs::symlink("/usr/bin/python3", env.join("bin/python")).unwrap();
        assert_eq!(protected(&env), vec![env.join("bin/activate")]);
        std::thread::sleep(std::time::Duration::from_millis(60));
        let since = std::time::SystemTime::now();
        std::thread::sleep(std::time::Duration::from_millis(60));
        std::fs::remove_file(env.join("bin/python")).unwrap();
        std::fs::write(env.join("bin/python"), "#!/bin/sh\n").unwrap();
        std::fs::write(env.join("bin/tool"), "#!/bin/sh\n").unwrap();
        let lines = set_aside(&env, since, &[tmp.path().to_path_buf()]);
        assert_eq!(lines.len(), 1, "{lines:?}");
        assert!(!env.join("bin/python").exists());
        assert!(env.join("bin/tool").exists() && env.join("bin/activate").exists());
        let n = |s: &'static str| OsStr::new(s);
        let ws = tmp.path();
        assert!(check_layer_change(ws, &[n(".venv"), n("bin"), n("python3")], false).is_err());
        assert!(check_layer_change(ws, &[n(".venv"), n("bin"), n("tool")], false).is_ok());
        assert!(check_layer_change(ws, &[n("other"), n("bin"), n("python")], false).is_ok());
        // A conda prefix: its marker stays, its records change; activation
        // scripts are refused anywhere.
        std::fs::create_dir_all(ws.join("env/conda-meta")).unwrap();
        assert!(check_layer_change(ws, &[n("env"), n("conda-meta")], true).is_err());
        assert!(check_layer_change(ws, &[n("env"), n("conda-meta"), n("p.json")], true).is_ok());
        let act = [n("new"), n("etc"), n("conda"), n("activate.d"), n("x.sh")];
        assert!(check_layer_change(ws, &act, false).is_err());
        // Its standard library and libpython; not its packages.
        let l = |s: &'static [&'static str]| s.iter().map(|x| n(x)).collect::<Vec<_>>();
        let enc = l(&["env", "lib", "python3.11", "encodings", "__init__.py"]);
        assert!(check_layer_change(ws, &enc, false).is_err());
        let so = l(&["env", "lib", "libpython3.11.so.1.0"]);
        assert!(check_layer_change(ws, &so, false).is_err());
        let pkg = l(&["env", "lib", "python3.11", "site-packages", "m.py"]);
        assert!(check_layer_change(ws, &pkg, false).is_ok());
        let other = l(&["other", "lib", "python3.11", "os.py"]);
        assert!(check_layer_change(ws, &other, false).is_ok());
    }
}
