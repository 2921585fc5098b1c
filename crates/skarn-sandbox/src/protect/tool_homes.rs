//! The homes and caches of the host's build tools, wherever the caller's
//! environment and the tools' own settings put them (issue 22, item C).
//!
//! The host's `cargo` reads `$CARGO_HOME` (default `~/.cargo`): its
//! `config.toml` (programs it runs for every build: `build.rustc-wrapper`,
//! runners), the extracted registry and git sources whose `build.rs` it
//! compiles and runs without checking them again, the programs in `bin`,
//! the `env` file the shell's start-up files source, and its cache
//! database and locks. `rustup` runs the toolchains of `$RUSTUP_HOME`.
//! The host's `go` builds from its module cache (`GOMODCACHE`) and trusts
//! its build cache (`GOCACHE`) by action id, runs what `go install` put in
//! `GOBIN`, the toolchain of `GOROOT`, and reads its settings file
//! (`GOFLAGS=-toolexec=...`). When a user keeps one of these inside a
//! project (direnv's `export CARGO_HOME=$PWD/.cargo-home`, a `GOPATH` in the
//! checkout), a run could plant what the host's next build runs.
//!
//! [`places`] finds them as the tools do: the caller's variables, go's
//! settings file ([`crate::policy::go_env`]), cargo's `install.root`; the
//! planner keeps each one lying in a writable grant read-only (reserved
//! when missing). A cache a preset already gives the command as a private
//! layer is decided by that layer, not by this list.

use std::path::{Path, PathBuf};

use crate::protect::trusted::{Tree, Trusted};

/// Entries of the cargo home that cargo reads, runs or trusts: (name, a
/// directory tree).
const CARGO_PARTS: &[(&str, bool)] = &[
    ("registry", true),
    ("git", true),
    ("bin", true),
    ("config.toml", false),
    ("config", false),
    ("env", false),
    ("env.fish", false),
    ("env.nu", false),
    (".global-cache", false),
    (".crates.toml", false),
    (".crates2.json", false),
];

/// One place a host build tool runs or trusts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Place {
    /// The path as the tool names it (resolved by the caller).
    pub path: PathBuf,
    /// How the tool reaches it, for the report.
    pub via: String,
    /// A directory tree rather than one file.
    pub tree: bool,
}

/// An absolute path of a variable, as the tools take it (empty and
/// relative values are ignored).
fn abs(var: &dyn Fn(&str) -> Option<String>, k: &str) -> Option<PathBuf> {
    var(k)
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .filter(|p| p.is_absolute())
}

/// The places of the host's cargo, rustup and go for a caller whose home
/// is `home` (if known), with the caller's environment read through `var`.
pub fn places(home: Option<&Path>, var: &dyn Fn(&str) -> Option<String>) -> Vec<Place> {
    let mut out = Vec::new();
    let mut put = |path: PathBuf, via: String, tree: bool| out.push(Place { path, via, tree });
    let cargo = abs(var, "CARGO_HOME").or_else(|| home.map(|h| h.join(".cargo")));
    if let Some(c) = &cargo {
        // A home named `.cargo` has its configuration files protected
        // already, as every `.cargo/config.toml` in a grant (kept
        // read-only, a new one set aside after the run, never reserved:
        // a placeholder there stops the command's own cargo).
        let dot_cargo = c.file_name().is_some_and(|n| n == ".cargo");
        for (name, tree) in CARGO_PARTS {
            if dot_cargo && name.starts_with("config") {
                continue;
            }
            put(
                c.join(name),
                format!(
                    "cargo's home {} (cargo reads or runs its {name})",
                    c.display()
                ),
                *tree,
            );
        }
        for root in install_roots(c, var) {
            put(
                root.join("bin"),
                format!("cargo install's root {} (its programs)", root.display()),
                true,
            );
        }
    }
    if let Some(r) = abs(var, "RUSTUP_HOME").or_else(|| home.map(|h| h.join(".rustup"))) {
        put(
            r.clone(),
            format!("rustup's home {} (the toolchains cargo runs)", r.display()),
            true,
        );
    }
    let home_or_none = home
        .map(Path::to_path_buf)
        .unwrap_or_else(|| "/nonexistent".into());
    let go = crate::policy::go_env::go_dirs(&home_or_none, var);
    put(
        go.mod_cache.clone(),
        "go's module cache (host builds compile it as it is)".into(),
        true,
    );
    put(
        go.build_cache.clone(),
        "go's build cache (host builds trust it by action id)".into(),
        true,
    );
    put(
        go.bin.clone(),
        "go install's directory (GOBIN)".into(),
        true,
    );
    if let Some(r) = go.root {
        put(r, "GOROOT (the go toolchain)".into(), true);
    }
    if let Some(f) = crate::policy::go_env::settings_file(&home_or_none, var) {
        put(
            f,
            "go's settings file (GOFLAGS and the like, read by every go command)".into(),
            false,
        );
    }
    if home.is_none() {
        out.retain(|p| !p.path.starts_with("/nonexistent"));
    }
    out
}

