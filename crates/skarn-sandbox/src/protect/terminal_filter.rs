//! Terminal escape sequences from a sandboxed command, neutralised before
//! they reach a terminal or an agent.
//!
//! A command's output can drive the terminal that shows it: OSC 52 writes
//! the clipboard (pasted later into a host shell), OSC 0/2 set the title
//! that `CSI 21 t` then types back as input, device-status and attribute
//! queries (`CSI 6 n`, `CSI c`) make the terminal answer on the input
//! side, DCS/APC strings reach terminal-specific handlers. [`Filter`]
//! keeps what draws (colours and styles `CSI ... m`, cursor movement and
//! erasing, as progress bars use) and drops every other control string:
//! OSC, DCS, APC, PM, SOS, other CSI sequences, other escapes and the
//! C1 controls. `skarn run` pipes the command's terminal output
//! through it ([`crate::linux::tty_relay`]: a pseudo-terminal of its own, so the
//! command still sees a terminal) and `--compress` passes its text
//! through it.

/// CSI final bytes kept: SGR, cursor movement, erase.
const CSI_KEPT: &[u8] = b"mABCDEFGHJKf";

/// Longest escape sequence buffered (a longer one is dropped whole).
const MAX_SEQ: usize = 4096;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    Text,
    /// After ESC.
    Esc,
    /// Inside `ESC [` (parameters so far in `seq`).
    Csi,
    /// Inside a string (OSC, DCS, APC, PM, SOS) until BEL or ST.
    Str,
    /// ESC seen inside a string (ST is `ESC \`).
    StrEsc,
    /// After the UTF-8 lead byte 0xC2 (a C1 control may follow).
    C2,
}

/// A streaming filter (sequences may be split across writes).
#[derive(Debug)]
pub struct Filter {
    state: State,
    seq: Vec<u8>,
    /// UTF-8 continuation bytes still expected after a lead byte.
    cont: u8,
}

impl Default for Filter {
    fn default() -> Self {
        Filter {
            state: State::Text,
            seq: Vec::new(),
            cont: 0,
        }
    }
}

impl Filter {
    /// Filter `input`, appending what may reach the terminal to `out`.
    pub fn push(&mut self, input: &[u8], out: &mut Vec<u8>) {
        for &b in input {
            self.byte(b, out);
        }
    }

    fn byte(&mut self, b: u8, out: &mut Vec<u8>) {
        match self.state {
            State::Text if self.cont > 0 && (0x80..=0xbf).contains(&b) => {
                // A continuation byte of a well-formed character.
                self.cont -= 1;
                out.push(b);
            }
            State::Text => match b {
                0x1b => {
                    self.cont = 0;
                    self.state = State::Esc;
                }
                // U+0080-U+009F (the C1 controls, CSI and OSC in one
                // character) are C2 80-9F in UTF-8.
                0xc2 => {
                    self.cont = 0;
                    self.state = State::C2;
                }
                // A raw byte 0x80-0x9f outside a UTF-8 character is an
                // 8-bit C1 control (CSI, OSC, ST) for a terminal in an
                // 8-bit mode: dropped.
                0x80..=0x9f => self.cont = 0,
                0xc3..=0xdf => {
                    self.cont = 1;
                    out.push(b);
                }
                0xe0..=0xef => {
                    self.cont = 2;
                    out.push(b);
                }
                0xf0..=0xf4 => {
                    self.cont = 3;
                    out.push(b);
                }
                // BEL, and the control characters a terminal may act on
                // beyond layout (ENQ answerback, SO/SI charset shifts).
                0x05 | 0x07 | 0x0e | 0x0f => self.cont = 0,
                _ => {
                    self.cont = 0;
                    out.push(b);
                }
            },
            State::C2 => {
                self.state = State::Text;
                if !(0x80..=0x9f).contains(&b) {
                    out.push(0xc2);
                    self.byte(b, out);
                }
            }
            State::Esc => match b {
                b'[' => {
                    self.seq.clear();
                    self.state = State::Csi;
                }
                b']' | b'P' | b'_' | b'^' | b'X' => self.state = State::Str,
                // Other escapes (reset, charset, keypad modes): dropped.
                _ => self.state = State::Text,
            },
            State::Csi => {
                if (0x40..=0x7e).contains(&b) {
                    let plain = self.seq.iter().all(|c| c.is_ascii_digit() || *c == b';');
                    if plain && CSI_KEPT.contains(&b) {
                        out.extend_from_slice(b"\x1b[");
                        out.extend_from_slice(&self.seq);
                        out.push(b);
                    }
                    self.seq.clear();
                    self.state = State::Text;
                } else if (0x20..=0x3f).contains(&b) && self.seq.len() < MAX_SEQ {
                    self.seq.push(b);
                } else {
                    // Not a well-formed CSI sequence: dropped.
                    self.seq.clear();
                    self.state = State::Text;
                }
            }
            State::Str => match b {
                0x07 => self.state = State::Text,
                0x1b => self.state = State::StrEsc,
                _ => {}
            },
            State::StrEsc => self.state = if b == b'\\' { State::Text } else { State::Str },
        }
    }
}

