//! Attack atk27l on configured secrets, each checked from outside: a
//! secrets configuration that does not parse stops `skarn run` (also with
//! `--no-config`) and `skarn serve` instead of turning off the hiding of
//! every source (F13, F13b, F13c); a `skarn run` or `skarn serve` that
//! holds a value leaves no core dump (F12).

use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::common::*;
use crate::support_secret_sources::{seen, write_config as config};
use skarn_test_support::TempDir;

const FILE_VALUE: &str = "fileREALvalue-0123456789abcdef";
const ENV_VALUE: &str = "envREALvalue-9876543210fedcba";

/// A `from_env` and a `file` source, and one typo (`headers`).
fn broken_config(home: &Path, sec: &Path) {
    config(
        home,
        &format!(
            "[secrets.plain]\nfrom_env = \"PLAIN_SETTING_X\"\nhosts = [\"localhost:1\"]\n\
             [secrets.f]\nfile = \"{}\"\nhosts = [\"localhost:1\"]\nheaders = \"x\"\n",
            sec.join("tokf").display()
        ),
    );
}

/// F13c: `skarn run --no-config` with a configuration that does not
/// parse: neither the `from_env` source's variable nor the `file` source
/// reaches the command; the run stops with exit code 2, naming the file.
#[test]
fn a_secrets_configuration_that_does_not_parse_stops_a_no_config_run() {
    let t = TempDir::new("sec-27l-f13c");
    let home = t.dir("home");
    let ws = t.dir("ws");
    let sec = t.dir("sec");
    std::fs::write(sec.join("tokf"), format!("{FILE_VALUE}\n")).unwrap();
    broken_config(&home, &sec);
    let s = sec.display().to_string();
    let o = run_command(
        &ws,
        &home,
        &["--read", &s],
        &[
            "sh",
            "-c",
            &format!("echo \"[$PLAIN_SETTING_X]\"; cat {s}/tokf"),
        ],
    )
    .env("PLAIN_SETTING_X", ENV_VALUE)
    .output()
    .unwrap();
    assert!(
        !out(&o).contains(ENV_VALUE),
        "the source variable reached the run: {}",
        seen(&o)
    );
    assert!(
        !out(&o).contains(FILE_VALUE),
        "the file source was read: {}",
        seen(&o)
    );
    assert_eq!(code(&o), 2, "{}", seen(&o));
    assert!(err(&o).contains("config.toml"), "{}", seen(&o));
}

