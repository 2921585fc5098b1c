//! Issue 27, f27s: a method-bound secret is not sent with a multipart
//! body naming `_method` through RFC 2231 pieces (`name*0`/`name*1`,
//! percent-coded `name*0*`), nor with a JSON or form body in UTF-16/32,
//! nor with a body in a charset the check does not read; and the proxy
//! holds at most one budget of such bodies at once (503 past it). Checked
//! on a loopback host that records what reached it; as root and uid 65534.

use std::process::Output;

use crate::common::*;
use crate::support_secret_server as server;
use crate::support_secret_sources::is_root;
use skarn_test_support::TempDir;
use skarn_test_support::tls_server::{Request, Response, TestCa, TlsServer};

/// The secret's real value: never readable inside the run.
const VALUE: &str = "Fq27Zs4Lm9Vt2Wn7Rc5Yb8Hs3Kd6JxPe";

struct Setup {
    base: server::Setup,
    srv: TlsServer,
}

fn setup(name: &str) -> Setup {
    let ca = TestCa::new();
    let srv = TlsServer::start(&ca, &["localhost"], |r: &Request| {
        Response::ok(format!("{} bytes\n", r.body.len()).into_bytes())
    });
    let host = format!("localhost:{}", srv.port);
    let base = server::setup(name, "s", VALUE, &host, "TOK", "methods = [\"POST\"]\n");
    base.trust(&ca);
    Setup { base, srv }
}

fn run(s: &Setup, user: bool, script: &str) -> Output {
    server::run(&s.base, user, s.srv.port, true, &["sh", "-c", script])
}

/// One curl line: label, then the status.
fn curl(port: u16, label: &str, args: &str) -> String {
    format!(
        "printf '%s ' '{label}'; curl -gsS -o r.out -w '%{{http_code}}\\n' \
         -H \"Authorization: Bearer $TOK\" {args} 'https://localhost:{port}/api/x'; \
         cat r.out >&2; rm -f r.out; "
    )
}

fn wide(s: &str, unit: usize, le: bool, bom: bool) -> Vec<u8> {
    let mut out = Vec::new();
    let cs: Vec<u32> = if bom { vec![0xfeff] } else { vec![] };
    let units: Vec<u32> = if unit == 2 {
        s.encode_utf16().map(u32::from).collect()
    } else {
        s.chars().map(u32::from).collect()
    };
    for u in cs.into_iter().chain(units) {
        let b = u.to_le_bytes();
        let b = &b[..unit];
        if le {
            out.extend_from_slice(b);
        } else {
            out.extend(b.iter().rev());
        }
    }
    out
}

fn overrides(user: bool) {
    if !host_has("curl", "--version") {
        skarn_test_support::skip!("curl is not installed");
    }
    let s = setup(&format!("f27s-override-{}", u8::from(user)));
    let mp = |d: &str| {
        format!("--XX\r\nContent-Disposition: form-data; {d}\r\n\r\nDELETE\r\n--XX--\r\n")
    };
    let json = "{\"a\":1,\"_method\":\"DELETE\"}";
    let files: [(&str, Vec<u8>); 7] = [
        ("m-cont", mp("name*0=\"_me\"; name*1=\"thod\"").into_bytes()),
        (
            "m-pct",
            mp("name*0*=utf-8''%5Fme; name*1=thod").into_bytes(),
        ),
        (
            "m-dup",
            mp("name=\"a\"; name*0*=utf-8''%5Fme; name*1=thod").into_bytes(),
        ),
        ("j16le", wide(json, 2, true, false)),
        ("j16bom", wide(json, 2, false, true)),
        ("j32", wide(json, 4, true, false)),
        ("ok-mp", mp("name*0=\"fi\"; name*1=\"le\"").into_bytes()),
    ];
    for (f, b) in &files {
        std::fs::write(s.base.ws.join(f), b).unwrap();
    }
    let p = s.srv.port;
    let multipart = "-H 'Content-Type: multipart/form-data; boundary=XX'";
    let refused = [
        ("m-cont", format!("{multipart} --data-binary @m-cont")),
        ("m-pct", format!("{multipart} --data-binary @m-pct")),
        ("m-dup", format!("{multipart} --data-binary @m-dup")),
        (
            "j16le",
            "-H 'Content-Type: application/json; charset=utf-16le' --data-binary @j16le".into(),
        ),
        (
            "j16bom",
            "-H 'Content-Type: application/json; charset=utf-16' --data-binary @j16bom".into(),
        ),
        (
            "j32",
            "-H 'Content-Type: application/json; charset=utf-32le' --data-binary @j32".into(),
        ),
        (
            "utf7",
            "-H 'Content-Type: application/json; charset=utf-7' -d '{\"+AF8-method\":1}'".into(),
        ),
    ];
    let allowed = [
        ("ok-mp", format!("{multipart} --data-binary @ok-mp")),
        (
            "ok-json",
            "-H 'Content-Type: application/json; charset=utf-8' -d '{\"a\":\"_method\"}'".into(),
        ),
    ];
    let mut script = String::from("export NO_PROXY= no_proxy=; ");
    for (label, args) in refused.iter().chain(&allowed) {
        script.push_str(&curl(p, label, args));
    }
    let o = run(&s, user, &script);
    let text = format!("{}{}", out(&o), err(&o));
    let seen = s.srv.seen();
    for r in &seen {
        assert_eq!(
            r.header("authorization"),
            Some(&*format!("Bearer {VALUE}")),
            "{text}"
        );
        assert!(
            files[6].1 == r.body || r.body.starts_with(b"{\"a\":\"_method\"}"),
            "a body naming _method reached the host with the credential: {:?}\n{text}",
            String::from_utf8_lossy(&r.body)
        );
    }
    assert_eq!(seen.len(), allowed.len(), "{text}");
    for (label, _) in &refused {
        assert!(
            out(&o)
                .lines()
                .any(|l| l.starts_with(&format!("{label} 4"))),
            "{label} was not refused: {text}"
        );
    }
    for (label, _) in &allowed {
        assert!(
            out(&o).lines().any(|l| l == format!("{label} 200")),
            "{label} did not go: {text}"
        );
    }
    assert!(err(&o).contains("ambiguous"), "{text}");
    assert!(err(&o).contains("charset utf-7"), "{text}");
}

