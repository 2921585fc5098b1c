//! `skarn run --net allow:...`: real clients (curl, python urllib, git,
//! pip) through the proxy to local servers, and every denial path, each
//! checked from outside (the server's request counter).
//!
//! Inside the sandbox 127.0.0.1 is the sandbox's own loopback and
//! NO_PROXY lists it, so clients reaching the host's local test servers
//! clear NO_PROXY: the request then goes through the proxy, which connects
//! from the host side.

use std::path::Path;
use std::process::Output;

use crate::common::*;
use crate::static_http::Server;
use skarn_test_support::TempDir;

const PY: &str = "/usr/bin/python3";

fn sh(ws: &Path, home: &Path, flags: &[&str], script: &str) -> Output {
    run_in(ws, home, flags, &["sh", "-c", script])
}

fn allow(p: &str) -> String {
    format!("allow:{p}")
}

#[test]
fn curl_through_http_and_socks_proxies_reaches_an_allowed_address() {
    let srv = Server::start(None);
    let t = TempDir::new("eg-curl");
    let (ws, home) = (t.dir("ws"), t.dir("home"));
    let net = allow(&format!("127.0.0.1:{}", srv.port));
    let u = format!("http://127.0.0.1:{}/x", srv.port);
    let script = format!(
        "curl -sS --noproxy '' {u} && echo && curl -sS -p --noproxy '' {u} && echo && \
         curl -sS --noproxy '' -x socks5h://127.0.0.1:1080 {u}"
    );
    let o = sh(&ws, &home, &["--net", &net, "--json"], &script);
    assert_eq!(code(&o), 0, "{}", err(&o));
    assert_eq!(out(&o).matches("hello-egress").count(), 3, "{}", out(&o));
    assert_eq!(srv.hits(), 3);
    let report = err(&o);
    let json = report.lines().last().unwrap();
    let v: serde_json::Value = serde_json::from_str(json).unwrap();
    let allowed = &v["egress"]["allowed"][0];
    assert_eq!(allowed["host"], format!("127.0.0.1:{}", srv.port));
    assert_eq!(allowed["connections"], 3);
    assert!(allowed["bytes_in"].as_u64().unwrap() > 30);
}

#[test]
fn python_urllib_uses_the_proxy_from_the_environment() {
    let srv = Server::start(None);
    let t = TempDir::new("eg-py");
    let (ws, home) = (t.dir("ws"), t.dir("home"));
    let net = allow(&format!("127.0.0.1:{}", srv.port));
    let script = format!(
        "NO_PROXY= no_proxy= {PY} -c 'import urllib.request as u; \
         print(u.urlopen(\"http://127.0.0.1:{}/\").read().decode())'",
        srv.port
    );
    let o = sh(&ws, &home, &["--net", &net], &script);
    assert_eq!(code(&o), 0, "{}", err(&o));
    assert!(out(&o).contains("hello-egress"));
    assert_eq!(srv.hits(), 1);
}

#[test]
fn git_clones_over_http_through_the_proxy() {
    if !host_has("git", "--version") {
        skarn_test_support::skip!("git is not installed on this host");
    }
    let t = TempDir::new("eg-git");
    let (ws, home, served) = (t.dir("ws"), t.dir("home"), t.dir("served"));
    let src = t.dir("src");
    let git = |dir: &Path, args: &[&str]| {
        let o = std::process::Command::new("git")
            .args(args)
            .current_dir(dir)
            .env("HOME", &home)
            .output()
            .unwrap();
        assert!(o.status.success(), "git {args:?}: {}", err(&o));
    };
    std::fs::write(src.join("README"), "egress-git-ok\n").unwrap();
    git(&src, &["init", "-q"]);
    git(&src, &["add", "README"]);
    git(
        &src,
        &[
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@t",
            "commit",
            "-qm",
            "one",
        ],
    );
    let bare = served.join("repo.git");
    git(
        t.path(),
        &[
            "clone",
            "-q",
            "--bare",
            src.to_str().unwrap(),
            bare.to_str().unwrap(),
        ],
    );
    git(&bare, &["update-server-info"]);
    let srv = Server::start(Some(served.clone()));
    let net = allow(&format!("127.0.0.1:{}", srv.port));
    // git takes http.proxy from GIT_CONFIG_* (set by skarn); like curl it
    // skips it for NO_PROXY hosts, so the host-side test server needs
    // NO_PROXY cleared.
    let script = format!(
        "NO_PROXY= no_proxy= git clone -q http://127.0.0.1:{}/repo.git out && cat out/README",
        srv.port
    );
    let o = sh(&ws, &home, &["--net", &net], &script);
    assert_eq!(code(&o), 0, "{}", err(&o));
    assert!(out(&o).contains("egress-git-ok"), "{}", out(&o));
    assert!(srv.hits() >= 2);
}

