//! `skarn run --secret NAME` (issue 27) against HTTPS servers on loopback
//! with their own CA: real tools inside (curl, git push) work with the
//! placeholder while the server receives the value; the value is never
//! readable inside (environment, /proc, files, responses), nor in skarn's
//! messages or report; the placeholder sent where it is not bound gets no
//! value. Each check is made outside: on what the server received, on the
//! command's output, on skarn's stderr.
//!
//! Inside, NO_PROXY lists localhost, so the clients clear it.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use crate::common::*;
use skarn_test_support::TempDir;
use skarn_test_support::tls_server::{Request, Response, TestCa, TlsServer};

const REAL: &str = "tok-REAL-value-0123456789abcdef";
const OTHER_REAL: &str = "other-REAL-value-9876543210";
/// The value of `plain`, read from a variable whose name does not look
/// secret (so the usual scrubbing would keep it).
const ENV_REAL: &str = "env-REAL-value-5555555555";

/// A home whose config defines `tok` (bound to localhost:`port`, in
/// $TOKEN) and `other` (bound to localhost:`other_port`, in $OTHER), their
/// values in files outside the workspace.
fn home_with_secrets(t: &TempDir, port: u16, other_port: u16) -> PathBuf {
    let home = t.dir("home");
    let vals = t.dir("vals");
    std::fs::write(vals.join("tok"), format!("{REAL}\n")).unwrap();
    std::fs::write(vals.join("other"), OTHER_REAL).unwrap();
    std::fs::create_dir_all(home.join(".config/skarn")).unwrap();
    std::fs::write(
        home.join(".config/skarn/config.toml"),
        format!(
            "[secrets.tok]\nfile = \"{}\"\nhosts = [\"localhost:{port}\"]\nenv = \"TOKEN\"\n\n\
             [secrets.other]\nfile = \"{}\"\nhosts = [\"localhost:{other_port}\"]\n\n\
             [secrets.plain]\nfrom_env = \"PLAIN_SETTING_X\"\nhosts = [\"localhost:{other_port}\"]\n",
            vals.join("tok").display(),
            vals.join("other").display()
        ),
    )
    .unwrap();
    home
}

fn echo(r: &Request) -> Response {
    let auth = r.header("authorization").unwrap_or("").to_string();
    Response {
        status: "200 OK".into(),
        headers: vec![("X-Echo".into(), auth.clone())],
        body: format!("you sent: {auth}\n").into_bytes(),
    }
}

/// skarn run with the test CA trusted by the proxy (the caller's
/// SSL_CERT_FILE, as a user with a private CA would set it).
fn run(ws: &Path, home: &Path, ca: &Path, flags: &[&str], script: &str) -> Output {
    let mut c = run_command(ws, home, flags, &["sh", "-c", script]);
    c.env("SSL_CERT_FILE", ca).env("PLAIN_SETTING_X", ENV_REAL);
    c.output().unwrap()
}

fn report_json(o: &Output) -> serde_json::Value {
    let e = err(o);
    let line = e.lines().rev().find(|l| l.starts_with('{')).unwrap_or("{}");
    serde_json::from_str(line).unwrap()
}

fn setup(t: &TempDir) -> (TestCa, PathBuf) {
    let ca = TestCa::new();
    let f = t.dir("ca").join("test-ca.pem");
    std::fs::write(&f, &ca.cert_pem).unwrap();
    (ca, f)
}

fn curl_missing() -> bool {
    !host_has("curl", "--version")
}

