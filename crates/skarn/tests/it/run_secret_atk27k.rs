//! Attack atk27k on configured secrets, each checked from outside the
//! sandbox: a `command` source whose shell string names its script as
//! `$HOME/...` or `${HOME}/...` is judged like `~/...` — refused while the
//! script lies in the workspace, and the script kept read-only, so a run
//! cannot plant code the host runs (F1); the file such a source reads is
//! hidden in every run (F2); a script missing at the check is judged by
//! its name, so a concurrent run cannot create it in between (F1b).

use crate::common::*;
use crate::support_secret_sources::{seen, write_config as config};
use skarn_test_support::TempDir;

/// F1: `sh -c "$HOME/proj/tools/get-token.sh"` (and `${HOME}`).
#[test]
fn a_command_sources_script_spelled_with_home_cannot_be_planted() {
    for spell in ["$HOME", "${HOME}"] {
        let t = TempDir::new("sec-27k-f1");
        let home = t.dir("home");
        let ws = home.join("proj");
        let vals = t.dir("vals");
        std::fs::create_dir_all(ws.join("tools")).unwrap();
        std::fs::write(vals.join("tok"), "cmdREALtoken0123456789abcdefXYZ\n").unwrap();
        let script = ws.join("tools/get-token.sh");
        std::fs::write(
            &script,
            format!("#!/bin/sh\nexec cat {}\n", vals.join("tok").display()),
        )
        .unwrap();
        std::fs::set_permissions(&script, std::os::unix::fs::PermissionsExt::from_mode(0o755))
            .unwrap();
        config(
            &home,
            &format!(
                "[secrets.api]\ncommand = [\"sh\", \"-c\", \"{spell}/proj/tools/get-token.sh\"]\n\
                 hosts = [\"localhost:1\"]\nenv = \"API\"\n"
            ),
        );
        // A granted run: refused (the script lies in the workspace).
        let o = run_command(
            &ws,
            &home,
            &["--secret", "api"],
            &["sh", "-c", "echo API=$API"],
        )
        .output()
        .unwrap();
        assert_ne!(code(&o), 0, "{spell}: not refused: {}", seen(&o));
        assert!(err(&o).contains("secret api"), "{}", seen(&o));
        // An ungranted run tries to rewrite the script.
        let marker = t.path().join("PLANTED_RAN");
        let plant = format!(
            "printf '#!/bin/sh\\ntouch {m}\\necho cmd-token-0123456789abcdef\\n' > tools/get-token.sh \
             && echo rewrote",
            m = marker.display()
        );
        let o = run_command(
            &ws,
            &home,
            &["--workspace-layer", "direct"],
            &["sh", "-c", &plant],
        )
        .output()
        .unwrap();
        let host = std::fs::read_to_string(&script).unwrap();
        assert!(
            !host.contains("touch"),
            "{spell}: a run rewrote the source's script: {}",
            seen(&o)
        );
        // The next granted run: the planted code never runs on the host.
        let o = run_command(&ws, &home, &["--secret", "api"], &["true"])
            .output()
            .unwrap();
        assert!(
            !marker.exists(),
            "{spell}: planted code ran on the host: {}",
            seen(&o)
        );
    }
}

/// F2: the file `sh -c "tr -d '\n' < $HOME/keys/deploy.tok"` reads is
/// hidden from a run that reads its directory.
#[test]
fn the_file_a_command_source_names_with_home_is_hidden_in_every_run() {
    let t = TempDir::new("sec-27k-f2");
    let home = t.dir("home");
    let ws = t.dir("ws");
    let keys = home.join("keys");
    std::fs::create_dir_all(&keys).unwrap();
    let value = "REALdeployKEY0123456789abcdefQW";
    std::fs::write(keys.join("deploy.tok"), format!("{value}\n")).unwrap();
    for spell in ["$HOME", "${HOME}"] {
        config(
            &home,
            &format!(
                "[secrets.deploy]\ncommand = [\"sh\", \"-c\", \"tr -d '\\\\n' < {spell}/keys/deploy.tok\"]\n\
                 hosts = [\"localhost:1\"]\n"
            ),
        );
        let k = keys.display().to_string();
        let o = run_command(
            &ws,
            &home,
            &["--read", &k],
            &["sh", "-c", &format!("cat {k}/deploy.tok; echo done")],
        )
        .output()
        .unwrap();
        assert!(out(&o).contains("done"), "{}", seen(&o));
        assert!(
            !out(&o).contains(value),
            "{spell}: the value was read: {}",
            seen(&o)
        );
    }
}

