//! The home-mentions word reading (`protect::home_mentions::line_reaches`:
//! a home start-up line read as bash expands its words: globs, braces,
//! extglob groups, backslashes, `$(...)` texts a fixed depth). Never a
//! panic, never a hang (brace alternatives and glob steps are bounded),
//! and a line sourcing a file inside the grant by its plain path is
//! always a mention whatever follows it on the line.
#![no_main]

use libfuzzer_sys::fuzz_target;
use skarn_sandbox::protect::home_mentions::line_reaches;
use std::path::Path;

fuzz_target!(|data: &[u8]| {
    if data.len() > 16 * 1024 {
        return;
    }
    let text = String::from_utf8_lossy(data);
    let (home, file, grant) = (
        Path::new("/h"),
        Path::new("/h/.bashrc"),
        Path::new("/h/proj"),
    );
    let _ = line_reaches(&text, home, file, grant);
    let plain = format!(". /h/proj/env.sh; {text}");
    assert!(line_reaches(&plain, home, file, grant), "{plain:?}");
});
