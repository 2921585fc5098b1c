//! A proxy on loopback that allows one sink (by address and by the name
//! `sink.test`, which its resolver answers with the sink's address), and
//! the readings of a request's destination the proxy must agree with: the
//! `http` crate's (as hyper and the upstream server read the request) and
//! RFC 1928's.

use skarn_egress::{Limits, Listeners, Proxy, Resolver, Rules};
use std::net::{IpAddr, Ipv4Addr, TcpListener};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::Duration;
use tokio::io::AsyncReadExt;
use tokio::sync::Mutex;
use tokio::sync::mpsc::{UnboundedReceiver, UnboundedSender, unbounded_channel};

/// The sink's name (a reserved top-level domain: never resolved for real).
pub const SINK_NAME: &str = "sink.test";

/// The running proxy and its sink.
pub struct Egress {
    pub sink_port: u16,
    http_port: u16,
    socks_port: u16,
    reached: Arc<AtomicUsize>,
    heads: Mutex<UnboundedReceiver<Vec<u8>>>,
}

impl Egress {
    /// Connections the sink has accepted so far.
    pub fn reached(&self) -> usize {
        self.reached.load(Ordering::SeqCst)
    }

    /// Send `input` to the HTTP or SOCKS5 listener; the bytes the sink got
    /// from this connection (empty when it was not reached).
    pub fn exchange(&self, socks: bool, input: &[u8], wait: Duration) -> Vec<u8> {
        let port = if socks {
            self.socks_port
        } else {
            self.http_port
        };
        let before = self.reached();
        crate::rt().block_on(async {
            crate::exchange(port, input, wait).await;
            let mut heads = self.heads.lock().await;
            while heads.try_recv().is_ok() {}
            if self.reached() == before {
                return Vec::new();
            }
            tokio::time::timeout(wait, heads.recv())
                .await
                .ok()
                .flatten()
                .unwrap_or_default()
        })
    }
}

fn listener() -> TcpListener {
    TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).expect("loopback listener")
}

fn port(l: &TcpListener) -> u16 {
    l.local_addr().expect("local address").port()
}

/// Accept on the sink; each connection's first bytes (up to the end of a
/// request head, or a second of silence) go to `tx`.
async fn sink(l: TcpListener, reached: Arc<AtomicUsize>, tx: UnboundedSender<Vec<u8>>) {
    l.set_nonblocking(true).expect("nonblocking");
    let l = tokio::net::TcpListener::from_std(l).expect("tokio listener");
    while let Ok((mut s, _)) = l.accept().await {
        reached.fetch_add(1, Ordering::SeqCst);
        let tx = tx.clone();
        tokio::spawn(async move {
            let mut head = Vec::new();
            let mut buf = [0u8; 4096];
            while !head.windows(4).any(|w| w == b"\r\n\r\n") && head.len() < 1 << 16 {
                match tokio::time::timeout(Duration::from_secs(1), s.read(&mut buf)).await {
                    Ok(Ok(n)) if n > 0 => head.extend_from_slice(&buf[..n]),
                    _ => break,
                }
            }
            let _ = tx.send(head);
        });
    }
}

/// The proxy, started on first use.
pub fn proxy() -> &'static Egress {
    static P: OnceLock<Egress> = OnceLock::new();
    P.get_or_init(|| {
        let (sink_l, http_l, socks_l) = (listener(), listener(), listener());
        let sink_port = port(&sink_l);
        let (http_port, socks_port) = (port(&http_l), port(&socks_l));
        let allow = [
            format!("127.0.0.1:{sink_port}"),
            format!("{SINK_NAME}:{sink_port}"),
        ];
        let rules = Rules::parse(&allow, &[] as &[String]).expect("rules");
        let resolver =
            Resolver::system().with_override(SINK_NAME, vec![IpAddr::V4(Ipv4Addr::LOCALHOST)]);
        let limits = Limits {
            max_connections: 8,
            connect_timeout: Duration::from_secs(2),
            idle_timeout: Duration::from_secs(2),
            max_total_bytes: None,
        };
        let proxy = Arc::new(Proxy::new(rules, resolver, limits).with_log(None));
        let reached = Arc::new(AtomicUsize::new(0));
        let (tx, rx) = unbounded_channel();
        let ls = Listeners {
            http: Some(http_l),
            socks: Some(socks_l),
        };
        crate::rt().spawn(sink(sink_l, reached.clone(), tx));
        crate::rt().spawn(async move {
            let _ = proxy.serve(ls, std::future::pending()).await;
        });
        Egress {
            sink_port,
            http_port,
            socks_port,
            reached,
            heads: Mutex::new(rx),
        }
    })
}

/// A destination as a reference reading gives it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Dest {
    pub host: String,
    pub port: Option<u16>,
}

impl std::fmt::Display for Dest {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{:?}", self.host, self.port)
    }
}

fn authority(a: &str) -> Option<Dest> {
    let a = http::uri::Authority::try_from(a).ok()?;
    Some(Dest {
        host: a.host().to_string(),
        port: a.port_u16(),
    })
}

/// The destination of an HTTP proxy request as the `http` crate reads
/// its target: CONNECT's authority, or an absolute-form URI's.
pub fn http_destination(input: &[u8]) -> Option<Dest> {
    let mut headers = [httparse::EMPTY_HEADER; 100];
    let mut req = httparse::Request::new(&mut headers);
    req.parse(input).ok()?;
    let (method, target) = (req.method?, req.path?);
    if method.eq_ignore_ascii_case("CONNECT") {
        return authority(target);
    }
    let uri = http::Uri::try_from(target).ok()?;
    if uri.scheme_str() != Some("http") {
        return None;
    }
    let a = uri.authority()?;
    Some(Dest {
        host: a.host().to_string(),
        port: Some(a.port_u16().unwrap_or(80)),
    })
}