/// `install.root` of cargo's home configuration and `$CARGO_INSTALL_ROOT`.
fn install_roots(cargo: &Path, var: &dyn Fn(&str) -> Option<String>) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = abs(var, "CARGO_INSTALL_ROOT").into_iter().collect();
    for name in ["config.toml", "config"] {
        let Ok(Some(b)) = crate::protect::small_file::read_bytes(&cargo.join(name)) else {
            continue;
        };
        let Ok(v) = toml::from_str::<toml::Value>(&String::from_utf8_lossy(&b)) else {
            continue;
        };
        if let Some(r) = v
            .get("install")
            .and_then(|i| i.get("root"))
            .and_then(|r| r.as_str())
        {
            // A relative root is relative to the directory holding `.cargo`.
            let p = Path::new(r);
            out.push(if p.is_absolute() {
                p.to_path_buf()
            } else {
                cargo.parent().unwrap_or(cargo).join(p)
            });
        }
    }
    out
}

/// [`places`], resolved (links at every level) into trusted places.
pub fn trusted(
    home: Option<&Path>,
    var: &dyn Fn(&str) -> Option<String>,
    cache: &mut crate::policy::canonical::CanonicalCache,
) -> (Vec<Trusted>, Vec<PathBuf>) {
    let mut out = Vec::new();
    let mut empty = Vec::new();
    for p in places(home, var) {
        let Some(target) = cache.resolve(&p.path) else {
            continue;
        };
        if !p.tree && empty_is_no_settings(&p.path) {
            empty.push(target.clone());
        }
        out.push(if p.tree {
            Trusted::tree(&p.path, target, p.via, Tree::Dir)
        } else {
            Trusted::new(&p.path, target, p.via, false)
        });
    }
    (out, empty)
}

/// Files of a tool home that the tool reads when present and takes as
/// "no settings" when empty: a missing one is reserved empty, so the
/// command's own cargo reads it (an unreadable placeholder stopped every
/// cargo command of a run whose `CARGO_HOME` lies in the workspace).
/// (Cargo's lock files, `.package-cache*`, hold nothing the host trusts
/// and are not protected: cargo must create and lock them.)
fn empty_is_no_settings(p: &Path) -> bool {
    p.file_name()
        .and_then(|n| n.to_str())
        .is_some_and(|n| matches!(n, "config.toml" | "config" | "env" | "env.fish" | "env.nu"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cargo_rustup_and_go_places_follow_the_callers_variables_and_settings() {
        let tmp = skarn_test_support::TempDir::new("tool-homes");
        let d = std::fs::canonicalize(tmp.path()).unwrap();
        let (home, ws) = (d.join("home"), d.join("ws"));
        std::fs::create_dir_all(home.join(".config/go")).unwrap();
        std::fs::create_dir_all(ws.join("ch")).unwrap();
        std::fs::write(
            home.join(".config/go/env"),
            format!("GOMODCACHE={}\n", ws.join("modc").display()),
        )
        .unwrap();
        std::fs::write(ws.join("ch/config.toml"), "[install]\nroot = \"inst\"\n").unwrap();
        let ch = ws.join("ch").display().to_string();
        let var = move |k: &str| (k == "CARGO_HOME").then(|| ch.clone());
        let ps = places(Some(&home), &var);
        let has = |p: PathBuf, tree: bool| ps.iter().any(|x| x.path == p && x.tree == tree);
        assert!(has(ws.join("ch/registry"), true), "{ps:?}");
        assert!(has(ws.join("ch/config.toml"), false), "{ps:?}");
        assert!(has(ws.join("inst/bin"), true), "{ps:?}");
        assert!(has(ws.join("modc"), true), "{ps:?}");
        assert!(has(home.join(".rustup"), true), "{ps:?}");
        assert!(has(home.join("go/bin"), true), "{ps:?}");
        assert!(has(home.join(".config/go/env"), false), "{ps:?}");
    }
}
