//! Echo scrubbing: a stream filter that replaces each real value with its
//! placeholder (same length, so `Content-Length` stays right), holding back
//! only as many bytes as an occurrence split across two reads needs.

use zeroize::Zeroizing;

use crate::secrets::matcher_replace as replace_same_len;

/// (real, placeholder) pairs of equal length.
pub(crate) type Pairs = Vec<(Zeroizing<Vec<u8>>, Vec<u8>)>;

pub(crate) struct Scrubber {
    pairs: Pairs,
    keep: usize,
    tail: Zeroizing<Vec<u8>>,
}

impl Scrubber {
    pub(crate) fn new(pairs: Pairs) -> Scrubber {
        let keep = pairs
            .iter()
            .map(|(r, _)| r.len())
            .max()
            .unwrap_or(1)
            .saturating_sub(1);
        Scrubber {
            pairs,
            keep,
            tail: Zeroizing::new(Vec::new()),
        }
    }

    /// Scrub a whole buffer in place (a response head).
    pub(crate) fn all(&self, buf: &mut [u8]) {
        for (r, p) in &self.pairs {
            replace_same_len(buf, r, p);
        }
    }

    /// Feed `data`; returns what may be passed on now.
    pub(crate) fn push(&mut self, data: &[u8]) -> Zeroizing<Vec<u8>> {
        let mut buf = Zeroizing::new(Vec::with_capacity(self.tail.len() + data.len()));
        buf.extend_from_slice(&self.tail);
        buf.extend_from_slice(data);
        self.all(&mut buf);
        let cut = buf.len().saturating_sub(self.keep);
        self.tail = Zeroizing::new(buf[cut..].to_vec());
        buf.truncate(cut);
        buf
    }

    /// The held-back rest, at the end of a body.
    pub(crate) fn finish(&mut self) -> Zeroizing<Vec<u8>> {
        std::mem::replace(&mut self.tail, Zeroizing::new(Vec::new()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn echoes_split_anywhere_are_replaced_and_lengths_kept() {
        let body = b"xx real-secret-value yy real-secret-value".to_vec();
        for split in 0..body.len() {
            let mut s = Scrubber::new(vec![(
                Zeroizing::new(b"real-secret-value".to_vec()),
                b"PLACEHOLDER_12345".to_vec(),
            )]);
            let mut out = s.push(&body[..split]).to_vec();
            out.extend_from_slice(&s.push(&body[split..]));
            out.extend_from_slice(&s.finish());
            assert_eq!(out, b"xx PLACEHOLDER_12345 yy PLACEHOLDER_12345", "{split}");
        }
    }
}
