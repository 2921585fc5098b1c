//! The echo scrubber's sieve (issue 27, ADR 0337) against the full
//! search: a text made from the input (forms of a value planted in it,
//! bytes escaped, case changed), fed in reads cut by the input, scrubbed
//! byte for byte the same and probed with the same answer.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Err(e) = skarn_egress::scrub_differential(data) {
        panic!("{e}");
    }
});
