//! Issue 27, f27v (atk27u): a method-bound secret is not sent with a form
//! body declared UTF-16/32 (Tomcat splits it on raw `&`/`=` and decodes
//! each name alone, so Spring's `_method` filter reads `DELETE`), while
//! a UTF-16 JSON body and a plain form still go (F1); a value with spaces
//! echoed form-encoded (`+` for a space) reaches the command as its
//! placeholder, from a response and on standard input, and a workspace
//! file holding it so stops the run (F3). Checked from outside: what the
//! loopback host received, what the command wrote; as root and as uid
//! 65534.

use std::io::Write;
use std::path::PathBuf;
use std::process::{Output, Stdio};

use crate::common::*;
use crate::support_secret_sources::{as_user, file_secret, users};
use skarn_test_support::TempDir;
use skarn_test_support::tls_server::{Request, Response, TestCa, TlsServer};

const VALUE: &str = "Gu27Tk4Lm9Vt2Wn7Rc5Yb8Hs3Kd6JxQv";
/// A passphrase: no word is as long as a window (10 bytes).
const PHRASE: &str = "correct horse battery staple mule ink 42";

struct Setup {
    _t: TempDir,
    root: PathBuf,
    home: PathBuf,
    ws: PathBuf,
    ca: PathBuf,
    srv: TlsServer,
}

fn setup(name: &str, value: &str, extra: &str, answer: fn(&Request) -> Response) -> Setup {
    let ca = TestCa::new();
    let srv = TlsServer::start(&ca, &["localhost"], answer);
    let t = TempDir::new(name);
    let root = t.path().to_path_buf();
    let home = t.dir("home");
    let host = format!("localhost:{}", srv.port);
    file_secret(&t, &home, "s", value, &host, "TOK", extra);
    let ws = t.dir("ws");
    let ca_path = t.dir("ca").join("ca.pem");
    std::fs::write(&ca_path, &ca.cert_pem).unwrap();
    Setup {
        _t: t,
        root,
        home,
        ws,
        ca: ca_path,
        srv,
    }
}

fn run(s: &Setup, user: bool, script: &str) -> Output {
    let net = format!("allow:127.0.0.1:{}", s.srv.port);
    let cmd = ["sh", "-c", script];
    let mut c = run_command(&s.ws, &s.home, &["--secret", "s", "--net", &net], &cmd);
    c.env("SSL_CERT_FILE", &s.ca);
    let mut c = if user { as_user(c, &s.root) } else { c };
    c.stdin(Stdio::null()).output().unwrap()
}

fn wide(s: &str, unit: usize, le: bool) -> Vec<u8> {
    s.chars()
        .flat_map(|c| {
            let u = u32::from(c);
            let b = if le { u.to_le_bytes() } else { u.to_be_bytes() };
            if unit == 2 {
                if le { b[..2].to_vec() } else { b[2..].to_vec() }
            } else {
                b.to_vec()
            }
        })
        .collect()
}

/// `prefix` + `_method` wide + `=` + `DELETE` wide: what Tomcat reads as
/// `_method=DELETE` in the declared charset.
fn tomcat_form(prefix: &str, unit: usize, le: bool) -> Vec<u8> {
    let mut b = prefix.as_bytes().to_vec();
    b.extend(wide("_method", unit, le));
    b.push(b'=');
    b.extend(wide("DELETE", unit, le));
    b
}

