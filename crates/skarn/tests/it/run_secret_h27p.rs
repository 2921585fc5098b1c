//! The usability of `command` sources run in their private view (ADR
//! 0283), what helper h27p changed, each checked from outside: a
//! set-group-ID program of root's named as the one plain command of a
//! shell string keeps its privilege (ADR 0302), and one reached any other
//! way fails with an error that says why.

use std::process::Command;

use skarn_test_support::TempDir;

use crate::common::{code, err, out, run_command};
use crate::support_secret_sources::{as_user, claude_write, is_root, write_config};

/// The user `as_user` runs as, by name.
fn user_name(dir: &std::path::Path) -> Option<String> {
    let o = as_user(
        {
            let mut c = Command::new("id");
            c.arg("-un");
            c
        },
        dir,
    )
    .output()
    .ok()?;
    let n = String::from_utf8_lossy(&o.stdout).trim().to_string();
    (o.status.success() && !n.is_empty()).then_some(n)
}

/// A set-group-ID program of root's that prints a value only its group
/// may read, as 1Password's `op` reaches its desktop app through its
/// set-group-ID bit; `None` when none can be had. As root: a copy of
/// `cat` (group `shadow`) and a value file of that group, in a directory
/// the unprivileged user may enter but not change. Otherwise the system's
/// `chage -l USER` (set-group-ID `shadow`, reads `/etc/shadow`), whose
/// several lines the secret refuses as a value: that refusal shows its
/// output was read.
fn set_gid_source(keep: &std::path::Path, user: &str) -> Option<(String, bool)> {
    use std::os::unix::fs::PermissionsExt;
    if !is_root() {
        return Some((format!("/usr/bin/chage -l {user}"), false));
    }
    let cat = keep.join("gcat");
    let val = keep.join("val");
    std::fs::copy("/bin/cat", &cat).ok()?;
    std::fs::write(&val, "setGidValue0123456789abcdefXYZ\n").ok()?;
    let ok = Command::new("chown")
        .arg("root:shadow")
        .args([&cat, &val])
        .status()
        .ok()?
        .success();
    if !ok {
        return None;
    }
    std::fs::set_permissions(&cat, std::fs::Permissions::from_mode(0o2755)).ok()?;
    std::fs::set_permissions(&val, std::fs::Permissions::from_mode(0o640)).ok()?;
    Some((format!("{} {}", cat.display(), val.display()), true))
}

