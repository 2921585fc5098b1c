//! Issue 27, f27u (atk27t): a method-bound secret is not sent with a body
//! or query a framework other than PHP reads as naming `_method` — Rack's
//! `Content-ID` part names and greedy `; name=`, PHP's `'`-quoted part
//! names, Rack's and qs's bracket spellings, a coded body whose RAW bytes
//! name it — while ordinary bodies still go with the value; and an idle
//! request announcing a large body holds none of the proxy's budget.
//! Checked on a loopback host that records what reached it; as root and
//! as uid 65534.

use std::path::PathBuf;
use std::process::Output;

use crate::common::*;
use crate::support_secret_sources::{as_user, is_root};
use skarn_test_support::TempDir;
use skarn_test_support::tls_server::{Request, Response, TestCa, TlsServer};

/// The secret's real value: never readable inside the run.
const VALUE: &str = "Gu27Tk4Lm9Vt2Wn7Rc5Yb8Hs3Kd6JxQa";

struct Setup {
    _t: TempDir,
    root: PathBuf,
    home: PathBuf,
    ws: PathBuf,
    ca: PathBuf,
    srv: TlsServer,
}

fn setup(name: &str) -> Setup {
    setup_with(name, |r: &Request| {
        Response::ok(format!("{} bytes\n", r.body.len()).into_bytes())
    })
}

fn setup_with(name: &str, answer: fn(&Request) -> Response) -> Setup {
    let ca = TestCa::new();
    let srv = TlsServer::start(&ca, &["localhost"], answer);
    let t = TempDir::new(name);
    let root = t.path().to_path_buf();
    let home = t.dir("home");
    let host = format!("localhost:{}", srv.port);
    crate::support_secret_sources::file_secret(
        &t,
        &home,
        "s",
        VALUE,
        &host,
        "TOK",
        "methods = [\"POST\"]\n",
    );
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
    c.output().unwrap()
}

/// One curl line to `path`: label, then the status.
fn curl(port: u16, label: &str, args: &str, path: &str) -> String {
    format!(
        "printf '%s ' '{label}'; curl -gsS -m 60 -o r.out -w '%{{http_code}}\\n' \
         -H \"Authorization: Bearer $TOK\" {args} 'https://localhost:{port}{path}'; \
         cat r.out >&2; rm -f r.out; "
    )
}

/// A zstd skippable frame holding `payload`: it decodes to nothing.
fn skippable(payload: &[u8]) -> Vec<u8> {
    let mut b = vec![0x50, 0x2a, 0x4d, 0x18];
    b.extend_from_slice(&u32::try_from(payload.len()).unwrap().to_le_bytes());
    b.extend_from_slice(payload);
    b
}

fn part(head: &str) -> String {
    format!("--XyZb\r\n{head}\r\n\r\nDELETE\r\n--XyZb--\r\n")
}

