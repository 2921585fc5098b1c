//! Attack atk27j on configured secrets, each checked from outside the
//! sandbox: a `file` source (or `--deny-read` path) reached through a link
//! in the workspace cannot be re-pointed by one run to unhide the real
//! file for the next (F5); the file a `command` source reads is hidden in
//! every run (F6); a configured secret's value under another variable
//! name does not reach a command (F2); a `command` source's stderr holding
//! the value is not shown (F4); a `command` source that depends on what a
//! run may write (a script beside which its helpers lie) is refused before
//! it runs on the host (F10).

use crate::common::*;
use crate::support_secret_sources::{seen, write_config as config};
use skarn_test_support::TempDir;

/// F5: `current -> gl-2025` in the workspace, `current` the file source.
#[test]
fn a_file_sources_link_in_the_workspace_cannot_be_repointed() {
    let t = TempDir::new("sec-27j-link");
    let home = t.dir("home");
    let ws = t.dir("ws");
    let dir = ws.join(".secrets");
    std::fs::create_dir_all(&dir).unwrap();
    let value = "glREALrotated2025Xk3Jm9Qp2Lw8";
    std::fs::write(dir.join("gl-2025"), value).unwrap();
    std::fs::write(ws.join("README"), "readme of the project, long enough\n").unwrap();
    std::os::unix::fs::symlink("gl-2025", dir.join("current")).unwrap();
    config(
        &home,
        &format!(
            "[secrets.gl]\nfile = \"{}\"\nhosts = [\"localhost:1\"]\nenv = \"GL\"\n",
            dir.join("current").display()
        ),
    );
    let o = run_command(
        &ws,
        &home,
        &[],
        &[
            "sh",
            "-c",
            "cat .secrets/gl-2025; ln -sfn ../README .secrets/current; \
             rm -f .secrets/current; ln -s ../README .secrets/current; true",
        ],
    )
    .output()
    .unwrap();
    assert!(!seen(&o).contains(value), "{}", seen(&o));
    assert_eq!(
        std::fs::read_link(dir.join("current")).unwrap(),
        std::path::PathBuf::from("gl-2025"),
        "the link was re-pointed: {}",
        err(&o)
    );
    let o = run_command(&ws, &home, &[], &["sh", "-c", "cat .secrets/gl-2025; echo"])
        .output()
        .unwrap();
    assert!(!seen(&o).contains(value), "{}", seen(&o));
}

/// F5: the same for a `--deny-read` path given through a link.
#[test]
fn a_deny_read_link_in_the_workspace_cannot_be_repointed() {
    let t = TempDir::new("sec-27j-deny");
    let home = t.dir("home");
    let ws = t.dir("ws");
    let keys = ws.join("keys");
    std::fs::create_dir_all(&keys).unwrap();
    let value = "denyREALsecretK1l2M3n4o5P6";
    std::fs::write(keys.join("prod.key"), value).unwrap();
    std::fs::write(keys.join("decoy"), "decoy\n").unwrap();
    std::os::unix::fs::symlink("prod.key", keys.join("current")).unwrap();
    let deny = keys.join("current");
    let deny = deny.to_str().unwrap();
    let o = run_command(
        &ws,
        &home,
        &["--deny-read", deny],
        &[
            "sh",
            "-c",
            "cat keys/prod.key; ln -sfn decoy keys/current; true",
        ],
    )
    .output()
    .unwrap();
    assert!(!seen(&o).contains(value), "{}", seen(&o));
    assert_eq!(
        std::fs::read_link(keys.join("current")).unwrap(),
        std::path::PathBuf::from("prod.key"),
        "the link was re-pointed: {}",
        err(&o)
    );
    let o = run_command(
        &ws,
        &home,
        &["--deny-read", deny],
        &["sh", "-c", "cat keys/prod.key; echo"],
    )
    .output()
    .unwrap();
    assert!(!seen(&o).contains(value), "{}", seen(&o));
}

