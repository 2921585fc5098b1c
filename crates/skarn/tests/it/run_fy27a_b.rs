//! Issue 27, builder fy27a (ambient credentials): a service user's or CI
//! runner's home-style stores under `/opt` (atk27r F4), a toolchain walk
//! cut short past its budget or depth (F9), credential URLs written
//! escaped or nested (F5). Each test makes the real attempt, as root and
//! as uid 65534, and judges from outside by what the run printed.

use std::path::{Path, PathBuf};
use std::process::Output;

use skarn_test_support::TempDir;

use crate::common::*;
use crate::run_fx27a::{VALUE, chown, users, write};
use crate::support_secret_sources::{PATH, as_user};

/// A place outside every grant that every run reads: `/opt` for uid
/// 65534, a `/usr/local` installation for root (not idmapped).
fn opt(tag: &str, nobody: bool) -> PathBuf {
    let base = if nobody { "/opt" } else { "/usr/local" };
    PathBuf::from(format!("{base}/skarn-fy27a-{}-{tag}", std::process::id()))
}

/// `skarn run FLAGS -- sh -c SCRIPT` in a fresh workspace, as uid 65534
/// when `nobody`, with `env` added.
fn run(flags: &[&str], script: &str, nobody: bool, env: &[(&str, &str)]) -> Output {
    let t = TempDir::new("fy27a_b");
    let (home, ws) = (t.dir("home"), t.dir("ws"));
    let mut c = run_command(&ws, &home, flags, &["sh", "-c", script]);
    c.env("PATH", PATH);
    for (k, v) in env {
        c.env(k, v);
    }
    match nobody {
        true => as_user(c, t.path()).output().unwrap(),
        false => c.output().unwrap(),
    }
}

fn make(d: &Path, files: &[(&str, String)], nobody: bool) {
    let _ = std::fs::remove_dir_all(d);
    for (n, text) in files {
        write(&d.join(n), text.as_bytes(), 0o600);
    }
    if nobody {
        chown(d);
    }
}

#[test]
fn a_runner_directorys_home_stores_are_hidden() {
    // atk27r F4: a self-hosted runner installed under /opt, owned by the
    // user it runs as, with its key, a deploy key, registry, cluster and
    // cloud tokens.
    let mut failed = Vec::new();
    for nobody in users() {
        let d = opt("runner", nobody);
        let stores = [
            ".credentials_rsaparams",
            ".ssh/id_ed25519",
            ".ssh/deploy",
            ".docker/config.json",
            ".kube/config",
            ".aws/credentials",
            ".config/gcloud/credentials.db",
            "_work/.netrc",
        ];
        let mut files: Vec<(&str, String)> = stores
            .iter()
            .map(|s| (*s, format!("{{\"t\":\"{VALUE}\"}}\n")))
            .collect();
        files.push(("run.sh", "#!/bin/sh\necho runner\n".into()));
        make(&d, &files, nobody);
        let cats: Vec<String> = stores
            .iter()
            .map(|s| format!("cat {} 2>/dev/null;", d.join(s).display()))
            .collect();
        let script = format!("{} cat {}", cats.join(" "), d.join("run.sh").display());
        let o = run(&[], &script, nobody, &[]);
        if out(&o).contains(VALUE) {
            failed.push(format!("{} ({nobody}): {}", d.display(), out(&o)));
        }
        // The runner's own files stay readable.
        if !out(&o).contains("echo runner") {
            failed.push(format!("usability ({nobody}): {}{}", out(&o), err(&o)));
        }
        let _ = std::fs::remove_dir_all(&d);
    }
    assert!(failed.is_empty(), "{failed:#?}");
}

#[test]
fn a_walk_cut_short_hides_what_it_did_not_list() {
    // atk27r F9: a tree past the walk's budget (a data set of 20,050
    // entries beside the project) and a tree deeper than the walk.
    let mut failed = Vec::new();
    for nobody in users() {
        let d = opt("mono", nobody);
        let npmrc = format!("//registry.example.test/:_authToken={VALUE}\n");
        let deep = format!("{}/.npmrc", vec!["d"; 30].join("/"));
        make(
            &d,
            &[
                ("packages/web/app/.npmrc", npmrc.clone()),
                ("README", "readme\n".into()),
            ],
            false,
        );
        let data = d.join("data");
        std::fs::create_dir_all(&data).unwrap();
        for i in 0..20_050 {
            std::fs::write(data.join(format!("f{i}")), "").unwrap();
        }
        let deep_d = opt("deep", nobody);
        make(&deep_d, &[(deep.as_str(), npmrc)], false);
        for p in [&d, &deep_d] {
            if nobody {
                chown(p);
            }
            std::fs::set_permissions(p, std::os::unix::fs::PermissionsExt::from_mode(0o755))
                .unwrap();
        }
        let script = format!(
            "cat {0}/packages/web/app/.npmrc {1}/{2} 2>/dev/null; cat {0}/README",
            d.display(),
            deep_d.display(),
            deep
        );
        let o = run(&["--report"], &script, nobody, &[]);
        if out(&o).contains(VALUE) {
            failed.push(format!("{} ({nobody}): {}", d.display(), out(&o)));
        }
        if !err(&o).contains("did not list are hidden") {
            failed.push(format!("no report note ({nobody}): {}", err(&o)));
        }
        if !out(&o).contains("readme") {
            failed.push(format!("usability ({nobody}): {}{}", out(&o), err(&o)));
        }
        let _ = std::fs::remove_dir_all(&d);
        let _ = std::fs::remove_dir_all(&deep_d);
    }
    assert!(failed.is_empty(), "{failed:#?}");
}

