//! The dotfile sanitiser (`~/.gitconfig`, `~/.npmrc`, `pip.conf`; the
//! user's files, copied into a sandbox's private home). The first input
//! byte picks the file kind; in the rest `@TOK@` becomes a marked token
//! (shaped like a real one) and `@URL@` a URL with a marked password.
//! Never a panic; the output never holds a marked credential; sanitising
//! the output again changes nothing; a sanitised git config reads cleanly
//! and keeps only settings the input had.
#![no_main]

use libfuzzer_sys::fuzz_target;
use skarn_sandbox::secrets::dotfiles::{sanitized_gitconfig, sanitized_npmrc, sanitized_pipconf};
use skarn_sandbox::protect::git::gitconfig;

const TOKEN: &str = "ghp_Mk7Qz2Lw9Xr4Tb6Nc8Vd1Fh3Jp5Sg0Ya2Ue";
const TOKEN_MARK: &str = "Mk7Qz2Lw9Xr4Tb6Nc8Vd1Fh3Jp5";
const URL: &str = "https://ada:Pw0rdMarked@h.example/simple";
const PASS_MARK: &str = "Pw0rdMarked";

fuzz_target!(|data: &[u8]| {
    let Some((&pick, rest)) = data.split_first() else {
        return;
    };
    let raw = String::from_utf8_lossy(rest);
    let text = raw.replace("@TOK@", TOKEN).replace("@URL@", URL);
    let clean: fn(&str) -> String = match pick % 3 {
        0 => sanitized_gitconfig,
        1 => sanitized_npmrc,
        _ => sanitized_pipconf,
    };
    let out = clean(&text);
    for mark in [TOKEN_MARK, PASS_MARK] {
        // A mark the input spelt out itself is not a planted credential.
        if !raw.contains(mark) {
            assert!(!out.contains(mark), "{mark} kept from {text:?}:\n{out}");
        }
    }
    assert_eq!(clean(&out), out, "sanitising twice differs, from {text:?}");
    if pick % 3 == 0 {
        let back = gitconfig::parse(&out);
        assert!(back.bad_lines.is_empty(), "{:?}", back.bad_lines);
        let had = gitconfig::parse(&text).items;
        // The writer leaves out the control characters it has no escape
        // for (docs/fuzzing.md).
        let shown = |v: &Option<String>| {
            v.as_ref().map(|v| {
                v.chars()
                    .filter(|c| !c.is_control() || matches!(c, '\n' | '\t' | '\u{8}'))
                    .collect::<String>()
            })
        };
        for it in &back.items {
            assert!(
                had.iter()
                    .any(|h| h.key() == it.key() && shown(&h.value) == shown(&it.value)),
                "{}={:?} was not in the input",
                it.key(),
                it.value
            );
        }
    }
});