/// A set-group-ID program of root's written as the one plain command of
/// a shell string, with or without `exec`, now keeps its privilege for an
/// unprivileged user (before: it ran in the user namespace of ADR 0283,
/// where the bit has no effect, and failed); with a pipe it still runs in
/// the view, and the error names the program and what to write instead.
#[test]
fn a_set_group_id_program_in_a_plain_shell_string_keeps_its_privilege() {
    let t = TempDir::new("h27p_setid");
    let keep = TempDir::new("h27p_setid_prog");
    let home = t.dir("home");
    let ws = t.dir("ws");
    let Some(user) = user_name(t.path()) else {
        skarn_test_support::skip!("no unprivileged user to run as");
    };
    let in_ns = as_user(
        {
            let mut c = Command::new("unshare");
            c.args(["--user", "--map-current-user", "true"]);
            c
        },
        t.path(),
    )
    .status();
    if !matches!(in_ns, Ok(s) if s.success()) {
        skarn_test_support::skip!(
            "no unprivileged user namespace: sources run in the caller's view"
        );
    }
    let Some((src, clean)) = set_gid_source(keep.path(), &user) else {
        skarn_test_support::skip!("no set-group-ID program of root's to run as {user}");
    };
    let probe = as_user(
        {
            let mut c = Command::new("sh");
            c.args(["-c", &src]);
            c
        },
        t.path(),
    )
    .output();
    if !matches!(&probe, Ok(o) if o.status.success()) {
        skarn_test_support::skip!("{src} does not work for {user} here");
    }
    let in_view = as_user(
        {
            let mut c = Command::new("unshare");
            c.args(["--user", "--map-current-user", "sh", "-c", &src]);
            c
        },
        t.path(),
    )
    .output()
    .unwrap();
    assert!(
        !in_view.status.success(),
        "{src} works without its privilege"
    );
    write_config(
        &home,
        &format!(
            "[secrets.plain]\ncommand = [\"sh\", \"-c\", \"{src}\"]\nhosts = [\"example.test\"]\n\n\
             [secrets.viaexec]\ncommand = [\"/bin/bash\", \"-c\", \"exec {src}\"]\nhosts = [\"example.test\"]\n\n\
             [secrets.piped]\ncommand = [\"sh\", \"-c\", \"{src} | cat\"]\nhosts = [\"example.test\"]\n"
        ),
    );
    for name in ["plain", "viaexec"] {
        let var = name.to_ascii_uppercase();
        let o = as_user(
            run_command(
                &ws,
                &home,
                &["--secret", name],
                &["sh", "-c", &format!("echo \"{var}=${var}\"")],
            ),
            t.path(),
        )
        .output()
        .unwrap();
        let (line, e) = (out(&o), err(&o));
        assert!(!e.contains("exited with"), "{name}: the source failed: {e}");
        if clean {
            assert_eq!(code(&o), 0, "{name}: {line}{e}");
            assert!(
                line.starts_with(&format!("{var}=")) && line.trim().len() > var.len() + 8,
                "{name}: {line}{e}"
            );
            assert!(!line.contains("setGidValue"), "{line}");
        } else {
            // chage's lines were read: only their form is refused.
            assert!(
                e.contains("the value holds control characters"),
                "{name}: {e}"
            );
        }
    }
    let o = as_user(
        run_command(&ws, &home, &["--secret", "piped"], &["true"]),
        t.path(),
    )
    .output()
    .unwrap();
    assert_ne!(code(&o), 0, "{}{}", out(&o), err(&o));
    let e = err(&o);
    assert!(
        e.contains("a set-user-ID or set-group-ID program of root's") && e.contains("ADR 0302"),
        "{e}"
    );
}

/// Whether an unprivileged user namespace can be made as the user
/// `as_user` runs as (else sources run in the caller's view).
fn user_namespaces(dir: &std::path::Path) -> bool {
    let mut c = Command::new("unshare");
    c.args(["--user", "--map-current-user", "true"]);
    matches!(as_user(c, dir).status(), Ok(s) if s.success())
}

/// atk27n F1: a set-ID launcher of root's as the source's program
/// (`ssh-agent CMD...`, set-group-ID on Debian; `sg GROUP -c STRING`,
/// set-user-ID) ran the whole command it launches in the caller's view,
/// judged by its text only. Here the shell string reaches the workspace
/// through variables assigned inside it (`a=w; b=s; cd ~/$a$b && ./tok`),
/// which no text reading follows: the script a sandboxed run planted in
/// the workspace ran on the host. Now a launcher that runs another
/// program runs in the private view: the planted script is not there.
#[test]
fn a_set_id_launcher_does_not_run_a_planted_script_on_the_host() {
    let launchers: Vec<(&str, Vec<&str>)> = vec![
        ("/usr/bin/ssh-agent", vec!["ssh-agent", "/bin/sh", "-c"]),
        ("/usr/bin/sg", vec!["sg", "nogroup", "-c"]),
    ];
    let mut tried = 0;
    for (prog, words) in launchers {
        let t = TempDir::new("h27p_f1");
        if !std::path::Path::new(prog).exists() {
            continue;
        }
        if !user_namespaces(t.path()) {
            skarn_test_support::skip!(
                "no unprivileged user namespace: sources run in the caller's view"
            );
        }
        let home = t.dir("home");
        let ws = home.join("ws");
        let other = t.dir("other");
        let vals = t.dir("vals");
        std::fs::create_dir_all(&ws).unwrap();
        std::fs::write(vals.join("val"), "launchValue0123456789abcdefXY\n").unwrap();
        let marker = t.path().join("PLANTED");
        let line = format!(
            "cat {}; a=w; b=s; cd ~/$a$b && ./tok; true",
            vals.join("val").display()
        );
        let mut cmd: Vec<String> = words.iter().map(|w| format!("{w:?}")).collect();
        cmd.push(format!("{line:?}"));
        write_config(
            &home,
            &format!(
                "[secrets.tok]\ncommand = [{}]\nhosts = [\"example.test\"]\n",
                cmd.join(", ")
            ),
        );
        let plant = as_user(
            run_command(
                &ws,
                &home,
                &["--workspace-layer", "direct"],
                &[
                    "sh",
                    "-c",
                    &format!(
                        "printf '#!/bin/sh\\nid -u > {}\\n' > tok && chmod +x tok",
                        marker.display()
                    ),
                ],
            ),
            t.path(),
        )
        .output()
        .unwrap();
        assert_eq!(code(&plant), 0, "{}{}", out(&plant), err(&plant));
        assert!(ws.join("tok").exists());
        // The source must work for the launcher to be used: skip a
        // launcher this user may not use (`sg` needs the group).
        let mut probe = Command::new(words[0]);
        probe.args(&words[1..]).arg("true").current_dir("/");
        if !as_user(probe, t.path()).status().is_ok_and(|s| s.success()) {
            continue;
        }
        tried += 1;
        let o = as_user(
            run_command(
                &other,
                &home,
                &["--secret", "tok"],
                &["sh", "-c", "echo \"TOK=$TOK\""],
            ),
            t.path(),
        )
        .output()
        .unwrap();
        assert!(
            !marker.exists(),
            "{prog}: the host ran the planted script (as uid {}): {}{}",
            std::fs::read_to_string(&marker).unwrap_or_default().trim(),
            out(&o),
            err(&o)
        );
        assert!(!out(&o).contains("launchValue"), "{}", out(&o));
    }
    if tried == 0 {
        skarn_test_support::skip!("no set-ID launcher of root's (ssh-agent, sg) usable here");
    }
}

