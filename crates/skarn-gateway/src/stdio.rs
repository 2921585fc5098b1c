//! `skarn serve` over stdio, with a guard in front of the SDK's line
//! transport: a line that is not JSON at all gets the JSON-RPC parse error
//! (-32700, id null) that the spec asks for, instead of being dropped in
//! silence, and serving goes on. Everything else (invalid requests, unknown
//! methods, bad params) is answered by rmcp itself.
//!
//! Both directions go through in-memory pipes so that the parse-error
//! answers and rmcp's own messages are written to stdout by one task, one
//! whole line at a time.

use std::sync::Arc;

use rmcp::ServiceExt;
use tokio::io::{
    AsyncBufRead, AsyncBufReadExt, AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, BufReader,
};
use tokio::sync::mpsc;

use crate::gateway::Gateway;
use crate::server::GatewayServer;

/// Longest accepted input line (a script plus JSON framing).
const MAX_LINE: usize = 16 << 20;

fn parse_error(detail: &str) -> String {
    serde_json::json!({
        "jsonrpc": "2.0",
        "id": null,
        "error": {"code": -32700, "message": format!("Parse error: {detail}")},
    })
    .to_string()
}

/// Discard input up to and including the next newline, one buffer at a
/// time. False at end of input or on a read error.
async fn skip_line<R: AsyncBufRead + Unpin>(r: &mut R) -> bool {
    loop {
        let (n, done) = match r.fill_buf().await {
            Ok([]) | Err(_) => return false,
            Ok(b) => match b.iter().position(|&c| c == b'\n') {
                Some(i) => (i + 1, true),
                None => (b.len(), false),
            },
        };
        r.consume(n);
        if done {
            return true;
        }
    }
}

/// Serve one MCP session on `input`/`output` until the client goes away.
pub async fn serve_lines<R, W>(gw: Arc<Gateway>, input: R, mut output: W) -> std::io::Result<()>
where
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    let (rmcp_in, mut to_rmcp) = tokio::io::duplex(1 << 16);
    let (from_rmcp, rmcp_out) = tokio::io::duplex(1 << 16);
    // Bounded: a client that sends garbage without reading the answers is
    // no longer read from once 64 parse errors wait.
    let (err_tx, mut err_rx) = mpsc::channel::<String>(64);

    // Client -> rmcp, answering non-JSON lines directly.
    let reader = tokio::spawn(async move {
        let mut lines = BufReader::new(input);
        let mut buf = Vec::new();
        loop {
            buf.clear();
            let n = match (&mut lines)
                .take(MAX_LINE as u64 + 1)
                .read_until(b'\n', &mut buf)
                .await
            {
                Ok(n) => n,
                Err(_) => break,
            };
            if n == 0 {
                break;
            }
            if buf.len() > MAX_LINE && !buf.ends_with(b"\n") {
                if err_tx.send(parse_error("message too large")).await.is_err() {
                    break;
                }
                // Skip the rest of the oversized line without keeping it.
                buf = Vec::new();
                if !skip_line(&mut lines).await {
                    break;
                }
                continue;
            }
            let text = String::from_utf8_lossy(&buf);
            let trimmed = text.trim();
            if trimmed.is_empty() {
                continue;
            }
            if let Err(e) = serde_json::from_str::<serde_json::Value>(trimmed) {
                if err_tx.send(parse_error(&e.to_string())).await.is_err() {
                    break;
                }
                continue;
            }
            if to_rmcp.write_all(trimmed.as_bytes()).await.is_err()
                || to_rmcp.write_all(b"\n").await.is_err()
            {
                break;
            }
        }
        let _ = to_rmcp.shutdown().await;
    });

    // rmcp + parse errors -> client, one whole line at a time.
    let writer = tokio::spawn(async move {
        let mut from_rmcp = BufReader::new(from_rmcp).lines();
        let mut rmcp_open = true;
        loop {
            tokio::select! {
                line = from_rmcp.next_line(), if rmcp_open => match line {
                    Ok(Some(l)) => {
                        if output.write_all(l.as_bytes()).await.is_err()
                            || output.write_all(b"\n").await.is_err()
                            || output.flush().await.is_err()
                        {
                            break;
                        }
                    }
                    _ => rmcp_open = false,
                },
                e = err_rx.recv() => match e {
                    Some(l) => {
                        if output.write_all(l.as_bytes()).await.is_err()
                            || output.write_all(b"\n").await.is_err()
                            || output.flush().await.is_err()
                        {
                            break;
                        }
                    }
                    None if !rmcp_open => break,
                    None => {
                        // No more parse errors can come; drain rmcp.
                        while let Ok(Some(l)) = from_rmcp.next_line().await {
                            if output.write_all(l.as_bytes()).await.is_err()
                                || output.write_all(b"\n").await.is_err()
                                || output.flush().await.is_err()
                            {
                                break;
                            }
                        }
                        break;
                    }
                },
            }
        }
    });

    let server = GatewayServer::new(gw);
    match server.serve((rmcp_in, rmcp_out)).await {
        Ok(running) => {
            let _ = running.waiting().await;
        }
        Err(e) => tracing::info!("client went away during initialize: {e}"),
    }
    reader.abort();
    let _ = writer.await;
    Ok(())
}

/// Serve on the process's stdin and stdout.
pub async fn serve_stdio(gw: Arc<Gateway>) -> std::io::Result<()> {
    serve_lines(gw, tokio::io::stdin(), tokio::io::stdout()).await
}
