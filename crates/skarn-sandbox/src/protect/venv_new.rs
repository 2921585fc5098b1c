//! A virtual environment's interpreter and standard library as the run
//! left them (attack atk22l F10, F10b). Host programs run
//! `ENV/bin/python*` by path (`uv run`, an editor's interpreter discovery
//! at folder open), and that python takes its standard library from the
//! directory `pyvenv.cfg`'s `home` names. What `python -m venv` and `uv
//! venv` make is a link to an interpreter the host already has, and a
//! `home` that is that interpreter's directory: that is accepted, in a new
//! environment as in an old one; anything else is refused in the layer and
//! set aside after a run in place ([`crate::protect::venv_programs`]).

use std::ffi::OsStr;
use std::path::{Path, PathBuf};

/// Whether the interpreter `p` (a host path) is one the host already
/// trusts: it resolves to a regular file outside every writable grant.
pub fn trusted_interpreter(p: &Path, writable: &[PathBuf]) -> bool {
    let Ok(real) = std::fs::canonicalize(p) else {
        return false;
    };
    let outside = !writable.iter().any(|w| {
        real.starts_with(w) || std::fs::canonicalize(w).is_ok_and(|c| real.starts_with(c))
    });
    outside && std::fs::metadata(&real).is_ok_and(|m| m.is_file())
}

/// An interpreter or activation script's name (as
/// `venv_programs::entry_point`, which uses this module).
fn entry_point(name: &OsStr) -> bool {
    let n = name.as_encoded_bytes();
    n.starts_with(b"python") || n.starts_with(b"activate") || n.starts_with(b"Activate")
}

/// The `home` value of the `pyvenv.cfg` text `cfg`.
fn home_of(cfg: &str) -> Option<&str> {
    cfg.lines().find_map(|l| {
        let (k, v) = l.split_once('=')?;
        (k.trim().eq_ignore_ascii_case("home")).then(|| v.trim())
    })
}

/// Why the `pyvenv.cfg` text `cfg` is refused, if it is: its `home` (the
/// standard library's place) must be an absolute directory outside the
/// writable grants holding an interpreter the host trusts.
pub fn judge_cfg(cfg: &str, writable: &[PathBuf]) -> Option<String> {
    let Some(home) = home_of(cfg) else {
        return None; // Python then uses its own standard library.
    };
    let h = Path::new(home);
    let ok = h.is_absolute()
        && std::fs::read_dir(h).is_ok_and(|rd| {
            rd.flatten().any(|e| {
                e.file_name().as_encoded_bytes().starts_with(b"python")
                    && trusted_interpreter(&e.path(), writable)
            })
        })
        && std::fs::canonicalize(h).is_ok_and(|r| !writable.iter().any(|w| r.starts_with(w)));
    (!ok).then(|| {
        format!(
            "a virtual environment's pyvenv.cfg whose home ({home}) is not the directory of \
             an interpreter the host has outside the writable grants (its python would take \
             its standard library from there)"
        )
    })
}

/// The layer's rule for a new environment's `bin/python*` (`names`
/// relative to `ws`; `upper` the entry in the layer; `link`: a symbolic
/// link, else a file). Activation scripts are refused; a link to a sibling `python*` (judged itself) or to
/// an interpreter the host trusts is accepted, anything else refused.
pub fn check_interpreter(
    ws: &Path,
    names: &[&OsStr],
    upper: &Path,
    link: bool,
) -> Result<(), String> {
    let [.., bin, last] = names else {
        return Ok(());
    };
    if *bin != "bin" || !entry_point(last) {
        return Ok(());
    }
    let env = upper.parent().and_then(Path::parent);
    let is_env = env.is_some_and(|e| std::fs::symlink_metadata(e.join("pyvenv.cfg")).is_ok());
    if !is_env {
        return Ok(());
    }
    if !last.as_encoded_bytes().starts_with(b"python") {
        return Err(
            "a new virtual environment's activation script (a shell sources it; set aside \
             after a run in place too)"
                .into(),
        );
    }
    let refuse = || {
        Err(
            "a virtual environment's interpreter that is not a link to one the host has \
             outside the workspace (host programs run it by path)"
                .to_string(),
        )
    };
    if !link {
        return refuse();
    }
    let Ok(to) = std::fs::read_link(upper) else {
        return refuse();
    };
    let sibling =
        to.components().count() == 1 && to.as_os_str().as_encoded_bytes().starts_with(b"python");
    if sibling || (to.is_absolute() && trusted_interpreter(&to, &[ws.to_path_buf()])) {
        return Ok(());
    }
    refuse()
}

/// The layer's rule for an environment's `pyvenv.cfg` file (`names`
/// relative to `ws`; `upper` the file in the layer).
pub fn check_cfg(ws: &Path, names: &[&OsStr], upper: &Path) -> Result<(), String> {
    if names.last().is_none_or(|l| *l != "pyvenv.cfg") {
        return Ok(());
    }
    let text = std::fs::read(upper).unwrap_or_default();
    match judge_cfg(&String::from_utf8_lossy(&text), &[ws.to_path_buf()]) {
        Some(why) => Err(why),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_home_in_the_workspace_is_refused() {
        let tmp = skarn_test_support::TempDir::new("venv-new");
        let ws = tmp.path().to_path_buf();
        std::fs::create_dir_all(ws.join("x/bin")).unwrap();
        std::fs::write(ws.join("x/bin/python3"), "").unwrap();
        let w = [ws.clone()];
        let real = std::fs::canonicalize("/usr/bin/python3")
            .ok()
            .and_then(|p| p.parent().map(Path::to_path_buf));
        if let Some(dir) = real {
            assert!(judge_cfg(&format!("home = {}\n", dir.display()), &w).is_none());
        }
        let bad = format!("home = {}\n", ws.join("x/bin").display());
        assert!(judge_cfg(&bad, &w).is_some());
        assert!(judge_cfg("home = rel/bin\n", &w).is_some());
        assert!(judge_cfg("version = 3.11\n", &w).is_none());
    }
}
