//! Figures for the TLS-terminating path (issue 27), not a timed test: a
//! local HTTPS server with its own CA, reached by curl directly, through the
//! proxy as a plain CONNECT tunnel, and through the proxy's TLS-terminating
//! path with a placeholder substituted; 100 MiB down and up, 1,000 small
//! requests on one connection, and time to first byte, the three
//! interleaved round by round. The 100 MiB bodies are one repeated byte
//! (the scrubber's best case), JSON-like text full of `\`, `%` and `&`
//! escapes, and random bytes, so the figures measure the decoded search
//! of what comes down (the scrub) and of what goes up (the probe search,
//! ADR 0314: atk27r's critique). Two rows set a floor (issue 27, ADR
//! 0337): a bare TLS-terminating relay (decrypt and re-encrypt only, no
//! HTTP, no search), and the search alone (the echo scrubber and the
//! probe search in-process over the same bodies in 16 KiB reads, CPU time of
//! one thread, best of 5 (`SKARN_BENCH_BEST`), with the
//! sieve and with the full search the path had before it). Run: `cargo bench -p skarn-egress --bench secrets` (or
//! bench/egress/secrets.sh). Everything stays on loopback.

#![allow(clippy::unwrap_used)]

#[path = "secrets_floor/relay.rs"]
mod relay;

use std::process::Command;
use std::sync::Arc;

use skarn_egress::secrets::SecretSpec;
use skarn_egress::{Interceptor, Limits, Listeners, Proxy, Resolver, Rules, make_run_ca};
use skarn_test_support::TempDir;
use skarn_test_support::tls_server::{Response, TestCa, TlsServer};
use zeroize::Zeroizing;

const BIG: usize = 100 << 20;
const VALUE: &str = "bench-REAL-value-0123456789abcdef";

fn proxy(port: u16, bind_to: &str, test_ca: &str) -> (u16, String, String) {
    let spec = SecretSpec {
        name: "bench".into(),
        env: "BENCH".into(),
        placeholder: skarn_egress::secrets::placeholder::make(VALUE).unwrap(),
        value: Zeroizing::new(VALUE.into()),
        hosts: vec![bind_to.into()],
        methods: Vec::new(),
        paths: Vec::new(),
        header: None,
    };
    let ph = spec.placeholder.clone();
    let ca = make_run_ca(&spec.hosts).unwrap();
    let ic = Interceptor::with_upstream_roots(&[spec], &ca, test_ca).unwrap();
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
    (p, ca.cert_pem, ph)
}

struct Mode {
    name: &'static str,
    args: Vec<String>,
}

fn curl(m: &Mode, extra: &[String]) -> Vec<f64> {
    let o = Command::new("curl")
        .args([
            "-sS",
            "-w",
            "%{time_starttransfer} %{time_total} %{speed_download} %{speed_upload}\\n",
        ])
        .args(&m.args)
        .args(extra)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    String::from_utf8_lossy(&o.stdout)
        .split_whitespace()
        .map(|x| x.parse().unwrap())
        .collect()
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    v[v.len() / 2]
}

/// Newline-separated JSON records, none the same, with the escapes real
/// text carries (`\/`, `\u00e9`, `%20`, `&amp;`).
fn json_text(n: usize) -> Vec<u8> {
    let mut out = Vec::with_capacity(n + 256);
    let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut i = 0u64;
    while out.len() < n {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        out.extend_from_slice(
            format!(
                "{{\"id\":{i},\"name\":\"pkg-{x:016x}\",\"url\":\"https:\\/\\/files.example.test\\/{}\\/a%20b?v={}&amp;q=\\u00e9\",\"size\":{}}}\n",
                x % 9973,
                x >> 40,
                x % 1_000_003
            )
            .as_bytes(),
        );
        i += 1;
    }
    out.truncate(n);
    out
}

/// `n` pseudo-random bytes (xorshift: no two reads alike).
fn random_bytes(n: usize) -> Vec<u8> {
    let mut x: u64 = 0x2545_f491_4f6c_dd1d;
    let mut out = Vec::with_capacity(n + 8);
    while out.len() < n {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        out.extend_from_slice(&x.to_le_bytes());
    }
    out.truncate(n);
    out
}