#[test]
fn curl_inside_sends_the_placeholder_and_the_server_gets_the_value() {
    if curl_missing() {
        skarn_test_support::skip!("curl is not installed");
    }
    let t = TempDir::new("sec-curl");
    let (ca, ca_file) = setup(&t);
    let srv = TlsServer::start(&ca, &["localhost"], echo);
    let home = home_with_secrets(&t, srv.port, 1);
    let ws = t.dir("ws");
    let net = format!("allow:127.0.0.1:{}", srv.port);
    // Everything the command can see of the value: its environment, every
    // process's environment and memory maps it can read, its files, the
    // response (body and headers).
    let script = format!(
        "export NO_PROXY= no_proxy=; \
         curl -sS -i -H \"Authorization: Bearer $TOKEN\" https://localhost:{p}/echo; \
         echo; echo \"token-var=$TOKEN\"; env; \
         for f in /proc/[0-9]*/environ /proc/[0-9]*/cmdline; do cat $f 2>/dev/null | tr '\\0' '\\n'; done; \
         grep -rs . \"$HOME\" /tmp . 2>/dev/null | head -c 200000",
        p = srv.port
    );
    let flags = [
        "--secret", "tok", "--secret", "plain", "--net", &net, "--json",
    ];
    let o = run(&ws, &home, &ca_file, &flags, &script);
    let (stdout, stderr) = (out(&o), err(&o));
    assert_eq!(code(&o), 0, "{stderr}");
    // The server got the value.
    let seen = srv.seen();
    assert_eq!(seen.len(), 1, "{stdout}{stderr}");
    assert_eq!(
        seen[0].header("authorization"),
        Some(&*format!("Bearer {REAL}"))
    );
    // The command worked with a placeholder and saw it echoed back.
    let ph = stdout
        .lines()
        .find_map(|l| l.strip_prefix("token-var="))
        .unwrap()
        .to_string();
    assert_eq!(ph.len(), REAL.len());
    assert!(
        stdout.contains(&format!("you sent: Bearer {ph}")),
        "{stdout}"
    );
    // The value is nowhere inside, nor in skarn's messages and report.
    assert!(!stdout.contains(REAL), "value visible inside");
    assert!(
        !stdout.contains(ENV_REAL),
        "the source variable reached inside"
    );
    // The source variable holds the placeholder (a `from_env` secret's
    // default variable, atk27k F17), never the value.
    assert!(
        !stdout
            .lines()
            .any(|l| l.starts_with("PLAIN_SETTING_X=") && l.contains(ENV_REAL)),
        "{stdout}"
    );
    assert!(!stderr.contains(REAL), "value in skarn's output: {stderr}");
    let r = report_json(&o);
    let uses = r["egress"]["secrets"].as_array().unwrap();
    assert_eq!(uses.len(), 1, "{r}");
    assert_eq!(uses[0]["secret"], "tok");
    assert_eq!(uses[0]["host"], format!("localhost:{}", srv.port));
    assert_eq!(uses[0]["method"], "GET");
    assert_eq!(uses[0]["path"], "/echo");
    assert_eq!(uses[0]["sent"], 1);
}

#[test]
fn the_placeholder_where_it_is_not_bound_gets_no_value_and_is_reported() {
    if curl_missing() {
        skarn_test_support::skip!("curl is not installed");
    }
    let t = TempDir::new("sec-foreign");
    let (ca, ca_file) = setup(&t);
    let a = TlsServer::start(&ca, &["localhost", "127.0.0.1"], echo);
    let b = TlsServer::start(&ca, &["localhost"], echo);
    let home = home_with_secrets(&t, a.port, b.port);
    let ws = t.dir("ws");
    let net = format!("allow:127.0.0.1:{},127.0.0.1:{}", a.port, b.port);
    // $TOKEN to b (bound to `other`): refused. $TOKEN to a's address
    // instead of its name: refused too (a plain tunnel to a bound host
    // would relay its answers unscrubbed: attack atk27 F5).
    let script = format!(
        "export NO_PROXY= no_proxy=; \
         curl -sS -H \"Authorization: Bearer $TOKEN\" https://localhost:{b}/x; \
         curl -sS -H \"Authorization: Bearer $TOKEN\" https://127.0.0.1:{a}/echo --cacert {ca}",
        a = a.port,
        b = b.port,
        ca = ca_file.display()
    );
    let mut flags = vec![
        "--secret", "tok", "--secret", "other", "--net", &net, "--json",
    ];
    let ro = ca_file.parent().unwrap().display().to_string();
    flags.extend(["--read", &ro]);
    let o = run(&ws, &home, &ca_file, &flags, &script);
    let stdout = out(&o);
    assert!(
        stdout.contains("secret tok was not sent"),
        "{stdout}{}",
        err(&o)
    );
    assert!(b.seen().is_empty(), "{}", b.seen_text());
    let a_seen = a.seen_text();
    assert!(!a_seen.contains(REAL), "{a_seen}");
    assert!(
        err(&o).contains("a host a secret is bound to is reached through the HTTP proxy only"),
        "{}",
        err(&o)
    );
    assert!(!stdout.contains(REAL) && !err(&o).contains(REAL));
    let r = report_json(&o);
    let uses = r["egress"]["secrets"].as_array().unwrap();
    assert!(
        uses.iter().any(|u| u["secret"] == "tok"
            && u["refused"] == 1
            && u["host"] == format!("localhost:{}", b.port)),
        "{r}"
    );
}