#[test]
fn escaped_and_nested_credential_urls_leave_the_environment() {
    // atk27r F5: a JSON-escaped URL, one percent-encoded inside another,
    // one escaped character in the token.
    let t = "Zq8Lm3Xp0Tv5Wn9Rc4Yb7Hs2";
    let u = format!("https://hooks.example.test/services/T0AB12CD3/B0EF45GH6/{t}");
    let enc = u.replace(':', "%3A").replace('/', "%2F");
    let a2 = format!("{{\"webhook\":\"{}\"}}", u.replace('/', "\\/"));
    let a3 = format!("https://relay.example.test/forward?to={enc}");
    let a5 = format!(
        "https://hooks.example.test/services/T0AB12CD3/B0EF45GH6/{}%2D{}",
        &t[..12],
        &t[12..]
    );
    for nobody in users() {
        let env = [
            ("A1", u.as_str()),
            ("A2", a2.as_str()),
            ("A3", a3.as_str()),
            ("A5", a5.as_str()),
            (
                "A6",
                "https://relay.example.test/forward?to=https%3A%2F%2Fexample.test%2Fdocs",
            ),
        ];
        let o = run(&[], "env | grep '^A[0-9]='", nobody, &env);
        assert!(!out(&o).contains(&t[..12]), "({nobody}) {}", out(&o));
        assert!(
            out(&o).contains("A6="),
            "a plain URL was dropped: {}",
            out(&o)
        );
    }
}

#[test]
fn a_gateway_server_whose_args_hold_a_secret_value_does_not_start() {
    // atk27r F6: a server's `args` holding a configured secret's value
    // (a `file` source) would hand it the real value; the control server
    // beside it, with plain args, starts.
    let t = TempDir::new("fy27a_gw_args");
    let (home, out, vals) = (t.dir("home"), t.dir("out"), t.dir("vals"));
    std::fs::write(vals.join("v"), format!("{VALUE}\n")).unwrap();
    crate::support_secret_sources::write_config(
        &home,
        &format!(
            "[secrets.s]\nfile = {:?}\nhosts = [\"localhost:1\"]\n",
            vals.join("v").display().to_string()
        ),
    );
    let dump = |n: &str| out.join(format!("{n}.env"));
    let server = |alias: &str, extra: &str| {
        format!(
            "[servers.{alias}]\ncommand = {h:?}\nargs = [\"--name\", \"{alias}\", \"--env-dump\", \
             {f:?}{extra}]\n[servers.{alias}.sandbox]\nwrite = [{o:?}]\n\n",
            h = sibling("skarn-hostile-server").display().to_string(),
            f = dump(alias).display().to_string(),
            o = out.display().to_string(),
        )
    };
    let cfg = t.path().join("skarn.toml");
    let text = format!(
        "[gateway]\npassthrough = true\n\n{}{}",
        server("leak", &format!(", \"--arg-file\", \"{VALUE}\"")),
        server("control", "")
    );
    std::fs::write(&cfg, text).unwrap();
    let log = t.path().join("serve.log");
    let mut s = crate::serve_sandbox::Session::start_logging(&cfg, &home, &log, &[], "warn");
    s.settle();
    let answer = s.call(2, "search", serde_json::json!({"query": "x"}));
    s.finish();
    assert!(
        dump("control").exists(),
        "the control did not start: {answer}"
    );
    assert!(!dump("leak").exists(), "the server with the value started");
    let log = std::fs::read_to_string(&log).unwrap_or_default();
    assert!(
        !answer.contains(VALUE) && !log.contains(VALUE),
        "{answer}\n{log}"
    );
    assert!(
        answer.contains("holds the real value of secret s"),
        "{answer}"
    );
}