/// F1b: `if [ -x ~/proj/tools/tok.sh ]; then ...; else cat ...; fi` with
/// the script missing: judged by its name (it would lie in the
/// workspace), so the granted run is refused before the source runs; a
/// script a concurrent run creates then never runs on the host.
#[test]
fn a_missing_script_a_command_source_names_is_judged_by_its_name() {
    let t = TempDir::new("sec-27k-f1b");
    let home = t.dir("home");
    let ws = home.join("proj");
    std::fs::create_dir_all(ws.join("tools")).unwrap();
    let vals = t.dir("vals");
    std::fs::write(vals.join("tok"), "cmdREALtoken0123456789abcdefXYZ\n").unwrap();
    let marker = t.path().join("PLANTED_RAN");
    config(
        &home,
        &format!(
            "[secrets.api]\ncommand = [\"sh\", \"-c\", \"if [ -x ~/proj/tools/tok.sh ]; then \
             ~/proj/tools/tok.sh; else cat {v}; fi\"]\nhosts = [\"localhost:1\"]\nenv = \"API\"\n",
            v = vals.join("tok").display()
        ),
    );
    let o = run_command(
        &ws,
        &home,
        &["--secret", "api"],
        &["sh", "-c", "echo API=$API"],
    )
    .output()
    .unwrap();
    assert_ne!(
        code(&o),
        0,
        "a missing script in the workspace was not judged: {}",
        seen(&o)
    );
    assert!(err(&o).contains("tok.sh"), "{}", seen(&o));
    // The race's outcome, made certain: the script appears (as a
    // concurrent run would make it) and the next granted run is refused.
    std::fs::write(
        ws.join("tools/tok.sh"),
        format!("#!/bin/sh\ntouch {}\necho x\n", marker.display()),
    )
    .unwrap();
    std::fs::set_permissions(
        ws.join("tools/tok.sh"),
        std::os::unix::fs::PermissionsExt::from_mode(0o755),
    )
    .unwrap();
    let o = run_command(&ws, &home, &["--secret", "api"], &["true"])
        .output()
        .unwrap();
    assert!(
        !marker.exists(),
        "planted code ran on the host: {}",
        seen(&o)
    );
}

/// F9: a source's stderr (xtrace quoting the refresh token it read) is
/// not shown to the run's caller, whose output reaches the agent.
#[test]
fn a_command_sources_stderr_is_not_shown() {
    let t = TempDir::new("sec-27k-f9");
    let home = t.dir("home");
    let ws = t.dir("ws");
    let vals = t.dir("vals");
    let refresh = "RefreshTOKEN0123456789abcdefLONGLIVED";
    std::fs::write(vals.join("refresh"), format!("{refresh}\n")).unwrap();
    config(
        &home,
        &format!(
            "[secrets.api]\ncommand = [\"sh\", \"-xc\", \"RT=$(cat {}); echo \\\"$RT\\\" | \
             sha256sum | cut -c1-32 | sed s/^/at_/\"]\nhosts = [\"localhost:1\"]\nenv = \"API\"\n",
            vals.join("refresh").display()
        ),
    );
    let o = run_command(
        &ws,
        &home,
        &["--secret", "api"],
        &["sh", "-c", "echo API=$API"],
    )
    .output()
    .unwrap();
    assert!(out(&o).contains("API="), "{}", seen(&o));
    assert!(!seen(&o).contains(refresh), "{}", seen(&o));
    assert!(
        err(&o).contains("bytes on stderr: not shown"),
        "{}",
        seen(&o)
    );
}

/// F10: `~/.secrets/gh -> ~/sync/keys/gh`, with `gh.bak` beside the
/// target: the backup is hidden too.
#[test]
fn copies_beside_a_file_sources_link_target_are_hidden() {
    let t = TempDir::new("sec-27k-f10");
    let home = t.dir("home");
    let ws = t.dir("ws");
    let keys = home.join("sync/keys");
    std::fs::create_dir_all(&keys).unwrap();
    std::fs::create_dir_all(home.join(".secrets")).unwrap();
    let value = "lnkREALvalue0123456789abcdefXYZ";
    std::fs::write(keys.join("gh"), format!("{value}\n")).unwrap();
    std::fs::write(keys.join("gh.bak"), format!("{value}\n")).unwrap();
    std::os::unix::fs::symlink(keys.join("gh"), home.join(".secrets/gh")).unwrap();
    config(
        &home,
        "[secrets.gh]\nfile = \"~/.secrets/gh\"\nhosts = [\"localhost:1\"]\n",
    );
    let k = keys.display().to_string();
    let sync = home.join("sync").display().to_string();
    let o = run_command(
        &ws,
        &home,
        &["--read", &sync],
        &["sh", "-c", &format!("cat {k}/gh {k}/gh.bak; echo done")],
    )
    .output()
    .unwrap();
    assert!(out(&o).contains("done"), "{}", seen(&o));
    assert!(!out(&o).contains(value), "the value was read: {}", seen(&o));
}