/// atk27n F2: a source that reads its value file after a bare `cd` (the
/// home): `cd && cat ws/.tok-value`. The text reading dropped a `cd`
/// without a directory, so the file was not hidden from runs: a run in
/// `~/ws` not granted the secret printed the real value. Now a bare `cd`
/// is the home, `..` is undone, and a relative `cd` starts from `/`.
#[test]
fn a_value_file_read_after_a_bare_cd_is_hidden_from_runs() {
    const REAL: &str = "bareCdValue0123456789abcdefXY";
    for line in [
        "cd && cat ws/.tok-value",
        "cd; cd ws && cat .tok-value",
        "cd ~/ws/../ws && cat ./.tok-value",
    ] {
        let t = TempDir::new("h27p_f2");
        let home = t.dir("home");
        let ws = home.join("ws");
        std::fs::create_dir_all(&ws).unwrap();
        std::fs::write(ws.join(".tok-value"), format!("{REAL}\n")).unwrap();
        write_config(
            &home,
            &format!(
                "[secrets.tok]\ncommand = [\"/bin/sh\", \"-c\", {line:?}]\nhosts = [\"example.test\"]\n"
            ),
        );
        let o = as_user(
            run_command(&ws, &home, &[], &["sh", "-c", "cat .tok-value 2>&1; true"]),
            t.path(),
        )
        .output()
        .unwrap();
        assert!(
            !out(&o).contains(REAL) && !err(&o).contains(REAL),
            "{line}: a run read the value file: {}{}",
            out(&o),
            err(&o)
        );
    }
}

/// atk27n F3: a source naming a system program as an argument (`env
/// /bin/sh -c ...`, `ssh-agent /bin/sh -c ...`) made `/bin/sh` (and what
/// lies beside it) a place the value is kept: every run granted the
/// secret had no `/bin/sh`. Now the system's programs and libraries a
/// source names are no value places.
#[test]
fn a_system_program_named_by_a_source_stays_usable_in_runs() {
    let t = TempDir::new("h27p_f3");
    let home = t.dir("home");
    let ws = t.dir("ws");
    let vals = t.dir("vals");
    std::fs::write(vals.join("val"), "sysProgValue0123456789abcdefXY\n").unwrap();
    write_config(
        &home,
        &format!(
            "[secrets.tok]\ncommand = [\"/usr/bin/env\", \"/bin/sh\", \"-c\", \"cat {}\"]\n\
             hosts = [\"example.test\"]\n",
            vals.join("val").display()
        ),
    );
    let o = as_user(
        run_command(
            &ws,
            &home,
            &["--secret", "tok"],
            &["/bin/sh", "-c", "echo shworks"],
        ),
        t.path(),
    )
    .output()
    .unwrap();
    assert_eq!(code(&o), 0, "{}{}", out(&o), err(&o));
    assert!(out(&o).contains("shworks"), "{}{}", out(&o), err(&o));
}

