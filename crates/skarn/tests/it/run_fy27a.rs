//! Issue 27, builder fy27a: a traced source's files are judged by what
//! they are (atk27r F3: `/usr/src`, an execute bit, a code-like name; F7:
//! one cap counting every file), and a configured secret's real value in
//! the command's own arguments is refused (F6). Each test makes the real
//! attempt, as root and as uid 65534, and judges from outside by what
//! the runs printed and left.

use std::path::{Path, PathBuf};
use std::process::Output;

use skarn_test_support::TempDir;

use crate::common::*;
use crate::run_fx27a::{VALUE, attempt, plant, rot13, users};
use crate::support_secret_sources::{PATH, as_user, is_root, write_config};

/// A directory of this test under `base`.
fn dir(base: &str, tag: &str, nobody: bool) -> PathBuf {
    let who = if nobody { "n" } else { "r" };
    PathBuf::from(format!(
        "{base}/skarn-fy27a-{}-{tag}-{who}",
        std::process::id()
    ))
}

/// A place outside every grant that every run reads: `/opt` for uid
/// 65534, a `/usr/local` installation for root (not idmapped).
fn opt(tag: &str, nobody: bool) -> PathBuf {
    dir(if nobody { "/opt" } else { "/usr/local" }, tag, nobody)
}

#[test]
fn a_key_and_store_a_source_decrypts_from_are_hidden_wherever_they_lie() {
    // atk27r F3: under /usr/src (the images' project directory), with an
    // execute bit, or with a module's name below an installation's name.
    let mut failed = Vec::new();
    for nobody in users() {
        let cases = [
            (
                "usrsrc",
                dir("/usr/src", "app", nobody),
                "config/master.key",
                "config/credentials.enc",
                0o600,
            ),
            (
                "xbit",
                opt("xbit", nobody),
                "config/master.key",
                "config/credentials.enc",
                0o755,
            ),
            (
                "named",
                opt("named", nobody),
                "gems/k/key.rb",
                "gems/k/store.pl",
                0o600,
            ),
        ];
        for (tag, d, key, store, mode) in cases {
            let files = [
                (store, rot13(VALUE).into_bytes(), mode),
                (key, b"N-ZA-Mn-za-m\n".to_vec(), mode),
            ];
            plant(&d, &files, nobody);
            let (k, s) = (d.join(key), d.join(store));
            let decode = format!("tr A-Za-z \"$(cat {})\" < {}", k.display(), s.display());
            let src = format!("command = [\"sh\", \"-c\", {decode:?}]");
            let read = format!("{decode} 2>/dev/null; true");
            failed.extend(attempt(tag, &src, &read, 1, nobody, false));
            let _ = std::fs::remove_dir_all(&d);
        }
    }
    assert!(failed.is_empty(), "{failed:#?}");
}

/// `n` files of the system's trees (root's, readable by all) in `d`.
fn system_files(d: &Path, from: usize, n: usize) {
    std::fs::create_dir_all(d).unwrap();
    for i in from..from + n {
        std::fs::write(d.join(format!("m{i}.txt")), "# m\n").unwrap();
    }
}

/// A helper that reads every file of `mods`, then prints `tok`.
fn helper(mods: &Path, tok: &Path) -> Vec<u8> {
    format!(
        "#!/usr/bin/python3\nimport os\nfor f in sorted(os.listdir(\"{0}\")): open(\"{0}/\" + f).read()\n\
         print(open(\"{1}\").read().strip())\n",
        mods.display(),
        tok.display()
    )
    .into_bytes()
}