/// Run `skarn serve --config cfg` with stdin lines of a client, until
/// `done` holds or the gateway ends (at most 60 s); its output.
fn serve_until(
    cfg: &Path,
    home: &Path,
    env: &[(&str, &str)],
    done: impl Fn() -> bool,
) -> std::process::Output {
    let mut child = Command::new(exe())
        .args(["serve", "--config"])
        .arg(cfg)
        .env("HOME", home)
        .env_remove("XDG_STATE_HOME")
        .envs(env.iter().copied())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    // A gateway that stopped at once closed its end: write errors are fine.
    for l in [
        r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-03-26","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}"#,
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
        r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#,
    ] {
        let _ = writeln!(stdin, "{l}");
    }
    let _ = stdin.flush();
    let start = Instant::now();
    while start.elapsed() < Duration::from_secs(60) {
        if done() || child.try_wait().ok().flatten().is_some() {
            break;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    // Let a starting server finish its report.
    std::thread::sleep(Duration::from_millis(500));
    drop(stdin);
    let deadline = Instant::now() + Duration::from_secs(10);
    while Instant::now() < deadline && child.try_wait().ok().flatten().is_none() {
        std::thread::sleep(Duration::from_millis(100));
    }
    let _ = child.kill();
    child.wait_with_output().unwrap()
}

/// F13, F13b: a gateway whose user's secrets configuration does not parse
/// does not start: a sandboxed server neither gets a `from_env` source's
/// value through `{ from_env }` nor reads a `file` source its read grant
/// covers. Checked on what the server wrote.
#[test]
fn a_secrets_configuration_that_does_not_parse_stops_the_gateway() {
    let t = TempDir::new("sec-27l-f13");
    let home = t.dir("home");
    let sec = t.dir("sec");
    let srv = t.dir("srv");
    let outd = t.dir("out");
    std::fs::write(sec.join("tokf"), format!("{FILE_VALUE}\n")).unwrap();
    let report = outd.join("report.txt");
    std::fs::write(
        srv.join("server.sh"),
        format!(
            "echo \"T=$T\" > {r}\ncat {f} >> {r} 2>&1\necho end >> {r}\nexec cat > /dev/null\n",
            r = report.display(),
            f = sec.join("tokf").display()
        ),
    )
    .unwrap();
    let cfg = srv.join("gw.toml");
    std::fs::write(
        &cfg,
        format!(
            "[servers.r]\ncommand = \"/bin/sh\"\nargs = [{s:?}]\n\
             env = {{ T = {{ from_env = \"PLAIN_SETTING_X\" }} }}\n\
             [servers.r.sandbox]\nenabled = true\nread = [{d:?}, {sec:?}]\nwrite = [{o:?}]\n",
            s = srv.join("server.sh").display().to_string(),
            d = srv.display().to_string(),
            sec = sec.display().to_string(),
            o = outd.display().to_string(),
        ),
    )
    .unwrap();
    trust(&cfg, &home);
    broken_config(&home, &sec);
    let o = serve_until(&cfg, &home, &[("PLAIN_SETTING_X", ENV_VALUE)], || {
        std::fs::read_to_string(&report).is_ok_and(|r| r.contains("end"))
    });
    let r = std::fs::read_to_string(&report).unwrap_or_default();
    assert!(
        !r.contains(ENV_VALUE),
        "the server got the from_env value: {r}"
    );
    assert!(
        !r.contains(FILE_VALUE),
        "the server read the file source: {r}"
    );
    assert_eq!(code(&o), 2, "{}", err(&o));
    assert!(err(&o).contains("config.toml"), "{}", err(&o));
}

/// Whether a core dump of a process started in `dir` would land in `dir`
/// (a relative `core_pattern`) and the core size can be raised.
fn cores_land_in_cwd() -> Result<(), String> {
    let pat = std::fs::read_to_string("/proc/sys/kernel/core_pattern").unwrap_or_default();
    let pat = pat.trim();
    if pat.is_empty() || pat.starts_with('|') || pat.starts_with('/') {
        return Err(format!("core_pattern is {pat:?}, not a relative file name"));
    }
    let o = Command::new("sh")
        .args(["-c", "ulimit -H -c"])
        .output()
        .map_err(|e| e.to_string())?;
    if out(&o).trim() == "0" {
        return Err("the core size's hard limit is 0".into());
    }
    Ok(())
}

/// Files under `dir` (not below `.git`) holding `needle`.
fn holding(dir: &Path, needle: &str) -> Vec<String> {
    let mut found = Vec::new();
    for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let p = e.path();
        if p.is_file()
            && std::fs::read(&p)
                .is_ok_and(|b| b.windows(needle.len()).any(|w| w == needle.as_bytes()))
        {
            found.push(p.display().to_string());
        }
    }
    found
}

/// Start `skarn <args>` in `cwd` with the core size raised, send it
/// SIGABRT after `after`, wait for it.
fn abort_after(cwd: &Path, home: &Path, args: &[&str], after: Duration) -> std::process::Output {
    let mut c = Command::new("sh");
    c.arg("-c")
        .arg("ulimit -c unlimited 2>/dev/null || ulimit -S -c \"$(ulimit -H -c)\"; exec \"$0\" \"$@\"")
        .arg(exe())
        .args(args)
        .current_dir(cwd)
        .env("HOME", home)
        .env_remove("XDG_STATE_HOME")
        .env("MY_API_TOKEN", ENV_VALUE)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let child = c.spawn().unwrap();
    std::thread::sleep(after);
    // SAFETY: kill with the pid of the child started above.
    unsafe { libc::kill(child.id() as i32, libc::SIGABRT) };
    child.wait_with_output().unwrap()
}