/// F6: the file a `command` source reads, in a read grant, is hidden in a
/// run granted no secret.
#[test]
fn the_file_a_command_source_reads_is_hidden_in_every_run() {
    let t = TempDir::new("sec-27j-cmdfile");
    let home = t.dir("home");
    let ws = t.dir("ws");
    let rd = t.dir("rd");
    let value = "jqREALvalueT5y6U7i8O9p0A1s2";
    let tokens = rd.join("tokens.json");
    std::fs::write(&tokens, format!("{value}\n")).unwrap();
    config(
        &home,
        &format!(
            "[secrets.jt]\ncommand = [\"cat\", \"{}\"]\nhosts = [\"localhost:1\"]\nenv = \"JT\"\n",
            tokens.display()
        ),
    );
    let cat = format!("cat {}; echo", tokens.display());
    let o = run_command(
        &ws,
        &home,
        &["--read", rd.to_str().unwrap()],
        &["sh", "-c", &cat],
    )
    .output()
    .unwrap();
    assert!(!seen(&o).contains(value), "{}", seen(&o));
}

/// F2: the value of a configured (not granted) `file` secret in a caller
/// variable of another name, verbatim, inside other text or base64.
#[test]
fn a_configured_secrets_value_under_another_name_does_not_get_in() {
    let t = TempDir::new("sec-27j-env");
    let home = t.dir("home");
    let ws = t.dir("ws");
    let vals = t.dir("vals");
    let value = "freeREALvalueHs3Jd8Kq1Wz6Vb0Nm";
    std::fs::write(vals.join("free"), value).unwrap();
    config(
        &home,
        &format!(
            "[secrets.free]\nfile = \"{}\"\nhosts = [\"localhost:1\"]\nenv = \"FREE\"\n",
            vals.join("free").display()
        ),
    );
    let b64 = "ZnJlZVJFQUx2YWx1ZUhzM0pkOEtxMVd6NlZiME5t";
    let o = run_command(&ws, &home, &[], &["sh", "-c", "env; echo done"])
        .env("GITLAB_PAT", value)
        .env("CREDS", format!("user:{value}@x"))
        .env("PAT", b64)
        .output()
        .unwrap();
    assert!(out(&o).contains("done"), "{}", seen(&o));
    assert!(!seen(&o).contains(value), "{}", seen(&o));
    assert!(!seen(&o).contains(b64), "{}", seen(&o));
}

/// F4: a `command` source's xtrace (the value on stderr) is not shown.
#[test]
fn a_command_sources_stderr_holding_the_value_is_not_shown() {
    let t = TempDir::new("sec-27j-stderr");
    let home = t.dir("home");
    let ws = t.dir("ws");
    let vals = t.dir("vals");
    let value = "cmdREALvalueHs3Jd8Kq1Wz6Vb0Nm";
    std::fs::write(vals.join("v"), value).unwrap();
    config(
        &home,
        &format!(
            "[secrets.cmd]\ncommand = [\"sh\", \"-xc\", \"v=$(cat {}); printf %s \\\"$v\\\"\"]\n\
             hosts = [\"localhost:1\"]\nenv = \"CMD\"\n",
            vals.join("v").display()
        ),
    );
    let o = run_command(
        &ws,
        &home,
        &["--secret", "cmd"],
        &["sh", "-c", "echo inside CMD=$CMD"],
    )
    .output()
    .unwrap();
    assert!(out(&o).contains("inside CMD="), "{}", seen(&o));
    assert!(!seen(&o).contains(value), "{}", seen(&o));
}

