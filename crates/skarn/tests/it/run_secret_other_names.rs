//! Attack findings atk27i F2 and atk22g F6: other names of hidden files
//! inside a `--read` grant — hard links of a configured secret's `file`
//! source, of `~/.netrc` and of `~/.ssh/id_ed25519`; a bind mount of
//! `~/.ssh` — were readable by a run granted no secret. Checked on what
//! the command could read.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::common::*;
use skarn_test_support::TempDir;

const TOK: &str = "tok-REAL-othername-0123456789abcdef";
const NETRC: &str = "netrc-REAL-othername-9876543210";
const KEY: &str = "sshKEY-REAL-othername-material";

/// A home with a configured secret `tok` (its `file` source outside the
/// home), `~/.netrc` and `~/.ssh/id_ed25519`.
fn home(t: &TempDir) -> PathBuf {
    let home = t.dir("home");
    let vals = t.dir("vals");
    std::fs::write(vals.join("tok"), format!("{TOK}\n")).unwrap();
    std::fs::create_dir_all(home.join(".config/skarn")).unwrap();
    std::fs::create_dir_all(home.join(".ssh")).unwrap();
    std::fs::write(
        home.join(".config/skarn/config.toml"),
        format!(
            "[secrets.tok]\nfile = \"{}\"\nhosts = [\"localhost:4443\"]\nenv = \"TOKEN\"\n",
            vals.join("tok").display()
        ),
    )
    .unwrap();
    std::fs::write(
        home.join(".netrc"),
        format!("machine localhost login x password {NETRC}\n"),
    )
    .unwrap();
    std::fs::write(
        home.join(".ssh/id_ed25519"),
        format!("-----BEGIN OPENSSH PRIVATE KEY-----\n{KEY}\n"),
    )
    .unwrap();
    home
}

fn cat_all(rd: &Path) -> Vec<String> {
    vec![
        "sh".into(),
        "-c".into(),
        "cd \"$1\" && for f in plain.txt tok.bak netrc.bak id.bak ssh/id_ed25519; do \
         cat \"$f\" 2>&1; done; true"
            .into(),
        "sh".into(),
        rd.display().to_string(),
    ]
}

fn assert_hidden(o: &std::process::Output) {
    let s = out(o);
    assert_eq!(code(o), 0, "{s}{}", err(o));
    assert!(s.contains("visible-CONTENT"), "{s}{}", err(o));
    for v in [TOK, NETRC, KEY] {
        assert!(!s.contains(v), "{v} readable:\n{s}");
    }
}

#[test]
fn hard_links_of_hidden_files_in_a_read_grant_are_hidden_without_a_secret() {
    let t = TempDir::new("sec-othername");
    let home = home(&t);
    let ws = t.dir("ws");
    let rd = t.dir("rd");
    std::fs::write(rd.join("plain.txt"), "visible-CONTENT\n").unwrap();
    std::fs::hard_link(t.dir("vals").join("tok"), rd.join("tok.bak")).unwrap();
    std::fs::hard_link(home.join(".netrc"), rd.join("netrc.bak")).unwrap();
    std::fs::hard_link(home.join(".ssh/id_ed25519"), rd.join("id.bak")).unwrap();
    let read = format!("--read={}", rd.display());
    let cmd = cat_all(&rd);
    let cmd: Vec<&str> = cmd.iter().map(String::as_str).collect();
    let o = run_command(&ws, &home, &[&read], &cmd).output().unwrap();
    assert_hidden(&o);
    // A grant of the link itself.
    let read_file = format!("--read={}", rd.join("id.bak").display());
    let o = run_command(
        &ws,
        &home,
        &[&read_file],
        &[
            "sh",
            "-c",
            "cat \"$1\" 2>&1; true",
            "sh",
            rd.join("id.bak").to_str().unwrap(),
        ],
    )
    .output()
    .unwrap();
    assert!(!out(&o).contains(KEY), "{}", out(&o));
}

#[test]
fn a_bind_mount_of_a_secret_directory_in_a_read_grant_is_hidden() {
    if !skarn_test_support::is_root() {
        skarn_test_support::skip!("a bind mount needs root");
    }
    if !host_has("unshare", "--version") {
        skarn_test_support::skip!("unshare is not installed");
    }
    let t = TempDir::new("sec-othername");
    let home = home(&t);
    let ws = t.dir("ws");
    let rd = t.dir("rd");
    std::fs::write(rd.join("plain.txt"), "visible-CONTENT\n").unwrap();
    std::fs::create_dir_all(rd.join("ssh")).unwrap();
    let read = format!("--read={}", rd.display());
    let cmd = cat_all(&rd);
    let cmd: Vec<&str> = cmd.iter().map(String::as_str).collect();
    let inner = run_command(&ws, &home, &[&read], &cmd);
    // In a private mount namespace: `~/.ssh` bound at `rd/ssh`.
    let mut c = Command::new("unshare");
    c.args(["-m", "--propagation", "private", "sh", "-c"])
        .arg("mount --bind \"$1\" \"$2\" || exit 97; shift 2; exec \"$@\"")
        .arg("sh")
        .arg(home.join(".ssh"))
        .arg(rd.join("ssh"))
        .arg(inner.get_program())
        .args(inner.get_args())
        .stdin(std::process::Stdio::null());
    for (k, v) in inner.get_envs() {
        match v {
            Some(v) => c.env(k, v),
            None => c.env_remove(k),
        };
    }
    let o = c.output().unwrap();
    if code(&o) == 97 {
        skarn_test_support::skip!("cannot bind mount here: {}", err(&o));
    }
    assert_hidden(&o);
}

/// Past the walk's bound the report says that other names may be left
/// (and the run is not reported fully enforced).
#[test]
fn a_cut_walk_of_the_read_grants_is_said() {
    let t = TempDir::new("sec-othername");
    let home = home(&t);
    let ws = t.dir("ws");
    let rd = t.dir("rd");
    let deep = rd.join("a/b/c");
    std::fs::create_dir_all(&deep).unwrap();
    std::fs::hard_link(home.join(".ssh/id_ed25519"), deep.join("id.bak")).unwrap();
    let read = format!("--read={}", rd.display());
    let o = run_command(
        &ws,
        &home,
        &["--report", "--walk-max-dirs", "2", &read],
        &["true"],
    )
    .output()
    .unwrap();
    let e = err(&o);
    assert!(e.contains("the walk of the read grants"), "{e}");
    assert!(!e.contains("FullyEnforced"), "{e}");
}
