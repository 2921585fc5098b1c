//! The TLS-terminating path for hosts a secret is bound to: after
//! `CONNECT`, the proxy connects upstream first (rules checked as for any
//! tunnel) and verifies the real server's certificate, then answers the
//! client with a certificate for the requested name from the run's CA,
//! and passes each request through [`request::prepare`] and each response
//! through the echo scrubber.

mod body;
mod coded;
mod connect;
mod context;
mod decode;
pub(crate) mod exchange;
mod forms;
mod io;
mod overrides;
pub(crate) mod plain;
pub(crate) mod plain_body;
mod probe;
mod reply;
pub(crate) mod request;
mod request_body;
mod request_held;
mod response;
mod scrub;
pub(crate) mod stream_scrub;
mod unescape;
mod websocket;

use std::sync::Arc;

use rustls::ClientConfig;

pub use probe::ProbeHook;
#[doc(hidden)]
pub use scrub::bench::kind_seconds as bench_kind_seconds;
#[doc(hidden)]
pub use scrub::bench::search_seconds as bench_search_seconds;
pub use scrub::bench::startup_seconds as bench_startup_seconds;
#[cfg(feature = "fuzzing")]
#[doc(hidden)]
pub use scrub::differential::check_seeded as scrub_differential;

use crate::ca::{CaError, CaMaterial, LeafMaker};
use crate::secrets::{Bindings, SecretSpec};

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
    /// The windows of every value's forms, built once for the run, when
    /// the first response is scrubbed (thousands of windows: building
    /// them was most of a run's start-up, and most runs never reach a
    /// bound host).
    windows: std::sync::OnceLock<Arc<scrub::Windows>>,
    /// The scrubbing engine and how many produced values it knows (none
    /// until the first response).
    engine: std::sync::Mutex<(usize, Option<Arc<scrub::Engine>>)>,
    leaves: LeafMaker,
    upstream: Arc<ClientConfig>,
    /// Each secret's windows, searched in what the sandbox sends, and
    /// which secrets a probe switched off (atk27o F8).
    probes: std::sync::OnceLock<probe::Probes>,
    on_probe: Option<ProbeHook>,
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
    /// the certificates in `pem` only, whatever the environment says: the
    /// roots the user chose, vetted and read by the planning process
    /// (atk27h F3, atk27i F7), or in tests a local server's own CA.
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
        Ok(Interceptor {
            produced: std::sync::Mutex::new(Vec::new()),
            seen: std::sync::Mutex::new(Vec::new()),
            windows: std::sync::OnceLock::new(),
            engine: std::sync::Mutex::new((0, None)),
            bindings,
            leaves: LeafMaker::new(ca)?,
            upstream: Arc::new(cfg),
            probes: std::sync::OnceLock::new(),
            on_probe: None,
        })
    }
}

impl Interceptor {
    /// Call `hook` when a request from the sandbox carried a piece of a
    /// secret's real value (the secret is then switched off for the run).
    pub fn with_probe_hook(mut self, hook: ProbeHook) -> Interceptor {
        self.on_probe = Some(hook);
        self
    }

    pub(crate) fn probes(&self) -> &probe::Probes {
        self.probes
            .get_or_init(|| probe::Probes::new(&self.bindings.echo_pairs()))
    }

    /// The secret a piece of which `text` (what the sandbox sends) holds.
    pub(crate) fn probed(&self, text: &[u8]) -> Option<crate::secrets::Found> {
        self.probes().found(text)
    }

    /// Switch `f` off for the rest of the run and tell the hook (once);
    /// `dest` says where the piece was sent.
    pub(crate) fn switch_off(&self, f: crate::secrets::Found, dest: &str) {
        if self.probes().switch_off(f)
            && let Some(h) = &self.on_probe
        {
            h(self.bindings.name(f), dest);
        }
    }

    /// Whether a probe switched `f` off.
    pub(crate) fn is_off(&self, f: crate::secrets::Found) -> bool {
        self.probes.get().is_some_and(|p| p.is_off(f))
    }
}

/// The refusal the sandboxed side sees for a request carrying a piece of
/// `name`'s value: where it went is not repeated (the user's log has it).
pub(crate) fn probe_refusal(name: &str) -> String {
    format!(
        "skarn: secret {name}: a request carried a piece of its real value, which no command \
         of the sandbox has; the request was not sent and the secret is switched off (and \
         recorded as exposed for the user to review)\n"
    )
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
        if let Some(e) = &cached.1
            && cached.0 == produced.len()
        {
            return e.clone();
        }
        let windows = self
            .windows
            // The contiguous automaton (f27v, atk27u F2): the DFA's build
            // on the first response put seconds before its first byte.
            .get_or_init(|| Arc::new(scrub::Windows::for_search(&value_forms(&self.bindings))))
            .clone();
        let mut whole = self.bindings.echo_pairs();
        whole.extend(produced.iter().cloned());
        let engine = Arc::new(scrub::Engine::new(&whole, windows));
        *cached = (produced.len(), Some(engine.clone()));
        engine
    }
}

/// Finds the secrets' values in text in every form the echo scrubber
/// knows: a run of [`forms::WINDOW`] secret bytes verbatim (any case),
/// reversed, hex, base64 (`Basic user:value` too), and inside JSON or URL
/// escapes. Used for what enters a sandbox besides responses: the
/// caller's variables and dotfile lines (atk27 F6).
pub struct ValueFinder(scrub::Windows);

/// The text of everything that decides what [`ValueFinder`] finds (the
/// forms, the unescaping, the windows searched): a record of earlier
/// verdicts keyed by it starts afresh whenever any of it changes, with no
/// number to remember to bump (atk27m H4).
pub const FINDER_SOURCES: &[&str] = &[
    include_str!("forms.rs"),
    include_str!("unescape.rs"),
    include_str!("scrub.rs"),
    include_str!("decode.rs"),
    include_str!("mod.rs"),
];

/// The most windows of one value the start-up searches keep.
const SAMPLED: usize = 4096;

impl ValueFinder {
    /// For the values of `specs`.
    pub fn new(specs: &[SecretSpec]) -> ValueFinder {
        let pairs: scrub::Pairs = specs
            .iter()
            .flat_map(|s| forms::pairs(s.value.as_bytes(), s.placeholder.as_bytes()))
            .collect();
        ValueFinder(scrub::Windows::for_search(&pairs))
    }

    /// For bare values (each paired with a placeholder made for it; a
    /// value too short for one is left out). The start-up searches (files
    /// and variables, for every configured secret) keep at most
    /// [`SAMPLED`] windows of a value, evenly spaced (f27s F5): a whole
    /// copy in any form still holds them all, and a piece is still found
    /// from a run of `WINDOW + stride - 1` bytes; the proxy's scrubber
    /// keeps every window.
    pub fn for_values<'a>(values: impl IntoIterator<Item = &'a str>) -> ValueFinder {
        let pairs: scrub::Pairs = values
            .into_iter()
            .filter_map(|v| {
                let p = crate::secrets::placeholder::make(v)?;
                let all = forms::pairs(v.as_bytes(), p.as_bytes());
                let stride = all.len().div_ceil(SAMPLED).max(1);
                Some(all.into_iter().step_by(stride))
            })
            .flatten()
            .collect();
        ValueFinder(scrub::Windows::for_search(&pairs))
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

pub(crate) use connect::connect;
