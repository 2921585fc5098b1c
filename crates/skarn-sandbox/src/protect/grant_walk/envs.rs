//! Python and conda environments, and changes since a time.

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Whether `p` was changed (created, written, renamed, chmod-ed) at or
/// after `since`: its status-change time, which no process can set.
pub fn changed_since(p: &Path, since: std::time::SystemTime) -> bool {
    let Ok(m) = std::fs::symlink_metadata(p) else {
        return false;
    };
    let Ok(s) = since.duration_since(std::time::UNIX_EPOCH) else {
        return true;
    };
    let c = Duration::new(
        u64::try_from(m.ctime()).unwrap_or(0),
        u32::try_from(m.ctime_nsec()).unwrap_or(0),
    );
    c >= s
}

/// The Python environment (a `pyvenv.cfg` or `conda-meta` beside its
/// `lib`) a grant `root` lies strictly inside, looking up to 6 levels
/// (`<env>/lib/python3.X/site-packages/<pkg>/<sub>`).
pub fn enclosing_env(root: &Path) -> Option<PathBuf> {
    root.ancestors()
        .skip(1)
        .take(6)
        .find_map(|a| is_python_env(a).then(|| a.to_path_buf()))
}

/// Whether `dir` is a virtual environment (`pyvenv.cfg` in it).
pub fn is_venv(dir: &Path) -> bool {
    std::fs::symlink_metadata(dir.join("pyvenv.cfg")).is_ok_and(|m| m.is_file())
}

/// Whether `dir` is a conda prefix (a `conda-meta` directory in it): an
/// environment made by conda, mamba, micromamba or pixi, whose activation
/// (`conda activate`, `pixi shell`, `pixi run`) sources its
/// `etc/conda/activate.d` scripts in the host's shell. Its activation
/// directories count as a marker too: a run that removed `conda-meta`
/// would otherwise un-protect them for the next run, and a later one put
/// the marker back (attack atk22h F13).
pub fn is_conda_env(dir: &Path) -> bool {
    let is_dir = |p: &str| std::fs::symlink_metadata(dir.join(p)).is_ok_and(|m| m.is_dir());
    is_dir("conda-meta") || CONDA_ACTIVATION.iter().any(|a| is_dir(a))
}

/// A conda prefix's activation directories: sourced (`activate.d`,
/// `deactivate.d`) or exported (`env_vars.d`) into the host's shell.
pub const CONDA_ACTIVATION: &[&str] = &[
    "etc/conda/activate.d",
    "etc/conda/deactivate.d",
    "etc/conda/env_vars.d",
];

/// Whether `dir` is a Python environment of either kind ([`is_venv`],
/// [`is_conda_env`]).
pub fn is_python_env(dir: &Path) -> bool {
    is_venv(dir) || is_conda_env(dir)
}

/// Whether `name` is a compiled Python file (`*.pyc`, any case).
pub fn is_compiled(name: &std::ffi::OsStr) -> bool {
    name.to_string_lossy().to_lowercase().ends_with(".pyc")
}
