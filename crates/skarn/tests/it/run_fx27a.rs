//! Issue 27, builder fx27a: b27r's record of the files a traced source
//! read failed open (atk27q F1: replaced at each resolution, so a caching
//! source un-hid its master file; F2: a file over 4 MiB was never
//! recorded; F3: a value the source derives from files it read lay in
//! none of them; F5: a start-up file sourcing another; F8: files past the
//! trace's 4,096 were dropped). Each test makes the real attempt, as root
//! and as uid 65534, and judges from outside by what the runs printed.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Output;

use skarn_test_support::TempDir;

use crate::common::*;
use crate::support_secret_sources::{PATH, as_user, is_root, write_config};

/// A value with no run of common letters or digits in it.
pub(crate) const VALUE: &str = "Wq7Zk2Xp9Lm4Tv8Rc3Yb6Hs1Nd5Jf0Ga";

/// A place outside every grant that every run can read: `/opt` for uid
/// 65534, `/usr/local/lib` for root (not idmapped).
fn place(tag: &str, nobody: bool) -> PathBuf {
    let base = if nobody { "/opt" } else { "/usr/local/lib" };
    PathBuf::from(format!("{base}/skarn-fx27a-{}-{tag}", std::process::id()))
}

pub(crate) fn write(p: &Path, text: &[u8], mode: u32) {
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, text).unwrap();
    std::fs::set_permissions(p, std::fs::Permissions::from_mode(mode)).unwrap();
}

pub(crate) fn chown(p: &Path) {
    let st = std::process::Command::new("chown")
        .args(["-R", "65534:65534"])
        .arg(p)
        .status()
        .unwrap();
    assert!(st.success());
}

fn run(t: &TempDir, ws: &Path, home: &Path, flags: &[&str], script: &str, nobody: bool) -> Output {
    let mut c = run_command(ws, home, flags, &["sh", "-c", script]);
    c.env("PATH", PATH);
    if script.contains("SKARN_FX27A_TOK") {
        c.env("SKARN_FX27A_TOK", VALUE);
    }
    match nobody {
        true => as_user(c, t.path()).output().unwrap(),
        false => c.output().unwrap(),
    }
}

/// Resolve secret `s` (`source`: TOML lines) in a granted run, then a
/// run not granted it, `rounds` times; each runs `read` (a shell line).
/// The failures: a run that printed the value, a granted run that failed
/// (unless `refused`: then it must fail, saying why).
pub(crate) fn attempt(
    name: &str,
    source: &str,
    read: &str,
    rounds: usize,
    nobody: bool,
    refused: bool,
) -> Vec<String> {
    let t = TempDir::new(&format!("fx27a_{name}"));
    let home = t.dir("home");
    let ws = t.dir("ws");
    write_config(
        &home,
        &format!("[secrets.s]\n{source}\nhosts = [\"example.test\"]\n"),
    );
    let who = if nobody { "uid 65534" } else { "root" };
    let mut failed = Vec::new();
    for round in 1..=rounds {
        let o = run(
            &t,
            &ws,
            &home,
            &["--secret", "s"],
            &format!("echo \"S=$S$SKARN_FX27A_TOK\"; {read}"),
            nobody,
        );
        if out(&o).contains(VALUE) || err(&o).contains(VALUE) {
            failed.push(format!(
                "{name} ({who}), round {round}: the granted run read the value"
            ));
        } else if refused {
            if code(&o) == 0 || !err(&o).contains("refused") {
                failed.push(format!(
                    "{name} ({who}): the source was not refused: {}",
                    err(&o)
                ));
            }
        } else if code(&o) != 0 || !out(&o).lines().any(|l| l.len() > 10 && l.starts_with("S=")) {
            failed.push(format!(
                "{name} ({who}): the granted run failed: {}",
                err(&o)
            ));
        }
        let o = run(
            &t,
            &ws,
            &home,
            &[],
            &format!(": $SKARN_FX27A_TOK; {read}"),
            nobody,
        );
        if out(&o).contains(VALUE) {
            failed.push(format!(
                "{name} ({who}), round {round}: a run not granted it read the value"
            ));
        }
    }
    failed
}

