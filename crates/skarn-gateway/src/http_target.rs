//! The address check of a Streamable HTTP downstream (issue 12): like the
//! egress proxy, the gateway does not reach loopback, private, link-local,
//! cloud-metadata or other special addresses (`skarn_egress::addr`) unless
//! the server's table says `allow_private = true`. The URL's host is
//! checked as written and every address it resolves to.
//!
//! Known gap: the HTTP client resolves the name again when it connects, so
//! a name whose answers change between the two lookups (DNS rebinding) is
//! not covered; the proxy of `skarn run` pins the checked address instead.

use std::net::IpAddr;

/// A downstream URL that names a special address.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "url host {host} is a {why} address{via}: the gateway reaches loopback and private \
     addresses only when the server's table says allow_private = true"
)]
pub struct PrivateTarget {
    pub host: String,
    pub why: &'static str,
    /// ` (resolved to ADDR)` when the host is a name.
    pub via: String,
}

/// Host and port of an `http(s)://` URL.
pub fn host_port(url: &str) -> Option<(String, u16)> {
    let uri: axum::http::Uri = url.parse().ok()?;
    let host = uri.host()?.trim_start_matches('[').trim_end_matches(']');
    let port = uri
        .port_u16()
        .unwrap_or(if uri.scheme_str() == Some("https") {
            443
        } else {
            80
        });
    Some((host.to_owned(), port))
}

/// Check `host` as written (no lookup): `Err` for a special address or a
/// `localhost` name; `Ok(true)` when it is a name still to resolve.
pub fn check_literal(host: &str) -> Result<bool, PrivateTarget> {
    if let Ok(ip) = host.parse::<IpAddr>() {
        return match skarn_egress::addr::special(ip) {
            Some(why) => Err(PrivateTarget {
                host: host.to_owned(),
                why,
                via: String::new(),
            }),
            None => Ok(false),
        };
    }
    let h = host.trim_end_matches('.').to_ascii_lowercase();
    if h == "localhost" || h.ends_with(".localhost") {
        return Err(PrivateTarget {
            host: host.to_owned(),
            why: "loopback",
            via: String::new(),
        });
    }
    Ok(true)
}

/// Refuse a URL naming (or resolving to) a special address unless
/// `allow_private`. A name that does not resolve passes (connecting
/// reports it).
pub async fn check_url(url: &str, allow_private: bool) -> Result<(), PrivateTarget> {
    if allow_private {
        return Ok(());
    }
    let Some((host, port)) = host_port(url) else {
        return Ok(());
    };
    if !check_literal(&host)? {
        return Ok(());
    }
    let Ok(addrs) = tokio::net::lookup_host((host.clone(), port)).await else {
        return Ok(());
    };
    for a in addrs {
        if let Some(why) = skarn_egress::addr::special(a.ip()) {
            return Err(PrivateTarget {
                host,
                why,
                via: format!(" (resolved to {})", a.ip()),
            });
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn literals() {
        assert_eq!(
            host_port("http://127.0.0.1:8931/mcp"),
            Some(("127.0.0.1".into(), 8931))
        );
        assert_eq!(host_port("https://[::1]/mcp"), Some(("::1".into(), 443)));
        assert_eq!(check_literal("127.0.0.1").unwrap_err().why, "loopback");
        assert_eq!(check_literal("::1").unwrap_err().why, "loopback");
        assert_eq!(check_literal("10.1.2.3").unwrap_err().why, "private");
        assert_eq!(
            check_literal("169.254.169.254").unwrap_err().why,
            "cloud metadata"
        );
        assert!(check_literal("LOCALHOST").is_err());
        assert_eq!(check_literal("93.184.216.34"), Ok(false));
        assert_eq!(check_literal("mcp.example.com"), Ok(true));
    }

    #[tokio::test]
    async fn urls() {
        let e = check_url("http://localhost:1/mcp", false)
            .await
            .unwrap_err();
        assert!(e.to_string().contains("allow_private = true"), "{e}");
        assert!(check_url("http://127.0.0.1:1/mcp", true).await.is_ok());
        assert!(check_url("http://10.0.0.1/mcp", false).await.is_err());
    }
}
