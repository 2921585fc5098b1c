//! The certificate authority of one run: made when the run starts, its
//! certificate trusted inside the sandbox only (through the run's CA
//! bundle and variables), its key held by the proxy only. Name constraints
//! limit it to the names the run's secrets are bound to, so even a client
//! that trusts it accepts nothing else from it. Leaf certificates for bound
//! hosts are made on first use and kept for the run.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use rcgen::{
    BasicConstraints, CertificateParams, CidrSubnet, DistinguishedName, DnType,
    ExtendedKeyUsagePurpose, GeneralSubtree, IsCa, Issuer, KeyPair, KeyUsagePurpose,
    NameConstraints, SanType,
};
use rustls::ServerConfig;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};
use zeroize::Zeroizing;

use crate::pattern::{HostMatch, Pattern};
use crate::rules::Target;

/// The CA could not be made or used.
#[derive(Debug, thiserror::Error)]
#[error("run certificate authority: {0}")]
pub struct CaError(pub String);

fn e(x: impl std::fmt::Display) -> CaError {
    CaError(x.to_string())
}

/// A run's CA: the certificate (public) and its key (for the proxy only).
#[derive(Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct CaMaterial {
    /// The CA certificate, PEM.
    pub cert_pem: String,
    /// The CA key, PKCS#8 PEM (zeroed when dropped).
    pub key_pem: Zeroizing<String>,
    /// The name constraints' DNS names (to rebuild the issuer).
    pub names: Vec<String>,
}

impl std::fmt::Debug for CaMaterial {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CaMaterial")
            .field("names", &self.names)
            .finish_non_exhaustive()
    }
}

impl CaMaterial {
    /// Forget the key (the helper does this once the proxy has it).
    pub fn clear_key(&mut self) {
        self.key_pem = Zeroizing::new(String::new());
    }
}

fn ca_params(hosts: &[Pattern]) -> Result<CertificateParams, CaError> {
    let mut p = CertificateParams::new(Vec::<String>::new()).map_err(e)?;
    let mut dn = DistinguishedName::new();
    dn.push(DnType::CommonName, "skarn run CA (this run only)");
    p.distinguished_name = dn;
    p.is_ca = IsCa::Ca(BasicConstraints::Constrained(0));
    p.key_usages = vec![KeyUsagePurpose::KeyCertSign, KeyUsagePurpose::CrlSign];
    let mut permitted = Vec::new();
    for h in hosts {
        match &h.host {
            HostMatch::Exact(n) | HostMatch::Subdomains(n) => {
                permitted.push(GeneralSubtree::DnsName(n.clone()))
            }
            HostMatch::Net(n) => permitted.push(GeneralSubtree::IpAddress(
                CidrSubnet::from_addr_prefix(n.addr(), n.prefix_len()),
            )),
        }
    }
    // A constraint binds only its own name form: forms no pattern names
    // are closed too (every address excluded, a name that cannot exist).
    let mut excluded = Vec::new();
    if !permitted
        .iter()
        .any(|g| matches!(g, GeneralSubtree::IpAddress(_)))
    {
        for any in ["0.0.0.0", "::"] {
            if let Ok(ip) = any.parse() {
                excluded.push(GeneralSubtree::IpAddress(CidrSubnet::from_addr_prefix(
                    ip, 0,
                )));
            }
        }
    }
    if !permitted
        .iter()
        .any(|g| matches!(g, GeneralSubtree::DnsName(_)))
    {
        permitted.push(GeneralSubtree::DnsName("invalid".into()));
    }
    p.name_constraints = Some(NameConstraints {
        permitted_subtrees: permitted,
        excluded_subtrees: excluded,
    });
    // The CA lives as long as its process (a gateway server runs for
    // weeks; its key is never stored): it must not expire under it
    // (atk27k F11). Leaves stay short and are made again (`LEAF_MAX_AGE`).
    let now = time::OffsetDateTime::now_utc();
    p.not_before = now - time::Duration::hours(1);
    p.not_after = now + time::Duration::days(CA_DAYS);
    Ok(p)
}

/// Make a run's CA for secrets bound to `hosts` (host patterns).
pub fn make_run_ca(hosts: &[String]) -> Result<CaMaterial, CaError> {
    let pats = parse_all(hosts)?;
    let key = KeyPair::generate().map_err(e)?;
    let cert = ca_params(&pats)?.self_signed(&key).map_err(e)?;
    Ok(CaMaterial {
        cert_pem: cert.pem(),
        key_pem: Zeroizing::new(key.serialize_pem()),
        names: hosts.to_vec(),
    })
}

