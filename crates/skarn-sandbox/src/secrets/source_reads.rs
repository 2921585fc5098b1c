//! The files a secret's value was really read from (ADR 0319), kept for
//! every later run: after a `command` source ran traced
//! ([`super::source_trace`]), each regular file it opened or executed that
//! holds the value it printed (its helper script, the token file a
//! wrapper reads, under `/etc`, `/usr/local` or `/opt` as well as the
//! home), and each file beside one of those that holds it too (a
//! `tok.bak`, an older copy), is recorded in
//! `~/.local/state/skarn/source-reads`. For a `from_env` source the same
//! is done with the system's shell start-up files (an `export` in
//! `/etc/profile.d`). Every run and sandboxed server hides the recorded
//! files, granted that secret or not (`host_places`): a file is looked at
//! by what the source did, not by a reading of its text.

use std::io::Read;
use std::path::{Path, PathBuf};

use skarn_egress::ValueFinder;
use skarn_egress::secrets::SecretSpec;
use skarn_egress::secrets::config::SecretsConfig;

/// The record, below the home (never under `$XDG_STATE_HOME`, which a
/// run may be able to name).
pub const RECORD: &str = ".local/state/skarn/source-reads";
/// Most bytes read from one file; a longer one is not looked at (a
/// program or library).
const MAX_FILE: u64 = 4 << 20;
/// Most bytes read for one secret.
const MAX_TOTAL: u64 = 256 << 20;
/// Most entries of a directory looked at beside a file holding a value;
/// past it, the usual names of copies only.
const BESIDE_MAX: usize = 256;

/// The system's shell start-up files a login shell reads (bounded: the
/// `.d` directories' first 256 entries), where a `from_env` value is
/// commonly exported.
pub fn startup_files() -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = [
        "/etc/environment",
        "/etc/profile",
        "/etc/bash.bashrc",
        "/etc/bashrc",
        "/etc/zshenv",
        "/etc/zprofile",
        "/etc/zshrc",
        "/etc/zsh/zshenv",
        "/etc/zsh/zprofile",
        "/etc/zsh/zshrc",
        "/etc/fish/config.fish",
        "/etc/security/pam_env.conf",
        "/etc/csh.cshrc",
        "/etc/csh.login",
    ]
    .iter()
    .map(PathBuf::from)
    .collect();
    for d in [
        "/etc/profile.d",
        "/etc/environment.d",
        "/etc/fish/conf.d",
        "/etc/bashrc.d",
    ] {
        if let Ok(rd) = std::fs::read_dir(d) {
            out.extend(rd.flatten().take(BESIDE_MAX).map(|e| e.path()));
        }
    }
    out
}

/// Whether the regular file `f` holds `spec`'s value in any form the
/// scrubber knows; `budget` is what may still be read.
fn holds(finder: &ValueFinder, value: &[u8], f: &Path, budget: &mut u64) -> bool {
    let Ok(file) = super::value_file::open_nonblocking(f) else {
        return false;
    };
    let Ok(md) = file.metadata() else {
        return false;
    };
    if !md.is_file() || md.len() > MAX_FILE || md.len() > *budget {
        return false;
    }
    *budget -= md.len();
    let mut text = Vec::new();
    if file.take(MAX_FILE).read_to_end(&mut text).is_err() {
        return false;
    }
    // A program or library (ELF) counts when it holds the whole value
    // (compiled in): a window of it may be any table of letters there.
    memchr::memmem::find(&text, value).is_some()
        || (!text.starts_with(b"\x7fELF") && finder.found_in(&text))
}

/// The files among `read` holding `spec`'s value, and those beside them
/// holding it.
pub fn holding(spec: &SecretSpec, read: &[PathBuf]) -> Vec<PathBuf> {
    let finder = ValueFinder::new(std::slice::from_ref(spec));
    let value = spec.value.as_bytes();
    let mut budget = MAX_TOTAL;
    let mut out: Vec<PathBuf> = Vec::new();
    for f in read {
        if out.contains(f) || !holds(&finder, value, f, &mut budget) {
            continue;
        }
        out.push(f.clone());
        for b in beside(f) {
            if !out.contains(&b) && holds(&finder, value, &b, &mut budget) {
                out.push(b);
            }
        }
    }
    out
}

/// The files in `f`'s directory when it is small, else the names
/// editors and tools give copies of `f`.
fn beside(f: &Path) -> Vec<PathBuf> {
    let (Some(dir), Some(name)) = (f.parent(), f.file_name().and_then(|n| n.to_str())) else {
        return Vec::new();
    };
    if let Ok(rd) = std::fs::read_dir(dir) {
        let all: Vec<PathBuf> = (rd.flatten().take(BESIDE_MAX + 1))
            .map(|e| e.path())
            .collect();
        if all.len() <= BESIDE_MAX {
            return all;
        }
    }
    ["~", ".bak", ".orig", ".old", ".save", ".swp"]
        .iter()
        .map(|s| dir.join(format!("{name}{s}")))
        .chain([
            dir.join(format!(".{name}.swp")),
            dir.join(format!("#{name}#")),
        ])
        .collect()
}

