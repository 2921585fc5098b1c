//! The size/duration syntax every setting uses: never panics, and what
//! it accepts is consistent between the unit variants.
#![no_main]

use libfuzzer_sys::fuzz_target;
use skarn_units::{
    DurationUnit, SizeUnit, parse_duration, parse_duration_secs, parse_size, parse_size_mib,
};

fuzz_target!(|data: &[u8]| {
    let Ok(s) = std::str::from_utf8(data) else {
        return;
    };
    for u in [SizeUnit::Bytes, SizeUnit::MiB] {
        let _ = parse_size(s, u);
    }
    for u in [DurationUnit::Millis, DurationUnit::Secs] {
        let _ = parse_duration(s, u);
    }
    let _ = parse_size_mib(s);
    let _ = parse_duration_secs(s);
});
