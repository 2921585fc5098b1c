//! Relay figures of the egress proxy, in-process on loopback (not a test):
//! throughput of one 100 MiB transfer and of 50 parallel transfers, and the
//! time to the first byte of a small answer, direct vs through the proxy's
//! CONNECT tunnel (zero-copy path, and the copying path it replaced),
//! interleaved round by round, beside a bare blocking splice forwarder
//! with no checks (the floor any relay on this host can reach). See
//! bench/egress/relay.sh.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::Arc;
use std::time::{Duration, Instant};

use skarn_egress::{Limits, Listeners, Proxy, Resolver, Rules};

type Res<T> = Result<T, Box<dyn std::error::Error + Send + Sync>>;

/// Upstream: reads a line with a byte count, answers with that many bytes.
fn source() -> Res<u16> {
    let l = TcpListener::bind("127.0.0.1:0")?;
    let port = l.local_addr()?.port();
    std::thread::spawn(move || {
        let chunk = vec![b'x'; 1 << 20];
        for s in l.incoming().flatten() {
            let chunk = chunk.clone();
            std::thread::spawn(move || -> std::io::Result<()> {
                s.set_nodelay(true)?;
                let mut r = BufReader::new(s.try_clone()?);
                let mut line = String::new();
                r.read_line(&mut line)?;
                let mut left: usize = line.trim().parse().unwrap_or(0);
                let mut w = s;
                while left > 0 {
                    let n = left.min(chunk.len());
                    w.write_all(&chunk[..n])?;
                    left -= n;
                }
                Ok(())
            });
        }
    });
    Ok(port)
}

/// The floor of any relay on this host: a bare forwarder to the source,
/// one thread per direction, blocking `splice(2)` through a 256 KiB pipe,
/// no checks, no runtime. Whatever it loses against direct is the kernel's
/// cost of a second TCP hop, not the proxy's. (Linux: `splice(2)`.)
#[cfg(target_os = "linux")]
fn floor(port: u16) -> Res<u16> {
    use rustix::pipe::{SpliceFlags, fcntl_setpipe_size, pipe, splice};
    fn pump(src: TcpStream, dst: TcpStream) {
        let Ok((r, w)) = pipe() else { return };
        let _ = fcntl_setpipe_size(&w, 256 * 1024);
        loop {
            match splice(&src, None, &w, None, 256 * 1024, SpliceFlags::MOVE) {
                Ok(0) | Err(_) => break,
                Ok(mut n) => {
                    while n > 0 {
                        match splice(&r, None, &dst, None, n, SpliceFlags::MOVE) {
                            Ok(0) | Err(_) => return,
                            Ok(k) => n -= k,
                        }
                    }
                }
            }
        }
        let _ = dst.shutdown(std::net::Shutdown::Write);
    }
    let l = TcpListener::bind("127.0.0.1:0")?;
    let fport = l.local_addr()?.port();
    std::thread::spawn(move || {
        for c in l.incoming().flatten() {
            let Ok(u) = TcpStream::connect(("127.0.0.1", port)) else {
                continue;
            };
            let _ = (c.set_nodelay(true), u.set_nodelay(true));
            let (Ok(c2), Ok(u2)) = (c.try_clone(), u.try_clone()) else {
                continue;
            };
            std::thread::spawn(move || pump(c, u));
            std::thread::spawn(move || pump(u2, c2));
        }
    });
    Ok(fport)
}

/// Elsewhere the bare forwarder is not measured.
#[cfg(not(target_os = "linux"))]
fn floor(_port: u16) -> Res<u16> {
    Err("the bare splice forwarder runs on Linux only".into())
}