fn wide_forms(user: bool) {
    if !host_has("curl", "--version") {
        skarn_test_support::skip!("curl is not installed");
    }
    let s = setup(
        &format!("f27v-wide-{}", u8::from(user)),
        VALUE,
        "methods = [\"POST\"]\n",
        |r: &Request| Response::ok(format!("{} bytes\n", r.body.len()).into_bytes()),
    );
    let refused = [
        ("u16be", tomcat_form("a=1&", 2, false), "UTF-16BE"),
        ("u16", tomcat_form("a=1&", 2, false), "UTF-16"),
        ("u16le", tomcat_form("ab=1&", 2, true), "UTF-16LE"),
        ("u32be", tomcat_form("a=1&", 4, false), "UTF-32BE"),
        ("u32le", tomcat_form("a=1&", 4, true), "UTF-32LE"),
        ("u32", tomcat_form("a=1&", 4, false), "UTF-32"),
    ];
    let p = s.srv.port;
    let mut script = String::from("export NO_PROXY= no_proxy=; ");
    let line = |label: &str, ct: &str, data: &str| {
        format!(
            "printf '%s ' '{label}'; curl -sS -m 60 -o r.out -w '%{{http_code}}\\n' \
             -H \"Authorization: Bearer $TOK\" -H 'Content-Type: {ct}' {data} \
             'https://localhost:{p}/{label}'; cat r.out >&2; rm -f r.out; "
        )
    };
    for (label, body, cs) in &refused {
        std::fs::write(s.ws.join(label), body).unwrap();
        let ct = format!("application/x-www-form-urlencoded; charset={cs}");
        script.push_str(&line(label, &ct, &format!("--data-binary @{label}")));
    }
    std::fs::write(s.ws.join("json16"), wide("{\"a\":1}", 2, true)).unwrap();
    script.push_str(&line(
        "okjson16",
        "application/json; charset=utf-16le",
        "--data-binary @json16",
    ));
    script.push_str(&line(
        "okform",
        "application/x-www-form-urlencoded",
        "-d a=1",
    ));
    let o = run(&s, user, &script);
    let text = format!("{}{}", out(&o), err(&o));
    let seen = s.srv.seen();
    for (label, _, _) in &refused {
        assert!(
            out(&o).lines().any(|l| l == format!("{label} 415")),
            "{label} was not refused: {text}"
        );
        assert!(
            seen.iter().all(|r| r.path != format!("/{label}")),
            "{label} reached the host with the credential: {text}"
        );
    }
    assert!(err(&o).contains("is not JSON"), "{text}");
    for label in ["okjson16", "okform"] {
        assert!(
            out(&o).lines().any(|l| l == format!("{label} 200")),
            "{label} did not go: {text}"
        );
    }
    assert_eq!(seen.len(), 2, "{text}");
    for r in &seen {
        assert_eq!(r.header("authorization"), Some(&*format!("Bearer {VALUE}")));
    }
}

/// atk27u F1.
#[test]
fn wide_charset_forms_are_refused_on_a_method_bound_secret() {
    wide_forms(false);
}

#[test]
fn wide_charset_forms_are_refused_as_an_unprivileged_user() {
    if !crate::support_secret_sources::is_root() {
        skarn_test_support::skip!("needs root to become uid 65534");
    }
    wide_forms(true);
}

/// No run of [`PHRASE`] written with `+` for its spaces (10 bytes or
/// more) is in `got`.
fn holds_plus_phrase(got: &[u8]) -> bool {
    let plus = PHRASE.replace(' ', "+");
    plus.as_bytes()
        .windows(10)
        .any(|w| got.windows(10).any(|g| g == w))
}

/// atk27u F3, reproduction 1: a bound host echoes the Authorization
/// header form-encoded; the command's file holds no run of the value.
#[test]
fn a_form_encoded_echo_of_a_value_with_spaces_is_scrubbed() {
    if !host_has("curl", "--version") {
        skarn_test_support::skip!("curl is not installed");
    }
    for user in users() {
        let s = setup(
            &format!("f27v-plus-{}", u8::from(user)),
            PHRASE,
            "",
            |r: &Request| {
                let a = r.header("authorization").unwrap_or("").replace(' ', "+");
                Response::ok(format!("echo={a}\n").into_bytes())
            },
        );
        let p = s.srv.port;
        let o = run(
            &s,
            user,
            &format!(
                "export NO_PROXY= no_proxy=; curl -sS -o got.txt \
                 -H \"Authorization: Bearer $TOK\" https://localhost:{p}/echo"
            ),
        );
        let text = format!("{}{}", out(&o), err(&o));
        let seen = s.srv.seen();
        assert_eq!(seen.len(), 1, "{text}");
        assert_eq!(
            seen[0].header("authorization"),
            Some(&*format!("Bearer {PHRASE}")),
            "{text}"
        );
        let got = std::fs::read(s.ws.join("got.txt")).unwrap();
        assert!(got.starts_with(b"echo=Bearer+"), "{text}");
        assert!(
            !holds_plus_phrase(&got),
            "user={user}: the form-encoded value reached the command: {}",
            String::from_utf8_lossy(&got)
        );
    }
}