fn main() {
    if Command::new("curl").arg("--version").output().is_err() {
        eprintln!("SKIPPED: curl is not installed");
        return;
    }
    let bodies: Arc<[(&str, Vec<u8>); 3]> = Arc::new([
        ("x", vec![b'x'; BIG]),
        ("json", json_text(BIG)),
        ("random", random_bytes(BIG)),
    ]);
    // `SKARN_BENCH_SEARCH_ONLY=1`: the search-alone rows only (seconds,
    // not minutes: for profiling the search).
    if std::env::var_os("SKARN_BENCH_SEARCH_ONLY").is_some() {
        search_alone(&bodies);
        startup();
        return;
    }
    let b2 = bodies.clone();
    let ca = TestCa::new();
    let srv = TlsServer::start(&ca, &["api.test"], move |r| {
        match b2.iter().find(|(n, _)| r.path == format!("/big/{n}")) {
            Some((_, b)) => Response::ok(b.as_slice()),
            None => Response::ok("ok"),
        }
    });
    let port = srv.port;
    let dir = TempDir::new("bench-secrets");
    let uploads: Vec<(&str, String)> = bodies[1..]
        .iter()
        .map(|(n, b)| {
            let f = dir.path().join(format!("up-{n}"));
            std::fs::write(&f, b).unwrap();
            (*n, f.display().to_string())
        })
        .collect();
    let test_ca = dir.path().join("test-ca.pem");
    std::fs::write(&test_ca, &ca.cert_pem).unwrap();
    // Plain CONNECT: the secret is bound to another host.
    let (plain, _, _) = proxy(port, "elsewhere.test", &ca.cert_pem);
    let (term, run_ca, ph) = proxy(port, &format!("api.test:{port}"), &ca.cert_pem);
    let bundle = dir.path().join("bundle.pem");
    std::fs::write(&bundle, format!("{run_ca}{}", ca.cert_pem)).unwrap();
    let (bare, bare_ca) = relay::start(port, &ca.cert_pem);
    let bare_bundle = dir.path().join("bare.pem");
    std::fs::write(&bare_bundle, bare_ca).unwrap();
    let s = |x: &str| x.to_string();
    let auth = format!("Authorization: Bearer {ph}");
    let modes = [
        Mode {
            name: "direct",
            args: vec![
                s("--cacert"),
                test_ca.display().to_string(),
                s("--resolve"),
                format!("api.test:{port}:127.0.0.1"),
            ],
        },
        Mode {
            name: "CONNECT tunnel",
            args: vec![
                s("--cacert"),
                test_ca.display().to_string(),
                s("-x"),
                format!("http://127.0.0.1:{plain}"),
            ],
        },
        Mode {
            name: "bare TLS relay",
            args: vec![
                s("--cacert"),
                bare_bundle.display().to_string(),
                s("-x"),
                format!("http://127.0.0.1:{bare}"),
            ],
        },
        Mode {
            name: "TLS-terminating",
            args: vec![
                s("--cacert"),
                bundle.display().to_string(),
                s("-x"),
                format!("http://127.0.0.1:{term}"),
                s("-H"),
                auth,
            ],
        },
    ];
    let url = |p: &str| format!("https://api.test:{port}{p}");
    let small_cfg = dir.path().join("small.cfg");
    let mut cfg = String::new();
    for _ in 0..1000 {
        cfg.push_str(&format!(
            "url = \"{}\"\noutput = \"/dev/null\"\n",
            url("/small")
        ));
    }
    std::fs::write(&small_cfg, cfg).unwrap();
    let rounds = 3;
    let mib = |b: f64| b / f64::from(1u32 << 20);
    // Per mode: MiB/s down for each body, up for each upload.
    let n = modes.len();
    let mut down = vec![vec![Vec::new(); bodies.len()]; n];
    let mut up = vec![vec![Vec::new(); uploads.len()]; n];
    let mut small_ms = vec![Vec::new(); n];
    let mut ttfb_ms = vec![Vec::new(); n];
    let mut subst = 0;
    let substituted = |srv: &TlsServer| {
        srv.seen()
            .iter()
            .filter(|r| r.header("authorization") == Some(&*format!("Bearer {VALUE}")))
            .count()
    };
    for _ in 0..rounds {
        for (i, m) in modes.iter().enumerate() {
            for (k, (n, _)) in bodies.iter().enumerate() {
                let r = curl(m, &[s("-o"), s("/dev/null"), url(&format!("/big/{n}"))]);
                down[i][k].push(mib(r[2]));
            }
            for (k, (_, f)) in uploads.iter().enumerate() {
                let r = curl(
                    m,
                    &[
                        s("-o"),
                        s("/dev/null"),
                        s("--data-binary"),
                        format!("@{f}"),
                        url("/up"),
                    ],
                );
                up[i][k].push(mib(r[3]));
                // The server keeps what it received: not 100 MiB a time.
                subst += substituted(&srv);
                srv.clear();
            }
            let t0 = std::time::Instant::now();
            let _ = curl(m, &[s("-K"), small_cfg.display().to_string()]);
            small_ms[i].push(t0.elapsed().as_secs_f64() * 1000.0);
            for _ in 0..4 {
                let r = curl(m, &[s("-o"), s("/dev/null"), url("/small")]);
                ttfb_ms[i].push(r[0] * 1000.0);
            }
        }
    }
    println!("loopback, {rounds} interleaved rounds, medians (curl, one connection per run):");
    for (i, m) in modes.iter().enumerate() {
        let mut line = format!("{:16}", m.name);
        for (k, (n, _)) in bodies.iter().enumerate() {
            line.push_str(&format!(" down {n} {:5.0}", median(down[i][k].clone())));
        }
        for (k, (n, _)) in uploads.iter().enumerate() {
            line.push_str(&format!(" up {n} {:5.0}", median(up[i][k].clone())));
        }
        println!(
            "{line} MiB/s   1000 small requests {:7.1} ms   first byte {:6.2} ms",
            median(small_ms[i].clone()),
            median(ttfb_ms[i].clone()),
        );
    }
    let subst = subst + substituted(&srv);
    println!("(requests that reached the server with the value substituted: {subst})");
    search_alone(&bodies);
    startup();
}

