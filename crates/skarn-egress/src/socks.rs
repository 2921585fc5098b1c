//! The SOCKS5 proxy (RFC 1928): no authentication, CONNECT only, with
//! addresses as IPv4, IPv6 or a host name resolved here (remote
//! resolution), never inside the sandbox.
//!
//! The framing is written here rather than taken from a server crate: the
//! available ones own the connect step (and their own resolver), while this
//! proxy must decide between parsing and connecting, resolve and check
//! each address itself, and answer with the rule-set reply code. The
//! subset needed is a few dozen lines.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use crate::proxy::{OpenError, Shared};
use crate::rules::{Denial, Target};

const VER: u8 = 5;
const REP_OK: u8 = 0;
const REP_FAILURE: u8 = 1;
const REP_NOT_ALLOWED: u8 = 2;
const REP_HOST_UNREACHABLE: u8 = 4;
const REP_CMD_UNSUPPORTED: u8 = 7;
const REP_ATYP_UNSUPPORTED: u8 = 8;

async fn reply(s: &mut TcpStream, rep: u8) {
    // Bound address: zeros (the outside address is not the client's business).
    let _ = s.write_all(&[VER, rep, 0, 1, 0, 0, 0, 0, 0, 0]).await;
}

async fn read_exact(s: &mut TcpStream, buf: &mut [u8], sh: &Shared) -> Option<()> {
    tokio::time::timeout(sh.limits.idle_timeout, s.read_exact(buf))
        .await
        .ok()?
        .ok()
        .map(|_| ())
}

/// Read the greeting and the request; `None` ends the connection.
async fn request(s: &mut TcpStream, sh: &Shared) -> Option<(String, u16)> {
    let mut h = [0u8; 2];
    read_exact(s, &mut h, sh).await?;
    if h[0] != VER || h[1] == 0 {
        return None;
    }
    let mut methods = vec![0u8; h[1] as usize];
    read_exact(s, &mut methods, sh).await?;
    if !methods.contains(&0) {
        let _ = s.write_all(&[VER, 0xff]).await;
        return None;
    }
    s.write_all(&[VER, 0]).await.ok()?;
    let mut r = [0u8; 4];
    read_exact(s, &mut r, sh).await?;
    if r[0] != VER {
        return None;
    }
    let host = match r[3] {
        1 => {
            let mut a = [0u8; 4];
            read_exact(s, &mut a, sh).await?;
            Ipv4Addr::from(a).to_string()
        }
        4 => {
            let mut a = [0u8; 16];
            read_exact(s, &mut a, sh).await?;
            Ipv6Addr::from(a).to_string()
        }
        3 => {
            let mut l = [0u8; 1];
            read_exact(s, &mut l, sh).await?;
            let mut n = vec![0u8; l[0] as usize];
            read_exact(s, &mut n, sh).await?;
            String::from_utf8_lossy(&n).into_owned()
        }
        _ => {
            reply(s, REP_ATYP_UNSUPPORTED).await;
            return None;
        }
    };
    let mut p = [0u8; 2];
    read_exact(s, &mut p, sh).await?;
    let port = u16::from_be_bytes(p);
    if r[1] != 1 {
        let what = if r[1] == 2 { "BIND" } else { "UDP ASSOCIATE" };
        let d = Denial::Unsupported(format!("SOCKS5 {what} is not supported"));
        sh.deny(&show(&host), port, &d);
        reply(s, REP_CMD_UNSUPPORTED).await;
        return None;
    }
    Some((host, port))
}

fn show(host: &str) -> String {
    match host.parse::<IpAddr>() {
        Ok(IpAddr::V6(v6)) => format!("[{v6}]"),
        _ => host.to_string(),
    }
}

/// Why a tunnel to a host a secret is bound to is refused.
pub(crate) const BOUND_HOST_TUNNEL: &str = "a host a secret is bound to is reached through the HTTP \
     proxy only (HTTPS_PROXY), where its answers are scrubbed; a SOCKS5 tunnel to it, or a tunnel \
     to its address, under any name or address that reaches it, is refused";

/// Serve one client connection.
pub(crate) async fn handle(mut s: TcpStream, sh: &Shared) {
    let Some((host, port)) = request(&mut s, sh).await else {
        return;
    };
    let Some(t) = Target::parse(&host).filter(|_| port != 0) else {
        let d = Denial::Unsupported(format!("{host:?} port {port} is not a valid destination"));
        sh.deny(&show(&host), port, &d);
        reply(&mut s, REP_NOT_ALLOWED).await;
        return;
    };
    match sh.open_with(&t, port, true).await {
        Ok((up, key)) => {
            reply(&mut s, REP_OK).await;
            crate::relay::relay(s, up, &key, sh).await;
        }
        Err(OpenError::Denied(_)) => reply(&mut s, REP_NOT_ALLOWED).await,
        // A host a secret is bound to, by any name or address: SOCKS5
        // cannot be answered on the scrubbing path (atk27d F1).
        Err(OpenError::BoundHost) => {
            let d = Denial::Unsupported(BOUND_HOST_TUNNEL.into());
            sh.deny(&show(&host), port, &d);
            reply(&mut s, REP_NOT_ALLOWED).await;
        }
        Err(OpenError::Failed(why)) => {
            let rep = if why.contains("resolve") || why.contains("no address") {
                REP_HOST_UNREACHABLE
            } else {
                REP_FAILURE
            };
            reply(&mut s, rep).await;
        }
    }
}