fn spellings(user: bool) {
    if !host_has("curl", "--version") {
        skarn_test_support::skip!("curl is not installed");
    }
    let s = setup(&format!("f27u-names-{}", u8::from(user)));
    let cd = "Content-Disposition: form-data";
    let z_mp = format!("\r\n--XyZb\r\n{cd}; name=\"_method\"\r\n\r\nDELETE\r\n--XyZb--\r\n");
    let files: Vec<(&str, Vec<u8>)> = vec![
        // F1: Rack's Content-ID fallback and greedy `; name=`.
        ("cid", part("Content-ID: _method").into_bytes()),
        ("cid-cd", part(&format!("{cd}\r\nContent-ID: _method")).into_bytes()),
        ("greedy", part(&format!("{cd}; x=\"; name=_method\"")).into_bytes()),
        // F6: PHP's single quotes.
        ("sq", part(&format!("{cd}; name='_method'")).into_bytes()),
        ("sq-dot", part(&format!("{cd}; name='.method'")).into_bytes()),
        // F2: bracket spellings in multipart names.
        ("br-mp1", part(&format!("{cd}; name=\"_method]\"")).into_bytes()),
        ("br-mp2", part(&format!("{cd}; name=\"[_method\"")).into_bytes()),
        // F3: zstd bodies whose raw bytes name `_method`.
        ("z-form", skippable(b"&_method=DELETE&")),
        ("z-mp", skippable(z_mp.as_bytes())),
        // Controls.
        (
            "ok-mp",
            format!(
                "--XyZb\r\n{cd}; name=\"payment_method\"\r\nContent-ID: <p1@local>\r\n\r\n\
                 card\r\n--XyZb\r\n{cd}; name=\"file\"; filename=\"a.txt\"\r\n\r\nhello\r\n--XyZb--\r\n"
            )
            .into_bytes(),
        ),
    ];
    for (f, b) in &files {
        std::fs::write(s.ws.join(f), b).unwrap();
    }
    let mp = "-H 'Content-Type: multipart/form-data; boundary=XyZb'";
    let zs = "-H 'Content-Encoding: zstd'";
    let api = "/api/x";
    let mut refused: Vec<(String, String, String)> = Vec::new();
    for f in [
        "cid", "cid-cd", "greedy", "sq", "sq-dot", "br-mp1", "br-mp2", "z-mp",
    ] {
        let extra = if f == "z-mp" { zs } else { "" };
        refused.push((
            f.into(),
            format!("{mp} {extra} --data-binary @{f}"),
            api.into(),
        ));
    }
    refused.push((
        "z-form".into(),
        format!("{zs} --data-binary @z-form"),
        api.into(),
    ));
    for (i, body) in [
        "[_method=DELETE",
        "_method]=DELETE",
        "]_method=DELETE",
        "_method%5D=DELETE",
        "[[_method]]=DELETE",
    ]
    .iter()
    .enumerate()
    {
        refused.push((
            format!("br-form{i}"),
            format!("--data-binary '{body}'"),
            api.into(),
        ));
    }
    for (i, q) in ["[_method]=DELETE", "_method]=DELETE", "]_method=DELETE"]
        .iter()
        .enumerate()
    {
        refused.push((
            format!("br-query{i}"),
            "-d a=1".into(),
            format!("{api}?{q}"),
        ));
    }
    let allowed: Vec<(String, String, String)> = vec![
        (
            "ok-form".into(),
            "-d 'a=1&payment_method=card'".into(),
            api.into(),
        ),
        (
            "ok-mp".into(),
            format!("{mp} --data-binary @ok-mp"),
            api.into(),
        ),
        (
            "ok-json".into(),
            "-H 'Content-Type: application/json' -d '{\"payment_method\":\"card\"}'".into(),
            api.into(),
        ),
        (
            "ok-query".into(),
            "-d a=1".into(),
            format!("{api}?payment_method=card&[a]=1"),
        ),
    ];
    let p = s.srv.port;
    let mut script = String::from("export NO_PROXY= no_proxy=; ");
    for (label, args, path) in refused.iter().chain(&allowed) {
        script.push_str(&curl(p, label, args, path));
    }
    let o = run(&s, user, &script);
    let text = format!("{}{}", out(&o), err(&o));
    let seen = s.srv.seen();
    for r in &seen {
        let body = String::from_utf8_lossy(&r.body);
        assert!(
            !body.contains("DELETE") && !r.path.contains("method]") && !r.path.contains("[_"),
            "a request naming _method reached the host with the credential: {} {body:.300}\n{text}",
            r.path
        );
        assert_eq!(
            r.header("authorization"),
            Some(&*format!("Bearer {VALUE}")),
            "{text}"
        );
    }
    for (label, _, _) in &refused {
        assert!(
            out(&o)
                .lines()
                .any(|l| l.starts_with(&format!("{label} 4"))),
            "{label} was not refused: {text}"
        );
    }
    for (label, _, _) in &allowed {
        assert!(
            out(&o).lines().any(|l| l == format!("{label} 200")),
            "{label} did not go: {text}"
        );
    }
    assert_eq!(seen.len(), allowed.len(), "{text}");
    assert!(err(&o).contains("names _method"), "{text}");
    assert!(err(&o).contains("query parameter _method"), "{text}");
}

/// atk27t F1, F2, F3, F6.
#[test]
fn method_names_as_rack_qs_and_php_read_them_are_refused() {
    spellings(false);
}

#[test]
fn method_names_as_rack_qs_and_php_read_them_are_refused_as_an_unprivileged_user() {
    if !is_root() {
        skarn_test_support::skip!("needs root to become uid 65534");
    }
    spellings(true);
}

/// atk27t F5: eight requests announcing 8 MiB bodies with the bound
/// secret and sending none of it hold none of the proxy's budget: a small
/// request with the secret still goes meanwhile (before: 503).
#[test]
fn idle_announced_bodies_do_not_starve_others() {
    if !host_has("curl", "--version") || !host_has("mkfifo", "--version") {
        skarn_test_support::skip!("curl or mkfifo is not installed");
    }
    let s = setup("f27u-idle");
    let p = s.srv.port;
    let script = format!(
        "export NO_PROXY= no_proxy=; P=; mkfifo ff; sleep 120 > ff & W=$!; \
         for i in 1 2 3 4 5 6 7 8; do \
           curl -sS -o /dev/null -X POST -H \"Authorization: Bearer $TOK\" \
             -H 'Content-Length: 8388608' -H 'Transfer-Encoding:' -H 'Expect:' \
             -T ff 'https://localhost:{p}/hog' 2>/dev/null & P=\"$P $!\"; \
         done; sleep 8; \
         printf 'small '; curl -sS -m 20 -o r.out -w '%{{http_code}}\\n' \
           -H \"Authorization: Bearer $TOK\" -d 'a=1' 'https://localhost:{p}/api/x'; \
         cat r.out >&2; kill $P $W; wait"
    );
    let o = run(&s, false, &script);
    let text = format!("{}{}", out(&o), err(&o));
    assert!(out(&o).lines().any(|l| l == "small 200"), "{text}");
    let seen = s.srv.seen();
    assert!(
        seen.iter().any(|r| r.path == "/api/x" && r.body == b"a=1"),
        "{text}"
    );
    assert!(seen.iter().all(|r| r.path != "/hog"), "{text}");
}