/// `s` with every control character spelled out (`\x1b`), for messages
/// that name paths a command chose.
pub fn printable(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        if c.is_control() && c != '\n' {
            out.push_str(&format!("\\x{:02x}", c as u32));
        } else {
            out.push(c);
        }
    }
    out
}

/// `s` kept on one line, with every character that can change what a
/// terminal shows spelled out: C0 controls (LF, CR, ESC, ...), DEL, C1
/// controls (`\x1b`, `\x0a`, `\x9b`), the bidirectional-text controls and
/// the line and paragraph separators (`\u{202e}`). For any text a file
/// chose (a configuration's server command, alias, path) that skarn
/// prints before the user decides to trust it.
pub fn one_line(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        let bidi = matches!(
            c,
            '\u{061c}' | '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}'
        );
        if c.is_control() {
            out.push_str(&format!("\\x{:02x}", c as u32));
        } else if bidi || matches!(c, '\u{2028}' | '\u{2029}') {
            out.push_str(&format!("\\u{{{:04x}}}", c as u32));
        } else {
            out.push(c);
        }
    }
    out
}

/// Neutralise a whole text at once.
pub fn neutralise(input: &[u8]) -> Vec<u8> {
    let mut f = Filter::default();
    let mut out = Vec::with_capacity(input.len());
    f.push(input, &mut out);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn colours_stay_and_dangerous_sequences_go() {
        let s = b"\x1b[1;32mok\x1b[0m \x1b]52;c;ZWNobyBwd24=\x07x\x1b]0;title\x1b\\y\
                  \x1b[21t\x1b[6n\x1b[c\x1bP+q\x1b\\\x1b[2K\rz\x05\xc2\x9b6n";
        let out = neutralise(s);
        assert_eq!(out, b"\x1b[1;32mok\x1b[0m xy\x1b[2K\rz6n".to_vec());
    }

    #[test]
    fn sequences_split_across_writes_are_still_dropped() {
        let mut f = Filter::default();
        let mut out = Vec::new();
        f.push(b"a\x1b]5", &mut out);
        f.push(b"2;c;AAAA", &mut out);
        f.push(b"\x07b\xc3\xa9", &mut out);
        assert_eq!(out, b"ab\xc3\xa9".to_vec());
    }

    #[test]
    fn raw_c1_bytes_go_and_utf8_characters_stay() {
        // 0x9d OSC ... 0x9c ST and 0x9b CSI as raw bytes (atk22 F7).
        let s = b"a\x9d52;c;UFdOCg==\x9cb\x9b6nc";
        assert_eq!(neutralise(s), b"a52;c;UFdOCg==b6nc".to_vec());
        // Characters whose continuation bytes are 0x80-0x9f are kept,
        // also split across writes: euro sign, an emoji, a CJK character.
        let mut f = Filter::default();
        let mut out = Vec::new();
        f.push(b"\xe2\x82", &mut out);
        f.push(b"\xac \xf0\x9f\x98\x80 \xe4\xb8\x80", &mut out);
        assert_eq!(out, "\u{20ac} \u{1f600} \u{4e00}".as_bytes().to_vec());
        // A lead byte cut short does not let a later raw C1 byte through.
        assert_eq!(neutralise(b"\xe2x\x9by"), b"\xe2xy".to_vec());
    }

    #[test]
    fn one_line_spells_out_every_display_control() {
        let s = "a\x1b[2K\r\x1b[1Ab\nc\x7f\u{9b}d\u{202e}e\u{2066}f\u{2028}g\th";
        let out = one_line(s);
        assert_eq!(
            out,
            "a\\x1b[2K\\x0d\\x1b[1Ab\\x0ac\\x7f\\x9bd\\u{202e}e\\u{2066}f\\u{2028}g\\x09h"
        );
        assert!(!out.chars().any(char::is_control));
        assert_eq!(one_line("plain 'sh' -c ü"), "plain 'sh' -c ü");
    }
}
