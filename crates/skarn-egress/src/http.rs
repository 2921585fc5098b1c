//! The HTTP proxy: `CONNECT host:port` tunnels and absolute-form plain
//! HTTP requests (`GET http://host/path`), one request per connection.

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use crate::authority::split_authority;
use crate::open::{Opened, open_or_reply, open_or_reply_with, refuse, reply};
use crate::proxy::Shared;
use crate::relay::forward;
use crate::rules::{Denial, Target};

const MAX_HEAD: usize = 64 * 1024;

/// Read until the end of the request head; returns (head length, buffer).
async fn read_head(s: &mut TcpStream, sh: &Shared) -> Option<(usize, Vec<u8>)> {
    let mut buf = Vec::with_capacity(4096);
    let mut tmp = [0u8; 4096];
    let deadline = tokio::time::Instant::now() + sh.limits.idle_timeout;
    loop {
        if let Some(i) = find(&buf, b"\r\n\r\n") {
            return Some((i + 4, buf));
        }
        if buf.len() > MAX_HEAD {
            return None;
        }
        let n = tokio::time::timeout_at(deadline, s.read(&mut tmp))
            .await
            .ok()?
            .ok()?;
        if n == 0 {
            return None;
        }
        buf.extend_from_slice(&tmp[..n]);
    }
}

fn find(h: &[u8], n: &[u8]) -> Option<usize> {
    h.windows(n.len()).position(|w| w == n)
}