/// A run's start-up with one long value (s27e): its windows cut, the
/// scrubber's and the probe search's matchers built.
fn startup() {
    for n in [40, 4096, 16384] {
        let value: String = random_bytes(n)
            .iter()
            .map(|b| char::from(b'a' + b % 26))
            .collect();
        let (cut, scrub, probe) = skarn_egress::bench_startup_seconds(&value).unwrap();
        println!(
            "start-up, a {n}-byte value: windows {:6.1} ms, scrubber {:6.1} ms, probe search {:6.1} ms",
            cut * 1e3,
            scrub * 1e3,
            probe * 1e3
        );
    }
}

fn search_alone(bodies: &[(&str, Vec<u8>); 3]) {
    let mib = |b: f64| b / f64::from(1u32 << 20);
    // The search alone, one core (the thread's CPU time, s27e), the first
    // 32 MiB of each body.
    // `SKARN_BENCH_SEARCH_ONLY=sieve`: without the full search's row.
    let only_sieve = std::env::var_os("SKARN_BENCH_SEARCH_ONLY").is_some_and(|v| v == "sieve");
    // `SKARN_BENCH_BODY=json` (or `x`, `random`): that body alone, for a
    // profile of one body's search.
    let body = std::env::var("SKARN_BENCH_BODY").ok();
    let best: usize = std::env::var("SKARN_BENCH_BEST")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(5)
        .max(1);
    for full in [false, true] {
        if full && only_sieve {
            break;
        }
        let mut line = format!(
            "search alone, {:14}",
            if full { "full (before)" } else { "sieve" }
        );
        for (n, b) in bodies.iter() {
            if body.as_deref().is_some_and(|w| w != *n) {
                continue;
            }
            let b = &b[..32 << 20];
            // The best of `SKARN_BENCH_BEST` runs (5): on a loaded machine
            // the fastest run is the one that had a core to itself.
            let (mut sc, mut pr) = (f64::MAX, f64::MAX);
            for _ in 0..best {
                let (s1, p1) =
                    skarn_egress::bench_search_seconds(VALUE, b, 16 << 10, full).unwrap();
                (sc, pr) = (sc.min(s1), pr.min(p1));
            }
            line.push_str(&format!(
                " {n}: scrub {:5.0} probe {:5.0}",
                mib(b.len() as f64) / sc,
                mib(b.len() as f64) / pr
            ));
        }
        println!("{line} MiB/s");
    }
}
