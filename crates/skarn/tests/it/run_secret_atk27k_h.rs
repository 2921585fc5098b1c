//! Attack atk27k, the findings helper h27k fixed, each checked from
//! outside: the agent's file tools may not rewrite a `command` source's
//! helper (F19); a search path a `command` source sets is judged entry by
//! entry (F1c); a program or `PATH` directory reached through a bind-mount
//! alias of the workspace is judged by directory identity (F18, F18b);
//! a `from_env` secret's placeholder keeps its variable's name (F17); the
//! run CA does not expire under a long-lived server (F11); a large
//! `node_modules` does not refuse every granted run (F15). The planted
//! code must never run on the host, the value never reach the run.

use std::path::Path;
use std::process::{Command, Output, Stdio};

use serde_json::{Value, json};

use crate::common::*;
use crate::support_hook::{FILE_GUARD, claude_hook};
use crate::support_secret_sources::{script, seen, write_config as config};
use skarn_test_support::{TempDir, is_root};

fn git_init(d: &Path) {
    std::fs::create_dir_all(d).unwrap();
    let _ = Command::new("git")
        .args(["init", "-q", "."])
        .current_dir(d)
        .output();
}

/// Claude Code's `Write` of `path` through `skarn hook claude-code`:
/// `Some(reason)` for a deny, `None` when the hook has no objection (then
/// the write is made, as the agent's tool makes it, outside any sandbox).
fn claude_write(path: &Path, ws: &Path, home: &Path, body: &str) -> Option<String> {
    let i = json!({"session_id": "s", "transcript_path": home.join("t.jsonl"), "cwd": ws,
                   "permission_mode": "default", "hook_event_name": "PreToolUse",
                   "tool_name": "Write", "tool_input": {"file_path": path, "content": body}});
    let o = claude_hook(ws, home, None, FILE_GUARD, &i);
    assert_eq!(code(&o), 0, "{path:?}: {o:?}");
    if o.stdout.is_empty() {
        std::fs::write(path, body).unwrap();
        return None;
    }
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["hookSpecificOutput"]["permissionDecision"], "deny", "{v}");
    Some(
        v["hookSpecificOutput"]["permissionDecisionReason"]
            .as_str()
            .unwrap()
            .to_owned(),
    )
}

/// F19: the agent's Write tool (the hook's file guard) may not rewrite the
/// program a `command` source runs, and a granted run in another project
/// never runs planted code on the host.
#[test]
fn the_agents_write_tool_cannot_rewrite_a_command_sources_helper() {
    let t = TempDir::new("sec-27k-f19");
    let home = t.dir("home");
    let ws = home.join("proj");
    let other = home.join("other");
    git_init(&ws);
    git_init(&other);
    let vals = t.dir("vals");
    std::fs::write(vals.join("tok"), "hookREALtoken0123456789abcdefXY\n").unwrap();
    let helper = ws.join("tools/tok.sh");
    script(
        &helper,
        &format!("#!/bin/sh\nexec cat {}\n", vals.join("tok").display()),
    );
    config(
        &home,
        &format!(
            "[secrets.api]\ncommand = [\"{}\"]\nhosts = [\"localhost:1\"]\nenv = \"API\"\n",
            helper.display()
        ),
    );
    let marker = t.path().join("PLANTED_RAN");
    let planted = format!(
        "#!/bin/sh\ntouch {}\nexec cat {}\n",
        marker.display(),
        vals.join("tok").display()
    );
    let denied = claude_write(&helper, &ws, &home, &planted);
    assert!(
        denied.is_some(),
        "the hook let the agent rewrite the secret's helper"
    );
    assert!(
        !std::fs::read_to_string(&helper).unwrap().contains("touch"),
        "the helper was rewritten"
    );
    let o = run_command(&other, &home, &["--secret", "api"], &["true"])
        .output()
        .unwrap();
    assert!(
        !marker.exists(),
        "planted code ran on the host: {}",
        seen(&o)
    );
}

