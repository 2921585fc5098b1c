//! The floor of any TLS-terminating relay on this host (issue 27): an
//! HTTP CONNECT proxy that only decrypts and re-encrypts (rustls, with a
//! leaf of its own CA, the same provider and defaults as the proxy), no
//! HTTP parsing, no substitution, no search. Two worker threads, as the
//! proxy's runtime in the bench.

use std::sync::Arc;

use rcgen::{BasicConstraints, CertificateParams, IsCa, Issuer, KeyPair, KeyUsagePurpose};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer, ServerName};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// Start the relay to `127.0.0.1:upstream` (trusting `upstream_ca`);
/// returns its port and its CA's certificate (PEM).
pub fn start(upstream: u16, upstream_ca: &str) -> (u16, String) {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let ca_key = KeyPair::generate().unwrap();
    let mut p = CertificateParams::new(Vec::<String>::new()).unwrap();
    p.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    p.key_usages = vec![KeyUsagePurpose::KeyCertSign];
    // Not rcgen's default name, which the leaf has (a leaf named as its
    // issuer reads as self-signed).
    p.distinguished_name
        .push(rcgen::DnType::CommonName, "bench floor CA");
    let ca_pem = p.self_signed(&ca_key).unwrap().pem();
    let issuer = Issuer::new(p, ca_key);
    let leaf_key = KeyPair::generate().unwrap();
    let leaf = CertificateParams::new(vec!["api.test".to_string()])
        .unwrap()
        .signed_by(&leaf_key, &issuer)
        .unwrap();
    let server = rustls::ServerConfig::builder_with_provider(provider.clone())
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_no_client_auth()
        .with_single_cert(
            vec![leaf.der().clone()],
            PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(leaf_key.serialize_der())),
        )
        .unwrap();
    let mut roots = rustls::RootCertStore::empty();
    for c in CertificateDer::pem_slice_iter(upstream_ca.as_bytes()) {
        roots.add(c.unwrap()).unwrap();
    }
    let client = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_root_certificates(roots)
        .with_no_client_auth();
    let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(server));
    let connector = tokio_rustls::TlsConnector::from(Arc::new(client));
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    l.set_nonblocking(true).unwrap();
    std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(async move {
            let l = tokio::net::TcpListener::from_std(l).unwrap();
            loop {
                let (mut c, _) = l.accept().await.unwrap();
                let (acceptor, connector) = (acceptor.clone(), connector.clone());
                tokio::spawn(async move {
                    // The CONNECT head (curl sends it in one write).
                    let mut head = Vec::new();
                    while !head.ends_with(b"\r\n\r\n") {
                        let mut b = [0u8; 1024];
                        let n = c.read(&mut b).await.unwrap();
                        assert!(n > 0);
                        head.extend_from_slice(&b[..n]);
                    }
                    c.write_all(b"HTTP/1.1 200 Connection established\r\n\r\n")
                        .await
                        .unwrap();
                    let mut down = acceptor.accept(c).await.unwrap();
                    let u = tokio::net::TcpStream::connect(("127.0.0.1", upstream))
                        .await
                        .unwrap();
                    let name = ServerName::try_from("api.test").unwrap();
                    let mut up = connector.connect(name, u).await.unwrap();
                    let _ = tokio::io::copy_bidirectional_with_sizes(
                        &mut down,
                        &mut up,
                        64 << 10,
                        64 << 10,
                    )
                    .await;
                });
            }
        });
    });
    (port, ca_pem)
}