/// Serve one client connection.
pub(crate) async fn handle(mut s: TcpStream, sh: &Shared) {
    let Some((head_len, buf)) = read_head(&mut s, sh).await else {
        reply(
            &mut s,
            "400 Bad Request",
            "skarn: net: bad or oversized request head\n",
        )
        .await;
        return;
    };
    let mut headers = [httparse::EMPTY_HEADER; 100];
    let mut req = httparse::Request::new(&mut headers);
    if !matches!(
        req.parse(&buf[..head_len]),
        Ok(httparse::Status::Complete(_))
    ) {
        reply(&mut s, "400 Bad Request", "skarn: net: malformed request\n").await;
        return;
    }
    let (Some(method), Some(target)) = (req.method, req.path) else {
        reply(&mut s, "400 Bad Request", "skarn: net: malformed request\n").await;
        return;
    };
    let rest = buf[head_len..].to_vec();
    if method.eq_ignore_ascii_case("CONNECT") {
        let Some((host, port)) = split_authority(target, None) else {
            reply(
                &mut s,
                "400 Bad Request",
                "skarn: net: CONNECT needs host:port\n",
            )
            .await;
            return;
        };
        // A host a secret is bound to: the TLS-terminating path.
        if let Some(ic) = sh.secrets.as_deref()
            && let Some(t) = Target::parse(&host)
            && ic.bindings.binds(&t, port)
        {
            crate::intercept::connect(s, sh, t, port, !rest.is_empty()).await;
            return;
        }
        // Another name or address of a bound host (an alias, a CNAME, an
        // address its lookup did not return): a plain tunnel would relay
        // its answers unscrubbed (attacks atk27 F5, atk27d F1). A name is
        // served like the bound host, TLS terminated and answers
        // scrubbed, without any secret (the name does not match); an
        // address is refused (the run's CA makes no certificate a client
        // would accept for an address).
        let (mut up, key) = match open_or_reply_with(&mut s, sh, &host, port, true).await {
            Opened::Up(up, key) => (up, key),
            Opened::Replied => return,
            Opened::BoundHost(t @ Target::Name(_)) => {
                if let Some(log) = sh.log.as_ref() {
                    log(&format!(
                        "skarn: net: {}:{port} shares an address with a host a secret is bound \
                         to: TLS terminated and answers scrubbed; no secret is sent to it",
                        crate::proxy::printable(&host)
                    ));
                }
                crate::intercept::connect(s, sh, t, port, !rest.is_empty()).await;
                return;
            }
            Opened::BoundHost(Target::Ip(_)) => {
                let d = Denial::Unsupported(crate::socks::BOUND_HOST_TUNNEL.into());
                refuse(&mut s, sh, &host, port, d).await;
                return;
            }
        };
        if s.write_all(b"HTTP/1.1 200 Connection established\r\n\r\n")
            .await
            .is_err()
        {
            return;
        }
        // Bytes the client sent right behind the head are traffic too.
        if !rest.is_empty() && !forward(&mut up, &rest, &key, sh, true).await {
            let _ = up.shutdown().await;
            return;
        }
        crate::relay::relay(s, up, &key, sh).await;
        return;
    }
    let Some(after) = target.strip_prefix("http://") else {
        let why = if target.starts_with("https://") {
            "use CONNECT for https"
        } else {
            "not a proxy request (absolute-form http:// target expected)"
        };
        reply(&mut s, "400 Bad Request", &format!("skarn: net: {why}\n")).await;
        return;
    };
    let (authority, path) = match after.find(['/', '?']) {
        Some(i) => (&after[..i], &after[i..]),
        None => (after, "/"),
    };
    let authority = authority.rsplit_once('@').map_or(authority, |(_, a)| a);
    let Some((host, port)) = split_authority(authority, Some(80)) else {
        reply(
            &mut s,
            "400 Bad Request",
            "skarn: net: bad request target\n",
        )
        .await;
        return;
    };
    // More than one Host header: servers differ on which one counts, so
    // the checked one might not be the one served. Refused.
    if req
        .headers
        .iter()
        .filter(|h| h.name.eq_ignore_ascii_case("host"))
        .count()
        > 1
    {
        refuse(
            &mut s,
            sh,
            &host,
            port,
            Denial::HostMismatch("several Host headers".into()),
        )
        .await;
        return;
    }
    let host_hdr = req
        .headers
        .iter()
        .find(|h| h.name.eq_ignore_ascii_case("host"))
        // Only SP/HTAB trimmed; a value with other bytes names no host
        // (atk27h F1).
        .map(|h| {
            crate::fields::strict_value(h.value).map_or_else(
                || String::from_utf8_lossy(h.value).into_owned(),
                str::to_string,
            )
        });
    if let Some(h) = &host_hdr {
        let same = split_authority(h, Some(80)).is_some_and(|(hh, hp)| {
            hp == port
                && hh
                    .trim_end_matches('.')
                    .eq_ignore_ascii_case(host.trim_end_matches('.'))
        });
        if !same {
            refuse(&mut s, sh, &host, port, Denial::HostMismatch(h.clone())).await;
            return;
        }
    }
    // A placeholder in plain HTTP is never replaced (the value would
    // cross the network in clear): the request is refused and recorded.
    if let Some(ic) = sh.secrets.as_deref()
        && let Some(f) = ic.bindings.find(&buf[..head_len]).first()
    {
        let name = ic.bindings.name(*f);
        let shown = crate::proxy::printable(&host);
        let p = path.split(['?', '#']).next().unwrap_or("");
        let why = "plain HTTP: placeholders are replaced only on the TLS path";
        sh.secret_event(name, &format!("{shown}:{port}"), method, p, Some(why));
        reply(
            &mut s,
            "403 Forbidden",
            &format!("skarn: secret {name} was not sent to {shown}:{port}: {why}\n"),
        )
        .await;
        return;
    }
    let Some((mut up, key)) = open_or_reply(&mut s, sh, &host, port).await else {
        return;
    };
    let path = if path.starts_with('?') {
        format!("/{path}")
    } else {
        path.to_string()
    };
    let mut out = format!("{method} {path} HTTP/1.{}\r\n", req.version.unwrap_or(1));
    if host_hdr.is_none() {
        out.push_str(&format!("Host: {authority}\r\n"));
    }
    let scrubbed = sh.secrets.is_some();
    for h in req.headers.iter() {
        let n = h.name.to_ascii_lowercase();
        if matches!(
            n.as_str(),
            "proxy-connection" | "proxy-authorization" | "connection" | "keep-alive"
        ) {
            continue;
        }
        // While secrets are bound the response is scrubbed: asked for
        // without a content coding and without WebSocket extensions.
        if scrubbed && matches!(n.as_str(), "accept-encoding" | "sec-websocket-extensions") {
            continue;
        }
        out.push_str(h.name);
        out.push_str(": ");
        out.push_str(&String::from_utf8_lossy(h.value));
        out.push_str("\r\n");
    }
    if scrubbed {
        out.push_str("Accept-Encoding: identity\r\n");
    }
    // One request per connection: the next request on this client
    // connection would otherwise skip the Host check. An upgrade keeps
    // its `upgrade` token, which RFC 6455 servers require (atk27r F8);
    // `close` still ends the connection if the host does not switch.
    out.push_str(if asks_upgrade(req.headers) {
        "Connection: upgrade, close\r\n\r\n"
    } else {
        "Connection: close\r\n\r\n"
    });
    let head_out = out.into_bytes();
    // While secrets are bound, the body goes up read with its framing and
    // searched as one stream with the head (atk27q F7): only the head is
    // sent here. Otherwise the bytes read with the head go up as they are.
    let mut sent = None;
    let mut first = head_out.clone();
    if let Some(ic) = sh.secrets.as_deref() {
        use crate::intercept::plain_body::{PlainBody, Stop};
        match PlainBody::start(ic.probes(), req.headers, &head_out, rest) {
            Ok(b) => sent = Some(b),
            Err(Stop::Bad(why)) => {
                let _ = up.shutdown().await;
                sh.deny(&host, port, &Denial::Unsupported(why.into()));
                reply(&mut s, "400 Bad Request", &format!("skarn: net: {why}\n")).await;
                return;
            }
            Err(Stop::Probe(f)) => {
                let name = ic.bindings.name(f);
                let shown = crate::proxy::printable(&host);
                ic.switch_off(f, &format!("a plain HTTP request to {shown}:{port}"));
                let why = "a piece of its real value was in the request: switched off for this run";
                sh.secret_event(name, &format!("{shown}:{port}"), method, "-", Some(why));
                let _ = up.shutdown().await;
                reply(
                    &mut s,
                    "403 Forbidden",
                    &crate::intercept::probe_refusal(name),
                )
                .await;
                return;
            }
        }
    } else {
        first.extend_from_slice(&rest);
    }
    if !forward(&mut up, &first, &key, sh, true).await {
        let _ = up.shutdown().await;
        if let Some(max) = sh.limits.max_total_bytes
            && sh.stats.spent(Some(max))
        {
            let d = Denial::ByteLimit(max);
            reply(
                &mut s,
                "503 Service Unavailable",
                &format!("skarn: net: {d}\n"),
            )
            .await;
        }
        return;
    }
    match (Target::parse(&host), sent) {
        (Some(t), Some(sent)) => {
            let cx = crate::intercept::exchange::Ctx {
                sh,
                t: &t,
                port,
                key: &key,
            };
            let asked = crate::intercept::exchange::Asked {
                is_head: method.eq_ignore_ascii_case("HEAD"),
                http10: req.version == Some(0),
            };
            crate::intercept::exchange::plain(s, up, &cx, asked, sent).await
        }
        // Bound secrets and a host that is no target: nothing more goes up.
        (None, Some(_)) => {
            let _ = up.shutdown().await;
        }
        _ => crate::relay::relay(s, up, &key, sh).await,
    }
}

/// Whether a request asks to switch protocols: an `Upgrade` header and
/// `upgrade` among its `Connection` tokens.
fn asks_upgrade(headers: &[httparse::Header<'_>]) -> bool {
    let has = |n: &str| headers.iter().any(|h| h.name.eq_ignore_ascii_case(n));
    has("upgrade")
        && headers
            .iter()
            .filter(|h| h.name.eq_ignore_ascii_case("connection"))
            .flat_map(|h| h.value.split(|c| *c == b','))
            .any(|t| t.trim_ascii().eq_ignore_ascii_case(b"upgrade"))
}
