//! The TLS-terminating path for hosts a secret is bound to: after
//! `CONNECT`, the proxy connects upstream first (rules checked as for any
//! tunnel) and verifies the real server's certificate, then answers the
//! client with a certificate for the requested name from the run's CA,
//! and passes each request through [`request::prepare`] and each response
//! through the echo scrubber.

mod decode;
pub(crate) mod exchange;
mod forms;
mod io;
pub(crate) mod request;
mod scrub;
mod unescape;
mod websocket;

use std::sync::Arc;

use rustls::ClientConfig;
use rustls::pki_types::ServerName;
use tokio::io::AsyncWriteExt;
use tokio::net::TcpStream;

use crate::ca::{CaError, CaMaterial, LeafMaker};
use crate::rules::Target;
use crate::secrets::{Bindings, SecretSpec};
use crate::server::Shared;

/// What the proxy needs to terminate TLS for bound hosts.
pub struct Interceptor {
    pub(crate) bindings: Bindings,
    /// Names (and ports) the TLS-terminating path served for a binding,
    /// resolved when a tunnel is checked (see `bound.rs`), at most 64.
    pub(crate) seen: std::sync::Mutex<Vec<(String, u16)>>,
    /// Header values the proxy made (value inside) and what the client
    /// sent, for the whole run: a bound host that stores a header and
    /// shows it later, on another connection, is scrubbed too.
    produced: std::sync::Mutex<scrub::Pairs>,
    /// The windows of every value's forms, built once for the run.
    windows: Arc<scrub::Windows>,
    /// The scrubbing engine and how many produced values it knows.
    engine: std::sync::Mutex<(usize, Arc<scrub::Engine>)>,
    leaves: LeafMaker,
    upstream: Arc<ClientConfig>,
}

impl Interceptor {
    /// From the run's secrets and CA; upstream certificates are verified
    /// against the system's roots (`SSL_CERT_FILE`/`SSL_CERT_DIR` of the
    /// caller respected), read now, before any confinement.
    pub fn new(specs: &[SecretSpec], ca: &CaMaterial) -> Result<Interceptor, CaError> {
        let mut roots = rustls::RootCertStore::empty();
        roots.add_parsable_certificates(rustls_native_certs::load_native_certs().certs);
        Interceptor::with_roots(specs, ca, roots)
    }

    /// As [`Interceptor::new`], verifying upstream certificates against
    /// the certificates in `pem` only (tests: a local server's own CA).
    pub fn with_upstream_roots(
        specs: &[SecretSpec],
        ca: &CaMaterial,
        pem: &str,
    ) -> Result<Interceptor, CaError> {
        use rustls::pki_types::CertificateDer;
        use rustls::pki_types::pem::PemObject;
        let mut roots = rustls::RootCertStore::empty();
        let certs = CertificateDer::pem_slice_iter(pem.as_bytes()).filter_map(Result::ok);
        roots.add_parsable_certificates(certs);
        Interceptor::with_roots(specs, ca, roots)
    }

    fn with_roots(
        specs: &[SecretSpec],
        ca: &CaMaterial,
        roots: rustls::RootCertStore,
    ) -> Result<Interceptor, CaError> {
        let bindings = Bindings::new(specs).map_err(|e| CaError(e.to_string()))?;
        if roots.is_empty() {
            return Err(CaError(
                "no root certificates found to verify the bound hosts with".into(),
            ));
        }
        let mut cfg =
            ClientConfig::builder_with_provider(Arc::new(crate::ca::fast_first_provider()))
                .with_safe_default_protocol_versions()
                .map_err(|e| CaError(e.to_string()))?
                .with_root_certificates(roots)
                .with_no_client_auth();
        cfg.alpn_protocols = vec![b"http/1.1".to_vec()];
        let windows = Arc::new(scrub::Windows::new(&value_forms(&bindings)));
        let engine = Arc::new(scrub::Engine::new(&bindings.echo_pairs(), windows.clone()));
        Ok(Interceptor {
            produced: std::sync::Mutex::new(Vec::new()),
            seen: std::sync::Mutex::new(Vec::new()),
            windows,
            engine: std::sync::Mutex::new((0, engine)),
            bindings,
            leaves: LeafMaker::new(ca)?,
            upstream: Arc::new(cfg),
        })
    }
}

