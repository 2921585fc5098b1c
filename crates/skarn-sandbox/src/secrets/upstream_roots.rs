//! The roots the proxy verifies bound hosts' certificates against
//! (atk27h F2, F3): chosen by the user only, in the process that plans the
//! sandbox (`skarn run`, the gateway), from its own `SSL_CERT_FILE` /
//! `SSL_CERT_DIR`, and handed to the proxy through the plan. The proxy
//! never reads them from its environment, which for a gateway server is
//! the server's (its `env` table, its state files). A file or directory
//! the user named that lies inside a writable grant is ignored (the
//! sandboxed command could plant a CA there), with a warning; the system's
//! store is used instead.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

/// Where the proxy reads its upstream roots.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct UpstreamRoots {
    /// A PEM bundle.
    pub file: Option<PathBuf>,
    /// A directory of PEM files.
    pub dir: Option<PathBuf>,
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

/// The caller's roots (its `SSL_CERT_FILE`/`SSL_CERT_DIR`), any inside
/// `writable` dropped with a warning in `warnings`; the system's store
/// when none is left.
pub fn from_caller(writable: &[PathBuf], warnings: &mut Vec<String>) -> UpstreamRoots {
    let var = |name: &str| {
        std::env::var_os(name)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
    };
    let mut keep = |name: &str, p: Option<PathBuf>| -> Option<PathBuf> {
        let p = p?;
        if let Some(g) = inside(&p, writable) {
            warnings.push(format!(
                "secrets: {name}={} is inside the writable grant {}, where the command could \
                 plant a certificate authority; the proxy verifies bound hosts against the \
                 system's store instead",
                p.display(),
                g.display()
            ));
            return None;
        }
        Some(p)
    };
    let file = keep("SSL_CERT_FILE", var("SSL_CERT_FILE"));
    // `SSL_CERT_DIR` may list several directories; the proxy takes the
    // first one outside the writable grants.
    let dir = std::env::var_os("SSL_CERT_DIR").and_then(|v| {
        std::env::split_paths(&v)
            .filter(|d| !d.as_os_str().is_empty())
            .find_map(|d| keep("SSL_CERT_DIR", Some(d)))
    });
    if file.is_some() || dir.is_some() {
        return UpstreamRoots { file, dir };
    }
    UpstreamRoots {
        file: SYSTEM_FILES.iter().map(PathBuf::from).find(|p| p.is_file()),
        dir: Some(PathBuf::from(SYSTEM_DIR)).filter(|d| d.is_dir()),
    }
}

/// The directories earlier sandboxed runs could write (their workspaces
/// and write grants, from the record in Skarn's state directory, which no
/// run can write): a CA file there may have been rewritten by one of them
/// (atk27i F4), so it counts as writable for every later run.
pub fn written_by_earlier_runs(home: Option<&Path>) -> Vec<PathBuf> {
    crate::policy::granted::log_path(home)
        .map(|f| crate::policy::granted::GrantLog::load(&f))
        .map(|l| l.roots.into_iter().map(|(_, p)| p).collect())
        .unwrap_or_default()
}

/// The writable grant `p` (links resolved) lies in.
pub(crate) fn inside<'a>(p: &Path, writable: &'a [PathBuf]) -> Option<&'a PathBuf> {
    let real = std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf());
    writable.iter().find(|g| {
        let g_real = std::fs::canonicalize(g).unwrap_or_else(|_| g.to_path_buf());
        real.starts_with(&g_real) || p.starts_with(g)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_root_inside_a_writable_grant_is_not_taken() {
        let t = skarn_test_support::TempDir::new("upstream_roots");
        let ws = t.dir("ws");
        let out = t.dir("out");
        std::fs::write(ws.join("ca.pem"), "x").unwrap();
        std::fs::write(out.join("ca.pem"), "x").unwrap();
        std::os::unix::fs::symlink(ws.join("ca.pem"), out.join("link.pem")).unwrap();
        let w = vec![ws.clone()];
        assert!(inside(&ws.join("ca.pem"), &w).is_some());
        assert!(inside(&out.join("link.pem"), &w).is_some());
        assert!(inside(&out.join("ca.pem"), &w).is_none());
    }
}