/// `git http-backend` as CGI behind the test server, accepting only Basic
/// credentials with the real value.
fn git_backend(root: PathBuf) -> impl Fn(&Request) -> Response + Send + Sync + 'static {
    move |r| {
        use base64::Engine;
        let want = base64::engine::general_purpose::STANDARD.encode(format!("me:{REAL}"));
        if r.header("authorization") != Some(&*format!("Basic {want}")) {
            return Response {
                status: "401 Unauthorized".into(),
                headers: vec![("WWW-Authenticate".into(), "Basic realm=\"t\"".into())],
                body: b"auth\n".to_vec(),
            };
        }
        let (path, query) = r.path.split_once('?').unwrap_or((&r.path, ""));
        let mut c = Command::new("git");
        c.arg("http-backend")
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("GIT_PROJECT_ROOT", &root)
            .env("GIT_HTTP_EXPORT_ALL", "1")
            .env("REQUEST_METHOD", &r.method)
            .env("PATH_INFO", path)
            .env("QUERY_STRING", query)
            .env("REMOTE_USER", "me")
            .env("REMOTE_ADDR", "127.0.0.1")
            .env("CONTENT_LENGTH", r.body.len().to_string())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped());
        for (h, v) in [
            ("content-type", "CONTENT_TYPE"),
            ("content-encoding", "HTTP_CONTENT_ENCODING"),
            ("git-protocol", "GIT_PROTOCOL"),
        ] {
            if let Some(x) = r.header(h) {
                c.env(v, x);
            }
        }
        let mut child = c.spawn().unwrap();
        let body = r.body.clone();
        let mut stdin = child.stdin.take().unwrap();
        let w = std::thread::spawn(move || {
            use std::io::Write;
            let _ = stdin.write_all(&body);
        });
        let o = child.wait_with_output().unwrap();
        let _ = w.join();
        let split = o
            .stdout
            .windows(4)
            .position(|w| w == b"\r\n\r\n")
            .map(|i| (i, 4))
            .or_else(|| {
                o.stdout
                    .windows(2)
                    .position(|w| w == b"\n\n")
                    .map(|i| (i, 2))
            })
            .unwrap_or((o.stdout.len(), 0));
        let head = String::from_utf8_lossy(&o.stdout[..split.0]).to_string();
        let mut status = "200 OK".to_string();
        let mut headers = Vec::new();
        for l in head.lines() {
            if let Some((n, v)) = l.split_once(':') {
                if n.eq_ignore_ascii_case("status") {
                    status = v.trim().to_string();
                } else {
                    headers.push((n.trim().to_string(), v.trim().to_string()));
                }
            }
        }
        Response {
            status,
            headers,
            body: o.stdout[split.0 + split.1..].to_vec(),
        }
    }
}

/// A bare repository served over HTTPS by git-http-backend, and a home
/// whose config binds `tok` to that server.
struct GitServed {
    ca_file: PathBuf,
    bare: PathBuf,
    srv: TlsServer,
    home: PathBuf,
}

fn git_served(t: &TempDir) -> GitServed {
    let (ca, ca_file) = setup(t);
    let served = t.dir("served");
    let bare = served.join("repo.git");
    assert!(
        git(&served, &["init", "-q", "--bare", bare.to_str().unwrap()])
            .status
            .success()
    );
    let srv = TlsServer::start(&ca, &["localhost"], git_backend(served.clone()));
    let home = home_with_secrets(t, srv.port, 1);
    GitServed {
        ca_file,
        bare,
        srv,
        home,
    }
}

/// A workspace repository with one commit ("one").
fn repo_with_a_commit(t: &TempDir) -> PathBuf {
    let ws = t.dir("ws");
    assert!(git(&ws, &["init", "-q", "-b", "main"]).status.success());
    std::fs::write(ws.join("f.txt"), "hello\n").unwrap();
    assert!(git(&ws, &["add", "f.txt"]).status.success());
    assert!(git(&ws, &["commit", "-qm", "one"]).status.success());
    ws
}

/// The subject of `main`'s last commit in the bare repository, read from
/// outside.
fn last_subject(bare: &Path) -> String {
    let log = Command::new("git")
        .args([
            "--git-dir",
            bare.to_str().unwrap(),
            "log",
            "--format=%s",
            "main",
        ])
        .output()
        .unwrap();
    String::from_utf8_lossy(&log.stdout).trim().to_owned()
}

