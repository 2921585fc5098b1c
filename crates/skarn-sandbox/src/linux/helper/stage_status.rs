//! The typed status protocol from the helper's later stages (init, the
//! target before `execve`) to the helper, on a close-on-exec pipe.
//!
//! One frame per message: a kind byte, the payload length (u32, little
//! endian) and the payload (UTF-8). Each frame is written with a single
//! `write(2)` of at most `PIPE_BUF` bytes, so frames from init and from the
//! target never interleave; a longer payload is cut at a character
//! boundary. The helper decodes whatever arrived once both are gone; a
//! frame cut short (a stage killed mid-write) ends the decoding.
//!
//! A [`StageMsg::Layer`] says what one confinement layer achieved, sent by
//! the stage that applied it right after applying it (its payload is the
//! kit's `Enforcement` as JSON; one that does not parse is skipped).

use skarn_confine::Enforcement;

use crate::linux::sys;

/// Largest frame written at once (`PIPE_BUF` on Linux).
const MAX_FRAME: usize = 4096;
const HEADER: usize = 5;

/// One message from a later stage.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum StageMsg {
    /// A mechanism applied less than planned: lowers the report's status.
    Degraded(String),
    /// Information for the report (status unchanged).
    Info(String),
    /// The target's pid (as init sees it; equal to the helper's view when
    /// there is no PID namespace, the only case the helper uses it).
    TargetPid(libc::pid_t),
    /// Entries written beside the workspace in the private /tmp, which
    /// are discarded with the run (space separated).
    Lost(String),
    /// Set-up failed: the target never ran.
    Fatal(String),
    /// What one confinement layer achieved, as applied.
    Layer(Enforcement),
}

impl StageMsg {
    fn kind(&self) -> u8 {
        match self {
            StageMsg::Degraded(_) => 1,
            StageMsg::Info(_) => 2,
            StageMsg::TargetPid(_) => 3,
            StageMsg::Lost(_) => 4,
            StageMsg::Fatal(_) => 5,
            StageMsg::Layer(_) => 6,
        }
    }

    fn payload(&self) -> String {
        match self {
            StageMsg::Degraded(s) | StageMsg::Info(s) | StageMsg::Lost(s) | StageMsg::Fatal(s) => {
                s.clone()
            }
            StageMsg::TargetPid(p) => p.to_string(),
            StageMsg::Layer(e) => serde_json::to_string(e).unwrap_or_default(),
        }
    }

    fn from_parts(kind: u8, text: String) -> Option<StageMsg> {
        Some(match kind {
            1 => StageMsg::Degraded(text),
            2 => StageMsg::Info(text),
            3 => StageMsg::TargetPid(text.parse().ok()?),
            4 => StageMsg::Lost(text),
            5 => StageMsg::Fatal(text),
            6 => StageMsg::Layer(serde_json::from_str(&text).ok()?),
            _ => return None,
        })
    }

    /// The frame for this message (report lines are one line each: a
    /// newline in the text becomes a space).
    pub(crate) fn encode(&self) -> Vec<u8> {
        let text = self.payload().replace('\n', " ");
        let mut end = text.len().min(MAX_FRAME - HEADER);
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        let body = &text.as_bytes()[..end];
        let mut out = Vec::with_capacity(HEADER + body.len());
        out.push(self.kind());
        out.extend_from_slice(&(body.len() as u32).to_le_bytes());
        out.extend_from_slice(body);
        out
    }
}

/// Decode every complete frame of `buf`, in order (unknown kinds skipped).
pub(crate) fn decode(buf: &[u8]) -> Vec<StageMsg> {
    let mut out = Vec::new();
    let mut rest = buf;
    while rest.len() >= HEADER {
        let kind = rest[0];
        let len = u32::from_le_bytes([rest[1], rest[2], rest[3], rest[4]]) as usize;
        let Some(body) = rest.get(HEADER..HEADER + len) else {
            break;
        };
        let text = String::from_utf8_lossy(body).into_owned();
        out.extend(StageMsg::from_parts(kind, text));
        rest = &rest[HEADER + len..];
    }
    out
}

/// Send one message on the status pipe.
pub(crate) fn send(wr: libc::c_int, msg: &StageMsg) {
    sys::write_fd(wr, &msg.encode());
}

/// Report what one layer achieved.
pub(crate) fn layer(wr: libc::c_int, e: Enforcement) {
    send(wr, &StageMsg::Layer(e));
}

/// Report a set-up failure to the helper and on stderr, and exit.
pub(crate) fn fatal(wr: libc::c_int, msg: &str) -> ! {
    send(wr, &StageMsg::Fatal(msg.to_string()));
    super::err_line(&format!("sandbox set-up failed: {msg}"));
    sys::exit_now(super::EXIT_SETUP)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames_round_trip_in_order() {
        let msgs = vec![
            StageMsg::Info("caps left as is".into()),
            StageMsg::TargetPid(42),
            StageMsg::Degraded("line one\nline two".into()),
            StageMsg::Lost("/tmp/a /tmp/b".into()),
            StageMsg::Fatal("mount: denied".into()),
            StageMsg::Layer(Enforcement::partial(
                skarn_confine::Layer::Landlock,
                "ABI 5: not enforced: scopes (needs ABI 6)\nsecond line",
            )),
        ];
        let buf: Vec<u8> = msgs.iter().flat_map(StageMsg::encode).collect();
        let mut want = msgs;
        want[2] = StageMsg::Degraded("line one line two".into());
        assert_eq!(decode(&buf), want);
    }

    #[test]
    fn a_cut_frame_ends_decoding_and_long_text_fits_one_write() {
        let mut buf = StageMsg::Info("kept".into()).encode();
        let cut = StageMsg::Degraded("lost".into()).encode();
        buf.extend_from_slice(&cut[..cut.len() - 1]);
        assert_eq!(decode(&buf), vec![StageMsg::Info("kept".into())]);
        let long = StageMsg::Degraded("é".repeat(5000)).encode();
        assert!(long.len() <= MAX_FRAME);
        assert!(matches!(&decode(&long)[..], [StageMsg::Degraded(s)] if s.starts_with('é')));
        assert!(decode(&[9, 0, 0, 0, 0]).is_empty(), "unknown kind skipped");
        let bad_layer = [6, 2, 0, 0, 0, b'{', b'}'];
        assert!(
            decode(&bad_layer).is_empty(),
            "a layer that does not parse is skipped"
        );
    }
}