/// A PEP 503 index with one pure-Python wheel, built here.
pub(crate) fn make_index(root: &Path) {
    let script = r#"
import sys, zipfile, hashlib, base64, os
root = sys.argv[1]
name, ver = "egressdemo", "0.1"
d = os.path.join(root, "simple", name)
os.makedirs(d, exist_ok=True)
whl = f"{name}-{ver}-py3-none-any.whl"
files = {
    f"{name}/__init__.py": b"VALUE = 'egress-pip-ok'\n",
    f"{name}-{ver}.dist-info/METADATA": f"Metadata-Version: 2.1\nName: {name}\nVersion: {ver}\n".encode(),
    f"{name}-{ver}.dist-info/WHEEL": b"Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
}
rec = []
for p, b in files.items():
    h = base64.urlsafe_b64encode(hashlib.sha256(b).digest()).rstrip(b"=").decode()
    rec.append(f"{p},sha256={h},{len(b)}")
rec.append(f"{name}-{ver}.dist-info/RECORD,,")
files[f"{name}-{ver}.dist-info/RECORD"] = ("\n".join(rec) + "\n").encode()
with zipfile.ZipFile(os.path.join(d, whl), "w") as z:
    for p, b in files.items():
        z.writestr(p, b)
open(os.path.join(d, "index.html"), "w").write(f'<a href="{whl}">{whl}</a>\n')
open(os.path.join(root, "simple", "index.html"), "w").write(f'<a href="{name}/">{name}</a>\n')
"#;
    let o = std::process::Command::new(PY)
        .args(["-c", script, root.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", err(&o));
}

#[test]
fn pip_installs_from_a_local_index_through_the_proxy() {
    let has_pip = std::process::Command::new(PY)
        .args(["-m", "pip", "--version"])
        .output()
        .is_ok_and(|o| o.status.success());
    if !has_pip {
        skarn_test_support::skip!("{PY} has no pip");
    }
    let t = TempDir::new("eg-pip");
    let (ws, home, served) = (t.dir("ws"), t.dir("home"), t.dir("served"));
    make_index(&served);
    let srv = Server::start(Some(served));
    let net = allow(&format!("127.0.0.1:{}", srv.port));
    let script = format!(
        "NO_PROXY= no_proxy= {PY} -m pip install -q --no-cache-dir --disable-pip-version-check \
         --break-system-packages --target out --index-url http://127.0.0.1:{}/simple egressdemo \
         && PYTHONPATH=out {PY} -c 'import egressdemo; print(egressdemo.VALUE)'",
        srv.port
    );
    let o = sh(&ws, &home, &["--net", &net], &script);
    assert_eq!(code(&o), 0, "{}\n{}", out(&o), err(&o));
    assert!(out(&o).contains("egress-pip-ok"), "{}", out(&o));
    assert!(srv.hits() >= 2);
}

#[test]
fn registries_come_from_each_tools_own_configuration() {
    let npm_srv = Server::start(None);
    let pip_srv = Server::start(None);
    let t = TempDir::new("eg-reg");
    let (ws, home) = (t.dir("ws"), t.dir("home"));
    std::fs::write(ws.join("package.json"), "{}").unwrap();
    std::fs::write(ws.join("requirements.txt"), "").unwrap();
    // The user's .npmrc naming the host's loopback, and a pip index on it:
    // both are found, neither is allowed through `registries` (an address
    // must be named explicitly). A workspace .npmrc is never read
    // (run_egress_registries).
    std::fs::write(
        home.join(".npmrc"),
        format!(
            "registry=http://127.0.0.1:{}/\n@corp:registry=https://npm.mirror.invalid/\n",
            npm_srv.port
        ),
    )
    .unwrap();
    let pip_url = format!("http://127.0.0.1:{}/simple", pip_srv.port);
    let script = format!(
        "curl -sS --noproxy '' http://127.0.0.1:{}/; curl -sS --noproxy '' {pip_url}; true",
        npm_srv.port
    );
    let o = std::process::Command::new(exe())
        .args(["run", "--no-config", "--workspace"])
        .arg(&ws)
        .args(["--net", "allow:registries", "--", "sh", "-c", &script])
        .env("HOME", &home)
        .env("PIP_INDEX_URL", &pip_url)
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    assert_eq!((npm_srv.hits(), pip_srv.hits()), (0, 0), "{}", err(&o));
    assert!(
        err(&o).contains(&format!(
            "ignored 127.0.0.1:{} from PIP_INDEX_URL",
            pip_srv.port
        )),
        "{}",
        err(&o)
    );
    if host_has("npm", "--version") {
        assert!(err(&o).contains("npm.mirror.invalid"), "{}", err(&o));
    }
}

#[test]
fn workspace_config_allow_hosts_and_deny_hosts() {
    let srv = Server::start(None);
    let t = TempDir::new("eg-cfg");
    let (ws, home) = (t.dir("ws"), t.dir("home"));
    std::fs::write(
        ws.join("skarn.toml"),
        format!(
            "[run]\nallow_hosts = [\"127.0.0.1:{p}\", \"localhost:{p}\"]\ndeny_hosts = [\"localhost\"]\n",
            p = srv.port
        ),
    )
    .unwrap();
    crate::common::trust(&ws.join("skarn.toml"), &home);
    let script = format!(
        "curl -sS --noproxy '' http://127.0.0.1:{p}/; echo; \
         curl -sS --noproxy '' -o /dev/null -w '%{{http_code}}' http://localhost:{p}/",
        p = srv.port
    );
    let o = std::process::Command::new(exe())
        .args(["run", "--workspace"])
        .arg(&ws)
        .args(["--", "sh", "-c", &script])
        .env("HOME", &home)
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    assert!(out(&o).contains("hello-egress"), "{}\n{}", out(&o), err(&o));
    assert!(out(&o).contains("403"), "{}", out(&o));
    assert!(
        err(&o).contains("in the deny list (localhost)"),
        "{}",
        err(&o)
    );
    assert_eq!(srv.hits(), 1);
    // A bad pattern in the file is one error naming file:line:column.
    std::fs::write(ws.join("skarn.toml"), "[run]\nallow_hosts = [\"*.com\"]\n").unwrap();
    let o = std::process::Command::new(exe())
        .args(["run", "--workspace"])
        .arg(&ws)
        .args(["--", "true"])
        .env("HOME", &home)
        .output()
        .unwrap();
    assert_eq!(code(&o), 2, "{}", err(&o));
    assert!(err(&o).contains("skarn.toml:2:"), "{}", err(&o));
}
