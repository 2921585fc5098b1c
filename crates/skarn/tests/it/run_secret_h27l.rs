//! Attack atk27k, what helper h27l fixed, each checked from outside: a
//! gateway server granted a secret does not read the real value from its
//! own installation (F4); its placeholder copies do not pile up in its
//! state directory (F6); a `PATH` directory that is a bind-mount alias of
//! a workspace directory is the workspace's directory, for the host's
//! shells and for a `command` source (F18b).

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::{Command, Stdio};

use serde_json::json;
use skarn_test_support::TempDir;

use crate::common::{code, err, exe, out, sibling};
use crate::serve_sandbox::Session;
use crate::support_secret_sources::write_config as config;

/// A copy of the test server installed as `prefix/bin/name`.
fn install_server(prefix: &Path, name: &str) -> std::path::PathBuf {
    let bin = prefix.join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let p = bin.join(name);
    std::fs::copy(sibling("skarn-hostile-server"), &p).unwrap();
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
    p
}

/// atk27k F4: a server installed as `PREFIX/bin/ghmcp` (no interpreter's
/// prefix) whose own configuration below it (`lib/ghmcp/defaults.yaml`,
/// a name no credential file has) holds the value of the secret it is
/// granted: the server reads the placeholder in its variable and not the
/// value from that file (hidden from it), checked on what
/// the server printed and on the gateway's log.
#[test]
fn a_server_does_not_read_the_value_from_its_own_installation() {
    const REAL: &str = "srvREALvalue0123456789abcdefXYZ";
    let dir = TempDir::new("h27l_f4");
    let home = dir.path().join("home");
    let vals = dir.path().join("vals");
    std::fs::create_dir_all(&vals).unwrap();
    std::fs::write(vals.join("tok"), format!("{REAL}\n")).unwrap();
    config(
        &home,
        &format!(
            "[secrets.tok]\nfile = {:?}\nhosts = [\"localhost:18443\"]\n",
            vals.join("tok").display().to_string()
        ),
    );
    let prefix = dir.path().join("tools/ghmcp");
    let server = install_server(&prefix, "ghmcp");
    let own = prefix.join("lib/ghmcp/defaults.yaml");
    std::fs::create_dir_all(own.parent().unwrap()).unwrap();
    std::fs::write(&own, format!("github:\n  token: {REAL}\n")).unwrap();
    let cfg = dir.path().join("skarn.toml");
    std::fs::write(
        &cfg,
        format!(
            "[gateway]\npassthrough = true\n\n[servers.g]\ncommand = {:?}\n\
             args = [\"--name\", \"g\"]\nenv = {{ TOKEN = {{ secret = \"tok\" }} }}\n",
            server.display().to_string()
        ),
    )
    .unwrap();
    let log = dir.path().join("serve.log");
    let mut s = Session::start_logging(&cfg, &home, &log, &[], "info");
    s.settle();
    let out = s.call(
        2,
        "g__attack",
        json!({ "sh": format!("echo TOKEN=$TOKEN; cat {} 2>&1; echo done", own.display()) }),
    );
    s.finish();
    let log = std::fs::read_to_string(&log).unwrap_or_default();
    assert!(
        !out.contains(REAL),
        "the server read the real value from its own installation:\n{out}"
    );
    assert!(!log.contains(REAL), "the value is in the log");
    // The server ran (the file lies outside its writable grants: hidden,
    // not refused) with the placeholder in its variable.
    assert!(
        out.contains("TOKEN=") && out.contains("done"),
        "the server did not run:\n{out}\n{log}"
    );
}

/// Every file name directly in `dir` starting with `prefix`.
fn names_starting(dir: &Path, prefix: &str) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .map(|rd| {
            rd.flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|n| n.starts_with(prefix))
                .collect()
        })
        .unwrap_or_default();
    v.sort();
    v
}