/// F12: `skarn run` and `skarn serve` holding a `from_env` source's value
/// (in their environment), aborted with the core size raised, leave no
/// core holding it in their working directory (the workspace every later
/// run reads).
#[test]
fn a_run_or_gateway_holding_a_value_leaves_no_core() {
    if let Err(why) = cores_land_in_cwd() {
        skarn_test_support::skip!("{why}");
    }
    let t = TempDir::new("sec-27l-f12");
    let home = t.dir("home");
    let ws = t.dir("ws");
    config(
        &home,
        "[secrets.envtok]\nfrom_env = \"MY_API_TOKEN\"\nhosts = [\"localhost:1\"]\n",
    );
    let w = ws.display().to_string();
    let o = abort_after(
        &ws,
        &home,
        &[
            "run",
            "--no-config",
            "--workspace",
            &w,
            "--secret",
            "envtok",
            "--",
            "sleep",
            "20",
        ],
        Duration::from_secs(4),
    );
    let found = holding(&ws, ENV_VALUE);
    assert!(found.is_empty(), "skarn run left {found:?}: {}", seen(&o));
    let srv = t.dir("srv");
    let cfg = srv.join("gw.toml");
    std::fs::write(&cfg, "[servers.c]\ncommand = \"/bin/cat\"\n").unwrap();
    trust(&cfg, &home);
    let c = cfg.display().to_string();
    let o = abort_after(
        &ws,
        &home,
        &["serve", "--config", &c],
        Duration::from_secs(3),
    );
    let found = holding(&ws, ENV_VALUE);
    assert!(found.is_empty(), "skarn serve left {found:?}: {}", seen(&o));
}

const REFLECTED: &str = "gwREALvalue0123456789abcdefXYZ";

/// A bound host answering the Authorization header in the escape forms of
/// F11/F11b, one per line.
fn reflect_padded(
    r: &skarn_test_support::tls_server::Request,
) -> skarn_test_support::tls_server::Response {
    let auth = r.header("authorization").unwrap_or("").to_string();
    let each = |f: &dyn Fn(u32) -> String| auth.chars().map(|c| f(c as u32)).collect::<String>();
    let lines = [
        // ECMAScript: leading zeros beyond six digits.
        each(&|c| format!("\\u{{{c:08x}}}")),
        each(&|c| format!("\\u{{{c:016x}}}")),
        // Python, YAML, C: eight digits.
        each(&|c| format!("\\U{c:08x}")),
        // Rust: `_` between digits; Perl, C++23: `\x{...}`.
        each(&|c| format!("\\u{{{}_{}}}", c >> 4, format_args!("{:x}", c & 15))),
        each(&|c| format!("\\x{{{c:04x}}}")),
    ];
    skarn_test_support::tls_server::Response::ok(format!("{}\n", lines.join("\n")))
}

/// `text` read as those decoders read it (braced escapes with any `_`
/// and leading zeros, `\U` with eight digits).
fn decode_padded(text: &str) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(c) = rest.chars().next() {
        if let Some(r) = rest
            .strip_prefix("\\u{")
            .or_else(|| rest.strip_prefix("\\x{"))
            && let Some(end) = r.find('}')
            && let Ok(v) = u32::from_str_radix(&r[..end].replace('_', ""), 16)
        {
            out.push(char::from_u32(v).unwrap_or('?'));
            rest = &r[end + 1..];
            continue;
        }
        if let Some(r) = rest.strip_prefix("\\U")
            && r.len() >= 8
            && let Ok(v) = u32::from_str_radix(&r[..8], 16)
        {
            out.push(char::from_u32(v).unwrap_or('?'));
            rest = &r[8..];
            continue;
        }
        out.push(c);
        rest = &rest[c.len_utf8()..];
    }
    out
}

