//! What a toolchain variable of the caller may name before a preset grants
//! it (atk24o F4). `VIRTUAL_ENV`, `RUSTUP_HOME`, `CARGO_HOME`, `NVM_DIR`,
//! `PYENV_ROOT`, `CARGO_TARGET_DIR` and Go's `GOROOT`, `GOBIN`, `GOPATH`,
//! `GOMODCACHE`, `GOCACHE` come from the environment `skarn run` was
//! started with — which an agent's settings file, a wrapped MCP server's
//! `env` or a cloned repository's configuration can set. A grant must not
//! widen because of them: a value is taken only when the directory is what
//! the variable says it is (a virtual environment holds `pyvenv.cfg`, a
//! Go root `bin/go`, ...), judged by what the path resolves to, and never
//! when it is the root, the home or an ancestor of it, or a directory
//! holding one of the default secret places. Anything else is ignored and
//! the preset's default place under the home applies.

use std::path::{Path, PathBuf};

/// Most entries of a `bin` directory looked at to tell it is one.
const MAX_BIN_ENTRIES: usize = 4096;

/// The shape a variable's directory must have.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Shape {
    /// A Python virtual environment: `pyvenv.cfg` at its top.
    Venv,
    /// rustup's home: `toolchains/` or `settings.toml`.
    Rustup,
    /// cargo's home: any of the entries cargo keeps there.
    CargoHome,
    /// nvm's directory: `nvm.sh`.
    Nvm,
    /// pyenv's root: `versions/`, `libexec/pyenv` or `bin/pyenv`.
    Pyenv,
    /// A cargo target directory: empty, or holding what cargo writes.
    CargoTarget,
    /// A Go installation: `bin/go` beside `VERSION`, `go.env` or `src/`.
    GoRoot,
    /// A directory of programs (`GOBIN`): only executable files and links.
    Bin,
    /// Go's module cache: empty, or holding `cache/`.
    GoModCache,
    /// Go's build cache: empty, or holding `README` or `trim.txt`.
    GoBuildCache,
}

/// `value` of a toolchain variable when it may be granted: absolute, an
/// existing directory of the right [`Shape`], not the root, not the home
/// nor one of its ancestors, holding no default secret place. The path
/// returned is the resolved one; a path where nothing exists is kept as
/// given (there is nothing to read through it).
pub(crate) fn vetted(value: &Path, shape: Shape, home: &Path) -> Option<PathBuf> {
    if !value.is_absolute() || value.parent().is_none() {
        return None;
    }
    // Nothing there yet: nothing to read through it (an exec grant of a
    // missing path is dropped; a cache layer lives in skarn's store).
    if std::fs::symlink_metadata(value).is_err() {
        return (!home.starts_with(value)).then(|| value.to_path_buf());
    }
    let real = std::fs::canonicalize(value).ok()?;
    if !real.is_dir() || real.parent().is_none() {
        return None;
    }
    let real_home = std::fs::canonicalize(home).unwrap_or_else(|_| home.to_path_buf());
    if real_home.starts_with(&real) || home.starts_with(&real) {
        return None;
    }
    let holds_secret = super::default_secret_paths(Some(&real_home))
        .iter()
        .chain(super::default_secret_paths(Some(home)).iter())
        .any(|s| s.starts_with(&real));
    if holds_secret || !has_shape(&real, shape) {
        return None;
    }
    Some(real)
}

fn has_shape(d: &Path, shape: Shape) -> bool {
    let dir = |n: &str| d.join(n).is_dir();
    let file = |n: &str| d.join(n).is_file();
    let empty = || std::fs::read_dir(d).is_ok_and(|mut r| r.next().is_none());
    match shape {
        Shape::Venv => file("pyvenv.cfg"),
        Shape::Rustup => dir("toolchains") || file("settings.toml"),
        Shape::CargoHome => {
            empty()
                || dir("bin")
                || dir("registry")
                || file("config.toml")
                || file("config")
                || file(".crates.toml")
                || file("env")
        }
        Shape::Nvm => file("nvm.sh"),
        Shape::Pyenv => dir("versions") || file("libexec/pyenv") || file("bin/pyenv"),
        Shape::CargoTarget => {
            empty()
                || file("CACHEDIR.TAG")
                || file(".rustc_info.json")
                || dir("debug")
                || dir("release")
        }
        Shape::GoRoot => file("bin/go") && (file("VERSION") || file("go.env") || dir("src")),
        Shape::Bin => only_programs(d),
        Shape::GoModCache => empty() || dir("cache"),
        Shape::GoBuildCache => empty() || file("README") || file("trim.txt"),
    }
}

/// Whether every entry of `d` is an executable file or a link (a program
/// directory); a directory with more entries than the budget is not one.
fn only_programs(d: &Path) -> bool {
    let Ok(rd) = std::fs::read_dir(d) else {
        return false;
    };
    let mut n = 0;
    for e in rd {
        n += 1;
        if n > MAX_BIN_ENTRIES {
            return false;
        }
        let Ok(e) = e else { return false };
        let Ok(md) = e.path().symlink_metadata() else {
            return false;
        };
        let ok = md.file_type().is_symlink() || (md.is_file() && executable(&md));
        if !ok {
            return false;
        }
    }
    true
}

#[cfg(unix)]
fn executable(md: &std::fs::Metadata) -> bool {
    use std::os::unix::fs::PermissionsExt;
    md.permissions().mode() & 0o111 != 0
}

#[cfg(not(unix))]
fn executable(_: &std::fs::Metadata) -> bool {
    true
}

#[cfg(test)]
mod tests;
