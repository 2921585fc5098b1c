//! Where the programs Cargo built for the tests are, and who runs them.

use std::path::{Path, PathBuf};

/// The program `name` in the target directory of the running test binary
/// (`target/<profile>/<name>`, one level above `deps/`). `cargo test
/// --workspace` builds every package's binaries there; when it is missing
/// the panic says to build `skarn-example-server`, where the test servers
/// live.
pub fn target_bin(name: &str) -> PathBuf {
    let exe = std::env::current_exe().expect("the test binary's own path");
    let dir = exe
        .parent()
        .and_then(Path::parent)
        .expect("the test binary lies in target/<profile>/deps");
    existing(dir.join(name))
}

/// The program `name` next to `exe` (for a test that knows one binary's
/// path, such as `env!("CARGO_BIN_EXE_skarn")`, and needs its siblings).
pub fn bin_next_to(exe: impl AsRef<Path>, name: &str) -> PathBuf {
    existing(exe.as_ref().with_file_name(name))
}

fn existing(p: PathBuf) -> PathBuf {
    assert!(
        p.exists(),
        "{} is missing: build it first (`cargo build -p skarn-example-server`; `cargo test --workspace` does)",
        p.display()
    );
    p
}

/// Whether the tests run as root (some checks differ for an unprivileged
/// user).
pub fn is_root() -> bool {
    #[cfg(unix)]
    return rustix::process::getuid().is_root();
    #[cfg(not(unix))]
    return false;
}

#[cfg(test)]
mod tests {
    #[test]
    fn finds_a_sibling_and_names_a_missing_one() {
        let me = std::env::current_exe().unwrap();
        let name = me.file_name().unwrap().to_string_lossy().into_owned();
        assert_eq!(super::bin_next_to(&me, &name), me);
        let missing = std::panic::catch_unwind(|| super::bin_next_to(&me, "no-such-program"));
        assert!(missing.is_err());
    }
}
