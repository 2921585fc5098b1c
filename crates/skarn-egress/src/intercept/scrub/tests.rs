use super::*;

fn scrubber(real: &[u8], ph: &[u8]) -> Scrubber {
    let whole = vec![(Zeroizing::new(real.to_vec()), ph.to_vec())];
    Scrubber::new(Arc::new(Engine::new(
        &whole,
        Arc::new(Windows::new(&super::super::forms::pairs(real, ph))),
    )))
}

#[test]
fn echoes_split_anywhere_are_replaced_and_lengths_kept() {
    let body = b"xx real-secret-value yy real-secret-value".to_vec();
    for split in 0..body.len() {
        let mut s = scrubber(b"real-secret-value", b"PLACEHOLDER_12345");
        let mut out = s.push(&body[..split]).to_vec();
        out.extend_from_slice(s.push(&body[split..]));
        out.extend_from_slice(s.finish());
        assert_eq!(out, b"xx PLACEHOLDER_12345 yy PLACEHOLDER_12345", "{split}");
    }
}

/// Finding F1 (atk27): partial, reversed, case-changed and re-encoded
/// echoes are scrubbed too (runs of at least `WINDOW` bytes).
#[test]
fn transformed_and_partial_echoes_are_replaced() {
    use base64::Engine as _;
    use base64::engine::general_purpose::{STANDARD, URL_SAFE};
    let real = "OPENSECRETvalue_9876543210zyxwvu";
    let ph = "Xq7PLACEHOLDERaaaaaaaaaaaaaaaaaa";
    let rev: String = real.chars().rev().collect();
    let hexed: String = real.bytes().map(|b| format!("{b:02X}")).collect();
    for echo in [
        format!("Bearer {}", &real[..16]),
        format!("...{}", &real[9..23]),
        rev.clone(),
        real.to_ascii_lowercase(),
        real.to_ascii_uppercase(),
        STANDARD.encode(format!("Bearer {real}")),
        STANDARD.encode(format!("u:{real}")),
        URL_SAFE.encode(format!("xx{real}")),
        hexed,
        format!("{{\"t\":\"{}\"}}", real.replace('_', "%5F")),
    ] {
        let mut s = scrubber(real.as_bytes(), ph.as_bytes());
        let mut out = s.push(echo.as_bytes()).to_vec();
        out.extend_from_slice(s.finish());
        assert_eq!(out.len(), echo.len());
        let out = String::from_utf8_lossy(&out).to_string();
        // No run of WINDOW value bytes survives, in any form.
        let fwd = real.as_bytes();
        let dec: Vec<Vec<u8>> = vec![
            out.as_bytes().to_ascii_lowercase(),
            out.bytes().rev().collect::<Vec<u8>>().to_ascii_lowercase(),
            STANDARD
                .decode(out.trim())
                .unwrap_or_default()
                .to_ascii_lowercase(),
        ];
        for w in fwd.windows(super::super::forms::WINDOW) {
            let w = w.to_ascii_lowercase();
            for d in &dec {
                assert!(!d.windows(w.len()).any(|x| x == w), "{echo} -> {out}");
            }
        }
    }
    // Ordinary text is untouched.
    let mut s = scrubber(real.as_bytes(), ph.as_bytes());
    let text = b"OPENSECRE is a word; value_98 is short".to_vec();
    let mut out = s.push(&text).to_vec();
    out.extend_from_slice(s.finish());
    assert_eq!(out, text);
}

