//! `skarn serve --http`: Streamable HTTP behind a bearer token.
//!
//! Every request must carry `Authorization: Bearer <token>`; anything else
//! gets 401 before it reaches the MCP layer and before any of its body is
//! read, and its connection is closed. The token is compared in constant
//! time. Connections are bounded by [`crate::http_conn`], which may close
//! connections that have not shown the token to make room.

/// A listener for [`serve_http`] with the gateway's listen backlog.
pub use crate::http_conn::bind;
use std::net::SocketAddr;
use std::sync::Arc;

use axum::extract::Request;
use axum::http::{StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use tokio_util::sync::CancellationToken;

use crate::gateway::Gateway;
use crate::http_token::{bearer, ct_eq};
use crate::server::GatewayServer;

/// Generate a random token (32 bytes, hex).
pub fn generate_token() -> String {
    use rand::RngCore;
    let mut b = [0u8; 32];
    rand::rng().fill_bytes(&mut b);
    b.iter().map(|x| format!("{x:02x}")).collect()
}

async fn check_token(token: Arc<String>, req: Request, next: Next) -> Response {
    let ok = req
        .headers()
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(bearer)
        .is_some_and(|t| ct_eq(t.as_bytes(), token.as_bytes()));
    if ok {
        if let Some(a) = req.extensions().get::<crate::http_conn::ConnAuth>() {
            a.authenticated();
        }
        let delete = req.method() == axum::http::Method::DELETE;
        let mut response = next.run(req).await;
        // A session ended by DELETE is answered 200 OK, as clients expect
        // (rmcp says 202 Accepted, which the Python SDK logs as a failure).
        if delete && response.status() == StatusCode::ACCEPTED {
            *response.status_mut() = StatusCode::OK;
        }
        response
    } else {
        // And the connection is closed: a client without the token cannot
        // keep it (and its slot) alive by asking again and again.
        (
            StatusCode::UNAUTHORIZED,
            [
                (header::WWW_AUTHENTICATE, "Bearer"),
                (header::CONNECTION, "close"),
            ],
            "missing or wrong bearer token\n",
        )
            .into_response()
    }
}

/// Serve the gateway on `listener` at path `/mcp` until `stop` is cancelled.
pub async fn serve_http(
    gw: Arc<Gateway>,
    listener: tokio::net::TcpListener,
    token: String,
    stop: CancellationToken,
) -> std::io::Result<()> {
    let addr: SocketAddr = listener.local_addr()?;
    let mut hosts: Vec<String> = vec!["localhost".into(), "127.0.0.1".into(), "::1".into()];
    if !addr.ip().is_loopback() && !addr.ip().is_unspecified() {
        hosts.push(addr.ip().to_string());
    }
    // Names a load balancer in front of several instances uses (issue 26).
    hosts.extend(gw.config.gateway.http_allowed_hosts.iter().cloned());
    let limits = crate::http_conn::HttpLimits::from_config(&gw.config.gateway);
    // Event streams send keep-alives well inside the idle timeout.
    let keep_alive = std::time::Duration::from_secs(15).min(limits.idle_timeout / 2);
    // Browsers send Origin: only pages served from loopback may talk to
    // the gateway (DNS rebinding, cross-site requests); non-browser clients
    // send none.
    let mut origins: Vec<String> = ["localhost", "127.0.0.1", "[::1]"]
        .iter()
        .flat_map(|h| [format!("http://{h}:*"), format!("https://{h}:*")])
        .collect();
    if !addr.ip().is_loopback() && !addr.ip().is_unspecified() {
        origins.push(format!("http://{}", addr));
    }
    let config = StreamableHttpServerConfig::default()
        .with_sse_keep_alive(Some(keep_alive))
        .with_allowed_origins(origins)
        .enforce_origin_validation()
        .with_allowed_hosts(hosts)
        .with_cancellation_token(stop.child_token());
    let service: StreamableHttpService<GatewayServer, LocalSessionManager> =
        StreamableHttpService::new(
            {
                let gw = gw.clone();
                move || Ok(GatewayServer::new(gw.clone()))
            },
            Default::default(),
            config,
        );
    let token = Arc::new(token);
    let token_for_conn = token.clone();
    let router =
        axum::Router::new()
            .nest_service("/mcp", service)
            .layer(axum::middleware::from_fn(move |req, next| {
                check_token(token.clone(), req, next)
            }));
    crate::http_conn::serve(listener, router, limits, token_for_conn, stop).await
}
