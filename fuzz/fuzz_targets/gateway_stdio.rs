//! The gateway's stdio JSON-RPC framing as a hostile MCP client drives
//! it: any bytes on stdin, a gateway with no downstream servers. The
//! session ends (input closed) within the time limit, without a panic.
#![no_main]

use libfuzzer_sys::fuzz_target;
use skarn_gateway::{Config, Gateway};
use std::sync::{Arc, OnceLock};
use std::time::Duration;

fn rt() -> &'static tokio::runtime::Runtime {
    static RT: OnceLock<tokio::runtime::Runtime> = OnceLock::new();
    RT.get_or_init(|| {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("runtime")
    })
}

fn gateway() -> Arc<Gateway> {
    static GW: OnceLock<Arc<Gateway>> = OnceLock::new();
    GW.get_or_init(|| {
        rt().block_on(async {
            let config = Config::parse("[gateway]\n", "fuzz.toml").expect("config");
            let gw = Gateway::new(config);
            gw.start();
            gw
        })
    })
    .clone()
}

fuzz_target!(|data: &[u8]| {
    let gw = gateway();
    let input = std::io::Cursor::new(data.to_vec());
    rt().block_on(async move {
        let served = skarn_gateway::stdio::serve_lines(gw, input, tokio::io::sink());
        match tokio::time::timeout(Duration::from_secs(10), served).await {
            Ok(_) => {}
            Err(_) => panic!("the session did not end after its input closed"),
        }
    });
});