fn parse_all(hosts: &[String]) -> Result<Vec<Pattern>, CaError> {
    hosts.iter().map(|h| Pattern::parse(h).map_err(e)).collect()
}

/// Leaf certificates (and the TLS server settings serving them) for the
/// bound hosts, signed by the run's CA.
pub(crate) struct LeafMaker {
    issuer: Issuer<'static, KeyPair>,
    leaf_key: KeyPair,
    ca_der: CertificateDer<'static>,
    /// Each name's settings and when its leaf was made.
    cache: Mutex<HashMap<String, (std::time::Instant, Arc<ServerConfig>)>>,
}

/// Leaves kept at once (a `*.domain` binding could ask for many).
const MAX_CACHED: usize = 256;

/// How long a run's CA is valid: longer than any process lives.
const CA_DAYS: i64 = 3650;

/// How long a leaf (valid two days) is served before a new one is made.
const LEAF_MAX_AGE: std::time::Duration = std::time::Duration::from_secs(24 * 3600);

impl LeafMaker {
    pub(crate) fn new(ca: &CaMaterial) -> Result<LeafMaker, CaError> {
        let key = KeyPair::from_pem(&ca.key_pem).map_err(e)?;
        let params = ca_params(&parse_all(&ca.names)?)?;
        let ca_der = rustls_pemfile_der(&ca.cert_pem)?;
        Ok(LeafMaker {
            issuer: Issuer::new(params, key),
            leaf_key: KeyPair::generate().map_err(e)?,
            ca_der,
            cache: Mutex::new(HashMap::new()),
        })
    }

    /// TLS server settings presenting a certificate for `t`.
    pub(crate) fn server_config(&self, t: &Target) -> Result<Arc<ServerConfig>, CaError> {
        let key = t.to_string();
        if let Some((made, c)) = self
            .cache
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(&key)
            && made.elapsed() < LEAF_MAX_AGE
        {
            return Ok(c.clone());
        }
        let mut p = CertificateParams::new(Vec::<String>::new()).map_err(e)?;
        p.distinguished_name = DistinguishedName::new();
        p.subject_alt_names = vec![match t {
            Target::Name(n) => SanType::DnsName(n.clone().try_into().map_err(e)?),
            Target::Ip(ip) => SanType::IpAddress(*ip),
        }];
        p.key_usages = vec![KeyUsagePurpose::DigitalSignature];
        p.extended_key_usages = vec![ExtendedKeyUsagePurpose::ServerAuth];
        p.use_authority_key_identifier_extension = true;
        let now = time::OffsetDateTime::now_utc();
        p.not_before = now - time::Duration::hours(1);
        p.not_after = now + time::Duration::days(2);
        let leaf = p.signed_by(&self.leaf_key, &self.issuer).map_err(e)?;
        let chain = vec![leaf.der().clone(), self.ca_der.clone()];
        let key_der = PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(self.leaf_key.serialize_der()));
        let mut cfg = ServerConfig::builder_with_provider(Arc::new(fast_first_provider()))
            .with_safe_default_protocol_versions()
            .map_err(e)?
            .with_no_client_auth()
            .with_single_cert(chain, key_der)
            .map_err(e)?;
        // The proxy's own order (AES-128-GCM first), not the client's.
        cfg.ignore_client_order = true;
        // HTTP/1.1 only: the proxy reads each request head itself.
        cfg.alpn_protocols = vec![b"http/1.1".to_vec()];
        let cfg = Arc::new(cfg);
        let mut cache = self.cache.lock().unwrap_or_else(|p| p.into_inner());
        // An expired entry is replaced; a full cache drops its old leaves.
        if cache.len() >= MAX_CACHED {
            cache.retain(|_, (made, _)| made.elapsed() < LEAF_MAX_AGE);
        }
        if cache.len() < MAX_CACHED || cache.contains_key(&key) {
            cache.insert(key, (std::time::Instant::now(), cfg.clone()));
        }
        Ok(cfg)
    }
}

/// ring's provider with the AES-128-GCM suites first: the proxy decrypts
/// and encrypts every byte to and from bound hosts, and AES-128 takes
/// fewer rounds than AES-256 for the same protection in TLS. The set of
/// suites is ring's default, only the order changes.
pub(crate) fn fast_first_provider() -> rustls::crypto::CryptoProvider {
    let mut p = rustls::crypto::ring::default_provider();
    p.cipher_suites.sort_by_key(|s| {
        !matches!(
            s.suite(),
            rustls::CipherSuite::TLS13_AES_128_GCM_SHA256
                | rustls::CipherSuite::TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256
                | rustls::CipherSuite::TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256
        )
    });
    p
}