/// Record, for every later run, the files each of `specs` (resolved from
/// `cfg`) was really read from: what its traced `command` source opened or
/// executed, the system's start-up files for a `from_env` source.
pub fn settle(cfg: &SecretsConfig, specs: &[SecretSpec], home: Option<&Path>) {
    let mut reads = skarn_egress::secrets::source_reads();
    for s in specs {
        if cfg
            .secrets
            .get(&s.name)
            .is_some_and(|c| c.from_env.is_some())
        {
            reads.push((s.name.clone(), startup_files()));
        }
    }
    let Some(home) = home else {
        return;
    };
    for (name, files) in reads {
        let Some(spec) = specs.iter().find(|s| s.name == name) else {
            continue;
        };
        if let Err(e) = record(home, &name, &holding(spec, &files)) {
            eprintln!("skarn: warning: recording where secret {name}'s value lies: {e}");
        }
    }
}

/// The recorded files of the secrets `cfg` configures, as `host_places`
/// entries (path, why, hidden).
pub fn host_places(cfg: &SecretsConfig, home: Option<&Path>) -> Vec<(PathBuf, String, bool)> {
    let Some(h) = home else {
        return Vec::new();
    };
    let names: Vec<&str> = cfg.secrets.keys().map(String::as_str).collect();
    recorded(h, &names)
        .into_iter()
        .map(|(n, f)| (f, format!("a file secret {n}'s value was read from"), true))
        .collect()
}

/// Record `files` as the places secret `name`'s value was read from
/// (replacing what was recorded for it).
pub fn record(home: &Path, name: &str, files: &[PathBuf]) -> std::io::Result<()> {
    let p = home.join(RECORD);
    let mut kept: Vec<(String, PathBuf)> =
        read(&p).into_iter().filter(|(n, _)| n != name).collect();
    kept.extend(files.iter().map(|f| (name.to_string(), f.clone())));
    let mut text = Vec::new();
    for (n, f) in &kept {
        text.extend_from_slice(hex(n.as_bytes()).as_bytes());
        text.push(b'\t');
        text.extend_from_slice(f.as_os_str().as_encoded_bytes());
        text.push(0);
    }
    if let Some(d) = p.parent() {
        std::fs::create_dir_all(d)?;
    }
    let tmp = p.with_extension(format!("tmp{}", std::process::id()));
    std::fs::write(&tmp, text)?;
    std::fs::rename(&tmp, &p)
}

/// What was recorded, as (secret name, file), for the secrets `names`.
pub fn recorded(home: &Path, names: &[&str]) -> Vec<(String, PathBuf)> {
    read(&home.join(RECORD))
        .into_iter()
        .filter(|(n, _)| names.contains(&n.as_str()))
        .collect()
}

fn read(p: &Path) -> Vec<(String, PathBuf)> {
    let Ok(text) = std::fs::read(p) else {
        return Vec::new();
    };
    text.split(|b| *b == 0)
        .filter_map(|e| {
            let tab = e.iter().position(|b| *b == b'\t')?;
            let name = String::from_utf8(unhex(&e[..tab])?).ok()?;
            let f = PathBuf::from(std::str::from_utf8(&e[tab + 1..]).ok()?);
            f.is_absolute().then_some((name, f))
        })
        .collect()
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

fn unhex(s: &[u8]) -> Option<Vec<u8>> {
    s.chunks(2)
        .map(|c| u8::from_str_radix(std::str::from_utf8(c).ok()?, 16).ok())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_are_kept_per_secret_and_replaced() {
        let d = std::env::temp_dir().join(format!("skarn-srcreads-{}", std::process::id()));
        let a = [PathBuf::from("/opt/x/tok"), PathBuf::from("/opt/x/tok.bak")];
        record(&d, "a", &a).unwrap();
        record(&d, "b\tc", &[PathBuf::from("/etc/y")]).unwrap();
        record(&d, "a", &a[..1]).unwrap();
        let all = recorded(&d, &["a", "b\tc"]);
        assert_eq!(
            all,
            vec![
                ("b\tc".to_string(), PathBuf::from("/etc/y")),
                ("a".to_string(), a[0].clone())
            ]
        );
        assert_eq!(recorded(&d, &["b\tc"]).len(), 1);
        std::fs::remove_dir_all(&d).unwrap();
    }
}
