//! Serving a `CONNECT` to a bound host: connect upstream (rules checked as
//! for any tunnel), verify the real server, answer the client with a leaf
//! of the run's CA for the same name, then the request/response loop.

use rustls::pki_types::ServerName;
use tokio::io::AsyncWriteExt;
use tokio::net::TcpStream;

use super::exchange;
use crate::open::{open_or_reply, reply};
use crate::proxy::Shared;
use crate::rules::Target;

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
        reply(
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
    let Some((up, key)) = open_or_reply(&mut s, sh, &bare, port).await else {
        return;
    };
    if ic.bindings.binds(&t, port) {
        sh.saw_bound_name(&t, port);
    }
    let Some(name) = server_name(&t) else {
        reply(&mut s, "400 Bad Request", "skarn: net: bad host name\n").await;
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
                reply(
                    &mut s,
                    "502 Bad Gateway",
                    &format!("skarn: net: {shown}:{port}: {why}\n"),
                )
                .await;
                return;
            }
            Err(_) => {
                reply(
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
            reply(&mut s, "502 Bad Gateway", &format!("skarn: net: {e}\n")).await;
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
