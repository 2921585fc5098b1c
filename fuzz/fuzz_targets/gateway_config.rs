//! The gateway's configuration file (servers, sandbox settings, limits):
//! a typed error or a configuration, never a panic.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(text) = std::str::from_utf8(data) {
        let _ = skarn_gateway::Config::parse(text, "fuzz.toml");
    }
});
