//! The gateway's streamable HTTP transport (`skarn serve --http`) as a
//! hostile client drives it: any bytes on a loopback connection, with
//! `@TOKEN@` and `@PORT@` in the input replaced by the gateway's bearer
//! token and port (so the fuzzer reaches the JSON-RPC framing behind the
//! token check). No downstream servers. Never a panic; the connection is
//! dropped after a few seconds if the gateway keeps it open (an event
//! stream), which the next input does not wait for.
#![no_main]

use libfuzzer_sys::fuzz_target;
use std::time::Duration;

fuzz_target!(|data: &[u8]| {
    let g = skarn_fuzz::gateway_http::gateway();
    let input = skarn_fuzz::replace(data, b"@TOKEN@", g.token.as_bytes());
    let input = skarn_fuzz::replace(&input, b"@PORT@", g.port.to_string().as_bytes());
    g.exchange(&input, Duration::from_secs(3));
});
