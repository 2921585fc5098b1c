use super::*;
use crate::secrets::SecretSpec;

fn bindings() -> Bindings {
    Bindings::new(&[SecretSpec {
        name: "tok".into(),
        env: "TOK".into(),
        placeholder: "PH0123456789".into(),
        value: Zeroizing::new("real-secret1".into()),
        hosts: vec!["api.test:8443".into()],
        methods: vec!["GET".into(), "POST".into()],
        paths: vec!["/v1/*".into()],
        header: None,
    }])
    .unwrap()
}

fn t() -> Target {
    Target::parse("api.test").unwrap()
}

fn ok(head: &str) -> Outgoing {
    prepare(head.as_bytes(), &t(), 8443, &bindings()).unwrap_or_else(|e| panic!("{e:?}"))
}

fn refused(head: &str) -> Refusal {
    match prepare(head.as_bytes(), &t(), 8443, &bindings()) {
        Ok(o) => panic!("sent: {}", String::from_utf8_lossy(&o.head)),
        Err(e) => e,
    }
}

#[test]
fn bearer_and_basic_are_substituted_where_bound() {
    let o = ok(
        "GET /v1/x HTTP/1.1\r\nHost: api.test:8443\r\nAuthorization: Bearer PH0123456789\r\n\r\n",
    );
    let h = String::from_utf8_lossy(&o.head).to_string();
    assert!(h.contains("Authorization: Bearer real-secret1\r\n"), "{h}");
    assert_eq!(o.used, vec![Found(0)]);
    let basic = STANDARD.encode("me:PH0123456789");
    let o = ok(&format!(
        "POST https://api.test:8443/v1/y HTTP/1.1\r\nHost: api.test:8443\r\nAuthorization: Basic {basic}\r\nContent-Length: 3\r\n\r\n"
    ));
    let h = String::from_utf8_lossy(&o.head).to_string();
    assert!(h.starts_with("POST /v1/y HTTP/1.1\r\n"), "{h}");
    assert!(h.contains(&STANDARD.encode("me:real-secret1")), "{h}");
    assert_eq!(o.framing, Framing::Length(3));
    assert_eq!(o.pairs.len(), 1);
}

#[test]
fn smuggling_attempts_are_refused() {
    for head in [
        // another host in Host, or two Host headers
        "GET /v1/x HTTP/1.1\r\nHost: evil.test\r\nAuthorization: Bearer PH0123456789\r\n\r\n",
        "GET /v1/x HTTP/1.1\r\nHost: api.test:8443\r\nHost: evil.test\r\nAuthorization: Bearer PH0123456789\r\n\r\n",
        // absolute-form naming another host
        "GET https://evil.test/v1/x HTTP/1.1\r\nHost: api.test:8443\r\nAuthorization: Bearer PH0123456789\r\n\r\n",
        "GET https://api.test:8443@evil.test/v1/x HTTP/1.1\r\nHost: api.test:8443\r\n\r\n",
        // folded header
        "GET /v1/x HTTP/1.1\r\nHost: api.test:8443\r\nX: a\r\n Authorization: Bearer PH0123456789\r\n\r\n",
        // ambiguous bodies
        "POST /v1/x HTTP/1.1\r\nHost: api.test:8443\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n",
        "POST /v1/x HTTP/1.1\r\nHost: api.test:8443\r\nContent-Length: 3\r\nContent-Length: 4\r\n\r\n",
        "POST /v1/x HTTP/1.1\r\nHost: api.test:8443\r\nTransfer-Encoding: gzip, chunked\r\n\r\n",
        // HTTP/2 preface
        "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n",
    ] {
        assert!(matches!(refused(head), Refusal::Bad(_)), "{head}");
    }
    for head in [
        "DELETE /v1/x HTTP/1.1\r\nHost: api.test:8443\r\nAuthorization: Bearer PH0123456789\r\n\r\n",
        "GET /v2/x HTTP/1.1\r\nHost: api.test:8443\r\nAuthorization: Bearer PH0123456789\r\n\r\n",
        "GET /v1/../admin HTTP/1.1\r\nHost: api.test:8443\r\nAuthorization: Bearer PH0123456789\r\n\r\n",
        "GET /v1/x?k=PH0123456789 HTTP/1.1\r\nHost: api.test:8443\r\n\r\n",
    ] {
        assert!(matches!(refused(head), Refusal::Secret { .. }), "{head}");
    }
    // Another port of the same name is another destination.
    assert!(
        prepare(
            b"GET /v1/x HTTP/1.1\r\nHost: api.test\r\nAuthorization: Bearer PH0123456789\r\n\r\n",
            &t(),
            443,
            &bindings()
        )
        .is_err()
    );
}

