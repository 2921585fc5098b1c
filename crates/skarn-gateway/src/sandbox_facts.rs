//! Host facts about a server's command for its sandbox policy
//! ([`crate::sandbox_policy::ServerFacts`]): where the command is, its `#!`
//! interpreter, and the installation directories they belong to.

use std::path::{Path, PathBuf};

use crate::install_guard::InstallGuard;

/// `cmd` on `path` (or at `cwd/cmd` when it holds a slash).
pub(crate) fn find_on_path(cmd: &str, path: Option<&PathBuf>, cwd: &Path) -> Option<PathBuf> {
    if cmd.contains('/') {
        let p = cwd.join(cmd);
        return p.is_file().then_some(p);
    }
    let path = path.map(|p| p.as_os_str().to_owned()).unwrap_or_default();
    std::env::split_paths(&path)
        .map(|d| d.join(cmd))
        .find(|p| p.is_file())
}

/// The file as named and its canonical path.
pub(crate) fn both(p: &Path) -> Vec<PathBuf> {
    let mut v = vec![p.to_path_buf()];
    if let Ok(r) = std::fs::canonicalize(p)
        && r != p
    {
        v.push(r);
    }
    v
}

/// The interpreter named by a `#!` line (through `/usr/bin/env NAME`).
pub(crate) fn interpreter(file: &Path, path: Option<&PathBuf>, cwd: &Path) -> Option<PathBuf> {
    use std::io::Read;
    let mut head = [0u8; 256];
    let n = std::fs::File::open(file).ok()?.read(&mut head).ok()?;
    let line = head[..n].strip_prefix(b"#!")?;
    let line = String::from_utf8_lossy(line.split(|&b| b == b'\n').next()?).into_owned();
    let mut words = line.split_whitespace();
    let first = PathBuf::from(words.next()?);
    if first.file_name().is_some_and(|n| n == "env") {
        let name = words.find(|w| !w.starts_with('-'))?;
        return find_on_path(name, path, cwd);
    }
    Some(first)
}

/// Installation directories above `p`: a `node_modules` directory it lies
/// in or next to, a venv (a directory holding `pyvenv.cfg`) and the Python
/// installation it was made from, the prefix of a `PREFIX/bin/NAME`
/// program (a pyenv or nvm version). Never what `guard` refuses (a home,
/// what holds one or a secret place, `~/.local`, a home's directory that
/// is no installation: atk27m F3); the walk up stops at such a directory.
pub(crate) fn install_roots(p: &Path, guard: &InstallGuard, out: &mut Vec<PathBuf>) {
    if let Some(bin) = p.parent()
        && bin.file_name().is_some_and(|n| n == "bin")
        && let Some(prefix) = bin.parent()
        && guard.refuses(prefix, true).is_none()
        && !bin.join("activate").is_file()
    {
        out.push(prefix.to_path_buf());
    }
    for a in p.ancestors().skip(1) {
        if a == Path::new("/") || guard.refuses(a, false).is_some() {
            break;
        }
        if a.file_name().is_some_and(|n| n == "node_modules") {
            out.push(a.to_path_buf());
            return;
        }
        if let Ok(cfg) = std::fs::read_to_string(a.join("pyvenv.cfg")) {
            out.push(a.to_path_buf());
            // `home = PREFIX/bin`: the interpreter the venv was made from.
            let base = cfg.lines().find_map(|l| {
                let (k, v) = l.split_once('=')?;
                (k.trim() == "home").then(|| PathBuf::from(v.trim()))
            });
            if let Some(b) = base.filter(|b| b.is_absolute())
                && let Some(prefix) = b.parent().filter(|p| guard.refuses(p, true).is_none())
            {
                out.push(std::fs::canonicalize(prefix).unwrap_or(prefix.to_path_buf()));
            }
            return;
        }
        let nm = a.join("node_modules");
        if nm.is_dir() {
            out.push(nm);
            return;
        }
    }
}

/// Interpreters whose installation prefix a server may need whole.
#[cfg(target_os = "linux")]
const INTERPRETERS: &[&str] = &[
    "python3", "python", "node", "ruby", "perl", "deno", "bun", "java", "php",
];

/// Whether `prefix` (resolved) is an interpreter's installation: its `bin`
/// holds one of [`INTERPRETERS`] (or a versioned `python3.N`) as an
/// executable regular file, and it is not `/`, the home, `~/.local`, nor
/// under the kernel's or the session's runtime trees. A project file the
/// user has not trusted may name only such a prefix outside the project
/// (attack atk25d F8: `pyvenv.cfg` `home = ~/.mozilla/bin`).
#[cfg(target_os = "linux")]
pub(crate) fn is_interpreter_prefix(prefix: &Path, home: Option<&Path>) -> bool {
    use std::os::unix::fs::PermissionsExt;
    let Ok(real) = std::fs::canonicalize(prefix) else {
        return false;
    };
    let broad = real == Path::new("/")
        || home.is_some_and(|h| {
            let h = std::fs::canonicalize(h).unwrap_or_else(|_| h.to_path_buf());
            real == h || real == h.join(".local")
        });
    let runtime = [
        "/run",
        "/var/run",
        "/proc",
        "/sys",
        "/dev",
        "/tmp/.X11-unix",
    ]
    .iter()
    .any(|r| real.starts_with(r));
    if broad || runtime {
        return false;
    }
    let Ok(rd) = std::fs::read_dir(real.join("bin")) else {
        return false;
    };
    rd.flatten().take(4096).any(|e| {
        let name = e.file_name();
        let name = name.to_string_lossy();
        let named = INTERPRETERS.contains(&name.as_ref())
            || name
                .strip_prefix("python3.")
                .is_some_and(|v| !v.is_empty() && v.bytes().all(|b| b.is_ascii_digit()));
        named
            && std::fs::metadata(e.path())
                .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn roots_and_shebang() {
        let d = skarn_test_support::TempDir::new("facts");
        let v = d.path().join("v");
        std::fs::create_dir_all(v.join("bin")).unwrap();
        std::fs::write(v.join("pyvenv.cfg"), "home = /usr/bin\n").unwrap();
        let s = v.join("bin/srv");
        std::fs::write(&s, "#!/usr/bin/env sh\n").unwrap();
        let mut out = Vec::new();
        install_roots(&s, &InstallGuard::default(), &mut out);
        out.sort();
        out.dedup();
        assert_eq!(out, [v.clone(), PathBuf::from("/usr")]);
        let path = PathBuf::from("/usr/bin:/bin");
        let i = interpreter(&s, Some(&path), d.path()).unwrap();
        assert!(i.ends_with("sh"), "{i:?}");
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn an_interpreter_prefix_has_an_interpreter_in_bin() {
        let d = skarn_test_support::TempDir::new("facts");
        let fake = d.path().join("mozilla");
        std::fs::create_dir_all(fake.join("bin")).unwrap();
        std::fs::write(fake.join("bin/logins.json"), "x").unwrap();
        assert!(!is_interpreter_prefix(&fake, None));
        let py = d.path().join("py");
        std::fs::create_dir_all(py.join("bin")).unwrap();
        std::fs::write(py.join("bin/python3.12"), "#!/bin/sh\n").unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(
            py.join("bin/python3.12"),
            std::fs::Permissions::from_mode(0o755),
        )
        .unwrap();
        assert!(is_interpreter_prefix(&py, None));
        assert!(!is_interpreter_prefix(&py, Some(&py)));
        assert!(!is_interpreter_prefix(Path::new("/run"), None));
    }
}