#[test]
fn past_many_system_files_the_token_is_recorded_and_past_the_cap_refused() {
    // atk27r F7: past 8,192 files of the system's trees the rest was
    // dropped silently, the token file under /usr/src with them.
    if !is_root() {
        skarn_test_support::skip!("files of the system's trees are made by root");
    }
    let mods = dir("/usr/lib", "mods", false);
    system_files(&mods, 0, 8300);
    let mut failed = Vec::new();
    for nobody in users() {
        let d = dir("/usr/src", "tok", nobody);
        let tok = d.join("token");
        let files = [
            ("token", format!("{VALUE}\n").into_bytes(), 0o600),
            ("bin/helper", helper(&mods, &tok), 0o755),
        ];
        plant(&d, &files, nobody);
        let src = format!("command = [\"{}\"]", d.join("bin/helper").display());
        let read = format!("cat {} 2>/dev/null; true", tok.display());
        failed.extend(attempt("after 8300", &src, &read, 1, nobody, false));
        let _ = std::fs::remove_dir_all(&d);
    }
    // Past the one cap (12,288 files, system files counted): refused,
    // naming the secret.
    system_files(&mods, 8300, 4100);
    for nobody in users() {
        let d = dir("/usr/src", "cap", nobody);
        let files = [
            ("token", format!("{VALUE}\n").into_bytes(), 0o600),
            ("bin/helper", helper(&mods, &d.join("token")), 0o755),
        ];
        plant(&d, &files, nobody);
        let t = TempDir::new("fy27a_cap");
        let (home, ws) = (t.dir("home"), t.dir("ws"));
        write_config(
            &home,
            &format!(
                "[secrets.s]\ncommand = [\"{}\"]\nhosts = [\"example.test\"]\n",
                d.join("bin/helper").display()
            ),
        );
        let o = run_in(&t, &ws, &home, &["--secret", "s"], "echo S=$S", nobody, &[]);
        let e = err(&o);
        if code(&o) == 0 || !e.contains("refused") || !e.contains(" s") || out(&o).contains(VALUE) {
            failed.push(format!("past the cap ({nobody}): {}{e}", out(&o)));
        }
        let _ = std::fs::remove_dir_all(&d);
    }
    let _ = std::fs::remove_dir_all(&mods);
    assert!(failed.is_empty(), "{failed:#?}");
}

/// `skarn run FLAGS -- sh -c SCRIPT` in `ws`, as uid 65534 when `nobody`,
/// with `env` added.
fn run_in(
    t: &TempDir,
    ws: &Path,
    home: &Path,
    flags: &[&str],
    script: &str,
    nobody: bool,
    env: &[(&str, &str)],
) -> Output {
    let mut c = run_command(ws, home, flags, &["sh", "-c", script]);
    c.env("PATH", PATH);
    for (k, v) in env {
        c.env(k, v);
    }
    match nobody {
        true => as_user(c, t.path()).output().unwrap(),
        false => c.output().unwrap(),
    }
}

#[test]
fn a_secret_value_in_the_command_arguments_is_refused() {
    // atk27r F6: the caller's shell expanded the real value into argv.
    let mut failed = Vec::new();
    for nobody in users() {
        let t = TempDir::new("fy27a_argv");
        let (home, ws, safe) = (t.dir("home"), t.dir("ws"), t.dir("safe"));
        std::fs::write(safe.join("val"), format!("{VALUE}\n")).unwrap();
        write_config(
            &home,
            &format!(
                "[secrets.s]\nfrom_env = \"SKARN_FY27A_TOK\"\nhosts = [\"example.test\"]\n\n\
                 [secrets.f]\nfile = \"{}\"\nhosts = [\"example.test\"]\n",
                safe.join("val").display()
            ),
        );
        let mark = ws.join("ran");
        let env = [("SKARN_FY27A_TOK", VALUE)];
        let b64 = "V3E3WmsyWHA5TG00VHY4UmMzWWI2SHMxTmQ1SmYwR2E=";
        for (flags, arg) in [
            (&["--secret", "s"][..], format!("echo inside: {VALUE}")),
            (&[][..], format!("echo notgranted: {VALUE}")),
            (&["--secret", "f"][..], format!("echo b64: {b64}")),
        ] {
            let script = format!("touch {}; {arg}", mark.display());
            let o = run_in(&t, &ws, &home, flags, &script, nobody, &env);
            let said = format!("{}{}", out(&o), err(&o));
            if code(&o) != 2 || !err(&o).contains("argument 2") || said.contains(VALUE) {
                failed.push(format!("{flags:?} ({nobody}): {}: {said}", code(&o)));
            }
            if mark.exists() {
                failed.push(format!("{flags:?} ({nobody}): the command ran"));
            }
        }
        // A command that refers to the variable gets its placeholder.
        let o = run_in(
            &t,
            &ws,
            &home,
            &["--secret", "s"],
            "echo \"S=$S\"",
            nobody,
            &env,
        );
        if code(&o) != 0 || out(&o).contains(VALUE) || !out(&o).starts_with("S=") {
            failed.push(format!("usability ({nobody}): {}{}", out(&o), err(&o)));
        }
    }
    assert!(failed.is_empty(), "{failed:#?}");
}
