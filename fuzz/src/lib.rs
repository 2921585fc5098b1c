//! Harness code shared by the fuzz targets: loopback servers started once
//! per fuzzing process, the Code Mode bridge, and the readings the
//! differential targets compare with, and bash with recording stubs.

pub mod codemode;
pub mod egress;
pub mod gateway_http;
pub mod hook_shell;

use std::sync::OnceLock;

/// `data` with every `what` replaced by `with` (placeholders for values
/// known only at run time: ports, tokens).
pub fn replace(data: &[u8], what: &[u8], with: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(data.len());
    let mut i = 0;
    while i < data.len() {
        if data[i..].starts_with(what) {
            out.extend_from_slice(with);
            i += what.len();
        } else {
            out.push(data[i]);
            i += 1;
        }
    }
    out
}

/// One runtime per fuzzing process; servers run on it in the background
/// while an input's client side is driven by `block_on`.
pub fn rt() -> &'static tokio::runtime::Runtime {
    static RT: OnceLock<tokio::runtime::Runtime> = OnceLock::new();
    RT.get_or_init(|| {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("runtime")
    })
}

/// Write `input` on a fresh loopback connection to `port`, close the
/// sending side, and read the answer until the peer closes or `wait`
/// passes.
pub async fn exchange(port: u16, input: &[u8], wait: std::time::Duration) -> Vec<u8> {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let Ok(mut s) = tokio::net::TcpStream::connect(("127.0.0.1", port)).await else {
        return Vec::new();
    };
    let mut answer = Vec::new();
    let talk = async {
        let _ = s.write_all(input).await;
        let _ = s.shutdown().await;
        let _ = s.read_to_end(&mut answer).await;
    };
    let _ = tokio::time::timeout(wait, talk).await;
    answer
}
