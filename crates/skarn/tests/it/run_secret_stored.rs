//! Attack finding atk27d F3: a granted secret's real value already stored
//! in a file the run can read — a clone URL in `.git/config`, a project
//! `.npmrc`, a `.env` — would reach the command although its environment
//! holds only the placeholder. The run is refused and the files named; the
//! command does not run (checked outside: its marker file is absent).
//! And other names (hard links) of secret sources are hidden (F4).

use std::path::{Path, PathBuf};

use crate::common::*;
use skarn_test_support::TempDir;

const REAL: &str = "tok-REAL-stored-0123456789abcdef";

fn home(t: &TempDir) -> PathBuf {
    let home = t.dir("home");
    let vals = t.dir("vals");
    std::fs::write(vals.join("tok"), format!("{REAL}\n")).unwrap();
    std::fs::create_dir_all(home.join(".config/skarn")).unwrap();
    std::fs::write(
        home.join(".config/skarn/config.toml"),
        format!(
            "[secrets.tok]\nfile = \"{}\"\nhosts = [\"localhost:4443\"]\nenv = \"TOKEN\"\n",
            vals.join("tok").display()
        ),
    )
    .unwrap();
    home
}

fn run_marking(ws: &Path, home: &Path) -> std::process::Output {
    run_command(
        ws,
        home,
        &["--secret", "tok"],
        &[
            "sh",
            "-c",
            "touch ran; cat .git/config .npmrc .env 2>/dev/null; true",
        ],
    )
    .output()
    .unwrap()
}

#[test]
fn a_granted_value_stored_in_the_workspace_refuses_the_run_and_names_the_files_to_the_user() {
    let t = TempDir::new("sec-stored");
    let home = home(&t);
    let ws = t.dir("ws");
    git_init(&ws);
    // Without the value anywhere: the run goes ahead.
    let o = run_marking(&ws, &home);
    assert_eq!(code(&o), 0, "{}", err(&o));
    assert!(ws.join("ran").exists());
    std::fs::remove_file(ws.join("ran")).unwrap();

    for (file, text) in [
        (
            ".git/config",
            format!(
                "[remote \"origin\"]\n\turl = https://x-access-token:{REAL}@localhost:4443/r.git\n"
            ),
        ),
        (".npmrc", format!("//localhost:4443/:_authToken={REAL}\n")),
        (".env", format!("TOKEN={REAL}\n")),
    ] {
        let before = std::fs::read_to_string(ws.join(file)).unwrap_or_default();
        std::fs::write(ws.join(file), format!("{before}{text}")).unwrap();
        let o = run_marking(&ws, &home);
        assert_eq!(code(&o), 2, "{file}: {}", err(&o));
        // The file is named in the exposure record, not to the command's
        // side (ADR 0314: a refusal naming it answers a guess).
        let record = take_exposed(&home, "tok");
        assert!(
            record.contains(&ws.join(file).display().to_string()) && !record.contains(REAL),
            "{file}: {record}"
        );
        assert!(
            !err(&o).contains(&ws.join(file).display().to_string()),
            "{}",
            err(&o)
        );
        assert!(!ws.join("ran").exists(), "{file}: the command ran");
        assert!(!out(&o).contains(REAL) && !err(&o).contains(REAL));
        std::fs::write(ws.join(file), before).unwrap();
    }
}

/// The exposure records below `home` (ADR 0314), read, then cleared with
/// `skarn secrets clear-exposed NAME` as the user does.
#[cfg_attr(not(target_os = "linux"), allow(dead_code))]
pub(crate) fn take_exposed(home: &Path, name: &str) -> String {
    let dir = home.join(".local/state/skarn/exposed");
    let text: String = std::fs::read_dir(&dir)
        .map(|rd| {
            rd.flatten()
                .map(|e| std::fs::read_to_string(e.path()).unwrap_or_default())
                .collect()
        })
        .unwrap_or_default();
    let o = std::process::Command::new(exe())
        .args(["secrets", "clear-exposed", name])
        .env("HOME", home)
        .env_remove("XDG_STATE_HOME")
        .output()
        .unwrap();
    assert!(o.status.success(), "clear-exposed: {}", err(&o));
    text
}

