//! One request on an intercepted connection, checked and rewritten: the
//! request target and the single `Host` header must name the host the
//! connection was opened to, the body framing must be unambiguous, and a
//! placeholder is replaced by its value only where its secret's host,
//! method, path and header rules all hold; anywhere else the request is
//! refused whole.

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use zeroize::Zeroizing;

use super::overrides::{host_override, route_override};
use crate::authority::split_authority;
use crate::fields::{name_in, name_is, strict_value};
use crate::rules::Target;
use crate::secrets::{Bindings, Found};

/// How a body is delimited.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Framing {
    /// Exactly this many bytes.
    Length(u64),
    /// `Transfer-Encoding: chunked`.
    Chunked,
    /// Until the sender closes (responses only).
    UntilClose,
}

/// A request ready to go upstream.
pub(crate) struct Outgoing {
    pub(crate) head: Zeroizing<Vec<u8>>,
    pub(crate) framing: Framing,
    /// The body's content coding, decoded to be searched.
    pub(crate) coding: Option<super::decode::Coding>,
    pub(crate) expect_continue: bool,
    pub(crate) close: bool,
    pub(crate) is_head: bool,
    /// The client speaks HTTP/1.0 (no chunked bodies to it).
    pub(crate) http10: bool,
    pub(crate) method: String,
    pub(crate) path: String,
    /// Secrets substituted.
    pub(crate) used: Vec<Found>,
    /// A method- or path-bound secret whose request has a body a
    /// framework may read `_method` from: the body is read and judged
    /// before the head goes ([`super::request_body`]).
    pub(crate) body_check: Option<Found>,
    /// (header value sent, header value received): mapped back in responses.
    pub(crate) pairs: Vec<(Zeroizing<Vec<u8>>, Vec<u8>)>,
}

/// Why a request is not sent.
#[derive(Debug)]
pub(crate) enum Refusal {
    /// Malformed or ambiguous (400).
    Bad(String),
    /// A placeholder where its secret may not go (403).
    Secret {
        found: Found,
        method: String,
        path: String,
        why: String,
    },
}

fn bad(s: impl Into<String>) -> Refusal {
    Refusal::Bad(s.into())
}

fn same_host(authority: &str, t: &Target, port: u16) -> bool {
    split_authority(authority, Some(443))
        .is_some_and(|(h, p)| p == port && Target::parse(&h).as_ref() == Some(t))
}