/// atk27n F4: the agent's Write tool may not rewrite a source's script
/// named after a bare `cd` (`cd && ./proj/tools/get-token`): the hook's
/// file guard reads the source's text as the shell does, and a bare `cd`
/// is the home.
#[test]
fn the_agents_write_tool_cannot_rewrite_a_script_reached_after_a_bare_cd() {
    let t = TempDir::new("h27p_f4");
    let home = t.dir("home");
    let proj = home.join("proj");
    let tok = proj.join("tools/get-token");
    std::fs::create_dir_all(tok.parent().unwrap()).unwrap();
    std::fs::write(&tok, "#!/bin/sh\necho bareCdHookValue0123456789abc\n").unwrap();
    for line in [
        "cd && ./proj/tools/get-token",
        "cd; cd proj/tools; ./get-token",
    ] {
        write_config(
            &home,
            &format!(
                "[secrets.tok]\ncommand = [\"/bin/sh\", \"-c\", {line:?}]\nhosts = [\"example.test\"]\n"
            ),
        );
        let r = claude_write(&tok, &proj, &home, "#!/bin/sh\nid > /tmp/x\n");
        assert!(
            r.is_some(),
            "{line}: the hook let the agent rewrite {}",
            tok.display()
        );
    }
}

/// atk27n F4b: the agent's Write tool rewrote a module beside a source's
/// script (`python3 ~/tools/tok.py` imports `helper.py` from its own
/// directory) in a project no `skarn run` had recorded yet: the next
/// resolution of the secret, from another project, ran it on the host.
/// Now the places the agent's file tools may write are recorded like a
/// run's writable grants: the source is refused (or runs with them
/// hidden), and the planted module never runs.
#[test]
fn a_module_the_agents_write_tool_planted_beside_a_source_does_not_run() {
    if !crate::common::host_has("python3", "--version") {
        skarn_test_support::skip!("python3 missing");
    }
    let t = TempDir::new("h27p_f4b");
    let home = t.dir("home");
    let tools = home.join("tools");
    let other = home.join("other");
    std::fs::create_dir_all(&tools).unwrap();
    std::fs::create_dir_all(&other).unwrap();
    std::fs::write(tools.join("tok.py"), "import helper\nprint(helper.V)\n").unwrap();
    std::fs::write(
        tools.join("helper.py"),
        "V = \"agentWriteValue0123456789abcdef\"\n",
    )
    .unwrap();
    write_config(
        &home,
        "[secrets.tok]\ncommand = [\"python3\", \"~/tools/tok.py\"]\nhosts = [\"example.test\"]\n",
    );
    let marker = t.path().join("PLANTED");
    let body = format!(
        "import os\nos.system(\"id -u > {}\")\nV = \"agentWriteValue0123456789abcdef\"\n",
        marker.display()
    );
    // The hook has no objection (a module in the agent's own project) ...
    let _ = claude_write(&tools.join("helper.py"), &tools, &home, &body);
    // ... and the agent's tool writes it on the host, unconfined.
    std::fs::write(tools.join("helper.py"), &body).unwrap();
    let o = as_user(
        run_command(
            &other,
            &home,
            &["--secret", "tok"],
            &["sh", "-c", "echo \"TOK=$TOK\""],
        ),
        t.path(),
    )
    .output()
    .unwrap();
    assert!(
        !marker.exists(),
        "the host ran the module the agent's Write tool planted: {}{}",
        out(&o),
        err(&o)
    );
}