/// F11, F11b: a value a bound host reflects as `\u{00000074}`,
/// `\U00000074`, `\u{7_4}` or `\x{0074}` comes back as the placeholder:
/// checked on what the command printed, decoded here as JavaScript,
/// Python, YAML, Rust or Perl would.
#[test]
fn a_value_reflected_in_padded_escapes_is_scrubbed() {
    use skarn_test_support::tls_server::{TestCa, TlsServer};
    if !host_has("curl", "--version") {
        skarn_test_support::skip!("curl is not installed");
    }
    let t = TempDir::new("sec-27l-f11");
    let ca = TestCa::new();
    let ca_file = t.dir("ca").join("test-ca.pem");
    std::fs::write(&ca_file, &ca.cert_pem).unwrap();
    let srv = TlsServer::start(&ca, &["localhost"], reflect_padded);
    let home = t.dir("home");
    let vals = t.dir("vals");
    std::fs::write(vals.join("tok"), REFLECTED).unwrap();
    config(
        &home,
        &format!(
            "[secrets.tok]\nfile = {:?}\nhosts = [\"localhost:{}\"]\nenv = \"TOKEN\"\n",
            vals.join("tok").display().to_string(),
            srv.port
        ),
    );
    let ws = t.dir("ws");
    let net = format!("allow:127.0.0.1:{}", srv.port);
    let script = format!(
        "export NO_PROXY= no_proxy=; \
         curl -sS -H \"Authorization: Bearer $TOKEN\" https://localhost:{}/x",
        srv.port
    );
    let o = run_command(
        &ws,
        &home,
        &["--secret", "tok", "--net", &net],
        &["sh", "-c", &script],
    )
    .env("SSL_CERT_FILE", &ca_file)
    .output()
    .unwrap();
    let stdout = out(&o);
    assert!(
        srv.seen_text().contains(REFLECTED),
        "the host did not get the value: {}",
        seen(&o)
    );
    assert_eq!(stdout.lines().count(), 5, "{}", seen(&o));
    for line in decode_padded(&stdout).lines() {
        assert!(
            !line.contains(REFLECTED),
            "reflected value readable: {line}\n{stdout}"
        );
    }
}

/// F8: a sandboxed server whose `env` sets `HOME` has its writable grants
/// recorded in the user's grant log (which ADR 0250's check of `command`
/// sources reads), not under the server's `HOME`; nothing is created
/// there.
#[test]
fn a_servers_env_home_does_not_move_the_grant_log() {
    let t = TempDir::new("sec-27l-f8");
    let home = t.dir("home");
    let fake = t.dir("fakehome");
    let srv = t.dir("srv");
    let outd = t.dir("srvw");
    let report = outd.join("started");
    std::fs::write(
        srv.join("server.sh"),
        format!("echo up > {}\nexec cat > /dev/null\n", report.display()),
    )
    .unwrap();
    let cfg = srv.join("gw.toml");
    std::fs::write(
        &cfg,
        format!(
            "[servers.r]\ncommand = \"/bin/sh\"\nargs = [{s:?}]\nenv = {{ HOME = {f:?} }}\n\
             [servers.r.sandbox]\nenabled = true\nread = [{d:?}]\nwrite = [{o:?}]\n",
            s = srv.join("server.sh").display().to_string(),
            f = fake.display().to_string(),
            d = srv.display().to_string(),
            o = outd.display().to_string(),
        ),
    )
    .unwrap();
    trust(&cfg, &home);
    let o = serve_until(&cfg, &home, &[], || report.exists());
    assert!(report.exists(), "the server did not start: {}", err(&o));
    let user_log =
        std::fs::read_to_string(home.join(".local/state/skarn/granted-dirs")).unwrap_or_default();
    assert!(
        user_log.contains(&outd.display().to_string()),
        "the user's grant log lacks the server's write grant: {user_log:?}"
    );
    assert!(
        !fake.join(".local/state/skarn/granted-dirs").exists(),
        "a grant log was created under the server's HOME"
    );
}

/// F7: a build cache under `node_modules` (babel-loader's, vite's) holding
/// a granted value is looked at whole: the granted run does not read the
/// value there (it is refused, the file named).
#[test]
fn a_build_cache_under_node_modules_holding_the_value_is_found() {
    let t = TempDir::new("sec-27l-f7");
    let home = t.dir("home");
    let vals = t.dir("vals");
    let ws = t.dir("ws");
    let value = "sk-live-Abc123Def456Ghi789Jkl012Mno345";
    std::fs::write(vals.join("tok"), format!("{value}\n")).unwrap();
    config(
        &home,
        &format!(
            "[secrets.tok]\nfile = {:?}\nhosts = [\"localhost:1\"]\n",
            vals.join("tok").display().to_string()
        ),
    );
    for cache in [".cache/babel-loader", ".vite/deps"] {
        let d = ws.join("node_modules").join(cache);
        std::fs::create_dir_all(&d).unwrap();
        let f = d.join("1a2b.json");
        std::fs::write(&f, format!("{{\"code\":\"const k=\\\"{value}\\\";\"}}\n")).unwrap();
        let o = run_command(
            &ws,
            &home,
            &["--secret", "tok"],
            &["cat", f.to_str().unwrap()],
        )
        .output()
        .unwrap();
        assert!(
            !out(&o).contains(value),
            "{cache}: the value was read: {}",
            seen(&o)
        );
        assert_ne!(code(&o), 0, "{cache}: {}", seen(&o));
        std::fs::remove_dir_all(ws.join("node_modules")).unwrap();
    }
}

