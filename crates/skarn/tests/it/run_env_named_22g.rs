//! Attack atk22g F1 and F3: files the caller's variables name, beyond the
//! variables skarn lists. A host program's start-up file named by any
//! variable (`VIMINIT="source <ws>/vimrc"`, `LESSKEYIN`, a tool's
//! `FOO_CONFIG`) stays as it was, and a credential file named by a
//! variable of a credential file's shape (`ANSIBLE_VAULT_PASSWORD_FILE`,
//! `<TOOL>_TOKEN_FILE`) is not readable. Judged from outside: the files'
//! contents after the run, the values in what the run printed.

use std::path::Path;

use crate::common::*;
use crate::support_git::ran;
use skarn_test_support::TempDir;

const LAYERS: &[&str] = &["direct", "cow"];

#[test]
fn start_up_files_any_variable_names_stay_as_they_were() {
    for layer in LAYERS {
        let t = TempDir::new("env-named");
        let home = t.dir("home");
        let ws = t.dir("ws");
        // In a directory of their own: a workspace that is the directory
        // of a start-up file a variable names is refused (atk22o F6,
        // `run_fy22b`), and that directory is kept read-only whole.
        let vimrc = t.file("ws/dots/vimrc", "set nocompatible\n");
        let lesskey = t.file("ws/dots/lesskey", "#command\n");
        let tool = t.file("ws/conf/mytool.conf", "quiet = true\n");
        let starship = ws.join("starship.toml");
        let out_dir = t.dir("ws/out");
        let p = |f: &Path| f.display().to_string();
        let script = "echo '!touch /tmp/pwned' > dots/vimrc; \
                      printf '#env\\nLESSOPEN=|touch /tmp/pwned %s\\n' > dots/lesskey; \
                      echo 'pre = \"/tmp/x\"' > conf/mytool.conf; \
                      echo '[custom.x]' > starship.toml; \
                      echo built > out/artifact; echo RAN";
        let said = ran(
            layer,
            run_command(
                &ws,
                &home,
                &["--workspace-layer", layer],
                &["sh", "-c", script],
            )
            .current_dir(&ws)
            .env("VIMINIT", format!("source {}", p(&vimrc)))
            .env("LESSKEYIN", p(&lesskey))
            // Not on any list: the shape rule.
            .env("MYTOOL_SETTINGS", p(&tool))
            // Listed, and missing: the name is reserved.
            .env("STARSHIP_CONFIG", p(&starship))
            // A directory a variable names stays writable.
            .env("MYTOOL_OUT", p(&out_dir)),
        );
        let read = |f: &Path| std::fs::read_to_string(f).unwrap_or_default();
        assert_eq!(read(&vimrc), "set nocompatible\n", "{layer}: {said}");
        assert_eq!(read(&lesskey), "#command\n", "{layer}: {said}");
        assert_eq!(read(&tool), "quiet = true\n", "{layer}: {said}");
        assert!(
            !starship.exists() || read(&starship).is_empty(),
            "{layer}: a starship configuration was planted: {said}"
        );
        assert_eq!(
            read(&out_dir.join("artifact")),
            "built\n",
            "{layer}: a directory a variable names became read-only: {said}"
        );
    }
}

#[test]
fn credential_files_variables_of_that_shape_name_are_hidden() {
    let t = TempDir::new("env-named-secret");
    let home = t.dir("home");
    let ws = t.dir("ws");
    t.file("ws/plain", "PLAIN-OK\n");
    let vault = t.file("ws/.vault_pass", "SECRET-G-VAULT\n");
    let restic = t.file("ws/restic.pw", "SECRET-G-RESTIC\n");
    let tool = t.file("ws/tok", "SECRET-G-TOOL\n");
    let kube = t.file("ws/kc.yaml", "token: SECRET-G-KUBE\n");
    let p = |f: &Path| f.display().to_string();
    let o = run_command(
        &ws,
        &home,
        &[],
        &[
            "sh",
            "-c",
            "cat plain; cat .vault_pass restic.pw tok kc.yaml; true",
        ],
    )
    .current_dir(&ws)
    .env("ANSIBLE_VAULT_PASSWORD_FILE", p(&vault))
    .env("RESTIC_PASSWORD_FILE", p(&restic))
    .env("ACME_DEPLOY_TOKEN_FILE", p(&tool))
    .env("KUBE_CONFIG_PATH", p(&kube))
    .output()
    .unwrap();
    let said = format!("{}{}", out(&o), err(&o));
    assert!(said.contains("PLAIN-OK"), "the command did not run: {said}");
    for v in [
        "SECRET-G-VAULT",
        "SECRET-G-RESTIC",
        "SECRET-G-TOOL",
        "SECRET-G-KUBE",
    ] {
        assert!(!said.contains(v), "{v} readable inside: {said}");
    }
    assert!(
        std::fs::read_to_string(&vault)
            .unwrap()
            .contains("SECRET-G-VAULT")
    );
}
