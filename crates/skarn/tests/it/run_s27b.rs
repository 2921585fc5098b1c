//! Issue 27, s27b: a method-bound secret is not sent with a request body
//! that names `_method` (form, multipart, JSON; chunked or gzip-coded),
//! nor with such a body past the bound the proxy reads before the head
//! goes; ordinary bodies still go with the value. Checked on a loopback
//! host that records what reached it; as root and as uid 65534.

use std::process::Output;

use crate::common::*;
use crate::support_secret_server::{self as server, Setup};
use crate::support_secret_sources::is_root;
use skarn_test_support::TempDir;
use skarn_test_support::tls_server::{Request, Response, TestCa, TlsServer};

/// The secret's real value: never readable inside the run.
const VALUE: &str = "Sb27Xq4Lm9Vt2Wn7Rc5Yb8Hs3Kd6Jf1G";

fn setup(name: &str, host: &str, extra: &str) -> Setup {
    server::setup(name, "s", VALUE, host, "TOK", extra)
}

fn run(s: &Setup, user: bool, port: u16, cmd: &[&str]) -> Output {
    server::run(s, user, port, true, cmd)
}

/// curl lines: (label, curl arguments after `-sS`), each printing its
/// label and status.
fn curl_script(port: u16, lines: &[(&str, &str)]) -> String {
    let mut script = String::from(
        "export NO_PROXY= no_proxy=; \
         printf '_method=DELETE' | gzip > gz.bin; \
         head -c 9000000 /dev/zero | tr '\\0' a > big.txt; \
         head -c 100000 /dev/zero | tr '\\0' b > small.txt; ",
    );
    for (label, args) in lines {
        script.push_str(&format!(
            "printf '%s ' '{label}'; curl -gsS -o r.out -w '%{{http_code}}\\n' \
             -H \"Authorization: Bearer $TOK\" {args} 'https://localhost:{port}/api/x'; \
             cat r.out >&2; rm -f r.out; "
        ));
    }
    script
}

/// A secret bound to POST: each body naming `_method` is refused before
/// anything reaches the host; the ordinary ones go with the value.
fn method_in_body(user: bool) {
    if !host_has("curl", "--version") || !host_has("gzip", "--version") {
        skarn_test_support::skip!("curl or gzip is not installed");
    }
    let ca = TestCa::new();
    let srv = TlsServer::start(&ca, &["localhost"], |r: &Request| {
        Response::ok(format!("{} bytes\n", r.body.len()).into_bytes())
    });
    let s = setup(
        &format!("s27b-method-{}", u8::from(user)),
        &format!("localhost:{}", srv.port),
        "methods = [\"POST\"]\n",
    );
    s.trust(&ca);
    let refused = [
        ("form", "-d 'a=1&_method=DELETE'"),
        ("form-php", "-d 'a=1&%5Fmethod=DELETE'"),
        ("multipart", "-F '_method=DELETE'"),
        (
            "json",
            "-H 'Content-Type: application/json' -d '{\"_method\":\"DELETE\"}'",
        ),
        (
            "chunked",
            "-H 'Transfer-Encoding: chunked' -d '_method=DELETE'",
        ),
        ("gzip", "-H 'Content-Encoding: gzip' --data-binary @gz.bin"),
        ("big", "--data-binary @big.txt"),
    ];
    let allowed = [
        ("plain-form", "-d 'a=1&payment_method=card'"),
        (
            "plain-multipart",
            "-F 'file=@small.txt;type=text/plain' -F 'b=2'",
        ),
        (
            "plain-json",
            "-H 'Content-Type: application/json' -d '{\"a\":\"_method\"}'",
        ),
        (
            "other-type",
            "-H 'Content-Type: application/octet-stream' --data-binary @big.txt",
        ),
    ];
    let lines: Vec<_> = refused.iter().chain(&allowed).copied().collect();
    let o = run(
        &s,
        user,
        srv.port,
        &["sh", "-c", &curl_script(srv.port, &lines)],
    );
    let text = format!("{}{}", out(&o), err(&o));
    let seen = srv.seen();
    for r in &seen {
        let body = String::from_utf8_lossy(&r.body);
        assert!(
            !["&_method=", "%5Fmethod", "name=\"_method\"", "{\"_method\""]
                .iter()
                .any(|m| body.contains(m))
                && !body.starts_with("_method")
                && !r.body.starts_with(b"\x1f\x8b")
                && r.body.len() < 9_000_000
                || r.header("content-type") == Some("application/octet-stream"),
            "a body naming _method reached the host with the credential: {body:.200}\n{text}"
        );
        assert_eq!(
            r.header("authorization"),
            Some(&*format!("Bearer {VALUE}")),
            "{text}"
        );
    }
    assert_eq!(seen.len(), allowed.len(), "{text}");
    for (label, _) in refused {
        assert!(
            out(&o)
                .lines()
                .any(|l| l.starts_with(&format!("{label} 4"))),
            "{label} was not refused: {text}"
        );
    }
    for (label, _) in allowed {
        assert!(
            out(&o).lines().any(|l| l == format!("{label} 200")),
            "{label} did not go: {text}"
        );
    }
    assert!(err(&o).contains("names _method"), "{text}");
    assert!(
        err(&o).contains("larger than 8 MiB") || text.contains("413"),
        "{text}"
    );
}

