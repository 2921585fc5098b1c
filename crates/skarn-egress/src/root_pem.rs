//! Certificates only (atk27i F7): the roots a run's proxy verifies bound
//! hosts against, and the system part of the CA bundle a sandbox gets,
//! are the X.509 certificates found in the user's files, parsed and
//! written out again. Whatever else such a file holds (a private key, a
//! token, any text a link made it name) is never copied.

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use rustls::pki_types::CertificateDer;
use rustls::pki_types::pem::PemObject;

/// The `CERTIFICATE` blocks of `text` that parse as X.509 trust anchors,
/// re-encoded as PEM (64 characters a line), each DER once, in order.
/// Empty when there are none.
pub fn certificates_only(text: &[u8]) -> String {
    let mut out = String::new();
    let mut seen = std::collections::HashSet::new();
    for der in CertificateDer::pem_slice_iter(text).filter_map(Result::ok) {
        let bytes = der.as_ref().to_vec();
        if seen.contains(&bytes) || !is_certificate(&der) {
            continue;
        }
        out.push_str("-----BEGIN CERTIFICATE-----\n");
        let b64 = STANDARD.encode(&bytes);
        for line in b64.as_bytes().chunks(64) {
            // Base64 output is ASCII.
            out.push_str(&String::from_utf8_lossy(line));
            out.push('\n');
        }
        out.push_str("-----END CERTIFICATE-----\n");
        seen.insert(bytes);
    }
    out
}

/// Whether `der` is an X.509 certificate a root store accepts.
fn is_certificate(der: &CertificateDer<'_>) -> bool {
    let mut store = rustls::RootCertStore::empty();
    store.add(der.clone()).is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_parsable_certificates_are_kept() {
        let ca = crate::make_run_ca(&["localhost".to_string()]).unwrap();
        let key = "-----BEGIN PRIVATE KEY-----\nc2VjcmV0\n-----END PRIVATE KEY-----\n";
        // A CERTIFICATE block whose body is not a certificate (a value).
        let fake = "-----BEGIN CERTIFICATE-----\ndG9rUkVBTHZhbHVlMDEyMzQ1Njc4OQ==\n-----END CERTIFICATE-----\n";
        let text = format!("tokREALvalue\n{key}{fake}{}{}", ca.cert_pem, ca.cert_pem);
        let out = certificates_only(text.as_bytes());
        assert_eq!(out.matches("BEGIN CERTIFICATE").count(), 1, "{out}");
        assert!(!out.contains("tokREAL") && !out.contains("c2VjcmV0") && !out.contains("dG9r"));
        let back: Vec<_> = CertificateDer::pem_slice_iter(out.as_bytes())
            .filter_map(Result::ok)
            .collect();
        let orig: Vec<_> = CertificateDer::pem_slice_iter(ca.cert_pem.as_bytes())
            .filter_map(Result::ok)
            .collect();
        assert_eq!(back, orig);
        assert!(certificates_only(b"-----BEGIN OPENSSH PRIVATE KEY-----\nx\n").is_empty());
    }
}