/// F9: `~/` opening a `command` source's program or an argument is the
/// home when the source runs, as its checks read it: the source resolves
/// and the granted run starts.
#[test]
fn a_command_sources_home_paths_are_expanded_when_it_runs() {
    let t = TempDir::new("sec-27l-f9");
    let home = t.dir("home");
    let ws = t.dir("ws");
    let vals = t.dir("vals");
    std::fs::write(vals.join("val"), "tok-ABCDEFGHIJKLMNOP\n").unwrap();
    std::fs::create_dir_all(home.join("bin")).unwrap();
    let tok = home.join("bin/tok");
    std::fs::write(
        &tok,
        format!("#!/bin/sh\ncat {}\n", vals.join("val").display()),
    )
    .unwrap();
    std::fs::set_permissions(&tok, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    config(
        &home,
        "[secrets.tilde]\ncommand = [\"~/bin/tok\"]\nhosts = [\"localhost:1\"]\nenv = \"T1\"\n\
         [secrets.tildearg]\ncommand = [\"/bin/sh\", \"~/bin/tok\"]\nhosts = [\"localhost:1\"]\nenv = \"T2\"\n",
    );
    for s in ["tilde", "tildearg"] {
        let o = run_command(&ws, &home, &["--secret", s], &["sh", "-c", "echo started"])
            .output()
            .unwrap();
        assert_eq!(code(&o), 0, "{s}: {}", seen(&o));
        assert!(out(&o).contains("started"), "{s}: {}", seen(&o));
    }
}

/// F10: a `command` source whose program lies in a bind mount of a
/// directory inside a writable place (`~/dotfiles/bin` bound at `~/bin`)
/// is judged as lying in that place: the granted run is refused before
/// the source runs (a run there could rewrite what the host runs). In a
/// private mount namespace (root only).
#[test]
fn a_bind_mount_of_a_directory_inside_a_workspace_is_judged_as_the_workspace() {
    // SAFETY: geteuid takes no arguments and cannot fail.
    if unsafe { libc::geteuid() } != 0 || !host_has("unshare", "--version") {
        skarn_test_support::skip!("bind mounts in a private mount namespace need root and unshare");
    }
    let t = TempDir::new("sec-27l-f10");
    let home = t.dir("home");
    let dot = t.dir("dot");
    let hbin = t.dir("hbin");
    let vals = t.dir("vals");
    std::fs::write(vals.join("val"), "tok-ABCDEFGHIJKLMNOP\n").unwrap();
    std::fs::create_dir_all(dot.join("bin")).unwrap();
    let marker = t.path().join("SOURCE_RAN");
    let tok = dot.join("bin/tok");
    std::fs::write(
        &tok,
        format!(
            "#!/bin/sh\ntouch {}\ncat {}\n",
            marker.display(),
            vals.join("val").display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(&tok, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    config(
        &home,
        &format!(
            "[secrets.bm]\ncommand = [{:?}]\nhosts = [\"localhost:1\"]\n",
            hbin.join("tok").display().to_string()
        ),
    );
    let script = "mount --make-rprivate / && mount --bind \"$1\"/bin \"$2\" && \
                  exec \"$0\" run --no-config --workspace \"$1\" --secret bm -- true";
    let o = Command::new("unshare")
        .args(["-m", "sh", "-c", script])
        .arg(exe())
        .arg(&dot)
        .arg(&hbin)
        .env("HOME", &home)
        .env_remove("XDG_STATE_HOME")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_ne!(code(&o), 0, "the granted run started: {}", seen(&o));
    assert!(
        !marker.exists(),
        "the source in the workspace ran on the host: {}",
        seen(&o)
    );
    assert!(err(&o).contains("another name"), "{}", seen(&o));
}