/// Check and rewrite the request `head` sent on a connection to `t:port`.
pub(crate) fn prepare(
    head: &[u8],
    t: &Target,
    port: u16,
    b: &Bindings,
) -> Result<Outgoing, Refusal> {
    let mut hs = [httparse::EMPTY_HEADER; 100];
    let mut req = httparse::Request::new(&mut hs);
    match req.parse(head) {
        Ok(httparse::Status::Complete(_)) => {}
        _ => return Err(bad("malformed request head")),
    }
    let (Some(method), Some(target), Some(version)) = (req.method, req.path, req.version) else {
        return Err(bad("malformed request line"));
    };
    let lower = target.to_ascii_lowercase();
    let path = if target.starts_with('/') {
        target.to_string()
    } else if lower.starts_with("https://") || lower.starts_with("http://") {
        let after = &target[target.find("://").map_or(0, |i| i + 3)..];
        let (auth, rest) = match after.find(['/', '?', '#']) {
            Some(i) => (&after[..i], &after[i..]),
            None => (after, "/"),
        };
        if auth.contains('@') || !same_host(auth, t, port) {
            return Err(bad(format!(
                "the request target names another host than {t}:{port}"
            )));
        }
        if rest.starts_with('/') {
            rest.to_string()
        } else {
            format!("/{rest}")
        }
    } else if target == "*" && method == "OPTIONS" {
        "*".to_string()
    } else {
        return Err(bad("unsupported request target"));
    };
    let shown_path = path.split(['?', '#']).next().unwrap_or("").to_string();
    let secret_refusal = |found: Found, why: String| Refusal::Secret {
        found,
        method: method.to_string(),
        path: shown_path.clone(),
        why,
    };
    if let Some(f) = b.find(path.as_bytes()).first() {
        return Err(secret_refusal(
            *f,
            "a placeholder in the URL is never replaced (headers only)".into(),
        ));
    }
    // Names a server behind the proxy reads as a header the proxy judges
    // or drops (CGI/WSGI fold `_` into `-`): only the dashed spelling is
    // taken, any other is refused rather than passed on unjudged (atk27h F5).
    if let Some(h) = req
        .headers
        .iter()
        .find(|h| name_in(h.name, JUDGED) && !JUDGED.iter().any(|k| h.name.eq_ignore_ascii_case(k)))
    {
        return Err(bad(format!(
            "header {} is read as another header by some servers",
            h.name
        )));
    }
    let hosts: Vec<_> = req
        .headers
        .iter()
        .filter(|h| h.name.eq_ignore_ascii_case("host"))
        .collect();
    // The Host is judged on its exact bytes (only SP/HTAB trimmed) and
    // forwarded as judged (atk27h F1).
    let host_value = match hosts.as_slice() {
        [h] => match strict_value(h.value) {
            Some(v) if same_host(v, t, port) => v.to_string(),
            _ => {
                return Err(bad(format!(
                    "the Host header names another host than {t}:{port} (or is not a plain host[:port])"
                )));
            }
        },
        [] => return Err(bad("no Host header")),
        _ => return Err(bad("several Host headers")),
    };
    let mut te = Vec::new();
    let mut cl = Vec::new();
    let mut ce = Vec::new();
    let mut close = version == 0;
    let mut expect_continue = false;
    for h in req.headers.iter() {
        let name = h.name.to_ascii_lowercase();
        if !matches!(
            name.as_str(),
            "transfer-encoding" | "content-length" | "connection" | "expect" | "content-encoding"
        ) {
            continue;
        }
        // Judged on the bytes a server reads: no Unicode trim, no
        // non-ASCII (atk27h F1).
        let Some(v) = strict_value(h.value) else {
            return Err(bad(format!(
                "header {} holds bytes outside visible ASCII",
                h.name
            )));
        };
        let v = v.to_ascii_lowercase();
        match name.as_str() {
            "transfer-encoding" => te.push(v),
            "content-length" => cl.push(v),
            "content-encoding" => ce.push(v),
            "connection" => close |= v.split(',').any(|x| x.trim_matches([' ', '\t']) == "close"),
            _ => expect_continue = v == "100-continue",
        }
    }
    let framing = match (te.as_slice(), cl.as_slice()) {
        ([], []) => Framing::Length(0),
        ([], [n]) if !n.is_empty() && n.len() < 19 && n.bytes().all(|c| c.is_ascii_digit()) => {
            Framing::Length(n.parse().map_err(|_| bad("bad Content-Length"))?)
        }
        ([], _) => return Err(bad("bad or repeated Content-Length")),
        ([c], []) if c == "chunked" => Framing::Chunked,
        _ => {
            return Err(bad(
                "unsupported Transfer-Encoding (or with Content-Length)",
            ));
        }
    };
    // A coded body is decoded to be searched (f27t).
    let coding = super::coded::request_coding(&ce).map_err(bad)?;
    let mut out = Zeroizing::new(Vec::with_capacity(head.len() + 64));
    out.extend_from_slice(format!("{method} {path} HTTP/1.{version}\r\n").as_bytes());
    let mut used: Vec<Found> = Vec::new();
    let mut pairs = Vec::new();
    for h in req.headers.iter() {
        if name_in(h.name, DROPPED) {
            continue;
        }
        if name_in(
            h.name,
            &["host", "transfer-encoding", "content-length", "connection"],
        ) {
            // Forwarded exactly as judged above.
            let v = strict_value(h.value).unwrap_or_default();
            let v = if name_is(h.name, "host") {
                &host_value
            } else {
                v
            };
            out.extend_from_slice(format!("{}: {v}\r\n", h.name).as_bytes());
            continue;
        }
        let value = substituted(h.name, h.value, t, port, method, &path, b, &mut used)
            .map_err(|(f, why)| secret_refusal(f, why))?;
        if value[..] != *h.value {
            pairs.push((Zeroizing::new(value.to_vec()), h.value.to_vec()));
        }
        out.extend_from_slice(h.name.as_bytes());
        out.extend_from_slice(b": ");
        out.extend_from_slice(&value);
        out.extend_from_slice(b"\r\n");
    }
    if let Some(f) = used.iter().find(|f| b.binds_route(**f))
        && let Some(why) = route_override(req.headers, &path)
    {
        return Err(secret_refusal(*f, why));
    }
    if let Some(f) = used.first()
        && let Some(why) = host_override(req.headers)
    {
        return Err(secret_refusal(*f, why));
    }
    let body_check = used
        .iter()
        .copied()
        .find(|f| b.binds_route(*f))
        .filter(|_| framing != Framing::Length(0))
        .filter(|_| super::request_body::may_name_method(req.headers));
    // Identity bodies, so an echoed value is found in the response.
    out.extend_from_slice(b"Accept-Encoding: identity\r\n\r\n");
    Ok(Outgoing {
        head: out,
        framing,
        coding,
        expect_continue,
        close,
        is_head: method == "HEAD",
        http10: version == 0,
        method: method.to_string(),
        path: shown_path,
        used,
        body_check,
        pairs,
    })
}