/// Produced header values remembered for exact put-back: each at most
/// this long, and at most [`MAX_PRODUCED_BYTES`] of them in all. Past
/// either, a header is not remembered (and the request still goes): its
/// value is scrubbed by the windows of the value's forms all the same,
/// only not put back byte for byte (atk27 F4: remembering every header
/// whole and rebuilding one automaton from them all took ~1 GB).
const MAX_PRODUCED_LEN: usize = 1024;
const MAX_PRODUCED_BYTES: usize = 64 * 1024;

impl Interceptor {
    /// Remember produced header values, within the bounds.
    pub(crate) fn remember(&self, pairs: &scrub::Pairs) {
        let mut p = self.produced.lock().unwrap_or_else(|e| e.into_inner());
        let mut total: usize = p.iter().map(|(r, _)| r.len()).sum();
        for (real, ph) in pairs {
            if real.len() > MAX_PRODUCED_LEN
                || total + real.len() > MAX_PRODUCED_BYTES
                || p.iter().any(|(r, _)| r == real)
            {
                continue;
            }
            total += real.len();
            p.push((real.clone(), ph.clone()));
        }
    }

    /// A scrubber for one response: the values' forms and every produced
    /// header; the small automaton of whole values is rebuilt only when a
    /// header was added (the windows' is the run's, built once).
    pub(crate) fn scrubber(&self) -> scrub::Scrubber {
        scrub::Scrubber::new(self.engine())
    }

    fn engine(&self) -> Arc<scrub::Engine> {
        let produced = self.produced.lock().unwrap_or_else(|e| e.into_inner());
        let mut cached = self.engine.lock().unwrap_or_else(|e| e.into_inner());
        if cached.0 != produced.len() {
            let mut whole = self.bindings.echo_pairs();
            whole.extend(produced.iter().cloned());
            let engine = scrub::Engine::new(&whole, self.windows.clone());
            *cached = (produced.len(), Arc::new(engine));
        }
        cached.1.clone()
    }
}

/// Finds the secrets' values in text in every form the echo scrubber
/// knows: a run of [`forms::WINDOW`] secret bytes verbatim (any case),
/// reversed, hex, base64 (`Basic user:value` too), and inside JSON or URL
/// escapes. Used for what enters a sandbox besides responses: the
/// caller's variables and dotfile lines (atk27 F6).
pub struct ValueFinder(scrub::Windows);

impl ValueFinder {
    /// For the values of `specs`.
    pub fn new(specs: &[SecretSpec]) -> ValueFinder {
        let pairs: scrub::Pairs = specs
            .iter()
            .flat_map(|s| forms::pairs(s.value.as_bytes(), s.placeholder.as_bytes()))
            .collect();
        ValueFinder(scrub::Windows::new(&pairs))
    }

    /// Whether `text` shows a value in one of those forms.
    pub fn found_in(&self, text: &[u8]) -> bool {
        self.0.found_in(text)
    }
}

/// Every form of every bound value, paired with its placeholder's.
fn value_forms(b: &Bindings) -> scrub::Pairs {
    b.echo_pairs()
        .iter()
        .flat_map(|(v, p)| forms::pairs(v, p))
        .collect()
}

fn server_name(t: &Target) -> Option<ServerName<'static>> {
    match t {
        Target::Ip(ip) => Some(ServerName::IpAddress((*ip).into())),
        Target::Name(n) => ServerName::try_from(n.clone()).ok(),
    }
}