/// atk27n F5: CA variables of tools that read only their own (gcloud,
/// httplib2, gRPC, nix, Bundler, Composer, Hex, Yarn) kept the caller's
/// bundle, without the run's CA, inside a run granted a secret: those
/// tools could not reach a bound host. Each now names the run's bundle,
/// the one `SSL_CERT_FILE` names, whatever the caller set.
#[test]
fn every_known_ca_variable_names_the_runs_bundle() {
    const VARS: &[&str] = &[
        "CLOUDSDK_CORE_CUSTOM_CA_CERTS_FILE",
        "HTTPLIB2_CA_CERTS",
        "GRPC_DEFAULT_SSL_ROOTS_FILE_PATH",
        "NIX_SSL_CERT_FILE",
        "BUNDLE_SSL_CA_CERT",
        "COMPOSER_CAFILE",
        "HEX_CACERTS_PATH",
        "YARN_CA_FILE_PATH",
        "YARN_HTTPS_CA_FILE_PATH",
    ];
    let t = TempDir::new("h27p_f5");
    let home = t.dir("home");
    let ws = t.dir("ws");
    write_config(
        &home,
        "[secrets.tok]\nfrom_env = \"H27P_TOK\"\nhosts = [\"example.test\"]\n",
    );
    let script: String = std::iter::once("SSL_CERT_FILE")
        .chain(VARS.iter().copied())
        .map(|v| format!("echo \"{v}=${v}\"; "))
        .collect();
    let mut c = run_command(&ws, &home, &["--secret", "tok"], &["sh", "-c", &script]);
    c.env("H27P_TOK", "caVarsValue0123456789abcdefXYZ");
    for v in VARS {
        c.env(v, "/etc/ssl/certs/ca-certificates.crt");
    }
    let o = c.output().unwrap();
    assert_eq!(code(&o), 0, "{}{}", out(&o), err(&o));
    let text = out(&o);
    let bundle = text
        .lines()
        .find_map(|l| l.strip_prefix("SSL_CERT_FILE="))
        .filter(|b| !b.is_empty())
        .unwrap_or_else(|| panic!("no SSL_CERT_FILE: {text}"));
    for v in VARS {
        assert!(
            text.lines().any(|l| l == format!("{v}={bundle}")),
            "{v} does not name the run's bundle {bundle}: {text}"
        );
    }
}

/// Item 3 (atk27l H2, the hard-link half): the user's helper `~/bin/tok`
/// is also `<ws>/tools/tok` (a hard link). A sandboxed run in the
/// workspace appends to its name there, which changes `~/bin/tok` itself:
/// the view of ADR 0283 hides the workspace, not the other name, so the
/// host would run the appended line at the next resolution (the
/// read-only protection of the source's files may refuse the write
/// already). Now a source whose file has other names the user may write
/// is refused before it runs, saying why.
#[test]
fn a_helper_hard_linked_into_a_workspace_is_refused() {
    let t = TempDir::new("h27p_hardlink");
    let home = t.dir("home");
    let ws = t.dir("ws");
    let other = t.dir("other");
    let vals = t.dir("vals");
    std::fs::write(vals.join("val"), "hardLinkValue0123456789abcdefXY\n").unwrap();
    let tok = home.join("bin/tok");
    std::fs::create_dir_all(tok.parent().unwrap()).unwrap();
    std::fs::write(
        &tok,
        format!("#!/bin/sh\ncat {}\n", vals.join("val").display()),
    )
    .unwrap();
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&tok, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    std::fs::create_dir_all(ws.join("tools")).unwrap();
    std::fs::hard_link(&tok, ws.join("tools/tok")).unwrap();
    write_config(
        &home,
        &format!(
            "[secrets.tok]\ncommand = [{:?}]\nhosts = [\"example.test\"]\n",
            tok.display().to_string()
        ),
    );
    let marker = t.path().join("PLANTED");
    let plant = as_user(
        run_command(
            &ws,
            &home,
            &["--workspace-layer", "direct"],
            &[
                "sh",
                "-c",
                &format!("echo 'id -u > {}' >> tools/tok", marker.display()),
            ],
        ),
        t.path(),
    )
    .output()
    .unwrap();
    // The read-only protection of what a source runs (ADR 0211) may
    // already refuse the write through the other name; either way:
    let _ = plant;
    let o = as_user(
        run_command(&other, &home, &["--secret", "tok"], &["true"]),
        t.path(),
    )
    .output()
    .unwrap();
    assert!(
        !marker.exists(),
        "the host ran what a run appended through the hard link: {}{}",
        out(&o),
        err(&o)
    );
    assert!(err(&o).contains("hard links"), "{}", err(&o));
}

