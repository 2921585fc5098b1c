//! Certificates only, out of a file named as a CA bundle (atk27i F7): the
//! text of the caller's `SSL_CERT_FILE` goes into the sandbox, and an
//! earlier run may have replaced that file by a link to any file the
//! caller can read. What is kept are the PEM `CERTIFICATE` (and OpenSSL's
//! `TRUSTED CERTIFICATE`) blocks whose body is base64 only; everything
//! else (a value, a private key, comments, another block type) is left
//! out.

/// The certificate blocks of `text`, each ending in a newline.
pub fn certificates_only(text: &str) -> String {
    const KINDS: &[&str] = &["CERTIFICATE", "TRUSTED CERTIFICATE"];
    let mut out = String::new();
    let mut block: Option<(&str, String)> = None;
    for line in text.lines() {
        let line = line.trim_end_matches('\r');
        match &mut block {
            None => {
                block = KINDS
                    .iter()
                    .find(|k| line == format!("-----BEGIN {k}-----"))
                    .map(|k| (*k, format!("{line}\n")));
            }
            Some((kind, b)) => {
                if line == format!("-----END {kind}-----") {
                    b.push_str(line);
                    b.push('\n');
                    out.push_str(b);
                    block = None;
                } else if !line.is_empty()
                    && line
                        .bytes()
                        .all(|c| c.is_ascii_alphanumeric() || matches!(c, b'+' | b'/' | b'='))
                {
                    b.push_str(line);
                    b.push('\n');
                } else {
                    // Not a certificate's body: the whole block is dropped.
                    block = None;
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_certificate_blocks_are_kept() {
        let cert = "-----BEGIN CERTIFICATE-----\nMIIBaz+/=\nAbC\n-----END CERTIFICATE-----\n";
        let text = format!(
            "# Issuer: test\n{cert}tokREALvalue0123\n-----BEGIN OPENSSH PRIVATE KEY-----\n\
             b3BlbnNzaA==\n-----END OPENSSH PRIVATE KEY-----\n-----BEGIN CERTIFICATE-----\n\
             has spaces REAL\n-----END CERTIFICATE-----\n-----BEGIN TRUSTED CERTIFICATE-----\r\n\
             QUJD\r\n-----END TRUSTED CERTIFICATE-----\r\n"
        );
        let kept = certificates_only(&text);
        assert_eq!(
            kept,
            format!(
                "{cert}-----BEGIN TRUSTED CERTIFICATE-----\nQUJD\n-----END TRUSTED CERTIFICATE-----\n"
            )
        );
        assert_eq!(certificates_only("tokREALvalue0123456789abcdefXYZ"), "");
        // An unterminated block is dropped.
        assert_eq!(certificates_only("-----BEGIN CERTIFICATE-----\nQUJD\n"), "");
    }
}