/// atk27k F6: a server granted a secret whose value the user's `~/.npmrc`
/// holds gets a placeholder copy of it in its state directory at every
/// start; the copy skarn wrote is not set aside as if the server had made
/// it, so three starts leave one `.npmrc` and no
/// `.npmrc.skarn-quarantine-*` beside it. A copy the server changed is
/// still set aside (the host never reads the server's text as skarn's).
#[test]
fn a_servers_placeholder_npmrc_does_not_pile_up_in_its_state_directory() {
    const REAL: &str = "npmREALquarantineValue0123456789ab";
    let dir = TempDir::new("h27l_f6");
    let home = dir.path().join("home");
    let vals = dir.path().join("vals");
    std::fs::create_dir_all(&vals).unwrap();
    std::fs::write(vals.join("tok"), format!("{REAL}\n")).unwrap();
    config(
        &home,
        &format!(
            "[secrets.tok]\nfile = {:?}\nhosts = [\"localhost:18443\"]\n",
            vals.join("tok").display().to_string()
        ),
    );
    std::fs::write(
        home.join(".npmrc"),
        format!("registry=https://localhost:18443/npm/\n//localhost:18443/:_authToken={REAL}\n"),
    )
    .unwrap();
    let cfg = dir.path().join("skarn.toml");
    std::fs::write(
        &cfg,
        format!(
            "[gateway]\npassthrough = true\n\n[servers.g]\ncommand = {:?}\n\
             args = [\"--name\", \"g\"]\nenv = {{ TOKEN = {{ secret = \"tok\" }} }}\n",
            sibling("skarn-hostile-server").display().to_string()
        ),
    )
    .unwrap();
    let state = || {
        let base = home.join(".local/state/skarn-servers");
        std::fs::read_dir(&base)
            .unwrap()
            .flatten()
            .map(|e| e.path())
            .find(|p| {
                p.file_name()
                    .is_some_and(|n| n.to_string_lossy().starts_with("g-"))
            })
            .expect("no state directory for server g")
    };
    let start = |n: u64, sh: &str| {
        let log = dir.path().join(format!("serve{n}.log"));
        let mut s = Session::start_logging(&cfg, &home, &log, &[], "info");
        s.settle();
        let out = s.call(2, "g__attack", json!({ "sh": sh }));
        s.finish();
        (out, std::fs::read_to_string(&log).unwrap_or_default())
    };
    for n in 0..3 {
        let (out, log) = start(n, "cat $HOME/.npmrc; echo done");
        assert!(
            out.contains("done"),
            "start {n}: the server did not run:\n{out}\n{log}"
        );
        assert!(
            !out.contains(REAL),
            "start {n}: the value is readable:\n{out}"
        );
        assert!(
            out.contains("//localhost:18443/:_authToken="),
            "start {n}: no placeholder copy:\n{out}\n{log}"
        );
    }
    let st = state();
    assert_eq!(
        names_starting(&st, ".npmrc"),
        [".npmrc"],
        "in {}",
        st.display()
    );
    // A server that changes its copy: that text is set aside (when the
    // server ends, or at the next start's catch-up of a killed one), and
    // the next start reads skarn's copy again.
    let (out, log) = start(9, "echo 'script-shell=/tmp/x' >> $HOME/.npmrc; echo done");
    assert!(out.contains("done"), "{out}\n{log}");
    let (out, log) = start(10, "cat $HOME/.npmrc; echo done");
    assert!(!out.contains("script-shell"), "{out}");
    assert!(
        out.contains("//localhost:18443/:_authToken="),
        "no placeholder copy after a changed one:\n{out}\n{log}"
    );
    let names = names_starting(&st, ".npmrc");
    assert_eq!(
        names.len(),
        2,
        "the changed copy was not set aside: {names:?}"
    );
    let aside = names.iter().find(|n| n.as_str() != ".npmrc").unwrap();
    assert!(
        std::fs::read_to_string(st.join(aside))
            .unwrap()
            .contains("script-shell=/tmp/x"),
        "{aside}"
    );
}