fn git_init(ws: &Path) {
    let ok = std::process::Command::new("git")
        .args(["init", "-q"])
        .current_dir(ws)
        .status()
        .is_ok_and(|s| s.success());
    if !ok {
        std::fs::create_dir_all(ws.join(".git")).unwrap();
        std::fs::write(ws.join(".git/config"), "[core]\n").unwrap();
    }
}

/// Attack finding atk27d F4: another name (a hard link) of a secret's
/// `file` source, or of a `--deny-read` path, inside the workspace is
/// hidden like the path itself.
#[test]
fn a_hard_link_to_a_secret_source_or_a_denied_file_is_hidden() {
    let t = TempDir::new("sec-stored");
    let home = home(&t);
    let ws = t.dir("ws");
    let denied = t.dir("vals").join("denied.txt");
    std::fs::write(&denied, "denied-CONTENT-42\n").unwrap();
    std::fs::hard_link(t.dir("vals").join("tok"), ws.join(".tok")).unwrap();
    std::fs::hard_link(&denied, ws.join(".denied")).unwrap();
    let deny = format!("--deny-read={}", denied.display());
    let o = run_command(
        &ws,
        &home,
        &["--secret", "tok", &deny],
        &["sh", "-c", "cat .tok; cat .denied; true"],
    )
    .output()
    .unwrap();
    assert_eq!(code(&o), 0, "{}", err(&o));
    assert!(!out(&o).contains(REAL), "{}", out(&o));
    assert!(!out(&o).contains("denied-CONTENT-42"), "{}", out(&o));
}

/// Attack finding atk27h F6: other names (hard links) of a secret's
/// `file` source and of `~/.netrc` in a `--read` grant were skipped by
/// the value check and readable; they are hidden like the paths
/// themselves. Checked on what the command could read.
#[test]
fn a_hard_link_to_a_hidden_file_in_a_read_grant_is_hidden() {
    let t = TempDir::new("sec-stored");
    let home = home(&t);
    let ws = t.dir("ws");
    let rd = t.dir("rd");
    std::fs::write(
        home.join(".netrc"),
        format!("machine localhost login x password {REAL}\n"),
    )
    .unwrap();
    std::fs::hard_link(t.dir("vals").join("tok"), rd.join("tok-link")).unwrap();
    std::fs::hard_link(home.join(".netrc"), rd.join("netrc.bak")).unwrap();
    std::fs::write(rd.join("plain.txt"), "visible-CONTENT\n").unwrap();
    let read = format!("--read={}", rd.display());
    let o = run_command(
        &ws,
        &home,
        &["--secret", "tok", &read],
        &[
            "sh",
            "-c",
            "cd \"$1\"; cat plain.txt tok-link netrc.bak 2>&1; true",
            "sh",
            rd.to_str().unwrap(),
        ],
    )
    .output()
    .unwrap();
    assert_eq!(code(&o), 0, "{}", err(&o));
    assert!(out(&o).contains("visible-CONTENT"), "{}", out(&o));
    assert!(!out(&o).contains(REAL), "{}", out(&o));
}

/// Attack finding atk27d L3: `--secret` with `--write ~/.cache` failed at
/// set-up (the run CA was written into the host's `~/.cache`, read-only
/// there); the CA now goes where no grant covers, and the run works.
#[test]
fn a_secret_with_the_home_cache_granted_still_gets_its_ca() {
    let t = TempDir::new("sec-stored");
    let home = home(&t);
    std::fs::create_dir_all(home.join(".cache")).unwrap();
    let ws = t.dir("ws");
    let cache = format!("--write={}", home.join(".cache").display());
    let o = run_command(
        &ws,
        &home,
        &["--secret", "tok", &cache],
        &["sh", "-c", "test -s \"$SSL_CERT_FILE\" && echo CA-OK"],
    )
    .output()
    .unwrap();
    assert_eq!(code(&o), 0, "{}", err(&o));
    assert!(out(&o).contains("CA-OK"), "{}", out(&o));
    // Nothing of the run's CA landed in the host's cache.
    assert!(!home.join(".cache/skarn-run").exists());
}