/// Finding F4 (atk27): a request carrying a method/path-bound secret
/// may not name another method or path in an override header or a
/// `_method` query parameter.
#[test]
fn method_and_path_overrides_are_refused_with_a_bound_secret() {
    let auth = "Authorization: Bearer PH0123456789\r\n";
    for extra in [
        "X-HTTP-Method-Override: DELETE\r\n",
        "x-http-method: DELETE\r\n",
        "X-Method-Override: DELETE\r\n",
        "X-Original-URL: /admin\r\n",
        "X-Rewrite-URL: /admin\r\n",
        "X-Forwarded-Prefix: /admin\r\n",
    ] {
        let head = format!("GET /v1/x HTTP/1.1\r\nHost: api.test:8443\r\n{auth}{extra}\r\n");
        assert!(matches!(refused(&head), Refusal::Secret { .. }), "{head}");
    }
    for q in [
        "_method=DELETE",
        "a=1&_method=DELETE",
        "%5Fmethod=DELETE",
        "_METHOD=x",
    ] {
        let head = format!("GET /v1/x?{q} HTTP/1.1\r\nHost: api.test:8443\r\n{auth}\r\n");
        assert!(matches!(refused(&head), Refusal::Secret { .. }), "{head}");
    }
    // Host overrides: refused with any secret (atk27d L2).
    let plain = "Authorization: Bearer PH0123456789\r\n";
    for extra in [
        "X-Forwarded-Host: evil.example\r\n",
        "Forwarded: for=1.2.3.4; host=evil.example\r\n",
        "X-Host: evil.example\r\n",
        "X-Original-Host: evil.example\r\n",
        "X-Original-URL: https://evil.example/\r\n",
    ] {
        let head = format!("GET /v1/x HTTP/1.1\r\nHost: api.test:8443\r\n{plain}{extra}\r\n");
        assert!(matches!(refused(&head), Refusal::Secret { .. }), "{head}");
    }
    ok(&format!(
        "GET /v1/x HTTP/1.1\r\nHost: api.test:8443\r\nForwarded: for=1.2.3.4\r\n{plain}\r\n"
    ));
    // Without the secret, or with a harmless parameter, they pass.
    ok(
        "GET /v1/x?_method=DELETE HTTP/1.1\r\nHost: api.test:8443\r\nX-HTTP-Method-Override: PUT\r\n\r\n",
    );
    ok(&format!(
        "GET /v1/x?method=a&x_method=b HTTP/1.1\r\nHost: api.test:8443\r\n{auth}\r\n"
    ));
}

/// atk27h F5: CGI/WSGI servers read `X_HTTP_Method_Override` as
/// `X-HTTP-Method-Override`; every name the checks know is compared so.
#[test]
fn underscore_spellings_of_known_headers_are_the_same_headers() {
    let auth = "Authorization: Bearer PH0123456789\r\n";
    for extra in [
        "X_HTTP_Method_Override: DELETE\r\n",
        "x-http_method: DELETE\r\n",
        "X_Original_URL: /admin\r\n",
        "X_Forwarded_Host: evil.example\r\n",
        "x_forwarded-HOST: evil.example\r\n",
        "X_Original_Host: evil.example\r\n",
    ] {
        let head = format!("GET /v1/x HTTP/1.1\r\nHost: api.test:8443\r\n{auth}{extra}\r\n");
        assert!(matches!(refused(&head), Refusal::Secret { .. }), "{head}");
    }
    for extra in [
        "Content_Length: 5\r\n",
        "Transfer_Encoding: chunked\r\n",
        "Proxy_Authorization: x\r\n",
        "Accept_Encoding: gzip\r\n",
    ] {
        let head = format!("GET /v1/x HTTP/1.1\r\nHost: api.test:8443\r\n{extra}\r\n");
        assert!(matches!(refused(&head), Refusal::Bad(_)), "{head}");
    }
    ok("GET /v1/x HTTP/1.1\r\nHost: api.test:8443\r\nX_Custom: 1\r\n\r\n");
}

/// atk27h F1: Host and framing are judged on their bytes (SP/HTAB
/// only trimmed) and forwarded as judged.
#[test]
fn host_and_framing_are_judged_on_their_exact_bytes() {
    for head in [
        "GET /v1/x HTTP/1.1\r\nHost: api.test:8443\u{a0}\r\n\r\n",
        "GET /v1/x HTTP/1.1\r\nHost: \u{3000}api.test:8443\r\n\r\n",
        "GET /v1/x HTTP/1.1\r\nHost: [api.test]:8443\r\n\r\n",
        "GET /v1/x HTTP/1.1\r\nHost: api.test:+8443\r\n\r\n",
        "GET /v1/x HTTP/1.1\r\nHost: api.test:08443\r\n\r\n",
        "POST /v1/x HTTP/1.1\r\nHost: api.test:8443\r\nTransfer-Encoding: chunked\u{85}\r\n\r\n",
        "POST /v1/x HTTP/1.1\r\nHost: api.test:8443\r\nContent-Length: 5\u{a0}\r\n\r\n",
        "POST /v1/x HTTP/1.1\r\nHost: api.test:8443\r\nConnection: close\u{2000}\r\n\r\n",
    ] {
        assert!(matches!(refused(head), Refusal::Bad(_)), "{head:?}");
    }
    let o = ok("POST /v1/x HTTP/1.1\r\nHost: \tapi.test:8443 \r\nContent-Length:  3\t\r\n\r\n");
    let h = String::from_utf8_lossy(&o.head).to_string();
    assert!(h.contains("\r\nHost: api.test:8443\r\n"), "{h}");
    assert!(h.contains("\r\nContent-Length: 3\r\n"), "{h}");
    assert_eq!(o.framing, Framing::Length(3));
}