#[test]
fn git_push_over_https_with_the_placeholder_in_the_url() {
    if !host_has("git", "--version") || !Path::new("/usr/lib/git-core/git-http-backend").exists() {
        skarn_test_support::skip!("git or git-http-backend is not installed");
    }
    let t = TempDir::new("sec-git");
    let GitServed {
        ca_file,
        bare,
        srv,
        home,
    } = git_served(&t);
    let ws = repo_with_a_commit(&t);
    let net = format!("allow:127.0.0.1:{}", srv.port);
    let script = format!(
        "export NO_PROXY= no_proxy=; \
         git push \"https://me:$TOKEN@localhost:{}/repo.git\" main 2>&1",
        srv.port
    );
    let o = run(
        &ws,
        &home,
        &ca_file,
        &["--secret", "tok", "--net", &net, "--json"],
        &script,
    );
    assert_eq!(code(&o), 0, "{}{}", out(&o), err(&o));
    // From outside: the bare repository has the commit.
    assert_eq!(last_subject(&bare), "one");
    assert!(!out(&o).contains(REAL) && !err(&o).contains(REAL));
}

/// Attack finding atk27d L1: the user's own stored git credentials
/// (`~/.git-credentials`, `credential.helper = store`) hold the value; the
/// private home gets them with the placeholder, so a plain `git push` to a
/// URL without credentials works and the server gets the value.
#[test]
fn git_push_with_the_users_stored_credentials() {
    if !host_has("git", "--version") || !Path::new("/usr/lib/git-core/git-http-backend").exists() {
        skarn_test_support::skip!("git or git-http-backend is not installed");
    }
    let t = TempDir::new("sec-git");
    let GitServed {
        ca_file,
        bare,
        srv,
        home,
    } = git_served(&t);
    std::fs::write(
        home.join(".git-credentials"),
        format!("https://me:{REAL}@localhost:{}\n", srv.port),
    )
    .unwrap();
    std::fs::write(home.join(".gitconfig"), "[credential]\n\thelper = store\n").unwrap();
    let ws = repo_with_a_commit(&t);
    let net = format!("allow:127.0.0.1:{}", srv.port);
    let script = format!(
        "export NO_PROXY= no_proxy=; cat ~/.git-credentials; \
         git push \"https://localhost:{}/repo.git\" main 2>&1",
        srv.port
    );
    let o = run(
        &ws,
        &home,
        &ca_file,
        &["--secret", "tok", "--net", &net],
        &script,
    );
    assert_eq!(code(&o), 0, "{}{}", out(&o), err(&o));
    assert_eq!(last_subject(&bare), "one");
    assert!(!out(&o).contains(REAL) && !err(&o).contains(REAL));
}

/// Static files under `root`, only with Basic `me:<value>`.
fn index_with_password(root: PathBuf) -> impl Fn(&Request) -> Response + Send + Sync + 'static {
    move |r| {
        use base64::Engine;
        let want = base64::engine::general_purpose::STANDARD.encode(format!("me:{REAL}"));
        if r.header("authorization") != Some(&*format!("Basic {want}")) {
            return Response {
                status: "401 Unauthorized".into(),
                headers: vec![("WWW-Authenticate".into(), "Basic realm=\"t\"".into())],
                body: b"auth\n".to_vec(),
            };
        }
        let rel = r
            .path
            .split('?')
            .next()
            .unwrap_or("/")
            .trim_start_matches('/');
        let mut p = root.join(rel);
        if p.is_dir() {
            p = p.join("index.html");
        }
        match std::fs::read(&p) {
            Ok(b) if !rel.contains("..") => {
                let mut resp = Response::ok(b);
                if p.extension().is_some_and(|e| e == "html") {
                    resp.headers
                        .push(("Content-Type".into(), "text/html".into()));
                }
                resp
            }
            _ => Response {
                status: "404 Not Found".into(),
                headers: Vec::new(),
                body: Vec::new(),
            },
        }
    }
}