/// The Host the upstream server reads in the forwarded request.
pub fn forwarded_host(head: &[u8]) -> Option<Dest> {
    let mut headers = [httparse::EMPTY_HEADER; 100];
    let mut req = httparse::Request::new(&mut headers);
    req.parse(head).ok()?;
    let mut hosts = req
        .headers
        .iter()
        .filter(|h| h.name.eq_ignore_ascii_case("host"));
    let h = hosts.next()?;
    if hosts.next().is_some() {
        return None;
    }
    let mut d = authority(std::str::from_utf8(h.value).ok()?.trim())?;
    d.port = Some(d.port.unwrap_or(80));
    Some(d)
}

/// The destination of a SOCKS5 CONNECT as RFC 1928 reads it (greeting
/// offering "no authentication", then the request).
pub fn socks_destination(b: &[u8]) -> Option<Dest> {
    let (&[5, n], rest) = b.split_first_chunk::<2>()? else {
        return None;
    };
    let methods = rest.get(..usize::from(n))?;
    if !methods.contains(&0) {
        return None;
    }
    let rest = &rest[usize::from(n)..];
    let (&[5, 1, _, atyp], rest) = rest.split_first_chunk::<4>()? else {
        return None;
    };
    let (host, rest) = match atyp {
        1 => {
            let (a, r) = rest.split_first_chunk::<4>()?;
            (Ipv4Addr::from(*a).to_string(), r)
        }
        4 => {
            let (a, r) = rest.split_first_chunk::<16>()?;
            (format!("[{}]", std::net::Ipv6Addr::from(*a)), r)
        }
        3 => {
            let (&l, r) = rest.split_first()?;
            let name = r.get(..usize::from(l))?;
            (
                String::from_utf8_lossy(name).into_owned(),
                &r[usize::from(l)..],
            )
        }
        _ => return None,
    };
    let (p, _) = rest.split_first_chunk::<2>()?;
    Some(Dest {
        host,
        port: Some(u16::from_be_bytes(*p)),
    })
}

/// The address the C library reads in `host` when it is numeric
/// (`getaddrinfo` with `AI_NUMERICHOST`: `127.1`, `0x7f.0.0.1`, `[::1]`).
fn numeric(host: &str) -> Option<IpAddr> {
    let h = host
        .strip_prefix('[')
        .and_then(|h| h.strip_suffix(']'))
        .unwrap_or(host);
    if let Ok(ip) = h.parse::<IpAddr>() {
        return Some(ip);
    }
    let c = std::ffi::CString::new(h).ok()?;
    // SAFETY: an all-zero addrinfo is a valid "no hints" value.
    let mut hints: libc::addrinfo = unsafe { std::mem::zeroed() };
    hints.ai_flags = libc::AI_NUMERICHOST;
    hints.ai_family = libc::AF_UNSPEC;
    let mut res: *mut libc::addrinfo = std::ptr::null_mut();
    // SAFETY: `c` is a NUL-terminated string, `hints` and `res` are valid
    // for the call; the result is freed below.
    let rc = unsafe { libc::getaddrinfo(c.as_ptr(), std::ptr::null(), &hints, &mut res) };
    if rc != 0 || res.is_null() {
        return None;
    }
    // SAFETY: on success `res` points at a valid list whose first entry
    // has an address of its family's size.
    let ip = unsafe {
        let ai = &*res;
        match ai.ai_family {
            libc::AF_INET => {
                let sa = &*(ai.ai_addr as *const libc::sockaddr_in);
                Some(IpAddr::V4(Ipv4Addr::from(u32::from_be(sa.sin_addr.s_addr))))
            }
            libc::AF_INET6 => {
                let sa = &*(ai.ai_addr as *const libc::sockaddr_in6);
                Some(IpAddr::V6(std::net::Ipv6Addr::from(sa.sin6_addr.s6_addr)))
            }
            _ => None,
        }
    };
    // SAFETY: `res` came from getaddrinfo and is freed once.
    unsafe { libc::freeaddrinfo(res) };
    ip
}

/// Whether `d` names the sink: its port, and its name (DNS compares
/// names without case, one final dot allowed) or an address that is
/// 127.0.0.1 (an IPv4-mapped IPv6 form connects there too).
pub fn is_sink(d: Dest, sink_port: u16) -> bool {
    if d.port != Some(sink_port) {
        return false;
    }
    let name = d.host.strip_suffix('.').unwrap_or(&d.host);
    if name.eq_ignore_ascii_case(SINK_NAME) {
        return true;
    }
    let v4 = match numeric(&d.host) {
        Some(IpAddr::V4(a)) => a,
        Some(IpAddr::V6(a)) => match a.to_ipv4_mapped() {
            Some(a) => a,
            None => return false,
        },
        None => return false,
    };
    v4 == Ipv4Addr::LOCALHOST
}

/// Whether the request is a CONNECT (its bytes after the head are the
/// tunnel's, not a request the upstream server reads).
pub fn is_connect(input: &[u8]) -> bool {
    let mut headers = [httparse::EMPTY_HEADER; 100];
    let mut req = httparse::Request::new(&mut headers);
    let _ = req.parse(input);
    req.method
        .is_some_and(|m| m.eq_ignore_ascii_case("CONNECT"))
}