/// F10: `sh tools/get.sh` in the workspace sources `tools/lib.sh` beside
/// it; one run rewrites `lib.sh`, the next run granted the secret would run
/// it on the host. The source is refused: nothing planted ran.
#[test]
fn a_command_source_depending_on_a_writable_place_does_not_run() {
    let t = TempDir::new("sec-27j-cmddep");
    let home = t.dir("home");
    let ws = t.dir("ws");
    let tools = ws.join("tools");
    std::fs::create_dir_all(&tools).unwrap();
    std::fs::write(
        tools.join("get.sh"),
        ". \"$(dirname \"$0\")/lib.sh\"\nprintf '%s' \"$v\"\n",
    )
    .unwrap();
    // Makes the value without holding it (a file holding it in the
    // workspace refuses a granted run on its own, ADR 0217).
    std::fs::write(
        tools.join("lib.sh"),
        "v=\"cmd-tok$(printf %s en-0123)$(printf %s 456789abcdef)\"\n",
    )
    .unwrap();
    config(
        &home,
        &format!(
            "[secrets.dep]\ncommand = [\"sh\", \"{}\"]\nhosts = [\"localhost:1\"]\nenv = \"DEP\"\n",
            tools.join("get.sh").display()
        ),
    );
    let marker = t.path().join("PLANTED_RAN");
    let plant = format!(
        "printf 'touch {m}\\nv=cmd-token-0123456789abcdef\\n' > tools/lib.sh; echo planted",
        m = marker.display()
    );
    let o = run_command(&ws, &home, &[], &["sh", "-c", &plant])
        .output()
        .unwrap();
    assert!(out(&o).contains("planted"), "{}", seen(&o));
    let o = run_command(
        &ws,
        &home,
        &["--secret", "dep"],
        &["sh", "-c", "echo DEP=$DEP"],
    )
    .output()
    .unwrap();
    assert!(
        !marker.exists(),
        "planted code ran on the host: {}",
        seen(&o)
    );
    assert_ne!(code(&o), 0, "{}", seen(&o));
    assert!(err(&o).contains("secret dep"), "{}", err(&o));
}

/// F11: a program planted by a run in an existing `PATH` directory it was
/// granted to write, named like the `command` source's program: the next
/// run granted the secret is refused, the plant did not run on the host.
#[test]
fn a_program_planted_earlier_on_path_does_not_run_as_the_source() {
    let t = TempDir::new("sec-27j-path");
    let home = t.dir("home");
    let ws = t.dir("ws");
    let bin = t.dir("bin");
    config(
        &home,
        "[secrets.pp]\ncommand = [\"sh\", \"-c\", \"echo cmd-token-0123456789abcdef\"]\n\
         hosts = [\"localhost:1\"]\nenv = \"PPV\"\n",
    );
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let marker = t.path().join("PLANTED_RAN");
    let plant = format!(
        "printf '#!/bin/sh\\ntouch {m}\\nexec /bin/sh \"$@\"\\n' > {b}/sh && chmod +x {b}/sh && echo planted",
        m = marker.display(),
        b = bin.display()
    );
    let o = run_command(
        &ws,
        &home,
        &["--write", bin.to_str().unwrap()],
        &["/bin/sh", "-c", &plant],
    )
    .env("PATH", &path)
    .output()
    .unwrap();
    assert!(out(&o).contains("planted"), "{}", seen(&o));
    let o = run_command(
        &ws,
        &home,
        &["--secret", "pp"],
        &["/bin/sh", "-c", "echo PPV=$PPV"],
    )
    .env("PATH", &path)
    .output()
    .unwrap();
    assert!(
        !marker.exists(),
        "planted program ran on the host: {}",
        seen(&o)
    );
    assert!(err(&o).contains("secret pp"), "{}", err(&o));
}

/// F6: copies beside a `file` source (an editor's `tok~`, `tok.bak`) are
/// hidden in a run granted no secret, like the source.
#[test]
fn copies_beside_a_file_source_are_hidden_in_every_run() {
    let t = TempDir::new("sec-27j-beside");
    let home = t.dir("home");
    let ws = t.dir("ws");
    let rd = t.dir("rd");
    let value = "bakREALvalueJ4k5L6m7N8b9V0c1";
    for n in ["tok", "tok~", "tok.bak"] {
        std::fs::write(rd.join(n), format!("{value}\n")).unwrap();
    }
    std::fs::write(rd.join("notes.txt"), "nothing secret here\n").unwrap();
    config(
        &home,
        &format!(
            "[secrets.bk]\nfile = \"{}\"\nhosts = [\"localhost:1\"]\n",
            rd.join("tok").display()
        ),
    );
    let cat = format!("cd {}; cat tok~ tok.bak notes.txt; echo", rd.display());
    let o = run_command(
        &ws,
        &home,
        &["--read", rd.to_str().unwrap()],
        &["sh", "-c", &cat],
    )
    .output()
    .unwrap();
    assert!(out(&o).contains("nothing secret here"), "{}", seen(&o));
    assert!(!seen(&o).contains(value), "{}", seen(&o));
}