#[test]
fn pip_installs_from_an_index_with_a_password_in_its_url() {
    let has_pip = Command::new("/usr/bin/python3")
        .args(["-m", "pip", "--version"])
        .output()
        .is_ok_and(|o| o.status.success());
    if !has_pip {
        skarn_test_support::skip!("/usr/bin/python3 has no pip");
    }
    let t = TempDir::new("sec-pip");
    let (ca, ca_file) = setup(&t);
    let served = t.dir("served");
    crate::run_egress::make_index(&served);
    let srv = TlsServer::start(&ca, &["localhost"], index_with_password(served));
    let home = home_with_secrets(&t, srv.port, 1);
    let ws = t.dir("ws");
    let net = format!("allow:127.0.0.1:{}", srv.port);
    let script = format!(
        "export NO_PROXY= no_proxy=; /usr/bin/python3 -m pip install -q --no-cache-dir \
         --disable-pip-version-check --break-system-packages --target out \
         --index-url \"https://me:$TOKEN@localhost:{}/simple\" egressdemo 2>&1 \
         && PYTHONPATH=out /usr/bin/python3 -c 'import egressdemo; print(egressdemo.VALUE)'",
        srv.port
    );
    let o = run(
        &ws,
        &home,
        &ca_file,
        &["--secret", "tok", "--net", &net],
        &script,
    );
    assert_eq!(code(&o), 0, "{}\n{}", out(&o), err(&o));
    assert!(out(&o).contains("egress-pip-ok"), "{}", out(&o));
    assert!(!out(&o).contains(REAL) && !err(&o).contains(REAL));
}

#[test]
fn dotfiles_hold_the_placeholder_where_the_users_held_the_value() {
    let t = TempDir::new("sec-dot");
    let (_ca, ca_file) = setup(&t);
    let home = home_with_secrets(&t, 4443, 1);
    std::fs::write(
        home.join(".npmrc"),
        format!("registry=https://localhost:4443/\n//localhost:4443/:_authToken={REAL}\n"),
    )
    .unwrap();
    std::fs::create_dir_all(home.join(".config/pip")).unwrap();
    std::fs::write(
        home.join(".config/pip/pip.conf"),
        format!("[global]\nindex-url = https://me:{REAL}@localhost:4443/simple\n"),
    )
    .unwrap();
    let ws = t.dir("ws");
    let o = run(
        &ws,
        &home,
        &ca_file,
        &["--secret", "tok"],
        "echo \"token-var=$TOKEN\"; cat ~/.npmrc; echo \"pip=$PIP_INDEX_URL\"",
    );
    let stdout = out(&o);
    assert_eq!(code(&o), 0, "{}", err(&o));
    let ph = stdout
        .lines()
        .find_map(|l| l.strip_prefix("token-var="))
        .unwrap();
    assert!(
        stdout.contains(&format!("//localhost:4443/:_authToken={ph}\n")),
        "{stdout}"
    );
    assert!(
        stdout.contains(&format!("pip=https://me:{ph}@localhost:4443/simple")),
        "{stdout}"
    );
    assert!(!stdout.contains(REAL) && !err(&o).contains(REAL));
}

/// Finding F3 (atk27): a configured secret's source variable never reaches
/// a run, even one the secret is not granted to.
#[test]
fn an_ungranted_secrets_source_variable_is_not_passed_in() {
    let t = TempDir::new("sec-ungranted");
    let (_ca, ca_file) = setup(&t);
    let home = home_with_secrets(&t, 4443, 1);
    let ws = t.dir("ws");
    let o = run(&ws, &home, &ca_file, &[], "env");
    assert_eq!(code(&o), 0, "{}", err(&o));
    assert!(!out(&o).contains(ENV_REAL), "{}", out(&o));
    assert!(!out(&o).contains("PLAIN_SETTING_X"));
}

/// A private npm registry stub: `PUT /NAME` (publish) stores the document,
/// `GET /NAME` answers the packument, the tarball URL the attachment; each
/// only with `Bearer REAL`.
fn npm_registry() -> impl Fn(&Request) -> Response + Send + Sync + 'static {
    use base64::Engine;
    let doc = std::sync::Mutex::new(None::<serde_json::Value>);
    move |r| {
        if r.header("authorization") != Some(&*format!("Bearer {REAL}")) {
            return Response {
                status: "401 Unauthorized".into(),
                headers: Vec::new(),
                body: b"{\"error\":\"no token\"}".to_vec(),
            };
        }
        let mut d = doc.lock().unwrap();
        let path = r.path.split('?').next().unwrap_or("");
        match (r.method.as_str(), &*d) {
            ("PUT", _) => {
                *d = serde_json::from_slice(&r.body).ok();
                Response::ok("{\"ok\":true}")
            }
            ("GET", Some(v)) if path.ends_with(".tgz") => {
                let data = v["_attachments"]
                    .as_object()
                    .and_then(|a| a.values().next())
                    .and_then(|a| a["data"].as_str())
                    .unwrap_or("");
                let tgz = base64::engine::general_purpose::STANDARD
                    .decode(data)
                    .unwrap_or_default();
                Response::ok(tgz)
            }
            ("GET", Some(v)) => {
                let mut p = v.clone();
                if let Some(o) = p.as_object_mut() {
                    o.remove("_attachments");
                }
                Response {
                    status: "200 OK".into(),
                    headers: vec![("Content-Type".into(), "application/json".into())],
                    body: p.to_string().into_bytes(),
                }
            }
            _ => Response {
                status: "404 Not Found".into(),
                headers: Vec::new(),
                body: b"{}".to_vec(),
            },
        }
    }
}

