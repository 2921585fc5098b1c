//! Attack atk27k F5: a bound host reflecting the credential as HTML
//! numeric references without `;` (`&#66&#101...`), ECMAScript code-point
//! escapes (`\u{42}...`) or JavaScript's `%u0042` gets the placeholder
//! back, not the value: checked on the response the command printed,
//! decoded here as a browser or `unescape()` would.

use crate::common::*;
use skarn_test_support::TempDir;
use skarn_test_support::tls_server::{Request, Response, TestCa, TlsServer};

const REAL: &str = "gwREALvalue0123456789abcdefXYZ";

fn reflect(r: &Request) -> Response {
    let auth = r.header("authorization").unwrap_or("").to_string();
    let html: String = auth.chars().map(|c| format!("&#{}", c as u32)).collect();
    let js: String = auth
        .chars()
        .map(|c| format!("\\u{{{:x}}}", c as u32))
        .collect();
    let pct: String = auth
        .chars()
        .map(|c| format!("%u{:04X}", c as u32))
        .collect();
    Response::ok(format!("html={html}\njs={js}\npct={pct}\n"))
}

/// `text` with each of the three forms decoded.
fn decode(text: &str) -> String {
    let b = text.as_bytes();
    let mut out = String::new();
    let mut i = 0;
    let digits = |from: usize, radix: u32| {
        b[from..]
            .iter()
            .take_while(|c| (**c as char).is_digit(radix))
            .count()
    };
    while i < b.len() {
        if b[i..].starts_with(b"&#") {
            let n = digits(i + 2, 10);
            if n > 0 {
                let v: u32 = text[i + 2..i + 2 + n].parse().unwrap();
                out.push(char::from_u32(v).unwrap_or('?'));
                i += 2 + n + usize::from(b.get(i + 2 + n) == Some(&b';'));
                continue;
            }
        }
        if b[i..].starts_with(b"\\u{") {
            let n = digits(i + 3, 16);
            if n > 0 && b.get(i + 3 + n) == Some(&b'}') {
                let v = u32::from_str_radix(&text[i + 3..i + 3 + n], 16).unwrap();
                out.push(char::from_u32(v).unwrap_or('?'));
                i += 4 + n;
                continue;
            }
        }
        if b[i..].starts_with(b"%u") && digits(i + 2, 16) >= 4 {
            let v = u32::from_str_radix(&text[i + 2..i + 6], 16).unwrap();
            out.push(char::from_u32(v).unwrap_or('?'));
            i += 6;
            continue;
        }
        out.push(b[i] as char);
        i += 1;
    }
    out
}

#[test]
fn a_value_reflected_in_javascript_and_html_forms_is_scrubbed() {
    if !host_has("curl", "--version") {
        skarn_test_support::skip!("curl is not installed");
    }
    let t = TempDir::new("sec-27k-f5");
    let ca = TestCa::new();
    let ca_file = t.dir("ca").join("test-ca.pem");
    std::fs::write(&ca_file, &ca.cert_pem).unwrap();
    let srv = TlsServer::start(&ca, &["localhost"], reflect);
    let home = t.dir("home");
    let vals = t.dir("vals");
    std::fs::write(vals.join("tok"), REAL).unwrap();
    std::fs::create_dir_all(home.join(".config/skarn")).unwrap();
    std::fs::write(
        home.join(".config/skarn/config.toml"),
        format!(
            "[secrets.tok]\nfile = {:?}\nhosts = [\"localhost:{}\"]\nenv = \"TOKEN\"\n",
            vals.join("tok").display().to_string(),
            srv.port
        ),
    )
    .unwrap();
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
    // The host did get the value (and reflected it).
    assert!(
        srv.seen_text().contains(REAL),
        "{stdout}{}\n{}",
        err(&o),
        srv.seen_text()
    );
    assert!(stdout.contains("html=&#"), "{stdout}{}", err(&o));
    let decoded = decode(&stdout);
    for line in decoded.lines() {
        assert!(
            !line.contains(REAL),
            "reflected value readable: {line}\n{stdout}"
        );
    }
}