#[test]
fn a_method_override_in_a_request_body_is_refused() {
    method_in_body(false);
}

#[test]
fn a_method_override_in_a_request_body_is_refused_as_an_unprivileged_user() {
    if !is_root() {
        skarn_test_support::skip!("needs root to become uid 65534");
    }
    method_in_body(true);
}

/// The files the secret's value was found in after a probe.
fn exposed(home: &std::path::Path) -> usize {
    std::fs::read_dir(home.join(".local/state/skarn/exposed"))
        .map(|rd| rd.flatten().count())
        .unwrap_or(0)
}

/// zstd request bodies are decoded and searched (a piece of the value in
/// one is refused and recorded); an ordinary zstd upload and a gzip
/// upload decoding past 64 MiB (searched as a stream) go with the value.
fn coded_uploads(user: bool) {
    if !host_has("curl", "--version") || !host_has("zstd", "--version") {
        skarn_test_support::skip!("curl or zstd is not installed");
    }
    let ca = TestCa::new();
    let srv = TlsServer::start(&ca, &["localhost"], |r: &Request| {
        Response::ok(format!("{} bytes\n", r.body.len()).into_bytes())
    });
    let s = setup(
        &format!("s27b-zstd-{}", u8::from(user)),
        &format!("localhost:{}", srv.port),
        "",
    );
    s.trust(&ca);
    let piece = &VALUE[4..16];
    let script = format!(
        "export NO_PROXY= no_proxy=; \
         printf 'hello zstd' | zstd -q -c > ok.zst; \
         seq 1 10000000 | gzip -1 -c > big.gz; \
         printf 'x {piece} y' | zstd -q -c > p.zst; \
         for f in ok.zst:zstd big.gz:gzip p.zst:zstd; do \
           printf '%s ' \"${{f%%:*}}\"; \
           curl -sS -o r.out -w '%{{http_code}}\\n' -H \"Authorization: Bearer $TOK\" \
             -H \"Content-Encoding: ${{f#*:}}\" --data-binary \"@${{f%%:*}}\" \
             'https://localhost:{}/api/up'; cat r.out >&2; \
         done",
        srv.port
    );
    let o = run(&s, user, srv.port, &["sh", "-c", &script]);
    let text = format!("{}{}", out(&o), err(&o));
    let seen = srv.seen();
    let zst = std::fs::read(s.ws.join("ok.zst")).unwrap();
    let gz = std::fs::metadata(s.ws.join("big.gz")).unwrap().len();
    assert!(out(&o).contains("ok.zst 200"), "{text}");
    assert!(out(&o).contains("big.gz 200"), "{text}");
    assert!(out(&o).contains("p.zst 403"), "{text}");
    assert_eq!(seen.len(), 2, "{text}");
    assert_eq!(seen[0].body, zst, "{text}");
    assert_eq!(seen[1].body.len() as u64, gz, "{text}");
    for r in &seen {
        assert_eq!(r.header("authorization"), Some(&*format!("Bearer {VALUE}")));
    }
    assert!(exposed(&s.home) > 0, "the probe was not recorded: {text}");
}

#[test]
fn zstd_and_large_coded_uploads_are_searched_as_a_stream() {
    coded_uploads(false);
}

#[test]
fn zstd_and_large_coded_uploads_are_searched_as_a_stream_as_an_unprivileged_user() {
    if !is_root() {
        skarn_test_support::skip!("needs root to become uid 65534");
    }
    coded_uploads(true);
}

/// A run refused for a `file` secret's value in its arguments runs no
/// `command` source first: the source's marker is never written.
#[test]
fn a_refused_argument_runs_no_command_source() {
    let t = TempDir::new("s27b-argv");
    let home = t.dir("home");
    let ws = t.dir("ws");
    let vals = t.dir("vals");
    let marker = t.path().join("source-ran");
    std::fs::write(vals.join("f"), format!("{VALUE}\n")).unwrap();
    let src = format!("touch '{}'; echo Cv27Lq8Zx3Wm5Tn1", marker.display());
    std::fs::create_dir_all(home.join(".config/skarn")).unwrap();
    std::fs::write(
        home.join(".config/skarn/config.toml"),
        format!(
            "[secrets.f]\nfile = \"{}\"\nhosts = [\"example.test\"]\n\n\
             [secrets.c]\ncommand = [\"sh\", \"-c\", {src:?}]\nhosts = [\"example.test\"]\n",
            vals.join("f").display()
        ),
    )
    .unwrap();
    let o = run_command(&ws, &home, &["--secret", "c"], &["echo", VALUE])
        .output()
        .unwrap();
    let text = format!("{}{}", out(&o), err(&o));
    assert!(!o.status.success(), "{text}");
    assert!(err(&o).contains("argument 1"), "{text}");
    assert!(!out(&o).contains(VALUE), "{text}");
    assert!(
        !marker.exists(),
        "the command source ran for a refused run: {text}"
    );
    // The source still runs (and the run goes) with a clean command line.
    let o = run_command(&ws, &home, &["--secret", "c"], &["true"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}{}", out(&o), err(&o));
    assert!(marker.exists(), "{}{}", out(&o), err(&o));
}
