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
/// Most bytes read from one file; a longer one is not searched: it
/// counts as holding the value unless it is a system file or a program
/// (atk27q F2, fail closed).
const MAX_FILE: u64 = 4 << 20;
/// Most bytes read for one secret (past it, as a file too long).
const MAX_TOTAL: u64 = 256 << 20;
/// Most files recorded for one secret (the union of its resolutions).
const MAX_RECORDED: usize = 16384;
/// Most start-up files followed through `.`/`source` lines, and how deep.
const MAX_SOURCED: usize = 256;
const SOURCED_DEPTH: usize = 4;
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
    follow_sourced(out)
}

/// `files` and the files their `.`/`source` lines name (absolute paths,
/// followed `SOURCED_DEPTH` deep, at most `MAX_SOURCED` more; atk27q F5:
/// `/etc/profile.d/app.sh` doing `. /opt/app/env.sh`).
pub fn follow_sourced(mut files: Vec<PathBuf>) -> Vec<PathBuf> {
    let mut from = 0;
    for _ in 0..SOURCED_DEPTH {
        let end = files.len();
        for i in from..end {
            let Ok(text) = std::fs::read(&files[i]) else {
                continue;
            };
            for p in sourced(&String::from_utf8_lossy(
                &text[..text.len().min(MAX_FILE as usize)],
            )) {
                if files.len() < end + MAX_SOURCED && !files.contains(&p) {
                    files.push(p);
                }
            }
        }
        from = end;
    }
    files
}

/// The absolute paths a shell text's `.`/`source` commands name.
fn sourced(text: &str) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for line in text.lines() {
        let words: Vec<&str> = line
            .split(|c: char| c.is_whitespace() || ";&|()".contains(c))
            .filter(|w| !w.is_empty())
            .collect();
        for w in words.windows(2) {
            if w[0] == "." || w[0] == "source" {
                let p = w[1].trim_matches(|c| c == '"' || c == '\'');
                if p.starts_with('/') && !p.contains(['$', '*', '?', '`']) {
                    out.push(PathBuf::from(p));
                }
            }
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
    if !md.is_file() {
        return false;
    }
    if md.len() > MAX_FILE || md.len() > *budget {
        return super::source_kind::unchecked_holds(f);
    }
    *budget -= md.len();
    let mut text = Vec::new();
    if file.take(MAX_FILE).read_to_end(&mut text).is_err() {
        return super::source_kind::unchecked_holds(f);
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
/// executed (each file holding the value, and each data file whatever it
/// holds: `source_kind::data`), the system's start-up files for a
/// `from_env` source (those holding the value).
pub fn settle(
    cfg: &SecretsConfig,
    specs: &[SecretSpec],
    home: Option<&Path>,
) -> Result<(), String> {
    let traced = skarn_egress::secrets::source_reads();
    let mut reads = Vec::new();
    for (name, files) in traced {
        let data: Vec<PathBuf> = (files.iter())
            .filter(|f| super::source_kind::data(f))
            .cloned()
            .collect();
        reads.push((name, files, data));
    }
    for s in specs {
        if cfg
            .secrets
            .get(&s.name)
            .is_some_and(|c| c.from_env.is_some())
        {
            reads.push((s.name.clone(), startup_files(), Vec::new()));
        }
    }
    let Some(home) = home else {
        return Ok(());
    };
    for (name, files, mut data) in reads {
        let Some(spec) = specs.iter().find(|s| s.name == name) else {
            continue;
        };
        for f in holding(spec, &files) {
            if !data.contains(&f) {
                data.push(f);
            }
        }
        if let Err(e) = record(home, &name, &data) {
            eprintln!("skarn: warning: recording where secret {name}'s value lies: {e}");
        }
    }
    // Past the bound the record is not cut (a dropped file would no
    // longer be hidden): the secret is refused (f27t, fail closed).
    let names: Vec<&str> = specs.iter().map(|s| s.name.as_str()).collect();
    let all = recorded(home, &names);
    for n in names {
        let count = all.iter().filter(|(m, _)| m == n).count();
        if count > MAX_RECORDED {
            return Err(over_bound(n, count));
        }
    }
    Ok(())
}

/// Why secret `name` is refused: its record holds more files than every
/// run can be trusted to hide.
fn over_bound(name: &str, count: usize) -> String {
    format!(
        "secret {name}: its value was read from {count} recorded files (more than \
         {MAX_RECORDED}), all hidden from every run, and skarn keeps no more: the secret is \
         refused rather than some of them shown. Move or delete the files that hold the value \
         (listed in ~/{RECORD}; a file that no longer exists leaves the record), or use a \
         source that reads fewer files"
    )
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

/// Add `files` to the places secret `name`'s value was read from: the
/// record is the union of every resolution (atk27q F1: a caching source
/// reads its master file only the first time), pruned only of files
/// that no longer exist; never cut (past `MAX_RECORDED` for one secret,
/// `settle` refuses the secret instead: a dropped file would be shown).
pub fn record(home: &Path, name: &str, files: &[PathBuf]) -> std::io::Result<()> {
    let p = home.join(RECORD);
    let mut kept: Vec<(String, PathBuf)> = (read(&p).into_iter())
        .filter(|(n, f)| n != name || (!files.contains(f) && f.symlink_metadata().is_ok()))
        .collect();
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
    fn records_are_kept_per_secret_as_a_union_of_resolutions() {
        let d = std::env::temp_dir().join(format!("skarn-srcreads-{}", std::process::id()));
        std::fs::create_dir_all(&d).unwrap();
        let a = [d.join("tok"), d.join("tok.bak")];
        for f in &a {
            std::fs::write(f, "x").unwrap();
        }
        record(&d, "a", &a).unwrap();
        record(&d, "b\tc", &[PathBuf::from("/etc/y")]).unwrap();
        // A second resolution reading only its cache keeps the first's
        // files (atk27q F1); a file gone is pruned.
        std::fs::remove_file(&a[1]).unwrap();
        record(&d, "a", &[d.join("cache")]).unwrap();
        let all = recorded(&d, &["a", "b\tc"]);
        assert_eq!(
            all,
            vec![
                ("a".to_string(), a[0].clone()),
                ("b\tc".to_string(), PathBuf::from("/etc/y")),
                ("a".to_string(), d.join("cache")),
            ]
        );
        assert_eq!(recorded(&d, &["b\tc"]).len(), 1);
        std::fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn sourced_files_of_startup_files_are_followed() {
        let d = std::env::temp_dir().join(format!("skarn-srcfollow-{}", std::process::id()));
        std::fs::create_dir_all(&d).unwrap();
        let (start, env, deeper) = (d.join("app.sh"), d.join("env.sh"), d.join("deep.env"));
        std::fs::write(
            &start,
            format!(
                "[ -r {0} ] && . {0}\nset -a; source \"{1}\"\n. $HOME/x\n",
                env.display(),
                deeper.display()
            ),
        )
        .unwrap();
        std::fs::write(&env, format!("if true; then . {}; fi\n", start.display())).unwrap();
        let all = follow_sourced(vec![start.clone()]);
        assert_eq!(all, vec![start, env, deeper]);
        std::fs::remove_dir_all(&d).unwrap();
    }
}