#[test]
fn rfc2231_part_names_and_wide_bodies_are_judged() {
    overrides(false);
}

#[test]
fn rfc2231_part_names_and_wide_bodies_are_judged_as_an_unprivileged_user() {
    if !is_root() {
        skarn_test_support::skip!("needs root to become uid 65534");
    }
    overrides(true);
}

/// Nine slow uploads of 8 MB form bodies at once, each held before its
/// method-bound secret goes: past the proxy's 64 MiB budget of held bodies
/// the next is refused (503, said) instead of growing the proxy.
#[test]
fn held_bodies_share_one_budget() {
    if !host_has("curl", "--version") {
        skarn_test_support::skip!("curl is not installed");
    }
    let s = setup("f27s-budget");
    std::fs::write(s.base.ws.join("big.txt"), vec![b'a'; 8_000_000]).unwrap();
    let p = s.srv.port;
    let script = format!(
        "export NO_PROXY= no_proxy=; \
         for i in 1 2 3 4 5 6 7 8 9; do \
           curl -gsS -o r.$i -w '%{{http_code}}\\n' --limit-rate 400K \
             -H \"Authorization: Bearer $TOK\" --data-binary @big.txt \
             'https://localhost:{p}/api/x' > st.$i 2>&1 & \
         done; wait; cat st.*; cat r.* >&2"
    );
    let o = run(&s, false, &script);
    let text = format!("{}{}", out(&o), err(&o));
    assert!(out(&o).lines().any(|l| l == "503"), "{text}");
    assert!(err(&o).contains("MiB of request bodies"), "{text}");
    assert!(s.srv.seen().len() < 9, "{text}");
}

/// A long value of letters (no structure), `n` bytes, from a seed.
fn long_value(n: usize, seed: u64) -> String {
    let mut x = seed;
    (0..n)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            char::from(b'a' + (x % 26) as u8)
        })
        .collect()
}

/// F5: a configuration holding 4 KiB and 16 KiB values (not granted)
/// starts a run promptly (the old set-up was quadratic per value: many
/// minutes), and a long value given as an argument is still refused.
#[test]
fn long_configured_values_start_promptly_and_are_still_refused() {
    let t = TempDir::new("f27s-long");
    let home = t.dir("home");
    let ws = t.dir("ws");
    let vals = t.dir("vals");
    let four = long_value(4096, 0x9e37_79b9_7f4a_7c15);
    let sixteen = long_value(16384, 0x2545_f491_4f6c_dd1d);
    std::fs::write(vals.join("a"), format!("{VALUE}\n")).unwrap();
    std::fs::write(vals.join("b"), format!("{four}\n")).unwrap();
    std::fs::write(vals.join("c"), format!("{sixteen}\n")).unwrap();
    std::fs::create_dir_all(home.join(".config/skarn")).unwrap();
    let mut cfg = String::new();
    for n in ["a", "b", "c"] {
        cfg.push_str(&format!(
            "[secrets.{n}]\nfile = \"{}\"\nhosts = [\"example.test\"]\nenv = \"{}\"\n\n",
            vals.join(n).display(),
            n.to_uppercase()
        ));
    }
    std::fs::write(home.join(".config/skarn/config.toml"), cfg).unwrap();
    let within = |mut c: std::process::Command| -> Output {
        let mut child = c
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        for _ in 0..1800 {
            if child.try_wait().unwrap().is_some() {
                return child.wait_with_output().unwrap();
            }
            std::thread::sleep(std::time::Duration::from_millis(100));
        }
        let _ = child.kill();
        let o = child.wait_with_output().unwrap();
        panic!("the run did not finish in 180 s: {}{}", out(&o), err(&o));
    };
    let o = within(run_command(
        &ws,
        &home,
        &["--secret", "a"],
        &["sh", "-c", "echo ran"],
    ));
    assert!(o.status.success(), "{}{}", out(&o), err(&o));
    assert!(out(&o).contains("ran"), "{}{}", out(&o), err(&o));
    let o = within(run_command(
        &ws,
        &home,
        &["--secret", "a"],
        &["echo", &sixteen],
    ));
    assert!(!o.status.success(), "{}", err(&o));
    assert!(err(&o).contains("argument 1"), "{}", err(&o));
    assert!(!out(&o).contains(&sixteen[..64]));
}
