//! The gateway's HTTP transport on loopback, started once, with a known
//! bearer token and no downstream servers.

use skarn_gateway::{Config, Gateway};
use std::sync::OnceLock;
use std::time::Duration;
use tokio_util::sync::CancellationToken;

/// The running gateway.
pub struct GatewayHttp {
    pub port: u16,
    pub token: String,
}

impl GatewayHttp {
    /// Send `input` on a fresh connection and read until the gateway
    /// closes it or `wait` passes.
    pub fn exchange(&self, input: &[u8], wait: Duration) -> Vec<u8> {
        crate::rt().block_on(crate::exchange(self.port, input, wait))
    }
}

/// The gateway, started on first use.
pub fn gateway() -> &'static GatewayHttp {
    static G: OnceLock<GatewayHttp> = OnceLock::new();
    G.get_or_init(|| {
        let token = "fuzz-token-0123456789".to_string();
        let rt = crate::rt();
        let listener = rt.block_on(async {
            tokio::net::TcpListener::bind(("127.0.0.1", 0))
                .await
                .expect("loopback listener")
        });
        let port = listener.local_addr().expect("local address").port();
        let t = token.clone();
        rt.spawn(async move {
            let config = Config::parse("[gateway]\n", "fuzz.toml").expect("config");
            let gw = Gateway::new(config);
            gw.start();
            let _ =
                skarn_gateway::http::serve_http(gw, listener, t, CancellationToken::new()).await;
        });
        GatewayHttp { port, token }
    })
}