/// `skarn run --secret tok` in `ws` with no namespace allowed (a seccomp
/// filter refusing `unshare`, `mount`, ... with `no_new_privs`, as a
/// container runtime's profile would; the way `run_hardening` simulates
/// a host without user namespaces), `extra` set in its environment.
fn run_without_namespaces(
    ws: &std::path::Path,
    home: &std::path::Path,
    extra: &[(&str, &str)],
) -> std::process::Output {
    use std::os::unix::process::CommandExt;
    let progs = skarn_sandbox::linux::seccomp::deny_programs(&[]).unwrap();
    let mut c = run_command(ws, home, &["--secret", "tok"], &["true"]);
    for (k, v) in extra {
        c.env(k, v);
    }
    // SAFETY: between fork and exec only prctl and seccomp(2) run; the
    // programs were compiled before the fork.
    unsafe {
        c.pre_exec(move || {
            if libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            skarn_sandbox::linux::seccomp::install(&progs).map_err(std::io::Error::other)
        });
    }
    c.output().unwrap()
}

/// Item 4: where no private mount namespace can be made, a `skarn run`
/// granted a `command` source is refused before the source runs, whether
/// or not `SKARN_SECRET_SOURCE_VIEW` asks for the caller's view (b27r, ADR
/// 0319: the run could not carry the secret there anyway).
#[test]
fn without_user_namespaces_a_source_falls_back_or_is_refused_when_required() {
    let t = TempDir::new("h27p_nons");
    let home = t.dir("home");
    let ws = t.dir("ws");
    let ran = t.path().join("SOURCE_RAN");
    write_config(
        &home,
        &format!(
            "[secrets.tok]\ncommand = [\"/bin/sh\", \"-c\", \"echo x > {}; echo noNsValue0123456789abcdefXYZ\"]\n\
             hosts = [\"example.test\"]\n",
            ran.display()
        ),
    );
    for extra in [&[][..], &[("SKARN_SECRET_SOURCE_VIEW", "caller")][..]] {
        let o = run_without_namespaces(&ws, &home, extra);
        assert_ne!(code(&o), 0, "{}{}", out(&o), err(&o));
        assert!(!ran.exists(), "the source ran: {}", err(&o));
        assert!(err(&o).contains("no secret source was run"), "{}", err(&o));
        assert!(!out(&o).contains("noNsValue") && !err(&o).contains("noNsValue"));
    }
}

/// Item 4 (h27o's H3): a secrets configuration that breaks while a run
/// starts (here the source itself rewrites it after printing its value)
/// never fails open: no copy of the user's dotfile line with the real
/// token reaches the run — the run stops at the next read of the file.
#[test]
fn a_secrets_config_that_breaks_during_start_fails_closed() {
    const REAL: &str = "npmBrokenCfgValue0123456789abcdef";
    let t = TempDir::new("h27p_h3");
    let home = t.dir("home");
    let ws = t.dir("ws");
    std::fs::write(
        home.join(".npmrc"),
        format!("//registry.example.test/:_authToken={REAL}\n"),
    )
    .unwrap();
    let cfg = home.join(".config/skarn/config.toml");
    write_config(
        &home,
        &format!(
            "[secrets.npm]\ncommand = [\"/bin/sh\", \"-c\", \"echo {REAL}; echo '[[[broken' >> {}\"]\n\
             hosts = [\"registry.example.test\"]\n",
            cfg.display()
        ),
    );
    let o = run_command(
        &ws,
        &home,
        &["--secret", "npm"],
        &["sh", "-c", "cat ~/.npmrc 2>&1; echo \"NPM=$NPM\""],
    )
    .output()
    .unwrap();
    assert!(
        std::fs::read_to_string(&cfg).unwrap().contains("[[[broken"),
        "the source did not run: {}",
        err(&o)
    );
    assert!(
        !out(&o).contains(REAL) && !err(&o).contains(REAL),
        "the real token reached the run: {}{}",
        out(&o),
        err(&o)
    );
}