/// atk27u F3, reproduction 2 and the start-up search: piped in, the
/// form-encoded value reaches the command as its placeholder; a workspace
/// file holding it stops the run (recorded as exposed).
#[test]
fn a_form_encoded_value_on_stdin_or_in_the_workspace_is_caught() {
    for user in users() {
        let t = TempDir::new("f27v-plus-stdin");
        let home = t.dir("home");
        let ws = t.dir("ws");
        file_secret(&t, &home, "s", PHRASE, "localhost:9", "TOK", "");
        let c = run_command(&ws, &home, &["--secret", "s"], &["sh", "-c", "cat > got"]);
        let mut c = if user { as_user(c, t.path()) } else { c };
        c.stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut child = c.spawn().unwrap();
        let input = format!("pw={}\n", PHRASE.replace(' ', "+"));
        let mut w = child.stdin.take().unwrap();
        w.write_all(input.as_bytes()).unwrap();
        drop(w);
        let o = child.wait_with_output().unwrap();
        let e = String::from_utf8_lossy(&o.stderr);
        assert!(o.status.success(), "user={user}: {e}");
        let got = std::fs::read(ws.join("got")).unwrap();
        assert_eq!(got.len(), input.len(), "user={user}: {e}");
        assert!(
            !holds_plus_phrase(&got),
            "user={user}: the form-encoded value went in: {}",
            String::from_utf8_lossy(&got)
        );
        // The start-up search: a workspace file holding it.
        std::fs::write(ws.join("planted.txt"), &input).unwrap();
        let c = run_command(
            &ws,
            &home,
            &["--secret", "s"],
            &["sh", "-c", "echo RAN-f27v"],
        );
        let mut c = if user { as_user(c, t.path()) } else { c };
        let o = c.stdin(Stdio::null()).output().unwrap();
        let text = format!("{}{}", out(&o), err(&o));
        assert!(!out(&o).contains("RAN-f27v"), "user={user}: {text}");
        assert!(err(&o).contains("exposed"), "user={user}: {text}");
    }
}

/// `cmd` run to its end with `stdin`; its peak resident size (KiB, the
/// largest of it and the descendants it waited for) and its output.
#[expect(
    clippy::zombie_processes,
    reason = "the child is reaped by wait4, for its resource usage"
)]
fn peak_kib(mut cmd: std::process::Command, stdin: Stdio) -> (i64, Output) {
    let child = cmd
        .stdin(stdin)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let pid = i32::try_from(child.id()).unwrap();
    let (mut so, mut se) = (child.stdout.unwrap(), child.stderr.unwrap());
    let t = std::thread::spawn(move || {
        let mut e = Vec::new();
        std::io::Read::read_to_end(&mut se, &mut e).unwrap();
        e
    });
    let mut stdout = Vec::new();
    std::io::Read::read_to_end(&mut so, &mut stdout).unwrap();
    let stderr = t.join().unwrap();
    let mut status = 0;
    // SAFETY: an all-zero rusage is a valid value to be filled in.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: waits for the child spawned above (not waited elsewhere).
    let got = unsafe { libc::wait4(pid, &mut status, 0, &mut ru) };
    assert_eq!(got, pid);
    let status = std::os::unix::process::ExitStatusExt::from_raw(status);
    (
        ru.ru_maxrss,
        Output {
            status,
            stdout,
            stderr,
        },
    )
}

/// atk27u F2: a piped standard input does not make `skarn run` build the
/// value's automaton before the command starts: the run's peak memory
/// with `echo |` is that of `</dev/null` (before: a 600-byte value's DFA,
/// ~150 MiB more, and seconds before the command ran). The relay builds
/// its own windows after the fork; the piped value still reaches the
/// command as its placeholder.
#[test]
fn piped_input_costs_no_automaton_before_the_command() {
    let t = TempDir::new("f27v-pipe-rss");
    let home = t.dir("home");
    let ws = t.dir("ws");
    // Random letters and digits (a repeating value makes few windows).
    let mut x = 0x2545_f491_4f6c_dd1du64;
    let value: String = (0..600)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            char::from(b"AbCdEfGhJkMnPqRsTuVwXyZ23456789"[(x % 31) as usize])
        })
        .collect();
    file_secret(&t, &home, "s", &value, "localhost:9", "TOK", "");
    let cmd = |script: &str| run_command(&ws, &home, &["--secret", "s"], &["sh", "-c", script]);
    // The start-up's own records are made by a first run.
    let _ = peak_kib(cmd("true"), Stdio::null());
    let (null, o) = peak_kib(cmd("true"), Stdio::null());
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let mut feeder = std::process::Command::new("printf")
        .arg(format!("x{value}\\n"))
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let input = Stdio::from(feeder.stdout.take().unwrap());
    let (pipe, o) = peak_kib(cmd("cat > got"), input);
    let _ = feeder.wait();
    let e = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{e}");
    let got = std::fs::read(ws.join("got")).unwrap();
    assert_eq!(got.len(), value.len() + 2, "{e}");
    assert!(
        !got.windows(20)
            .any(|w| value.as_bytes().windows(20).any(|v| v == w)),
        "the piped value went in: {e}"
    );
    assert!(
        pipe <= null + 16 * 1024,
        "piped input: peak {pipe} KiB, with /dev/null {null} KiB: {e}"
    );
}
