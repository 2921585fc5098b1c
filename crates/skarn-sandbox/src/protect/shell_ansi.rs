//! ANSI-C quoting (`$'x\x2esh'`) for [`super::shell_words::commands`]:
//! bash decodes the escapes, so the reader must too (attack atk24d F4).

/// The body of `$'...'` (after the quote) into `w`, escapes decoded.
pub(super) fn ansi_c(chars: &mut std::iter::Peekable<std::str::Chars<'_>>, w: &mut String) {
    while let Some(d) = chars.next() {
        match d {
            '\'' => return,
            '\\' => {
                let Some(e) = chars.next() else { return };
                let radix_digits = |chars: &mut std::iter::Peekable<std::str::Chars<'_>>,
                                    first: Option<char>,
                                    radix: u32,
                                    max: usize| {
                    let mut v = first.and_then(|c| c.to_digit(radix)).unwrap_or(0);
                    let mut n = usize::from(first.is_some());
                    while n < max {
                        match chars.peek().and_then(|c| c.to_digit(radix)) {
                            Some(x) => {
                                v = v * radix + x;
                                chars.next();
                                n += 1;
                            }
                            None => break,
                        }
                    }
                    char::from_u32(v).unwrap_or('\u{fffd}')
                };
                w.push(match e {
                    'n' => '\n',
                    't' => '\t',
                    'r' => '\r',
                    'a' => '\u{7}',
                    'b' => '\u{8}',
                    'e' | 'E' => '\u{1b}',
                    'f' => '\u{c}',
                    'v' => '\u{b}',
                    'x' => radix_digits(chars, None, 16, 2),
                    'u' => radix_digits(chars, None, 16, 4),
                    'U' => radix_digits(chars, None, 16, 8),
                    '0'..='7' => radix_digits(chars, Some(e), 8, 3),
                    other => other,
                });
            }
            d => w.push(d),
        }
    }
}