/// atk27t F8: while three 8 MiB JSON bodies of lone UTF-16 surrogates
/// (each read four wide ways) are judged, small requests with the secret
/// are still answered: the judge runs off the proxy's async threads
/// (before: the two runtime threads were busy judging for many seconds).
#[test]
fn large_bodies_being_judged_do_not_stall_others() {
    if !host_has("curl", "--version") {
        skarn_test_support::skip!("curl is not installed");
    }
    let s = setup("f27u-judge");
    let sur: Vec<u8> = [0x00u8, 0xd8].repeat(4 * 1024 * 1024 - 8);
    std::fs::write(s.ws.join("sur.bin"), sur).unwrap();
    let p = s.srv.port;
    let script = format!(
        "export NO_PROXY= no_proxy=; P=; \
         for i in 1 2 3; do \
           curl -sS -o /dev/null -H \"Authorization: Bearer $TOK\" \
             -H 'Content-Type: application/json' --data-binary @sur.bin \
             'https://localhost:{p}/big' & P=\"$P $!\"; \
         done; \
         n=0; while [ $n -lt 40 ] && kill -0 $P 2>/dev/null; do n=$((n+1)); \
           printf 'small '; curl -sS -m 20 -o /dev/null -w '%{{http_code}}\\n' \
             -H \"Authorization: Bearer $TOK\" -d 'a=1' 'https://localhost:{p}/api/x'; \
           sleep 1; \
         done; wait"
    );
    let o = run(&s, false, &script);
    let text = format!("{}{}", out(&o), err(&o));
    let stdout = out(&o);
    let smalls: Vec<&str> = stdout.lines().filter(|l| l.starts_with("small")).collect();
    assert!(!smalls.is_empty(), "{text}");
    assert!(smalls.iter().all(|l| *l == "small 200"), "{text}");
}

fn utf32(s: &str, le: bool) -> Vec<u8> {
    s.chars()
        .flat_map(|c| {
            let u = u32::from(c);
            if le { u.to_le_bytes() } else { u.to_be_bytes() }
        })
        .collect()
}

/// atk27t F7: the value in UTF-32 is a form like UTF-16: a bound host's
/// echo of it is scrubbed before the command reads it, and a workspace
/// file holding it stops the run (recorded as exposed).
#[test]
fn utf32_forms_of_the_value_are_scrubbed_and_found() {
    if !host_has("curl", "--version") {
        skarn_test_support::skip!("curl is not installed");
    }
    let s = setup_with("f27u-utf32", |r: &Request| {
        Response::ok(utf32(VALUE, r.path.ends_with("le")))
    });
    let p = s.srv.port;
    let mut script = String::from("export NO_PROXY= no_proxy=; ");
    for end in ["le", "be"] {
        script.push_str(&format!(
            "curl -sS -o echo.{end} -H \"Authorization: Bearer $TOK\" -d a=1 \
             'https://localhost:{p}/echo/{end}'; "
        ));
    }
    let o = run(&s, false, &script);
    let text = format!("{}{}", out(&o), err(&o));
    for (end, le) in [("le", true), ("be", false)] {
        let got = std::fs::read(s.ws.join(format!("echo.{end}"))).unwrap_or_default();
        assert!(!got.is_empty(), "{end}: {text}");
        let real = utf32(VALUE, le);
        assert!(
            !got.windows(real.len()).any(|w| w == &real[..])
                && !got.windows(40).any(|w| real.windows(40).any(|r| r == w)),
            "the UTF-32 {end} echo reached the command: {text}"
        );
    }
    // A workspace file holding the value in UTF-32 stops the run.
    let ws2 = s.root.join("ws2");
    std::fs::create_dir_all(&ws2).unwrap();
    std::fs::write(ws2.join("planted.bin"), utf32(VALUE, false)).unwrap();
    let net = format!("allow:127.0.0.1:{p}");
    let o = run_command(
        &ws2,
        &s.home,
        &["--secret", "s", "--net", &net],
        &["sh", "-c", "echo RAN-f27u"],
    )
    .output()
    .unwrap();
    assert!(!out(&o).contains("RAN-f27u"), "{}{}", out(&o), err(&o));
    assert!(err(&o).contains("exposed"), "{}{}", out(&o), err(&o));
}
