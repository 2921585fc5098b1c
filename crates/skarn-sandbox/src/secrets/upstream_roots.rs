//! The roots the proxy verifies bound hosts' certificates against
//! (atk27h F2, F3), which are also the system part of the CA bundle the
//! sandbox gets (atk27i F7): chosen by the user only, in the process that
//! plans the sandbox (`skarn run`, the gateway), from its own
//! `SSL_CERT_FILE` / `SSL_CERT_DIR`, read there ([`super::root_files`]:
//! never through a place a run may write, certificates only) and handed
//! to the proxy and to init as PEM text in the plan. Neither reads a file
//! named by an environment (for a gateway server, the server's). A file
//! or directory the user named that is refused is left out with a
//! warning; the system's store is used instead.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::root_files::{self, Places};

/// The roots, as PEM certificates (nothing else).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct UpstreamRoots {
    /// `CERTIFICATE` blocks only ([`skarn_egress::root_pem`]).
    pub pem: String,
}

/// System bundle files, in the order distributions place them.
const SYSTEM_FILES: &[&str] = &[
    "/etc/ssl/certs/ca-certificates.crt",
    "/etc/pki/tls/certs/ca-bundle.crt",
    "/etc/ssl/ca-bundle.pem",
    "/etc/ssl/cert.pem",
    "/etc/pki/ca-trust/extracted/pem/tls-ca-bundle.pem",
];
const SYSTEM_DIR: &str = "/etc/ssl/certs";

/// The caller's roots (its `SSL_CERT_FILE`/`SSL_CERT_DIR`), any a run may
/// have written or redirected (`writable`: this run's writable grants;
/// see [`Places`] for the rest) dropped with a warning in `warnings`; the
/// system's store when none is left.
pub fn from_caller(writable: &[PathBuf], warnings: &mut Vec<String>) -> UpstreamRoots {
    let home = std::env::var_os("HOME")
        .map(PathBuf::from)
        .filter(|h| h.is_absolute());
    let places = Places::new(writable, home.as_deref());
    let mut pem = String::new();
    let mut refuse = |name: &str, p: &Path, why: String| {
        warnings.push(format!(
            "secrets: {name}={} is not used: {why}; a sandboxed run could have planted a certificate authority there (only the user's own files outside every place a run may write are taken); the proxy verifies bound hosts against the system's store instead",
            p.display()
        ))
    };
    if let Some(f) = std::env::var_os("SSL_CERT_FILE").filter(|v| !v.is_empty()) {
        let f = PathBuf::from(f);
        match root_files::read_file(&f, &places) {
            Ok(t) if t.is_empty() => refuse("SSL_CERT_FILE", &f, "it holds no certificate".into()),
            Ok(t) => pem.push_str(&t),
            Err(why) => refuse("SSL_CERT_FILE", &f, why),
        }
    }
    // `SSL_CERT_DIR` may list several directories; the first usable one
    // is taken.
    if let Some(v) = std::env::var_os("SSL_CERT_DIR") {
        for d in std::env::split_paths(&v).filter(|d| !d.as_os_str().is_empty()) {
            match root_files::read_dir(&d, &places) {
                Ok(t) if t.is_empty() => {}
                Ok(t) => {
                    pem.push_str(&t);
                    break;
                }
                Err(why) => refuse("SSL_CERT_DIR", &d, why),
            }
        }
    }
    if pem.is_empty() {
        pem = system(&places);
    }
    UpstreamRoots { pem }
}

/// The system's store: the first bundle file holding certificates, else
/// the certificates directory.
fn system(places: &Places) -> String {
    SYSTEM_FILES
        .iter()
        .filter_map(|f| root_files::read_file(Path::new(f), places).ok())
        .find(|t| !t.is_empty())
        .or_else(|| root_files::read_dir(Path::new(SYSTEM_DIR), places).ok())
        .unwrap_or_default()
}
