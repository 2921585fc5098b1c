//! make's text as skarn reads it (`protect::make_include`: the files a
//! Makefile includes, the variables its recipes run as commands; a cloned
//! repository writes the text). Never a panic, never a hang, and every
//! name returned is one make could assign: not empty, no blank or newline.
#![no_main]

use libfuzzer_sys::fuzz_target;
use skarn_sandbox::protect::make_include::{command_variables, include_words};

fuzz_target!(|data: &[u8]| {
    if data.len() > 64 * 1024 {
        return;
    }
    let text = String::from_utf8_lossy(data);
    for v in command_variables(&text) {
        assert!(!v.is_empty(), "an empty variable name");
        assert!(!v.contains(['\n', ' ', '\t']), "{v:?}");
    }
    for w in include_words(&text) {
        assert!(!w.is_empty(), "an empty include word");
    }
});
