//! Figures for atk27 F4, not a timed test: requests on one connection
//! through the TLS-terminating path, each with a distinct 60 KB header
//! that carries the placeholder (so the proxy makes a new header value
//! each time); the time per request and the process's peak memory (the
//! proxy runs in it). Run: `cargo bench -p skarn-egress --bench
//! produced_headers [N]`. Everything stays on loopback.

#![allow(clippy::unwrap_used)]

use std::fmt::Write as _;
use std::process::Command;
use std::sync::Arc;
use std::time::Instant;

use skarn_egress::secrets::SecretSpec;
use skarn_egress::{Interceptor, Limits, Listeners, Proxy, Resolver, Rules, make_run_ca};
use skarn_test_support::TempDir;
use skarn_test_support::tls_server::{Response, TestCa, TlsServer};
use zeroize::Zeroizing;

const VALUE: &str = "sk-live-Abc123Def456Ghi789Jkl012Mno345";

fn peak_kib() -> u64 {
    let s = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    s.lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches(" kB").trim().parse().ok())
        .unwrap_or(0)
}

fn main() {
    if Command::new("curl").arg("--version").output().is_err() {
        eprintln!("SKIPPED: curl is not installed");
        return;
    }
    let n: usize = std::env::args()
        .skip(1)
        .find_map(|a| a.parse().ok())
        .unwrap_or(12);
    let ca = TestCa::new();
    let srv = TlsServer::start(&ca, &["api.test"], |_| Response::ok("ok"));
    let port = srv.port;
    let spec = SecretSpec {
        name: "tok".into(),
        env: "TOK".into(),
        placeholder: skarn_egress::secrets::placeholder::make(VALUE).unwrap(),
        value: Zeroizing::new(VALUE.into()),
        hosts: vec![format!("api.test:{port}")],
        methods: Vec::new(),
        paths: Vec::new(),
        header: None,
    };
    let ph = spec.placeholder.clone();
    let run_ca = make_run_ca(&spec.hosts).unwrap();
    let ic = Interceptor::with_upstream_roots(&[spec], &run_ca, &ca.cert_pem).unwrap();
    let rules = Rules::parse(
        &[format!("api.test:{port}"), format!("127.0.0.1:{port}")],
        &[] as &[String],
    )
    .unwrap();
    let resolver = Resolver::system().with_override("api.test", vec!["127.0.0.1".parse().unwrap()]);
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let p = l.local_addr().unwrap().port();
    std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .unwrap();
        let px = Arc::new(
            Proxy::new(rules, resolver, Limits::default())
                .with_log(None)
                .with_secrets(ic),
        );
        let _ = rt.block_on(px.serve(
            Listeners {
                http: Some(l),
                socks: None,
            },
            std::future::pending(),
        ));
    });
    let dir = TempDir::new("bench-produced");
    let bundle = dir.path().join("bundle.pem");
    std::fs::write(&bundle, &run_ca.cert_pem).unwrap();
    // One curl, one connection, `n` requests, each with its own header.
    let mut cfg = String::new();
    for i in 0..n {
        let pad: String = (0..60_000)
            .map(|j| char::from(b'a' + ((i * 7919 + j * 31) % 26) as u8))
            .collect();
        let _ = writeln!(
            cfg,
            "url = \"https://api.test:{port}/echo\"\nheader = \"X-Pad: {pad}{ph}\"\n\
             output = \"/dev/null\"\nproxy = \"http://127.0.0.1:{p}\"\ncacert = \"{}\"\n\
             write-out = \"%{{http_code}}\\n\"\n{}",
            bundle.display(),
            if i + 1 < n { "next" } else { "" }
        );
    }
    let cfg_path = dir.path().join("curl.cfg");
    std::fs::write(&cfg_path, cfg).unwrap();
    let before = peak_kib();
    let t = Instant::now();
    let o = Command::new("curl")
        .args(["-sS", "-K", &cfg_path.display().to_string()])
        .output()
        .unwrap();
    let secs = t.elapsed().as_secs_f64();
    let codes = String::from_utf8_lossy(&o.stdout);
    if !o.status.success() {
        eprintln!("curl: {}", String::from_utf8_lossy(&o.stderr));
    }
    let ok = codes.lines().filter(|c| *c == "200").count();
    println!(
        "{n} distinct 60 KB credential headers: {ok} answered 200, {secs:.2} s ({:.0} ms/request), peak RSS {} MiB (before {} MiB)",
        secs * 1000.0 / n as f64,
        peak_kib() / 1024,
        before / 1024
    );
}
