//! Git configuration: our reading against `git config --list` (when git
//! is installed and the input is small enough to run git on), the `.git`
//! file and `commondir` readers, and the writer's round trip. Never
//! panics; any disagreement on a file git accepts is a crash.
#![no_main]

use libfuzzer_sys::fuzz_target;
use skarn_sandbox::{protect::git::git_vet, protect::git::gitconfig};
use std::process::Command;
use std::sync::OnceLock;

fn tmp() -> &'static tempfile::TempDir {
    static T: OnceLock<tempfile::TempDir> = OnceLock::new();
    T.get_or_init(|| tempfile::tempdir().expect("tempdir"))
}

fn git_list(bytes: &[u8]) -> Option<Vec<(String, Option<String>)>> {
    let f = tmp().path().join("config");
    std::fs::write(&f, bytes).ok()?;
    let out = Command::new("git")
        .args(["config", "--list", "-z", "--no-includes", "--file"])
        .arg(&f)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .output()
        .ok()?;
    if !out.status.success() {
        return None;
    }
    let mut v = Vec::new();
    for rec in out.stdout.split(|b| *b == 0).filter(|r| !r.is_empty()) {
        let (k, val) = match rec.iter().position(|b| *b == b'\n') {
            Some(i) => (&rec[..i], Some(&rec[i + 1..])),
            None => (rec, None),
        };
        v.push((
            String::from_utf8_lossy(k).into_owned(),
            val.map(|x| String::from_utf8_lossy(x).into_owned()),
        ));
    }
    Some(v)
}

fuzz_target!(|data: &[u8]| {
    let _ = git_vet::gitfile_target(data);
    let _ = git_vet::commondir_target(data);
    let text = String::from_utf8_lossy(data);
    let p = gitconfig::parse(&text);
    // What we write back reads as the same items.
    let back = gitconfig::parse(&gitconfig::write(&p.items));
    assert!(back.bad_lines.is_empty(), "{:?}", back.bad_lines);
    if data.len() <= 4096 && std::env::var_os("SKARN_FUZZ_NO_GIT").is_none() {
        if let Some(git) = git_list(data) {
            assert!(
                p.bad_lines.is_empty(),
                "git accepts the file, we report bad lines {:?}",
                p.bad_lines
            );
            let mine: Vec<(String, Option<String>)> =
                p.items
            .iter()
            .map(|i| {
                // Our text keeps raw bytes as stand-ins: compare the bytes.
                let shown = |s: &str| String::from_utf8_lossy(&gitconfig::raw_bytes(s)).into_owned();
                (shown(&i.key()), i.value.as_deref().map(shown))
            })
            .collect();
            assert_eq!(mine, git, "git and we read the file differently");
        }
    }
});
