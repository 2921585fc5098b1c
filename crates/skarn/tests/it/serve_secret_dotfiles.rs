//! Issue 27 for gateway servers: a sandboxed server granted a secret
//! (`env = { TOKEN = { secret = "tok" } }`) whose value the user keeps in
//! `~/.npmrc`, `~/.netrc`, `~/.git-credentials` and pip's configuration
//! reads, in its own home, copies holding the placeholder (the other
//! lines kept), never the value; a request it makes with what it read
//! reaches the bound loopback HTTPS server with the real value. Checked
//! on what the server printed, on what the bound host received, and on
//! the server's state directory on the host afterwards.

use serde_json::json;
use skarn_test_support::TempDir;
use skarn_test_support::tls_server::{Response, TestCa, TlsServer};

use crate::common::{host_has, sibling};
use crate::serve_sandbox::Session;

const REAL: &str = "npmREALdotfileValue0123456789abcd";

/// Every file under `dir` (links not followed) that holds `needle`.
fn files_holding(dir: &std::path::Path, needle: &str) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    let Ok(rd) = std::fs::read_dir(dir) else {
        return out;
    };
    for e in rd.flatten() {
        let p = e.path();
        match e.file_type() {
            Ok(t) if t.is_dir() => out.extend(files_holding(&p, needle)),
            Ok(t)
                if t.is_file()
                    && std::fs::read(&p)
                        .is_ok_and(|b| b.windows(needle.len()).any(|w| w == needle.as_bytes())) =>
            {
                out.push(p);
            }
            _ => {}
        }
    }
    out
}

#[test]
fn a_server_reads_placeholder_copies_of_the_users_dotfiles() {
    if !host_has("curl", "--version") {
        skarn_test_support::skip!("curl is not installed");
    }
    let dir = TempDir::new("serve_secret_dotfiles");
    let ca = TestCa::new();
    let srv = TlsServer::start(&ca, &["localhost"], |_| Response::ok("ok\n"));
    let port = srv.port;
    let home = dir.path().join("home");
    std::fs::create_dir_all(home.join(".config/skarn")).unwrap();
    std::fs::create_dir_all(home.join(".config/pip")).unwrap();
    let vals = dir.path().join("vals");
    std::fs::create_dir_all(&vals).unwrap();
    std::fs::write(vals.join("tok"), REAL).unwrap();
    std::fs::write(
        home.join(".config/skarn/config.toml"),
        format!(
            "[secrets.tok]\nfile = {:?}\nhosts = [\"localhost:{port}\"]\n",
            vals.join("tok").display().to_string()
        ),
    )
    .unwrap();
    std::fs::write(
        home.join(".npmrc"),
        format!("registry=https://localhost:{port}/npm/\n//localhost:{port}/:_authToken={REAL}\n"),
    )
    .unwrap();
    std::fs::write(
        home.join(".netrc"),
        format!(
            "machine localhost login x password {REAL}\n\
             machine other.test login y password otherNETRCsecret42\n"
        ),
    )
    .unwrap();
    std::fs::write(
        home.join(".git-credentials"),
        format!("https://x:{REAL}@localhost:{port}\n"),
    )
    .unwrap();
    std::fs::write(
        home.join(".config/pip/pip.conf"),
        format!("[global]\nindex-url = https://u:{REAL}@localhost:{port}/simple\n"),
    )
    .unwrap();
    let ca_file = dir.path().join("test-ca.pem");
    std::fs::write(&ca_file, &ca.cert_pem).unwrap();
    let cfg = dir.path().join("skarn.toml");
    std::fs::write(
        &cfg,
        format!(
            "[gateway]\npassthrough = true\n\n[servers.g]\ncommand = {h:?}\nargs = [\"--name\", \"g\"]\n\
             env = {{ TOKEN = {{ secret = \"tok\" }} }}\n\
             [servers.g.sandbox]\nnet = \"allow:127.0.0.1:{port}\"\n",
            h = sibling("skarn-hostile-server").display().to_string(),
        ),
    )
    .unwrap();
    // The server uses what it finds in its home's files, as npm, curl
    // and git would.
    let script = format!(
        "export NO_PROXY= no_proxy=\n\
         echo \"HOME=$HOME\"\n\
         for f in .npmrc .netrc .git-credentials .gitconfig; do echo \"== $f\"; cat \"$HOME/$f\"; done\n\
         T=$(sed -n 's#^//localhost:{port}/:_authToken=##p' \"$HOME/.npmrc\")\n\
         curl -sS -H \"Authorization: Bearer $T\" https://localhost:{port}/npm/x\n\
         curl -sS --netrc https://localhost:{port}/netrc/x\n"
    );
    let log = dir.path().join("serve.log");
    let mut s = Session::start_logging(&cfg, &home, &log, &[("SSL_CERT_FILE", &ca_file)], "info");
    s.settle();
    let out = s.call(2, "g__attack", json!({ "sh": script }));
    s.finish();
    let log = std::fs::read_to_string(&log).unwrap_or_default();
    // Inside: the copies hold the placeholder, never the value.
    assert!(!out.contains(REAL), "the value is readable inside:\n{out}");
    assert!(!out.contains("otherNETRCsecret42"), "{out}");
    assert!(
        out.contains(&format!("registry=https://localhost:{port}/npm/")),
        "the .npmrc copy lost its other lines:\n{out}\n{log}"
    );
    assert!(
        out.contains(&format!("//localhost:{port}/:_authToken=")),
        "no placeholder in the .npmrc copy:\n{out}\n{log}"
    );
    assert!(
        out.contains("machine localhost login x password "),
        "no placeholder in the .netrc copy:\n{out}\n{log}"
    );
    assert!(
        out.contains(&format!("@localhost:{port}")) && out.contains("helper = store"),
        "no placeholder in git's stored credentials:\n{out}\n{log}"
    );
    assert!(
        out.contains("PIP_INDEX_URL=https://u:"),
        "no pip index URL with the placeholder:\n{out}\n{log}"
    );
    // On the wire to the bound host: the real value, for both requests.
    let seen = srv.seen();
    assert_eq!(seen.len(), 2, "{out}\n{}\n{log}", srv.seen_text());
    let npm = seen
        .iter()
        .find(|r| r.path == "/npm/x")
        .expect("npm request");
    assert_eq!(
        npm.header("authorization"),
        Some(&*format!("Bearer {REAL}")),
        "{out}"
    );
    use base64::Engine;
    let basic = base64::engine::general_purpose::STANDARD.encode(format!("x:{REAL}"));
    let netrc = seen
        .iter()
        .find(|r| r.path == "/netrc/x")
        .expect("netrc request");
    assert_eq!(
        netrc.header("authorization"),
        Some(&*format!("Basic {basic}")),
        "{out}"
    );
    // Nothing the server keeps between starts holds the value.
    let held = files_holding(&home.join(".local/state/skarn-servers"), REAL);
    assert!(
        held.is_empty(),
        "the state directory holds the value: {held:?}"
    );
    assert!(!log.contains(REAL), "the value is in the log");
}

