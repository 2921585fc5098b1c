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

use std::path::{Path, PathBuf};

/// Site-packages directories looked at per environment, at most.
const MAX_SITE: usize = 8;
/// Entries looked at per site-packages directory, at most.
const MAX_ENTRIES: usize = 20_000;

/// Whether `dir` is a virtual environment (`pyvenv.cfg` in it).
pub fn is_venv(dir: &Path) -> bool {
    std::fs::symlink_metadata(dir.join("pyvenv.cfg")).is_ok_and(|m| m.is_file())
}

/// The site-packages directories of the environment `env`
/// (`lib/python3.X/site-packages`, `lib64/...`).
fn site_dirs(env: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for lib in ["lib", "lib64"] {
        // `lib64 -> lib` (what `python3 -m venv` makes): the same files,
        // already listed under `lib`; a path through a link cannot be
        // bound read-only (attack atk24d F7: every run failed at set-up).
        if std::fs::symlink_metadata(env.join(lib)).is_ok_and(|m| m.file_type().is_symlink()) {
            continue;
        }
        let Ok(rd) = std::fs::read_dir(env.join(lib)) else {
            continue;
        };
        for e in rd.flatten().take(64) {
            let sp = e.path().join("site-packages");
            if e.file_name().to_string_lossy().starts_with("python")
                && std::fs::symlink_metadata(&sp).is_ok_and(|m| m.is_dir())
                && out.len() < MAX_SITE
            {
                out.push(sp);
            }
        }
    }
    out
}

fn start_up_name(n: &str) -> bool {
    n.ends_with(".pth") || n == "sitecustomize.py" || n == "usercustomize.py"
}

/// The files to keep read-only before a run: `pyvenv.cfg` and each
/// `.pth` and customize module of the environment `env`.
pub fn protected(env: &Path) -> Vec<PathBuf> {
    let mut out = vec![env.join("pyvenv.cfg")];
    for sp in site_dirs(env) {
        let Ok(rd) = std::fs::read_dir(&sp) else {
            continue;
        };
        for e in rd.flatten().take(MAX_ENTRIES) {
            if start_up_name(&e.file_name().to_string_lossy()) {
                out.push(e.path());
            }
        }
    }
    out
}

/// Whether `.pth` text has a line Python executes (`import ...`).
pub fn runs_code(text: &str) -> bool {
    text.lines()
        .any(|l| l.starts_with("import ") || l.starts_with("import\t"))
}

/// After a run: set aside, in each environment of `envs`, every `.pth`
/// that runs code and every customize module made or changed at or after
/// `since`; one line each.
pub fn set_aside(envs: &[PathBuf], since: std::time::SystemTime) -> Vec<String> {
    let mut out = Vec::new();
    for env in envs {
        for sp in site_dirs(env) {
            // Only inside a real directory (a link the run made could lead
            // to a host directory).
            if std::fs::canonicalize(&sp).ok().as_deref() != Some(sp.as_path()) {
                continue;
            }
            let Ok(rd) = std::fs::read_dir(&sp) else {
                continue;
            };
            for e in rd.flatten().take(MAX_ENTRIES) {
                let n = e.file_name().to_string_lossy().into_owned();
                let p = e.path();
                if !start_up_name(&n) || !crate::protect::grant_walk::changed_since(&p, since) {
                    continue;
                }
                if n.ends_with(".pth") {
                    let text = crate::protect::git::gitconfig::read_file(&p).ok().flatten();
                    // (Unreadable or too large: set aside too.)
                    if text.as_deref().is_some_and(|t| !runs_code(t)) {
                        continue;
                    }
                }
                let aside = crate::protect::set_aside::set_aside(&p, "skarn-set-aside");
                out.push(format!(
                    "{} was written during the run and the environment's python runs it at \
                     every start (host too); {}",
                    p.display(),
                    aside.describe("review it before renaming it back or using that python")
                ));
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pth_lines_that_run_code_are_told_apart() {
        assert!(runs_code("/x/src\nimport os; os.system('x')\n"));
        assert!(runs_code("import\t__editable___p_finder\n"));
        assert!(!runs_code("/home/u/proj/src\n# import nothing\n ../lib\n"));
    }

    #[test]
    fn new_code_pth_is_set_aside_and_path_pth_kept() {
        let tmp = skarn_test_support::TempDir::new("venv-guard");
        let env = tmp.path().join(".venv");
        let sp = env.join("lib/python3.11/site-packages");
        std::fs::create_dir_all(&sp).unwrap();
        std::fs::write(env.join("pyvenv.cfg"), "home = /usr/bin\n").unwrap();
        std::fs::write(sp.join("old.pth"), "import os\n").unwrap();
        assert!(is_venv(&env));
        assert_eq!(protected(&env).len(), 2);
        // (Past the coarse clock of status-change times.)
        std::thread::sleep(std::time::Duration::from_millis(60));
        let since = std::time::SystemTime::now();
        std::thread::sleep(std::time::Duration::from_millis(60));
        std::fs::write(sp.join("__editable__.p.pth"), "/proj/src\n").unwrap();
        std::fs::write(sp.join("evil.pth"), "import os; os.system('x')\n").unwrap();
        std::fs::write(sp.join("sitecustomize.py"), "x = 1\n").unwrap();
        let lines = set_aside(std::slice::from_ref(&env), since);
        assert!(sp.join("__editable__.p.pth").exists());
        assert!(!sp.join("evil.pth").exists());
        assert!(!sp.join("sitecustomize.py").exists());
        assert_eq!(lines.len(), 2, "{lines:?}");
    }
}
