//! The body of a plain-HTTP request while secrets are bound: searched for
//! pieces of a value as one stream with its head (atk27q F7), read with
//! the framing the server will read (a chunked body de-chunked before the
//! search, so a chunk boundary cannot split a window).

use super::probe::BodyProbe;
use super::request::Framing;
use crate::fields::strict_value;
use crate::secrets::Found;

/// What follows the head sent up: the bytes read with the head, their
/// framing, and the search state the head left.
pub(crate) struct PlainBody {
    pub(crate) rest: Vec<u8>,
    pub(crate) framing: Framing,
    /// The body's content coding, decoded to be searched (f27t).
    pub(crate) coding: Option<super::decode::Coding>,
    pub(crate) probe: BodyProbe,
    /// An upgrade was asked for: what follows the body is searched as
    /// WebSocket frames.
    pub(crate) upgrade: bool,
}

/// Why the request goes no further.
pub(crate) enum Stop {
    /// A piece of a value in the head or the first body bytes.
    Probe(Found),
    /// A body framing the proxy does not read the way a server would.
    Bad(&'static str),
}

/// The framing of a request body from its fields, judged on the bytes a
/// server reads; anything else is refused (fail closed).
fn framing(fields: &[httparse::Header<'_>]) -> Result<Framing, &'static str> {
    let mut te = Vec::new();
    let mut cl = Vec::new();
    for h in fields {
        let list = if h.name.eq_ignore_ascii_case("transfer-encoding") {
            &mut te
        } else if h.name.eq_ignore_ascii_case("content-length") {
            &mut cl
        } else {
            continue;
        };
        let v =
            strict_value(h.value).ok_or("a framing header holds bytes outside visible ASCII")?;
        list.push(v.to_ascii_lowercase());
    }
    match (te.as_slice(), cl.as_slice()) {
        ([], []) => Ok(Framing::Length(0)),
        ([], [n]) if !n.is_empty() && n.len() < 19 && n.bytes().all(|c| c.is_ascii_digit()) => n
            .parse()
            .map(Framing::Length)
            .map_err(|_| "bad Content-Length"),
        ([], _) => Err("bad or repeated Content-Length"),
        ([c], []) if c == "chunked" => Ok(Framing::Chunked),
        _ => Err("unsupported Transfer-Encoding (or with Content-Length)"),
    }
}

/// The content coding of a request body from its fields; a coding the
/// proxy cannot undo is refused (fail closed).
fn coding(fields: &[httparse::Header<'_>]) -> Result<Option<super::decode::Coding>, &'static str> {
    let mut ce = Vec::new();
    for h in fields {
        if h.name.eq_ignore_ascii_case("content-encoding") {
            let v = strict_value(h.value).ok_or(super::coded::UNKNOWN_CODING)?;
            ce.push(v.to_ascii_lowercase());
        }
    }
    super::coded::request_coding(&ce)
}

impl PlainBody {
    /// Search `head` (what goes up); the search goes on from its tail
    /// through `rest` and the rest of the body as they are read.
    pub(crate) fn start(
        probes: &super::probe::Probes,
        fields: &[httparse::Header<'_>],
        head: &[u8],
        rest: Vec<u8>,
    ) -> Result<PlainBody, Stop> {
        let framing = framing(fields).map_err(Stop::Bad)?;
        let coding = coding(fields).map_err(Stop::Bad)?;
        let mut probe = BodyProbe::default();
        if !probe.pass(probes, head) {
            return Err(Stop::Probe(probe.hit.unwrap_or(Found(0))));
        }
        let upgrade = fields
            .iter()
            .any(|h| h.name.eq_ignore_ascii_case("upgrade"));
        Ok(PlainBody {
            rest,
            framing,
            coding,
            probe,
            upgrade,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fields(list: &[(&'static str, &'static [u8])]) -> Vec<httparse::Header<'static>> {
        list.iter()
            .map(|(name, value)| httparse::Header { name, value })
            .collect()
    }

    #[test]
    fn framings_are_read_as_a_server_reads_them() {
        let f = |l: &[(&'static str, &'static [u8])]| framing(&fields(l));
        assert!(matches!(f(&[]), Ok(Framing::Length(0))));
        assert!(matches!(
            f(&[("Content-Length", b"12")]),
            Ok(Framing::Length(12))
        ));
        assert!(matches!(
            f(&[("Transfer-Encoding", b"Chunked")]),
            Ok(Framing::Chunked)
        ));
        assert!(f(&[("Transfer-Encoding", b"gzip, chunked")]).is_err());
        assert!(f(&[("Transfer-Encoding", b"chunked"), ("Content-Length", b"3")]).is_err());
        assert!(f(&[("Content-Length", b"3"), ("Content-Length", b"3")]).is_err());
        assert!(f(&[("Content-Length", b"+3")]).is_err());
    }
}