/// Serve a `CONNECT` to a bound host.
pub(crate) async fn connect(mut s: TcpStream, sh: &Shared, t: Target, port: u16, early: bool) {
    let Some(ic) = sh.secrets.as_deref() else {
        return;
    };
    let shown = t.to_string();
    if early {
        crate::http::reply_plain(
            &mut s,
            "400 Bad Request",
            "skarn: net: data sent before the tunnel was established\n",
        )
        .await;
        return;
    }
    // `open_or_reply` takes the host as a client writes it (no brackets).
    let bare = match &t {
        Target::Ip(ip) => ip.to_string(),
        Target::Name(n) => n.clone(),
    };
    let Some((up, key)) = crate::http::open_or_reply(&mut s, sh, &bare, port).await else {
        return;
    };
    if ic.bindings.binds(&t, port) {
        sh.saw_bound_name(&t, port);
    }
    let Some(name) = server_name(&t) else {
        crate::http::reply_plain(&mut s, "400 Bad Request", "skarn: net: bad host name\n").await;
        return;
    };
    let connector = tokio_rustls::TlsConnector::from(ic.upstream.clone());
    let up =
        match tokio::time::timeout(sh.limits.connect_timeout, connector.connect(name, up)).await {
            Ok(Ok(u)) => u,
            Ok(Err(e)) => {
                // Generic text: the error of a failed handshake can carry
                // upstream bytes (the names of the presented certificate),
                // and none go into the proxy's own messages (atk27 F12).
                let why = format!("the upstream TLS handshake failed: {}", tls_failure(&e));
                sh.deny(&shown, port, &crate::Denial::Unsupported(why.clone()));
                crate::http::reply_plain(
                    &mut s,
                    "502 Bad Gateway",
                    &format!("skarn: net: {shown}:{port}: {why}\n"),
                )
                .await;
                return;
            }
            Err(_) => {
                crate::http::reply_plain(
                    &mut s,
                    "504 Gateway Timeout",
                    "skarn: net: the upstream TLS handshake timed out\n",
                )
                .await;
                return;
            }
        };
    let cfg = match ic.leaves.server_config(&t) {
        Ok(c) => c,
        Err(e) => {
            crate::http::reply_plain(&mut s, "502 Bad Gateway", &format!("skarn: net: {e}\n"))
                .await;
            return;
        }
    };
    if s.write_all(b"HTTP/1.1 200 Connection established\r\n\r\n")
        .await
        .is_err()
    {
        return;
    }
    let acceptor = tokio_rustls::TlsAcceptor::from(cfg);
    let client = match tokio::time::timeout(sh.limits.idle_timeout, acceptor.accept(s)).await {
        Ok(Ok(c)) => c,
        _ => return,
    };
    // The name the client asked the TLS layer for must be the tunnel's.
    if let Some(sni) = client.get_ref().1.server_name()
        && Target::parse(sni).as_ref() != Some(&t)
    {
        let why = format!("TLS server name {sni:?} differs from the tunnel's host");
        sh.deny(&shown, port, &crate::Denial::HostMismatch(why));
        let mut client = client;
        let _ = client.shutdown().await;
        return;
    }
    let cx = exchange::Ctx {
        sh,
        t: &t,
        port,
        key: &key,
    };
    exchange::serve(client, up, &cx).await;
}

/// A fixed description of a failed upstream TLS handshake: nothing of the
/// error's own text, which can quote the server's certificate.
fn tls_failure(e: &std::io::Error) -> &'static str {
    use rustls::{CertificateError as C, Error as E};
    match e.get_ref().and_then(|i| i.downcast_ref::<E>()) {
        Some(E::InvalidCertificate(c)) => match c {
            C::NotValidForName | C::NotValidForNameContext { .. } => {
                "the server's certificate is not valid for the host's name"
            }
            C::Expired | C::ExpiredContext { .. } => "the server's certificate has expired",
            C::UnknownIssuer => "the server's certificate is not issued by a trusted authority",
            _ => "the server's certificate is invalid",
        },
        Some(_) => "TLS protocol error",
        None => "connection error",
    }
}