/// Plants `planted` at `target` from an ungranted run in `ws`, then a
/// granted run: the planted code (touching `marker`) must not run on
/// the host. Returns the first granted run's output.
fn plant_then_resolve(
    ws: &Path,
    home: &Path,
    target: &str,
    planted: &str,
    marker: &Path,
) -> Output {
    let first = run_command(
        ws,
        home,
        &["--secret", "api"],
        &["sh", "-c", "echo API=$API"],
    )
    .output()
    .unwrap();
    let plant = format!("printf '{planted}' > {target} && echo rewrote");
    let o = run_command(
        ws,
        home,
        &["--workspace-layer", "direct"],
        &["sh", "-c", &plant],
    )
    .output()
    .unwrap();
    let again = run_command(ws, home, &["--secret", "api"], &["true"])
        .output()
        .unwrap();
    assert!(
        !marker.exists(),
        "planted code ran on the host: first {} / plant {} / again {}",
        seen(&first),
        seen(&o),
        seen(&again)
    );
    first
}

/// F1c: a search path a `command` source sets in its shell string
/// (`PATH=<project>/bin:/usr/bin:/bin get-token`) or in its code
/// (`sys.path[:0] = "<project>/lib:/x".split(":")`) is judged entry by
/// entry: a project directory on it refuses the source.
#[test]
fn a_search_path_a_command_source_sets_is_judged_entry_by_entry() {
    let t = TempDir::new("sec-27k-f1c");
    let home = t.dir("home");
    let ws = home.join("proj");
    git_init(&ws);
    let vals = t.dir("vals");
    let tok = vals.join("tok");
    std::fs::write(&tok, "pathREALtoken0123456789abcdefXY\n").unwrap();
    let marker = t.path().join("PLANTED_RAN");
    // The shell's PATH.
    script(
        &ws.join("bin/get-token"),
        &format!("#!/bin/sh\nexec cat {}\n", tok.display()),
    );
    config(
        &home,
        &format!(
            "[secrets.api]\ncommand = [\"sh\", \"-c\", \"PATH={}/bin:/usr/bin:/bin get-token\"]\n\
             hosts = [\"localhost:1\"]\nenv = \"API\"\n",
            ws.display()
        ),
    );
    let planted = format!(
        "#!/bin/sh\\ntouch {}\\nexec cat {}\\n",
        marker.display(),
        tok.display()
    );
    let first = plant_then_resolve(&ws, &home, "bin/get-token", &planted, &marker);
    assert_ne!(code(&first), 0, "not refused: {}", seen(&first));
    assert!(err(&first).contains("secret api"), "{}", seen(&first));
    // A Python module path in code.
    if !Path::new("/usr/bin/python3").exists() {
        skarn_test_support::skip!("no /usr/bin/python3 for the module-path form");
    }
    std::fs::create_dir_all(ws.join("lib")).unwrap();
    std::fs::write(
        ws.join("lib/tokmod.py"),
        format!("print(open('{}').read().strip())\n", tok.display()),
    )
    .unwrap();
    config(
        &home,
        &format!(
            "[secrets.api]\ncommand = [\"/usr/bin/python3\", \"-c\", \
             \"import sys; sys.path[:0] = '{}/lib:/usr/lib/none'.split(':'); import tokmod\"]\n\
             hosts = [\"localhost:1\"]\nenv = \"API\"\n",
            ws.display()
        ),
    );
    let planted = format!(
        "import os\\nos.system(\"touch {}\")\\nprint(open(\"{}\").read().strip())\\n",
        marker.display(),
        tok.display()
    );
    let first = plant_then_resolve(&ws, &home, "lib/tokmod.py", &planted, &marker);
    assert_ne!(code(&first), 0, "not refused: {}", seen(&first));
}