/// Two secrets sharing text (`REAL-VALUE`, digits one the other's
/// reverse): a whole echo of one is put back exactly, however split.
#[test]
fn a_whole_echo_wins_over_another_secrets_windows() {
    use super::super::forms::pairs;
    let (a, pa) = (
        b"alpha-REAL-VALUE-0123456789",
        b"alpha-QkESQTMW4tZNY4qBe3kP5",
    );
    let (b, pb) = (b"beta-REAL-VALUE-9876543210", b"beta-xxxxxxxxxxxxxxxxxxxxx");
    let whole = vec![
        (Zeroizing::new(a.to_vec()), pa.to_vec()),
        (Zeroizing::new(b.to_vec()), pb.to_vec()),
    ];
    let mut windows = pairs(a, pa);
    windows.extend(pairs(b, pb));
    let engine = Arc::new(Engine::new(&whole, Arc::new(Windows::new(&windows))));
    let body = b"you sent: Bearer alpha-REAL-VALUE-0123456789 and again Bearer alpha-REAL-VALUE-0123456789\n";
    let want = b"you sent: Bearer alpha-QkESQTMW4tZNY4qBe3kP5 and again Bearer alpha-QkESQTMW4tZNY4qBe3kP5\n";
    for split in 0..body.len() {
        let mut s = Scrubber::new(engine.clone());
        let mut out = s.push(&body[..split]).to_vec();
        out.extend_from_slice(s.push(&body[split..]));
        out.extend_from_slice(s.finish());
        assert_eq!(
            String::from_utf8_lossy(&out),
            String::from_utf8_lossy(want),
            "{split}"
        );
    }
}

/// atk27 F13: a value with quotes, backslashes, controls and
/// non-ASCII characters, JSON-escaped by the host in any way (every
/// character as `\uXXXX` too) or percent-encoded byte by byte, is
/// scrubbed however the escaped text is split across reads.
#[test]
fn json_percent_c_and_html_escaped_echoes_are_replaced() {
    let real = "Xk7\"Qz2\\mN4\"vR8\\sL1\txT6é€w😀B3pY9";
    let ph = super::super::super::secrets::placeholder::make(real).unwrap();
    let json = serde_json::to_string(real).unwrap();
    let ascii: String = real.encode_utf16().map(|u| format!("\\u{u:04x}")).collect();
    let pct: String = real.bytes().map(|b| format!("%{b:02X}")).collect();
    for echo in [
        format!("{{\"you_sent\": {json}}}"),
        format!("[\"{ascii}\"]"),
        format!("q={pct}&x=1"),
        // C-style and HTML forms (atk27c F1).
        real.bytes()
            .map(|b| format!("\\x{b:02x}"))
            .collect::<String>(),
        real.bytes()
            .map(|b| format!("\\{b:03o}"))
            .collect::<String>(),
        real.chars()
            .map(|c| format!("&#{};", c as u32))
            .collect::<String>(),
        real.chars()
            .map(|c| format!("&#x{:x};", c as u32))
            .collect::<String>(),
    ] {
        let body = echo.as_bytes();
        for split in [0, 1, 7, body.len() / 2, body.len() - 3] {
            let mut s = scrubber(real.as_bytes(), ph.as_bytes());
            let mut out = s.push(&body[..split]).to_vec();
            out.extend_from_slice(s.push(&body[split..]));
            out.extend_from_slice(s.finish());
            assert_eq!(out.len(), body.len());
            // Decoded as the client would, no 10-byte run is left.
            let text = String::from_utf8_lossy(&out).to_string();
            let shadow = super::super::unescape::Shadow::of(&out)
                .map(|s| s.bytes)
                .unwrap_or(out.clone());
            let fwd = real.as_bytes();
            for w in fwd.windows(super::super::forms::WINDOW) {
                assert!(!shadow.windows(w.len()).any(|x| x == w), "{echo} -> {text}");
            }
        }
    }
}

/// atk27j F8: an event ending in a byte no match can hold is passed
/// on whole at once; a tail that could begin an echo is held.
#[test]
fn streamed_pieces_pass_at_once_and_a_possible_echo_start_is_held() {
    let mut s = scrubber(b"real-secret-value", b"PLACEHOLDER_12345");
    let ev = b"data: {\"delta\":\"tok0\"}\n\n";
    assert_eq!(s.push(ev), ev);
    let held = s.push(b"data: real-sec").to_vec();
    assert_eq!(held, b"data: ");
    let mut rest = s.push(b"ret-value\n\n").to_vec();
    rest.extend_from_slice(s.finish());
    assert_eq!(rest, b"PLACEHOLDER_12345\n\n");
}