/// `npm publish` and `npm install` from a private registry whose token is
/// a secret: the registry (named by npm's own configuration, the user's
/// `~/.npmrc`) gets the value, the command only the placeholder.
#[test]
fn npm_publishes_and_installs_with_a_token_secret() {
    if !host_has("npm", "--version") {
        skarn_test_support::skip!("npm is not installed");
    }
    let t = TempDir::new("sec-npm");
    let (ca, ca_file) = setup(&t);
    let srv = TlsServer::start(&ca, &["localhost"], npm_registry());
    let home = home_with_secrets(&t, srv.port, 1);
    std::fs::write(
        home.join(".npmrc"),
        format!(
            "registry=https://localhost:{p}/\n//localhost:{p}/:_authToken={REAL}\n",
            p = srv.port
        ),
    )
    .unwrap();
    // The bound host is the registry npm itself resolves from that file.
    let reg = Command::new("npm")
        .args(["config", "get", "registry"])
        .env("HOME", &home)
        .current_dir(&home)
        .output()
        .unwrap();
    let reg = String::from_utf8_lossy(&reg.stdout).trim().to_string();
    let authority = reg
        .trim_start_matches("https://")
        .trim_end_matches('/')
        .to_string();
    assert_eq!(authority, format!("localhost:{}", srv.port));
    let ws = t.dir("ws");
    let net = format!("allow:127.0.0.1:{}", srv.port);
    let script = "export NO_PROXY= no_proxy= npm_config_noproxy=; \
         mkdir -p pkg app && cd pkg && \
         printf '{\"name\":\"skarn-probe-pkg\",\"version\":\"1.0.0\"}' > package.json && \
         echo 'module.exports = 1' > index.js && \
         npm publish --loglevel=error && cd ../app && echo '{}' > package.json && \
         npm install skarn-probe-pkg --loglevel=error --no-audit --no-fund && \
         cat node_modules/skarn-probe-pkg/package.json && echo npm-ok; \
         cat ~/.npmrc; env | grep -i token";
    let o = run(
        &ws,
        &home,
        &ca_file,
        &["--secret", "tok", "--net", &net],
        script,
    );
    let (stdout, stderr) = (out(&o), err(&o));
    assert!(stdout.contains("npm-ok"), "{stdout}{stderr}");
    assert!(stdout.contains("skarn-probe-pkg"), "{stdout}");
    let seen = srv.seen();
    assert!(
        seen.iter()
            .any(|r| r.method == "PUT"
                && r.header("authorization") == Some(&*format!("Bearer {REAL}"))),
        "{}",
        srv.seen_text()
    );
    let paths: Vec<_> = seen
        .iter()
        .map(|r| format!("{} {}", r.method, r.path))
        .collect();
    assert!(seen.iter().any(|r| r.method == "GET"), "{paths:?}");
    // The tarball the registry stored holds no value either.
    assert!(!srv.seen_text().contains(&format!("_authToken={REAL}")));
    assert!(
        !stdout.contains(REAL) && !stderr.contains(REAL),
        "{stdout}{stderr}"
    );
    // Inside, `~/.npmrc` held a token (the placeholder), and nothing the
    // command wrote (package, lock file, npm's cache) holds the value.
    assert!(stdout.contains("_authToken="), "{stdout}");
    fn files_with(dir: &Path, needle: &[u8], hits: &mut Vec<PathBuf>) {
        for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
            let p = e.path();
            if p.is_symlink() {
                continue;
            }
            if p.is_dir() {
                files_with(&p, needle, hits);
            } else if std::fs::read(&p).is_ok_and(|b| b.windows(needle.len()).any(|w| w == needle))
            {
                hits.push(p);
            }
        }
    }
    let mut hits = Vec::new();
    files_with(&ws, REAL.as_bytes(), &mut hits);
    assert!(hits.is_empty(), "{hits:?}");
}
