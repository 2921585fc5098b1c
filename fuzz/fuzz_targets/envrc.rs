//! The `.envrc` reader (`protect::envrc::names`: which files an `.envrc`
//! makes direnv read; a cloned repository writes the text). Never a
//! panic, never a hang (nested `eval`/`$(...)` texts are followed a fixed
//! depth), every path named lies under the `.envrc`'s directory or is
//! one of the usual companions there, and no path is named twice.
#![no_main]

use libfuzzer_sys::fuzz_target;
use skarn_sandbox::protect::envrc::names;
use std::path::Path;

fuzz_target!(|data: &[u8]| {
    if data.len() > 64 * 1024 {
        return;
    }
    let text = String::from_utf8_lossy(data);
    let dir = Path::new("/w/d");
    let out = names(&text, dir);
    for (i, p) in out.iter().enumerate() {
        assert!(p.is_absolute(), "{p:?}");
        assert!(!out[..i].contains(p), "{p:?} named twice");
    }
});
