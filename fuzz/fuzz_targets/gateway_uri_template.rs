//! RFC 6570 template matching (`resources/read` routing): a template (the
//! input's first line, from a downstream server) against a URI (the rest,
//! from the client) answers without a panic and in linear time per
//! template part (libFuzzer's timeout catches a slow match).
#![no_main]

use libfuzzer_sys::fuzz_target;
use skarn_gateway::uri_template::matches;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let (template, uri) = text.split_once('\n').unwrap_or((&text, ""));
    let _ = matches(template, uri);
});
