//! TLS for Streamable HTTP downstreams: rustls with the `ring` provider
//! (chosen over the default aws-lc provider to keep the build light).

/// Install the process-wide rustls crypto provider once.
pub fn install_provider() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let _ = rustls::crypto::ring::default_provider().install_default();
    });
}
