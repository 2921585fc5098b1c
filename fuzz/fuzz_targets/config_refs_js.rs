//! The JavaScript `require` / `import` reader
//! (`protect::config_refs_read::js`: which modules a protected
//! configuration such as `eslint.config.js` loads; the workspace writes
//! the text). Never a panic, never a hang; every specifier it gives is a
//! relative one or a package name / `#` import, each once; and a text
//! with no `require` or `import` word names nothing.
#![no_main]

use libfuzzer_sys::fuzz_target;
use skarn_sandbox::protect::config_refs_read::{bare, data, js};

fuzz_target!(|data_in: &[u8]| {
    if data_in.len() > 64 * 1024 {
        return;
    }
    let text = String::from_utf8_lossy(data_in);
    let r = js(&text);
    for (i, s) in r.js.iter().enumerate() {
        assert!(s.starts_with('.'), "{s:?} is not relative");
        assert!(!r.js[..i].contains(s), "{s:?} named twice");
    }
    for (i, s) in r.bare.iter().enumerate() {
        assert!(bare(s), "{s:?} is not a package name");
        assert!(!r.bare[..i].contains(s), "{s:?} named twice");
    }
    if !text.contains("require") && !text.contains("import") && !text.contains("from") {
        assert!(r.js.is_empty() && r.bare.is_empty() && !r.dynamic, "{r:?}");
    }
    let d = data(&text);
    assert!(d.names.len() <= 512, "{}", d.names.len());
});