/// F18, F18b: a `command` source's program named through a bind-mount
/// alias of the workspace, or found in a `PATH` directory that is such an
/// alias, is judged by directory identity: refused, so a program a run
/// rewrites under its workspace name never runs on the host. Needs a
/// private mount namespace (root).
#[test]
fn a_command_sources_program_through_a_bind_mount_alias_is_judged() {
    if !is_root() {
        skarn_test_support::skip!("a bind mount in a private mount namespace needs root");
    }
    for (form, command, path_extra) in [
        ("program", "[\"ALIAS/tools/tok.sh\"]", ""),
        ("PATH", "[\"tok-h27k\"]", ":ALIAS/tools"),
    ] {
        let t = TempDir::new("sec-27k-f18");
        let home = t.dir("home");
        let ws = home.join("proj");
        git_init(&ws);
        let alias = t.dir("alias");
        let vals = t.dir("vals");
        let tok = vals.join("tok");
        std::fs::write(&tok, "aliasREALtoken0123456789abcdefX\n").unwrap();
        let marker = t.path().join("PLANTED_RAN");
        for name in ["tok.sh", "tok-h27k"] {
            script(
                &ws.join("tools").join(name),
                &format!("#!/bin/sh\nexec cat {}\n", tok.display()),
            );
        }
        let command = command.replace("ALIAS", &alias.display().to_string());
        config(
            &home,
            &format!(
                "[secrets.api]\ncommand = {command}\nhosts = [\"localhost:1\"]\nenv = \"API\"\n"
            ),
        );
        let planted = format!(
            "#!/bin/sh\\ntouch {}\\nexec cat {}\\n",
            marker.display(),
            tok.display()
        );
        let exe = exe();
        let run = format!(
            "{} run --no-config --workspace {}",
            exe.display(),
            ws.display()
        );
        let script_text = format!(
            "set -u\nmount --bind {ws} {alias} || exit 77\ncd {ws}\n\
             {run} --secret api -- true > {d}/first 2>&1; echo $? > {d}/first.rc\n\
             {run} --workspace-layer direct -- sh -c \"printf '{planted}' > tools/tok.sh; printf '{planted}' > tools/tok-h27k\" > {d}/plant 2>&1\n\
             {run} --secret api -- true > {d}/again 2>&1\n",
            ws = ws.display(),
            alias = alias.display(),
            d = t.path().display(),
        );
        let path = format!(
            "/usr/local/bin:/usr/bin:/bin{}",
            path_extra.replace("ALIAS", &alias.display().to_string())
        );
        let o = Command::new("unshare")
            .args(["-m", "--propagation", "private", "sh", "-c", &script_text])
            .env("HOME", &home)
            .env("PATH", &path)
            .env_remove("XDG_STATE_HOME")
            .env_remove("XDG_CONFIG_HOME")
            .env_remove("CLAUDECODE")
            .env_remove("SKARN_CALLER")
            .stdin(Stdio::null())
            .output()
            .unwrap();
        if code(&o) == 77 {
            skarn_test_support::skip!("mount --bind failed: {}", seen(&o));
        }
        let read = |n: &str| std::fs::read_to_string(t.path().join(n)).unwrap_or_default();
        assert!(
            !marker.exists(),
            "{form}: planted code ran on the host: first {} / plant {} / again {}",
            read("first"),
            read("plant"),
            read("again")
        );
        assert_ne!(
            read("first.rc").trim(),
            "0",
            "{form}: not refused: {}",
            read("first")
        );
        assert!(
            read("first").contains("secret api"),
            "{form}: {}",
            read("first")
        );
    }
}

/// F17: a `from_env = "NPM_TOKEN"` secret without `env` puts its
/// placeholder in `NPM_TOKEN`, so the user's `_authToken=${NPM_TOKEN}`
/// line stays in the run's `.npmrc` copy; the value itself never reaches
/// the run.
#[test]
fn a_from_env_secrets_placeholder_keeps_its_variables_name() {
    let t = TempDir::new("sec-27k-f17");
    let home = t.dir("home");
    let ws = home.join("proj");
    git_init(&ws);
    let value = "npm_REALtoken0123456789abcdefXYZ";
    config(
        &home,
        "[secrets.npm]\nfrom_env = \"NPM_TOKEN\"\nhosts = [\"localhost:1\"]\n",
    );
    std::fs::write(
        home.join(".npmrc"),
        "//localhost:1/:_authToken=${NPM_TOKEN}\n",
    )
    .unwrap();
    let o = run_command(
        &ws,
        &home,
        &["--secret", "npm"],
        &["sh", "-c", "echo \"T=$NPM_TOKEN\"; cat ~/.npmrc"],
    )
    .env("NPM_TOKEN", value)
    .output()
    .unwrap();
    let s = seen(&o);
    assert_eq!(code(&o), 0, "{s}");
    assert!(!s.contains(value), "the value reached the run: {s}");
    let t_line = out(&o)
        .lines()
        .find(|l| l.starts_with("T="))
        .unwrap_or("")
        .to_string();
    assert!(
        t_line.len() > "T=".len() + 8,
        "no placeholder in NPM_TOKEN: {s}"
    );
    assert!(
        out(&o).contains("_authToken=${NPM_TOKEN}"),
        "the user's npmrc line was dropped: {s}"
    );
}