pub(crate) fn users() -> Vec<bool> {
    if is_root() {
        vec![false, true]
    } else {
        vec![false]
    }
}

/// Make `d` (given to uid 65534 when `nobody`) and its files.
pub(crate) fn plant(d: &Path, files: &[(&str, Vec<u8>, u32)], nobody: bool) {
    let _ = std::fs::remove_dir_all(d);
    for (n, text, mode) in files {
        write(&d.join(n), text, *mode);
    }
    if nobody {
        chown(d);
    }
}

pub(crate) fn rot13(s: &str) -> String {
    s.chars()
        .map(|c| match c {
            'a'..='z' => (((c as u8 - b'a') + 13) % 26 + b'a') as char,
            'A'..='Z' => (((c as u8 - b'A') + 13) % 26 + b'A') as char,
            _ => c,
        })
        .collect()
}

#[test]
fn a_caching_source_keeps_its_master_file_hidden() {
    // atk27q F1: the second resolution reads only the cache.
    let mut failed = Vec::new();
    for nobody in users() {
        let d = place("cache", nobody);
        let helper = format!(
            "#!/bin/sh\nc=$HOME/.cache/fx27a-tok\nif [ -s \"$c\" ]; then cat \"$c\"; else cat {m}; \
             mkdir -p $HOME/.cache; cat {m} > \"$c\"; fi\n",
            m = d.join("data/master").display()
        );
        let files = [
            ("data/master", format!("{VALUE}\n").into_bytes(), 0o600),
            ("bin/tokhelper", helper.into_bytes(), 0o755),
        ];
        plant(&d, &files, nobody);
        let src = format!("command = [\"{}\"]", d.join("bin/tokhelper").display());
        let read = format!("cat {} 2>/dev/null; true", d.join("data/master").display());
        failed.extend(attempt("cache", &src, &read, 2, nobody, false));
        let _ = std::fs::remove_dir_all(&d);
    }
    assert!(failed.is_empty(), "{failed:#?}");
}

#[test]
fn a_value_in_a_big_file_or_derived_from_files_is_hidden() {
    // atk27q F2 (a store over 4 MiB) and F3 (a value decoded from a
    // file, with a key file beside it).
    let mut failed = Vec::new();
    for nobody in users() {
        let d = place("derive", nobody);
        let mut big = vec![b'x'; 5 << 20];
        big.extend_from_slice(format!("\n{VALUE}\n").as_bytes());
        let files = [
            ("data/store", big, 0o600),
            ("data/tok.enc", rot13(VALUE).into_bytes(), 0o600),
            ("data/key", b"N-ZA-Mn-za-m\n".to_vec(), 0o600),
        ];
        plant(&d, &files, nobody);
        let store = d.join("data/store");
        let src = format!(
            "command = [\"tail\", \"-n\", \"1\", \"{}\"]",
            store.display()
        );
        let read = format!("tail -n 1 {} 2>/dev/null; true", store.display());
        failed.extend(attempt("big", &src, &read, 1, nobody, false));
        let (enc, key) = (d.join("data/tok.enc"), d.join("data/key"));
        let decode = format!("tr A-Za-z \"$(cat {})\" < {}", key.display(), enc.display());
        let src = format!("command = [\"sh\", \"-c\", {decode:?}]");
        failed.extend(attempt(
            "derived",
            &src,
            &format!("{decode} 2>/dev/null; true"),
            1,
            nobody,
            false,
        ));
        let _ = std::fs::remove_dir_all(&d);
    }
    assert!(failed.is_empty(), "{failed:#?}");
}