/// The DER of the first certificate in `pem`.
fn rustls_pemfile_der(pem: &str) -> Result<CertificateDer<'static>, CaError> {
    use rustls::pki_types::pem::PemObject;
    CertificateDer::from_pem_slice(pem.as_bytes()).map_err(e)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn leaves_are_made_for_bound_names() {
        let ca = make_run_ca(&["api.test".into(), "127.0.0.1:8443".into()]).unwrap();
        assert!(ca.cert_pem.contains("BEGIN CERTIFICATE"));
        let m = LeafMaker::new(&ca).unwrap();
        m.server_config(&Target::parse("api.test").unwrap())
            .unwrap();
        m.server_config(&Target::parse("127.0.0.1").unwrap())
            .unwrap();
        assert!(!format!("{ca:?}").contains("PRIVATE"));
    }

    #[test]
    fn the_fast_first_provider_only_reorders_the_suites() {
        let (mut a, b) = (
            fast_first_provider().cipher_suites,
            rustls::crypto::ring::default_provider().cipher_suites,
        );
        assert_eq!(a[0].suite(), rustls::CipherSuite::TLS13_AES_128_GCM_SHA256);
        let key = |s: &rustls::SupportedCipherSuite| u16::from(s.suite());
        a.sort_by_key(key);
        let mut b = b;
        b.sort_by_key(key);
        assert_eq!(
            a.iter().map(key).collect::<Vec<_>>(),
            b.iter().map(key).collect::<Vec<_>>()
        );
    }

    /// A leaf for `san` signed with the CA's own key (what someone holding
    /// the key could make), PEM.
    fn leaf_pem(ca: &CaMaterial, san: SanType) -> String {
        let key = KeyPair::from_pem(&ca.key_pem).unwrap();
        let issuer = Issuer::new(ca_params(&parse_all(&ca.names).unwrap()).unwrap(), key);
        let mut p = CertificateParams::new(Vec::<String>::new()).unwrap();
        p.subject_alt_names = vec![san];
        p.extended_key_usages = vec![ExtendedKeyUsagePurpose::ServerAuth];
        let leaf_key = KeyPair::generate().unwrap();
        p.signed_by(&leaf_key, &issuer).unwrap().pem()
    }

    /// Finding F6 (atk27), checked by an outside verifier: the CA's key
    /// signs nothing a client accepts for a name or address not bound,
    /// whichever name forms the binding uses.
    #[test]
    fn the_run_ca_cannot_vouch_for_anything_unbound() {
        if std::process::Command::new("openssl")
            .arg("version")
            .output()
            .is_err()
        {
            skarn_test_support::skip!("openssl is not installed");
        }
        let dir = skarn_test_support::TempDir::new("ca-nc");
        let verify = |ca: &CaMaterial, san: SanType| -> bool {
            let (c, l) = (dir.path().join("ca.pem"), dir.path().join("leaf.pem"));
            std::fs::write(&c, &ca.cert_pem).unwrap();
            std::fs::write(&l, leaf_pem(ca, san)).unwrap();
            let o = std::process::Command::new("openssl")
                .args(["verify", "-CAfile"])
                .arg(&c)
                .arg(&l)
                .output()
                .unwrap();
            o.status.success()
        };
        let dns = |n: &str| SanType::DnsName(n.to_string().try_into().unwrap());
        let ip = |a: &str| SanType::IpAddress(a.parse().unwrap());
        // Bound by name only: no address at all, no other name.
        let ca = make_run_ca(&["api.test".into()]).unwrap();
        assert!(verify(&ca, dns("api.test")));
        assert!(!verify(&ca, dns("github.example")));
        assert!(!verify(&ca, ip("127.0.0.1")));
        assert!(!verify(&ca, ip("::1")));
        // Bound by address only: no name at all, no other address.
        let ca = make_run_ca(&["127.0.0.1:8443".into()]).unwrap();
        assert!(verify(&ca, ip("127.0.0.1")));
        assert!(!verify(&ca, ip("10.0.0.1")));
        assert!(!verify(&ca, dns("github.example")));
        assert!(!verify(&ca, dns("localhost")));
    }
}