/// The gateway's `run` tool (`[gateway] shell = true`) is `skarn run`
/// with the user's `[run] secrets`: its command reads the same
/// placeholder copy, and the bound host gets the value.
#[test]
fn the_run_tool_reads_the_placeholder_copy_of_npmrc() {
    if !host_has("curl", "--version") {
        skarn_test_support::skip!("curl is not installed");
    }
    let dir = TempDir::new("serve_secret_dotfiles_run");
    let ca = TestCa::new();
    let srv = TlsServer::start(&ca, &["localhost"], |_| Response::ok("ok\n"));
    let port = srv.port;
    let home = dir.path().join("home");
    std::fs::create_dir_all(home.join(".config/skarn")).unwrap();
    let vals = dir.path().join("vals");
    std::fs::create_dir_all(&vals).unwrap();
    std::fs::write(vals.join("tok"), REAL).unwrap();
    std::fs::write(
        home.join(".config/skarn/config.toml"),
        format!(
            "[run]\nsecrets = [\"tok\"]\nnet = \"allow:127.0.0.1:{port}\"\n\n[secrets.tok]\nfile = {:?}\nhosts = [\"localhost:{port}\"]\n",
            vals.join("tok").display().to_string()
        ),
    )
    .unwrap();
    std::fs::write(
        home.join(".npmrc"),
        format!("registry=https://localhost:{port}/npm/\n//localhost:{port}/:_authToken={REAL}\n"),
    )
    .unwrap();
    let ca_file = dir.path().join("test-ca.pem");
    std::fs::write(&ca_file, &ca.cert_pem).unwrap();
    let ws = dir.path().join("ws");
    std::fs::create_dir_all(&ws).unwrap();
    let cfg = ws.join("skarn.toml");
    std::fs::write(&cfg, "[gateway]\nshell = true\n").unwrap();
    let script = format!(
        "export NO_PROXY= no_proxy=; cat ~/.npmrc; \
         T=$(sed -n 's#^//localhost:{port}/:_authToken=##p' ~/.npmrc); \
         curl -sS -H \"Authorization: Bearer $T\" https://localhost:{port}/npm/x"
    );
    let log = dir.path().join("serve.log");
    let mut s = Session::start_logging(&cfg, &home, &log, &[("SSL_CERT_FILE", &ca_file)], "info");
    let out = s.call(
        2,
        "run",
        json!({ "command": script, "cwd": ws.display().to_string() }),
    );
    s.finish();
    assert!(!out.contains(REAL), "the value is readable inside:\n{out}");
    assert!(
        out.contains(&format!("//localhost:{port}/:_authToken=")),
        "no placeholder in the .npmrc copy:\n{out}"
    );
    let seen = srv.seen();
    assert_eq!(seen.len(), 1, "{out}\n{}", srv.seen_text());
    assert_eq!(
        seen[0].header("authorization"),
        Some(&*format!("Bearer {REAL}")),
        "{out}"
    );
}