/// atk27k F18b: the caller's `PATH` ends with a bind-mount alias of the
/// workspace's `bin` (the whole workspace bound elsewhere, or `bin`
/// alone). A run in the workspace (direct and copy-on-write layer) tries
/// to rewrite `bin/tool` and add `bin/newtool` under the workspace's
/// names; a host shell then runs `tool` and `newtool` through that `PATH`
/// entry: the real one, never planted code. And a `command` source found
/// through that `PATH` entry (or named through the alias) is refused,
/// never run after a run rewrote it. Needs a private mount namespace
/// (root).
#[test]
fn a_path_directory_through_a_bind_mount_alias_is_the_workspaces() {
    if !skarn_test_support::is_root() {
        skarn_test_support::skip!("a bind mount in a private mount namespace needs root");
    }
    for (form, bind_src, path_dir, layer) in [
        ("workspace alias, direct", "", "bin", "direct"),
        ("workspace alias, cow", "", "bin", "cow"),
        ("bin alias, direct", "bin", "", "direct"),
    ] {
        let t = TempDir::new("h27l_f18b");
        let home = t.dir("home");
        let ws = home.join("proj");
        std::fs::create_dir_all(ws.join("bin")).unwrap();
        let _ = Command::new("git")
            .args(["init", "-q", "."])
            .current_dir(&ws)
            .output();
        let alias = t.dir("alias");
        let marker = t.path().join("PLANTED_RAN");
        let tool = ws.join("bin/tool");
        std::fs::write(&tool, "#!/bin/sh\necho real-tool\n").unwrap();
        std::fs::set_permissions(&tool, std::fs::Permissions::from_mode(0o755)).unwrap();
        let vals = t.dir("vals");
        std::fs::write(vals.join("tok"), "aliasPATHtoken0123456789abcdefXY\n").unwrap();
        let helper = ws.join("bin/tok-h27l");
        std::fs::write(
            &helper,
            format!("#!/bin/sh\nexec cat {}\n", vals.join("tok").display()),
        )
        .unwrap();
        std::fs::set_permissions(&helper, std::fs::Permissions::from_mode(0o755)).unwrap();
        config(
            &home,
            "[secrets.api]\ncommand = [\"tok-h27l\"]\nhosts = [\"localhost:1\"]\nenv = \"API\"\n",
        );
        let alias_path = alias.join(path_dir);
        let planted = format!("#!/bin/sh\\ntouch {}\\necho planted\\n", marker.display());
        let run = format!(
            "{} run --no-config --workspace {} --workspace-layer {layer}",
            exe().display(),
            ws.display()
        );
        let script = format!(
            "set -u\nmount --bind {src} {alias} || exit 77\ncd {ws}\n\
             {run} -- sh -c \"printf '{planted}' > bin/tool; printf '{planted}' > bin/newtool; \
             chmod +x bin/newtool; printf '{planted}' > bin/tok-h27l\" > {d}/plant 2>&1\n\
             cd /\n\
             tool > {d}/tool 2>&1; newtool > {d}/newtool 2>&1\n\
             cd {ws}\n\
             {run} --secret api -- true > {d}/granted 2>&1; echo $? > {d}/granted.rc\n",
            src = ws.join(bind_src).display(),
            alias = alias.display(),
            ws = ws.display(),
            d = t.path().display(),
        );
        let o = Command::new("unshare")
            .args(["-m", "--propagation", "private", "sh", "-c", &script])
            .env("HOME", &home)
            .env(
                "PATH",
                format!("/usr/local/bin:/usr/bin:/bin:{}", alias_path.display()),
            )
            .env_remove("XDG_STATE_HOME")
            .env_remove("XDG_CONFIG_HOME")
            .env_remove("CLAUDECODE")
            .env_remove("SKARN_CALLER")
            .stdin(Stdio::null())
            .output()
            .unwrap();
        if code(&o) == 77 {
            skarn_test_support::skip!("mount --bind failed: {}{}", out(&o), err(&o));
        }
        let read = |n: &str| std::fs::read_to_string(t.path().join(n)).unwrap_or_default();
        let all = format!(
            "plant: {}\ntool: {}\nnewtool: {}\ngranted: {}",
            read("plant"),
            read("tool"),
            read("newtool"),
            read("granted")
        );
        assert!(
            !marker.exists(),
            "{form}: planted code ran on the host:\n{all}"
        );
        assert!(read("tool").contains("real-tool"), "{form}:\n{all}");
        assert_eq!(
            std::fs::read_to_string(&tool).unwrap(),
            "#!/bin/sh\necho real-tool\n",
            "{form}: the workspace's bin/tool changed:\n{all}"
        );
        // The `command` source is refused (its PATH directory is the
        // workspace's), or ran the real helper: never the planted one.
        assert!(
            read("granted.rc").trim() != "0" || !read("granted").contains("planted"),
            "{form}:\n{all}"
        );
    }
}
