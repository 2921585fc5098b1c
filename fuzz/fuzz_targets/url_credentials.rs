//! The URL credential judge (`policy::query_credentials::url_names_credential`:
//! whether a variable's value or a dotfile line carries a credential in a
//! URL's query, fragment or path; the agent's environment and a cloned
//! repository's files write the text). Never a panic, never a hang on
//! long or odd text, and the answer does not depend on text that comes
//! after a newline-free copy of the same input.
#![no_main]

use libfuzzer_sys::fuzz_target;
use skarn_sandbox::policy::query_credentials::url_names_credential;

fuzz_target!(|data: &[u8]| {
    if data.len() > 64 * 1024 {
        return;
    }
    let text = String::from_utf8_lossy(data);
    let once = url_names_credential(&text);
    // The same text twice, a blank apart, still carries what it carried.
    if once {
        assert!(url_names_credential(&format!("{text} {text}")));
    }
});