/// Open a stream to the source, directly or through the proxy's CONNECT.
fn open(port: u16, proxy: Option<u16>) -> Res<TcpStream> {
    let Some(p) = proxy else {
        let s = TcpStream::connect(("127.0.0.1", port))?;
        s.set_nodelay(true)?;
        return Ok(s);
    };
    let mut s = TcpStream::connect(("127.0.0.1", p))?;
    s.set_nodelay(true)?;
    write!(s, "CONNECT 127.0.0.1:{port} HTTP/1.1\r\nHost: b\r\n\r\n")?;
    // The answer head ends with an empty line.
    let mut head = Vec::new();
    let mut b = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") {
        s.read_exact(&mut b)?;
        head.push(b[0]);
    }
    if !head.starts_with(b"HTTP/1.1 200") {
        return Err(format!("proxy answered {}", String::from_utf8_lossy(&head)).into());
    }
    Ok(s)
}

/// Fetch `n` bytes; the time to the first byte and the total time.
fn fetch(port: u16, proxy: Option<u16>, n: usize) -> Res<(Duration, Duration)> {
    let t0 = Instant::now();
    let mut s = open(port, proxy)?;
    writeln!(s, "{n}")?;
    let mut buf = vec![0u8; 1 << 20];
    let mut got = s.read(&mut buf)?;
    let first = t0.elapsed();
    while got < n {
        let k = s.read(&mut buf)?;
        if k == 0 {
            return Err(format!("short: {got} of {n}").into());
        }
        got += k;
    }
    Ok((first, t0.elapsed()))
}

fn parallel(port: u16, proxy: Option<u16>, conns: usize, total: usize) -> Res<Duration> {
    let t0 = Instant::now();
    let each = total / conns;
    let hs: Vec<_> = (0..conns)
        .map(|_| std::thread::spawn(move || fetch(port, proxy, each).map_err(|e| e.to_string())))
        .collect();
    for h in hs {
        h.join().map_err(|_| "thread panicked")??;
    }
    Ok(t0.elapsed())
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() -> Res<()> {
    let rounds: usize = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(7);
    let port = source()?;
    let l = TcpListener::bind("127.0.0.1:0")?;
    let proxy = l.local_addr()?.port();
    let rules = Rules::parse(&[&format!("127.0.0.1:{port}")], &[])?;
    // The proxy as `skarn run` runs it: a runtime of its own, two workers.
    std::thread::spawn(move || -> Res<()> {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()?;
        let p = Arc::new(Proxy::new(rules, Resolver::system(), Limits::default()).with_log(None));
        let lis = Listeners {
            http: Some(l),
            socks: None,
        };
        rt.block_on(p.serve(lis, std::future::pending()))?;
        Ok(())
    });
    const BIG: usize = 100 << 20;
    let fport = floor(port)?;
    let names = [
        "direct",
        "proxy zero-copy",
        "proxy copying",
        "bare splice relay",
    ];
    let mut big = [vec![], vec![], vec![], vec![]];
    let mut par = [vec![], vec![], vec![], vec![]];
    let mut ttfb = [vec![], vec![], vec![], vec![]];
    for _ in 0..rounds {
        for (i, via) in [(0, None), (1, Some(proxy)), (2, Some(proxy)), (3, None)] {
            skarn_egress::bench_copy_only(i == 2);
            // The bare relay is reached like the source itself, on its port.
            let port = if i == 3 { fport } else { port };
            let (_, t) = fetch(port, via, BIG)?;
            big[i].push(BIG as f64 / t.as_secs_f64() / f64::from(1 << 20));
            let t = parallel(port, via, 50, BIG)?;
            par[i].push(BIG as f64 / t.as_secs_f64() / f64::from(1 << 20));
            for _ in 0..20 {
                let (f, _) = fetch(port, via, 2)?;
                ttfb[i].push(f.as_secs_f64() * 1e3);
            }
        }
    }
    println!(
        "{rounds} interleaved rounds, medians (loopback, proxy in-process with 2 workers; \
         bare splice relay: blocking threads, no checks, the floor of any relay)"
    );
    println!(
        "{:<16} {:>14} {:>18} {:>16}",
        "", "100 MiB MiB/s", "50 parallel MiB/s", "first byte ms"
    );
    for i in 0..4 {
        println!(
            "{:<16} {:>14.0} {:>18.0} {:>16.3}",
            names[i],
            median(&mut big[i]),
            median(&mut par[i]),
            median(&mut ttfb[i])
        );
    }
    Ok(())
}