#[test]
fn a_source_opening_more_files_than_the_trace_keeps_is_refused() {
    // atk27q F8: the token file came after 4,096 others; since atk27r F7
    // one cap counts every file (12,288).
    let mut failed = Vec::new();
    for nobody in users() {
        let d = place("many", nobody);
        let mut files: Vec<(String, Vec<u8>, u32)> = (0..12_400)
            .map(|i| (format!("mods/m{i}.txt"), b"# m\n".to_vec(), 0o644))
            .collect();
        files.push(("tok".into(), format!("{VALUE}\n").into_bytes(), 0o600));
        let helper = format!(
            "#!/usr/bin/python3\nimport glob\nfor f in sorted(glob.glob(\"{0}/mods/*\")): open(f).read()\n\
             print(open(\"{0}/tok\").read().strip())\n",
            d.display()
        );
        files.push(("bin/helper".into(), helper.into_bytes(), 0o755));
        let refs: Vec<(&str, Vec<u8>, u32)> = files
            .iter()
            .map(|(n, t, m)| (n.as_str(), t.clone(), *m))
            .collect();
        plant(&d, &refs, nobody);
        let src = format!("command = [\"{}\"]", d.join("bin/helper").display());
        let read = format!("cat {} 2>/dev/null; true", d.join("tok").display());
        // The granted run is refused; no run reads the value from it
        // (the secret was never given).
        let t = attempt("many", &src, "true", 1, nobody, true);
        failed.extend(t);
        let _ = read;
        let _ = std::fs::remove_dir_all(&d);
    }
    assert!(failed.is_empty(), "{failed:#?}");
}

#[test]
fn a_from_env_value_in_a_file_a_start_up_file_sources_is_hidden() {
    // atk27q F5: /etc/profile.d/x.sh does `. /opt/app/env.sh`.
    if !is_root() {
        skarn_test_support::skip!("writing /etc/profile.d needs root");
    }
    let mut failed = Vec::new();
    for nobody in users() {
        let d = place("env", nobody);
        let env = d.join("env.sh");
        plant(
            &d,
            &[(
                "env.sh",
                format!("export SKARN_FX27A_TOK={VALUE}\n").into_bytes(),
                0o600,
            )],
            nobody,
        );
        let made = !Path::new("/etc/profile.d").exists();
        let start = PathBuf::from(format!(
            "/etc/profile.d/zz-skarn-fx27a-{}.sh",
            std::process::id()
        ));
        write(
            &start,
            format!("[ -r {0} ] && . {0}\n", env.display()).as_bytes(),
            0o644,
        );
        let read = format!("cat {} 2>/dev/null; true", env.display());
        failed.extend(attempt(
            "sourced",
            "from_env = \"SKARN_FX27A_TOK\"\nenv = \"S\"",
            &read,
            1,
            nobody,
            false,
        ));
        let _ = std::fs::remove_file(&start);
        if made {
            let _ = std::fs::remove_dir("/etc/profile.d");
        }
        let _ = std::fs::remove_dir_all(&d);
    }
    assert!(failed.is_empty(), "{failed:#?}");
}

#[test]
fn python_and_git_still_work_after_a_python_source_resolved() {
    // Usability: a python source reading a JSON token file; the runs
    // after it still import modules and commit with git.
    for nobody in users() {
        let d = place("py", nobody);
        plant(
            &d,
            &[(
                "tok.json",
                format!("{{\"t\": \"{VALUE}\"}}").into_bytes(),
                0o600,
            )],
            nobody,
        );
        let t = TempDir::new("fx27a_py");
        let home = t.dir("home");
        let ws = t.dir("ws");
        let py = format!(
            "import json; print(json.load(open('{}'))['t'])",
            d.join("tok.json").display()
        );
        write_config(
            &home,
            &format!(
                "[secrets.s]\ncommand = [\"python3\", \"-c\", {py:?}]\nhosts = [\"example.test\"]\n"
            ),
        );
        let script = "echo \"S=$S\"; python3 -c 'import json, email.parser, urllib.request; print(\"py-ok\")' && \
                      git init -q r && cd r && git -c user.name=a -c user.email=a@example.test commit -q \
                      --allow-empty -m x && echo git-ok";
        for _ in 0..2 {
            let o = run(
                &t,
                &ws,
                &home,
                &["--secret", "s", "--workspace-layer", "direct"],
                script,
                nobody,
            );
            assert!(!out(&o).contains(VALUE), "{}", out(&o));
            assert!(
                out(&o).contains("py-ok") && out(&o).contains("git-ok"),
                "{}{}",
                out(&o),
                err(&o)
            );
            let _ = std::fs::remove_dir_all(ws.join("r"));
        }
        let _ = std::fs::remove_dir_all(&d);
    }
}