/// F7: `~/.npmrc` with a registry path holding secret b's value on the
/// line of secret a's `_authToken`: a run granted only `a` does not get
/// b's value in its placeholder copy.
#[test]
fn a_placeholder_copy_carries_no_other_secrets_value() {
    let t = TempDir::new("sec-27k-f7");
    let home = t.dir("home");
    let ws = t.dir("ws");
    let vals = t.dir("vals");
    let (a, b) = ("aaREALvalue0123456789abcdefXYZ", "Kq1Lp0Xw9Zq8Hs3Jd8");
    std::fs::write(vals.join("a"), a).unwrap();
    std::fs::write(vals.join("b"), b).unwrap();
    config(
        &home,
        &format!(
            "[secrets.a]\nfile = {:?}\nhosts = [\"a.test\"]\n[secrets.b]\nfile = {:?}\nhosts = [\"b.test\"]\n",
            vals.join("a").display().to_string(),
            vals.join("b").display().to_string()
        ),
    );
    std::fs::write(
        home.join(".npmrc"),
        format!("//a.test/:_authToken={a}\n//a.test/{b}/:_authToken={a}\n"),
    )
    .unwrap();
    let o = run_command(
        &ws,
        &home,
        &["--secret", "a"],
        &["sh", "-c", "cat ~/.npmrc; echo done"],
    )
    .output()
    .unwrap();
    assert!(out(&o).contains("done"), "{}", seen(&o));
    // The first line's placeholder copy is still there.
    assert!(out(&o).contains("//a.test/:_authToken="), "{}", seen(&o));
    assert!(
        !seen(&o).contains(b),
        "secret b's value inside: {}",
        seen(&o)
    );
    assert!(!seen(&o).contains(a), "{}", seen(&o));
}

/// F13: a `keyring` source's tool is never taken from the caller's `PATH`:
/// a `secret-tool` a run planted in a workspace directory on it does not
/// run on the host.
#[test]
fn a_keyring_sources_tool_is_not_taken_from_path() {
    let t = TempDir::new("sec-27k-f13");
    let home = t.dir("home");
    let ws = home.join("proj");
    let bin = ws.join("tools/bin");
    std::fs::create_dir_all(&bin).unwrap();
    let marker = t.path().join("PLANTED_RAN");
    let tool = bin.join("secret-tool");
    std::fs::write(
        &tool,
        format!(
            "#!/bin/sh\ntouch {}\necho kr-token-0123456789abcdef\n",
            marker.display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(&tool, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    config(
        &home,
        "[secrets.kr]\nkeyring = { service = \"api\", user = \"me\" }\nhosts = [\"localhost:1\"]\nenv = \"KR\"\n",
    );
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_else(|_| "/usr/bin:/bin".into())
    );
    let o = run_command(
        &ws,
        &home,
        &["--secret", "kr"],
        &["sh", "-c", "echo KR=$KR"],
    )
    .env("PATH", path)
    .output()
    .unwrap();
    assert!(
        !marker.exists(),
        "planted secret-tool ran on the host: {}",
        seen(&o)
    );
}

/// F16: the program's `#!` line names an interpreter in the workspace (a
/// project's virtual environment): the source is refused, so what a run
/// puts there never runs on the host.
#[test]
fn a_command_sources_interpreter_in_the_workspace_is_judged() {
    let t = TempDir::new("sec-27k-f16");
    let home = t.dir("home");
    let ws = home.join("proj");
    let venv_bin = ws.join(".venv/bin");
    std::fs::create_dir_all(&venv_bin).unwrap();
    std::os::unix::fs::symlink("/bin/sh", venv_bin.join("sh")).unwrap();
    let tools = t.dir("tools");
    let vals = t.dir("vals");
    std::fs::write(vals.join("tok"), "cmdREALtoken0123456789abcdefXYZ\n").unwrap();
    let prog = tools.join("gettoken");
    std::fs::write(
        &prog,
        format!(
            "#!{}/sh\ncat {}\n",
            venv_bin.display(),
            vals.join("tok").display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(&prog, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    config(
        &home,
        &format!(
            "[secrets.api]\ncommand = [{:?}]\nhosts = [\"localhost:1\"]\nenv = \"API\"\n",
            prog.display().to_string()
        ),
    );
    let o = run_command(
        &ws,
        &home,
        &["--secret", "api"],
        &["sh", "-c", "echo API=$API"],
    )
    .output()
    .unwrap();
    assert_ne!(
        code(&o),
        0,
        "an interpreter in the workspace was not judged: {}",
        seen(&o)
    );
    // What a run could do there (its write grant is the workspace).
    let marker = t.path().join("PLANTED_RAN");
    std::fs::remove_file(venv_bin.join("sh")).unwrap();
    std::fs::write(
        venv_bin.join("sh"),
        format!(
            "#!/bin/sh\ntouch {}\nexec /bin/sh \"$@\"\n",
            marker.display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(
        venv_bin.join("sh"),
        std::os::unix::fs::PermissionsExt::from_mode(0o755),
    )
    .unwrap();
    let o = run_command(&ws, &home, &["--secret", "api"], &["true"])
        .output()
        .unwrap();
    assert!(
        !marker.exists(),
        "planted interpreter ran on the host: {}",
        seen(&o)
    );
}