/// F11: the CA a run or gateway server trusts for its bound hosts does
/// not expire while the process may still live (a server runs for weeks):
/// checked inside a granted run with openssl on the CA file it is given.
#[test]
fn a_runs_ca_outlives_a_long_running_server() {
    if !Path::new("/usr/bin/openssl").exists() {
        skarn_test_support::skip!("no /usr/bin/openssl to read the CA's dates");
    }
    let t = TempDir::new("sec-27k-f11");
    let home = t.dir("home");
    let ws = home.join("proj");
    git_init(&ws);
    std::fs::write(t.path().join("tok"), "caREALtoken0123456789abcdefXYZ\n").unwrap();
    config(
        &home,
        &format!(
            "[secrets.api]\nfile = \"{}\"\nhosts = [\"localhost:1\"]\nenv = \"API\"\n",
            t.path().join("tok").display()
        ),
    );
    // 90 days: far beyond the two days a server's CA used to last.
    let o = run_command(
        &ws,
        &home,
        &["--secret", "api"],
        &[
            "sh",
            "-c",
            "/usr/bin/openssl x509 -noout -checkend 7776000 -in \"$NODE_EXTRA_CA_CERTS\"",
        ],
    )
    .output()
    .unwrap();
    assert_eq!(
        code(&o),
        0,
        "the run's CA expires within 90 days: {}",
        seen(&o)
    );
    assert!(out(&o).contains("will not expire"), "{}", seen(&o));
}

/// F15: a workspace whose `node_modules` holds more files than the
/// stored-value check may read (210,000) no longer refuses every run
/// granted a secret; a credential file at the tree's top (`.npmrc`
/// holding the value) is still found and refuses the run.
#[test]
fn a_large_node_modules_does_not_refuse_granted_runs() {
    let t = TempDir::new("sec-27k-f15");
    let home = t.dir("home");
    let ws = home.join("proj");
    git_init(&ws);
    let value = "bigREALvalue0123456789abcdefXYZ";
    std::fs::write(t.path().join("tok"), format!("{value}\n")).unwrap();
    config(
        &home,
        &format!(
            "[secrets.t]\nfile = \"{}\"\nhosts = [\"localhost:1\"]\nenv = \"T\"\n",
            t.path().join("tok").display()
        ),
    );
    for d in 0..420 {
        let dir = ws.join(format!("node_modules/pkg{d}/lib"));
        std::fs::create_dir_all(&dir).unwrap();
        for f in 0..500 {
            std::fs::File::create(dir.join(format!("f{f}.js"))).unwrap();
        }
    }
    let o = run_command(&ws, &home, &["--secret", "t"], &["sh", "-c", "echo T=$T"])
        .output()
        .unwrap();
    assert_eq!(code(&o), 0, "a granted run was refused: {}", seen(&o));
    assert!(
        out(&o).starts_with("T=") && !seen(&o).contains(value),
        "{}",
        seen(&o)
    );
    // The value stored at a credential place of the tree is still found.
    std::fs::write(
        ws.join("node_modules/.npmrc"),
        format!("//localhost:1/:_authToken={value}\n"),
    )
    .unwrap();
    let o = run_command(&ws, &home, &["--secret", "t"], &["sh", "-c", "echo T=$T"])
        .output()
        .unwrap();
    assert_ne!(code(&o), 0, "not refused: {}", seen(&o));
    assert!(!seen(&o).contains(value), "{}", seen(&o));
}