/// Headers the proxy takes out of a request.
const DROPPED: &[&str] = &[
    "proxy-connection",
    "proxy-authorization",
    "keep-alive",
    "expect",
    "accept-encoding",
    // No WebSocket extension (permessage-deflate): the messages must come
    // back plain to be scrubbed (atk27 F3).
    "sec-websocket-extensions",
];

/// Headers the proxy judges or drops: only their dashed spelling is
/// accepted.
const JUDGED: &[&str] = &[
    "host",
    "transfer-encoding",
    "content-length",
    "connection",
    "expect",
    "proxy-connection",
    "proxy-authorization",
    "keep-alive",
    "accept-encoding",
    "sec-websocket-extensions",
    "upgrade",
    "te",
    "trailer",
];

/// A header value with the placeholders it may carry replaced (also
/// inside `Basic` credentials); the first placeholder that may not go
/// there is the error.
#[allow(clippy::too_many_arguments)]
fn substituted(
    name: &str,
    value: &[u8],
    t: &Target,
    port: u16,
    method: &str,
    path: &str,
    b: &Bindings,
    used: &mut Vec<Found>,
) -> Result<Zeroizing<Vec<u8>>, (Found, String)> {
    let mut check = |found: &[Found]| -> Result<(), (Found, String)> {
        for f in found {
            b.may_send(*f, t, port, method, path, name)
                .map_err(|why| (*f, why))?;
            if !used.contains(f) {
                used.push(*f);
            }
        }
        Ok(())
    };
    let direct = b.find(value);
    check(&direct)?;
    let mut v = b.substitute(value, &direct);
    // `Basic base64(user:password)`: the placeholder may be in either part.
    let basic = v
        .len()
        .checked_sub(6)
        .filter(|_| v[..6].eq_ignore_ascii_case(b"basic "))
        .and_then(|_| STANDARD.decode(v[6..].trim_ascii()).ok())
        .map(Zeroizing::new);
    if let Some(dec) = basic {
        let inner = b.find(&dec);
        if !inner.is_empty() {
            check(&inner)?;
            let real = b.substitute(&dec, &inner);
            let mut nv = Zeroizing::new(b"Basic ".to_vec());
            nv.extend_from_slice(STANDARD.encode(&real[..]).as_bytes());
            v = nv;
        }
    }
    Ok(v)
}

#[cfg(test)]
mod tests;
