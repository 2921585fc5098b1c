//! Attack atk27k, what helper h27l fixed, each checked from outside: a
//! gateway server granted a secret does not read the real value from its
//! own installation (F4).

use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use serde_json::json;
use skarn_test_support::TempDir;

use crate::common::sibling;
use crate::serve_sandbox::Session;

fn config(home: &Path, text: &str) {
    std::fs::create_dir_all(home.join(".config/skarn")).unwrap();
    std::fs::write(home.join(".config/skarn/config.toml"), text).unwrap();
}

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
            .find(|p| p.file_name().is_some_and(|n| n.to_string_lossy().starts_with("g-")))
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
        assert!(out.contains("done"), "start {n}: the server did not run:\n{out}\n{log}");
        assert!(!out.contains(REAL), "start {n}: the value is readable:\n{out}");
        assert!(
            out.contains("//localhost:18443/:_authToken="),
            "start {n}: no placeholder copy:\n{out}\n{log}"
        );
    }
    let st = state();
    assert_eq!(names_starting(&st, ".npmrc"), [".npmrc"], "in {}", st.display());
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
    assert_eq!(names.len(), 2, "the changed copy was not set aside: {names:?}");
    let aside = names.iter().find(|n| n.as_str() != ".npmrc").unwrap();
    assert!(
        std::fs::read_to_string(st.join(aside))
            .unwrap()
            .contains("script-shell=/tmp/x"),
        "{aside}"
    );
}
