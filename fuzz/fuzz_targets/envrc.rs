//! The `.envrc` reader (ADR 0148, 0193): any text. Never a panic or a
//! hang; every name it gives is absolute and below the `.envrc`'s own
//! directory or next to it (`..` only through what the text wrote); the
//! answer is the same when asked twice.
#![no_main]

use libfuzzer_sys::fuzz_target;
use skarn_sandbox::protect::envrc::names;
use std::path::Path;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let dir = Path::new("/w/p");
    let a = names(&text, dir);
    assert!(a.iter().all(|p| p.is_absolute()), "{a:?}");
    assert_eq!(a, names(&text, dir));
});
