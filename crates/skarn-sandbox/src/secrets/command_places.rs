//! A `command` source runs on the host, unsandboxed, each time a run or
//! server is granted its secret. What it runs must not be something a
//! sandboxed run could have changed (attack atk27j F10, F11): the program,
//! a script named in a shell string, a module beside the script (Python
//! puts the script's directory first on its path, node looks in
//! `node_modules` above it), a project a `make -C DIR` or `--project DIR`
//! runs, or a program planted earlier on `PATH`. No list of what each
//! interpreter loads can be complete, so the rule is by place: a source
//! whose program, any file or directory its arguments name (or a link on
//! the way to one), or a `PATH` directory looked in before its program is
//! found, lies in a place some run may write ([`Places`]) is refused
//! before it runs, saying which and why. So is one whose program or a
//! file its arguments name has other names (hard links) and may be
//! written by the user: another name may lie in such a place, unseen,
//! and a run writing through it changes this file (ADR 0283's view hides
//! the place, not the other name).

use std::path::{Path, PathBuf};

use skarn_egress::secrets::config::SecretConfig;

use super::root_files::{Places, resolve};

/// Refuse `c` (secret `name`) when a `command` source depends on a place
/// a run may write: this run's `writable` grants, earlier runs' (the
/// `granted-dirs` record), Skarn's stores.
pub fn check(
    name: &str,
    c: &SecretConfig,
    writable: &[PathBuf],
    home: Option<&Path>,
) -> Result<(), String> {
    let Some(prog) = c.command.as_ref().and_then(|v| v.first()) else {
        return Ok(());
    };
    let places = Places::new(writable, home);
    let d = c.command_depends(home);
    for dir in &d.path_dirs {
        if let Some(why) = writable_place(dir, &places) {
            return Err(format!(
                "secret {name}: its command's program {prog} is looked up in the PATH \
                 directory {}, where a sandboxed run may put a program of that name ({why}): \
                 give the program's absolute path in command",
                dir.display()
            ));
        }
    }
    if let Some(w) = d.unknown.first() {
        return Err(format!(
            "secret {name}: its command runs on the host and names {w:?}, a shell form skarn \
             does not follow (a glob, `$(...)`, `${{NAME:-...}}`, `~user`), so it cannot tell \
             whether a sandboxed run may change what that names: write the path out (`~/`, \
             `$HOME` and `${{NAME}}` are followed)"
        ));
    }
    for p in &d.paths {
        if let Some(n) = linked_elsewhere(p) {
            return Err(format!(
                "secret {name}: its command runs on the host and depends on {}, a file you may \
                 write that has {n} names (hard links): another name may lie where a sandboxed \
                 run may write, and changing the file there changes this one; keep a single \
                 copy of it (cp, not ln) outside every workspace",
                p.display()
            ));
        }
        if let Some(why) = writable_place(p, &places) {
            return Err(format!(
                "secret {name}: its command runs on the host and depends on {}, which a \
                 sandboxed run may change ({why}): keep the program, its scripts and what \
                 they load outside every workspace and writable grant",
                p.display()
            ));
        }
    }
    Ok(())
}

/// How many names `p` has when it is a regular file with more than one
/// that the caller may write, outside the system's program directories.
fn linked_elsewhere(p: &Path) -> Option<u64> {
    use std::os::unix::fs::MetadataExt;
    const SYSTEM: &[&str] = &[
        "/usr",
        "/bin",
        "/sbin",
        "/lib",
        "/lib64",
        "/nix/store",
        "/etc",
    ];
    let real = std::fs::canonicalize(p).ok()?;
    let md = std::fs::metadata(&real).ok()?;
    let writable = rustix::fs::access(&real, rustix::fs::Access::WRITE_OK).is_ok();
    let system = SYSTEM.iter().any(|d| real.starts_with(d));
    (md.is_file() && md.nlink() > 1 && writable && !system).then_some(md.nlink())
}

/// Why `p` (or a link on the way to it) lies in `places`; `None` when it
/// does not. A missing path is judged by its name.
fn writable_place(p: &Path, places: &Places) -> Option<String> {
    if std::fs::symlink_metadata(p).is_err() {
        return places.inside(p);
    }
    match resolve(p, places) {
        Ok(_) => None,
        Err(e) if e.starts_with("cannot read") => places.inside(p),
        Err(e) => Some(e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_script_in_a_shell_string_inside_a_writable_grant_is_refused() {
        let d = std::env::temp_dir().join(format!("skarn-cmdpl-{}", std::process::id()));
        let ws = d.join("ws");
        std::fs::create_dir_all(ws.join("tools")).unwrap();
        std::fs::write(ws.join("tools/get.py"), "print('x')\n").unwrap();
        let text = format!(
            "[secrets.a]\ncommand = [\"sh\", \"-c\", \"python3 {}/tools/get.py\"]\nhosts = [\"h\"]\n\
             [secrets.b]\ncommand = [\"make\", \"-s\", \"-C\", \"{}\", \"token\"]\nhosts = [\"h\"]\n\
             [secrets.c]\ncommand = [\"sh\", \"-c\", \"echo tok\"]\nhosts = [\"h\"]\n",
            ws.display(),
            ws.display()
        );
        let cfg = skarn_egress::secrets::config::SecretsConfig::parse(&text, "t").unwrap();
        let w = [ws.clone()];
        let e = check("a", &cfg.secrets["a"], &w, None).unwrap_err();
        assert!(e.contains("get.py") || e.contains("/ws"), "{e}");
        assert!(check("b", &cfg.secrets["b"], &w, None).is_err());
        assert!(check("c", &cfg.secrets["c"], &w, None).is_ok());
        assert!(check("a", &cfg.secrets["a"], &[], None).is_ok());
        // A hard link of the script elsewhere: refused, naming it.
        std::fs::hard_link(ws.join("tools/get.py"), d.join("get-link.py")).unwrap();
        let e = check("a", &cfg.secrets["a"], &[], None).unwrap_err();
        assert!(e.contains("hard links"), "{e}");
        std::fs::remove_dir_all(&d).unwrap();
    }
}
