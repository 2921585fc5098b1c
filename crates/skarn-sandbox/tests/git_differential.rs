//! Differential tests: our reading of git's files against git's own, on
//! generated inputs. Whatever git accepts we must read to the same keys
//! and values (or report unparsable lines, so callers treat the file as
//! hostile). `PROPTEST_CASES` raises the case count for long local runs.
#![cfg(unix)]
#![allow(clippy::unwrap_used)] // test code: a failed unwrap is a failed test

use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};
use skarn_sandbox::protect::git::gitconfig;
use std::path::Path;
use std::process::Command;

/// Keys and values in file order (`None`: a bare boolean key).
type Listing = Vec<(String, Option<String>)>;

/// `git config --list --file F -z`: the listing when git accepts the
/// file, `None` when it refuses it. `None` overall when git is not
/// installed.
fn git_list(file: &Path, includes: bool) -> Option<Option<Listing>> {
    let mut cmd = Command::new("git");
    cmd.args(["config", "--list", "-z"]);
    if includes {
        cmd.arg("--includes");
    } else {
        cmd.arg("--no-includes");
    }
    cmd.arg("--file")
        .arg(file)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env_remove("GIT_CONFIG_PARAMETERS")
        .env_remove("GIT_CONFIG_COUNT");
    let out = cmd.output().ok()?;
    if !out.status.success() {
        return Some(None);
    }
    let mut v = Vec::new();
    let recs = out.stdout.split(|b| *b == 0);
    for rec in recs.filter(|r| !r.is_empty()) {
        let (k, val) = match rec.iter().position(|b| *b == b'\n') {
            Some(i) => (&rec[..i], Some(&rec[i + 1..])),
            None => (rec, None),
        };
        v.push((
            String::from_utf8_lossy(k).into_owned(),
            val.map(|x| String::from_utf8_lossy(x).into_owned()),
        ));
    }
    Some(Some(v))
}

fn ours(file: &Path) -> gitconfig::Parsed {
    let text = gitconfig::read_file(file).unwrap().unwrap_or_default();
    gitconfig::parse(&text)
}

/// Compare one file; `Err` describes a disagreement. Both readings are
/// deterministic, so a disagreement is confirmed by a second look before
/// it counts (a git process failing under a loaded host once read as one).
fn check(bytes: &[u8]) -> Result<bool, String> {
    match check_once(bytes) {
        Err(first) => match check_once(bytes) {
            Err(_) => Err(first),
            Ok(r) => {
                eprintln!("a disagreement did not repeat (transient): {first}");
                Ok(r)
            }
        },
        ok => ok,
    }
}

fn check_once(bytes: &[u8]) -> Result<bool, String> {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("config");
    std::fs::write(&f, bytes).unwrap();
    let Some(git) = git_list(&f, false) else {
        return Err("git is not installed".into());
    };
    let p = ours(&f);
    let Some(git) = git else {
        return Ok(false); // git refuses the file: it never runs with it
    };
    if !p.bad_lines.is_empty() {
        return Err(format!(
            "git accepts {:?} but we report bad lines {:?} (git read {git:?})",
            String::from_utf8_lossy(bytes),
            p.bad_lines
        ));
    }
    let mine: Vec<(String, Option<String>)> = p
        .items
        .iter()
        .map(|i| {
            // Our text keeps raw bytes as stand-ins: compare the bytes.
            let shown = |s: &str| String::from_utf8_lossy(&gitconfig::raw_bytes(s)).into_owned();
            (shown(&i.key()), i.value.as_deref().map(shown))
        })
        .collect();
    if mine != git {
        return Err(format!(
            "{:?}:\n  git:  {git:?}\n  ours: {mine:?}",
            String::from_utf8_lossy(bytes)
        ));
    }
    Ok(true)
}

/// Pieces git's syntax cares about, and the bytes that once fooled us.
const VALUE_BITS: &[&[u8]] = &[
    b"a",
    b"B",
    b"x1",
    b" ",
    b"  ",
    b"\t",
    b"\"",
    b"\\",
    b"\\n",
    b"\\t",
    b"\\b",
    b"\\\"",
    b"\\\\",
    b"\\q",
    b"#",
    b";",
    b"=",
    b"[",
    b"]",
    b".",
    b"\x0b",
    b"\x0c",
    b"\0",
    b"\r",
    b"\xc2\xa0",
    b"\xc2\x85",
    b"\xe2\x80\x83",
    b"\xff",
    b"\xef\xbb\xbf",
    b"\\\n",
    b"\\\r\n",
    b"/tmp/x",
];
const NAME_BITS: &[&[u8]] = &[
    b"core",
    b"Core",
    b"hooksPath",
    b"fsmonitor",
    b"include",
    b"path",
    b"a",
    b"-",
    b"1",
    b".",
    b"K",
    b"x",
];
const SUB_BITS: &[&[u8]] = &[
    b"o",
    b"Or",
    b".",
    b"\\\"",
    b"\\\\",
    b"\\x",
    b" ",
    b"\0",
    b"hookspath",
    b"#",
    b"]",
    b"\xff",
];
const ENDS: &[&[u8]] = &[b"\n", b"\n", b"\n", b"\r\n", b"\\\n", b" \\\n", b""];

fn bits(set: &'static [&'static [u8]], max: usize) -> impl Strategy<Value = Vec<u8>> {
    prop::collection::vec(prop::sample::select(set), 0..max).prop_map(|v| v.concat())
}

fn blank() -> impl Strategy<Value = Vec<u8>> {
    bits(&[b" ", b"\t", b"\r", b"\x0b", b"\xc2\xa0"], 2)
}

/// One generated line (without its end).
fn line() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        // [name] / [name "sub"] / [a.b "sub"], maybe followed by a key.
        (
            blank(),
            bits(NAME_BITS, 3),
            prop::option::of((blank(), bits(SUB_BITS, 4), blank())),
            prop::option::of(bits(VALUE_BITS, 4)),
        )
            .prop_map(|(b, n, sub, tail)| {
                let mut v = b;
                v.push(b'[');
                v.extend(n);
                if let Some((b1, s, b2)) = sub {
                    v.extend(b1);
                    v.push(b'"');
                    v.extend(s);
                    v.push(b'"');
                    v.extend(b2);
                }
                v.push(b']');
                v.extend(tail.unwrap_or_default());
                v
            }),
        // key [= value]
        (
            blank(),
            bits(NAME_BITS, 3),
            blank(),
            prop::option::of((blank(), bits(VALUE_BITS, 8))),
        )
            .prop_map(|(b, n, b2, val)| {
                let mut v = b;
                v.extend(n);
                v.extend(b2);
                if let Some((b3, x)) = val {
                    v.push(b'=');
                    v.extend(b3);
                    v.extend(x);
                }
                v
            }),
        // comments
        (prop::sample::select(&[b'#', b';'][..]), bits(VALUE_BITS, 4)).prop_map(|(c, x)| {
            let mut v = vec![c];
            v.extend(x);
            v
        }),
        // anything
        bits(VALUE_BITS, 6),
    ]
}

fn file() -> impl Strategy<Value = Vec<u8>> {
    (
        prop::bool::weighted(0.05),
        prop::collection::vec((line(), prop::sample::select(ENDS)), 0..8),
    )
        .prop_map(|(bom, lines)| {
            let mut v = if bom {
                b"\xef\xbb\xbf".to_vec()
            } else {
                Vec::new()
            };
            for (l, e) in lines {
                v.extend(l);
                v.extend_from_slice(e);
            }
            v
        })
}

fn cases(default: u32) -> u32 {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

#[test]
fn git_config_reading_matches_git() {
    if git_list(Path::new("/dev/null"), false).is_none() {
        skarn_test_support::skip!("git is not installed; the differential test needs it");
    }
    let mut runner = TestRunner::new(Config {
        cases: cases(400),
        failure_persistence: None,
        ..Config::default()
    });
    let accepted = std::cell::Cell::new(0u32);
    runner
        .run(&file(), |bytes| {
            if check(&bytes).map_err(TestCaseError::fail)? {
                accepted.set(accepted.get() + 1);
            }
            Ok(())
        })
        .unwrap();
    // The generator must keep producing files git accepts, or the test
    // proves nothing.
    assert!(accepted.get() > 40, "git accepted only {}", accepted.get());
}

/// Inputs where our reading once differed from git's (all but the
/// `a\tb` guard failed on the reader before the fix).
#[test]
fn git_config_regressions() {
    if git_list(Path::new("/dev/null"), false).is_none() {
        skarn_test_support::skip!("git is not installed; the differential test needs it");
    }
    let mut failed = Vec::new();
    for (i, input) in [
        // A NUL in a subsection ends git's key: this is core.fsmonitor.
        &b"[core \"fsmonitor\0\"]\n\tx = echo pwned\n"[..],
        b"[core \"hookspath\0\"]\n\tx = /tmp/h\n",
        b"[core \"x.hookspath\0y\"]\n\tx = /tmp/h\n",
        // A NUL ends a value.
        b"[core]\n\tfsmonitor = false\0junk\n",
        // A UTF-8 byte order mark, then keys git reads.
        b"\xef\xbb\xbf[core]\n\thooksPath = /tmp/h\n",
        // Only ASCII blanks are blanks to git.
        b"[a]\n\tk = v\x0b\n",
        b"[a]\n\tk =\xc2\xa0v\xc2\xa0\n",
        b"[a]\n\tk = \xe2\x80\x83\n",
        // Blanks between words are kept as written; after an empty quoted
        // part they are dropped; before a continuation they are kept.
        b"[a]\n\tk = a\tb\n",
        b"[a]\n\tk = \"\" x\n",
        b"[a]\n\tk = a \"\"\n",
        b"[a]\n\tk = a \\\n\n",
        // Bytes that are not UTF-8, split by quotes: one character to git
        // (fuzz finding 17).
        b"[core]\n\tk = \xdf\"\xa6\"\n",
        b"[core \"\xf5\xd1\"]\n\tk = \x13\xbd\xdf\"\xa6\"]\n",
        // Headers one after another on a line (fuzz finding 16).
        b"[core][core]\n\thooksPath = ../h\n",
        b"[a] [core] fsmonitor = echo x\n",
        // A continuation at the end of the file.
        b"[a]\n\tk = v\\",
        // Headers git accepts: dotted with a subsection, empty name with
        // one, keys before any header.
        b"[core.x \"y\"]\n\tk = 1\n",
        b"[ \"x\"]\n\tk = 1\n",
        b"k = 1\n[a]\n",
        // An empty section name before a NUL-cut subsection: git's key
        // keeps the leading dot (`.x`, `.`), it is not the key `x`.
        b"[ \"x\0\"]\n\tk = 1\n",
        b"[ \"x.\0\"]\n\tk = 1\n",
        b"[ \"\0\"]\n\tk = 1\n",
        b"[ \"core.fsmonitor\0\"]\n\tk = 1\n",
    ]
    .iter()
    .enumerate()
    {
        if let Err(e) = check(input) {
            failed.push(format!("#{i}: {e}"));
        }
    }
    assert!(failed.is_empty(), "{}", failed.join("\n"));
}

/// `git rev-parse --absolute-git-dir` in `dir`, `None` when git refuses.
fn git_dir_of(dir: &Path, ceiling: &Path) -> Option<String> {
    let out = Command::new("git")
        .args(["rev-parse", "--absolute-git-dir"])
        .current_dir(dir)
        .env("GIT_CEILING_DIRECTORIES", ceiling)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env_remove("GIT_DIR")
        .output()
        .ok()?;
    out.status.success().then(|| {
        String::from_utf8_lossy(&out.stdout)
            .trim_end_matches('\n')
            .to_string()
    })
}

/// A `.git` file and a `commondir` file name the directory git uses.
#[test]
fn git_file_and_commondir_match_git() {
    use skarn_sandbox::protect::git::git_vet;
    if git_list(Path::new("/dev/null"), false).is_none() {
        skarn_test_support::skip!("git is not installed; the differential test needs it");
    }
    let names = ["g", " g", "g ", "g\t"];
    let mut failed = Vec::new();
    let mut agreed = 0;
    for target in names {
        for form in [
            "gitdir: {}",
            "gitdir: {}\n",
            "gitdir: {}\r\n",
            "gitdir:{}\n",
            "gitdir:  {}\n",
            "gitdir: {}\n\n",
        ] {
            let tmp = tempfile::tempdir().unwrap();
            let root = tmp.path().canonicalize().unwrap();
            for n in names {
                let st = Command::new("git")
                    .args(["init", "-q", "--bare"])
                    .arg(root.join(n))
                    .status()
                    .unwrap();
                assert!(st.success());
            }
            let w = root.join("w");
            std::fs::create_dir(&w).unwrap();
            let text = form.replace("{}", &format!("../{target}"));
            std::fs::write(w.join(".git"), &text).unwrap();
            let Some(git) = git_dir_of(&w, &root) else {
                continue; // git refuses the file
            };
            let ours = git_vet::discover(&w).map(|l| l.git_dir.display().to_string());
            if ours.as_deref() != Some(git.as_str()) {
                failed.push(format!("{text:?}: git {git:?}, ours {ours:?}"));
            } else {
                agreed += 1;
            }
        }
        // commondir: a linked worktree's git dir names the common one.
        for form in ["../{}", "../{}\n", "../{}\r\n"] {
            let tmp = tempfile::tempdir().unwrap();
            let root = tmp.path().canonicalize().unwrap();
            for n in names {
                Command::new("git")
                    .args(["init", "-q", "--bare"])
                    .arg(root.join(n))
                    .status()
                    .unwrap();
            }
            let wt = root.join("wtgit");
            std::fs::create_dir(&wt).unwrap();
            std::fs::write(wt.join("HEAD"), "ref: refs/heads/main\n").unwrap();
            let text = form.replace("{}", target);
            std::fs::write(wt.join("commondir"), &text).unwrap();
            let w = root.join("w");
            std::fs::create_dir(&w).unwrap();
            std::fs::write(w.join(".git"), "gitdir: ../wtgit\n").unwrap();
            let out = Command::new("git")
                .args(["rev-parse", "--git-common-dir"])
                .current_dir(&w)
                .env("GIT_CEILING_DIRECTORIES", &root)
                .output()
                .unwrap();
            if !out.status.success() {
                continue;
            }
            let git = String::from_utf8_lossy(&out.stdout)
                .trim_end_matches('\n')
                .to_string();
            let git = lexical_abs(&w, &git);
            let ours = git_vet::discover(&w).map(|l| l.common_dir.display().to_string());
            if ours.as_deref() != Some(git.as_str()) {
                failed.push(format!("commondir {text:?}: git {git:?}, ours {ours:?}"));
            } else {
                agreed += 1;
            }
        }
    }
    assert!(failed.is_empty(), "{}", failed.join("\n"));
    assert!(agreed > 10, "git accepted too few forms: {agreed}");
}

/// `git rev-parse --git-common-dir` may answer relative to `cwd`; make it
/// absolute and without `.`/`..`, as ours is.
fn lexical_abs(cwd: &Path, p: &str) -> String {
    let joined = cwd.join(p);
    let mut out = std::path::PathBuf::new();
    for c in joined.components() {
        match c {
            std::path::Component::ParentDir => {
                out.pop();
            }
            std::path::Component::CurDir => {}
            c => out.push(c),
        }
    }
    out.display().to_string()
}

/// The `.gitconfig` sanitiser, read back by git: for generated files with a
/// marked credential in positions git honours (headers, helpers, URLs
/// with user info, proxies, commands) mixed with allow-listed settings in
/// any spelling git accepts, the marker never survives and every
/// allow-listed setting git read in the input, git reads in the output.
#[test]
fn sanitised_gitconfig_drops_credentials_and_keeps_settings() {
    if git_list(Path::new("/dev/null"), false).is_none() {
        skarn_test_support::skip!("git is not installed; the differential test needs it");
    }
    const KEEP: &[(&str, Option<&str>, &str, &str)] = &[
        ("user", None, "name", "Alice B"),
        ("user", None, "email", "a@b.example"),
        ("core", None, "autocrlf", "input"),
        ("alias", None, "st", "status -sb"),
        ("url", Some("https://h.example/"), "insteadOf", "gh:"),
        ("color", None, "ui", "auto"),
        ("init", None, "defaultBranch", "main"),
    ];
    const SECRET: &[(&str, Option<&str>, &str, &str)] = &[
        (
            "http",
            None,
            "extraHeader",
            "Authorization: Bearer SECRETMARK",
        ),
        (
            "http",
            Some("https://h.example/"),
            "extraheader",
            "SECRETMARK",
        ),
        (
            "credential",
            None,
            "helper",
            "!f() { echo password=SECRETMARK; }; f",
        ),
        (
            "url",
            Some("https://u:SECRETMARK@h.example/"),
            "insteadOf",
            "https://h.example/",
        ),
        (
            "url",
            Some("https://h.example/"),
            "insteadOf",
            "https://u:SECRETMARK@h.example/",
        ),
        (
            "url",
            Some("https://SECRETMARK@h.example/"),
            "pushInsteadOf",
            "x:",
        ),
        (
            "remote",
            Some("o"),
            "url",
            "https://u:SECRETMARK@h.example/r",
        ),
        ("http", None, "proxy", "http://u:SECRETMARK@p.example:1"),
        ("https", None, "proxy", "http://u:SECRETMARK@p.example:1"),
        (
            "http",
            Some("https://u:SECRETMARK@h.example/"),
            "sslVerify",
            "true",
        ),
        ("core", None, "sshCommand", "ssh -i /SECRETMARK"),
        ("alias", None, "x", "!echo SECRETMARK"),
        ("alias", None, "y", "-c core.pager=SECRETMARK log"),
        ("alias", None, "z", "\t-c core.pager=SECRETMARK log"),
        ("user", None, "password", "SECRETMARK"),
        ("core", None, "fsmonitor", "SECRETMARK"),
    ];
    // One setting in a spelling git accepts.
    fn spell(e: &(&str, Option<&str>, &str, &str), style: u8) -> String {
        let (sec, sub, name, val) = *e;
        let esc = val.replace('\\', "\\\\").replace('"', "\\\"");
        let sec_s = if style & 1 == 1 {
            sec.to_uppercase()
        } else {
            sec.to_string()
        };
        let name_s = if style & 2 == 2 {
            name.to_uppercase()
        } else {
            name.to_string()
        };
        let header = match sub {
            Some(s) => format!("[{sec_s} \"{}\"]", s.replace('"', "\\\"")),
            None if style & 4 == 4 => format!("[{sec_s}]  ; c"),
            None => format!("[{sec_s}]"),
        };
        let value = match style % 3 {
            0 => format!("\"{esc}\""),
            1 if !val.contains(['#', ';', '\t']) && !val.starts_with(' ') => {
                esc.replacen(' ', " \\\n ", 1)
            }
            _ => format!("\"{}\"", esc.replacen(' ', "\\\n ", 1)),
        };
        format!("{header}\n\t{name_s} = {value}\n")
    }
    let mut runner = TestRunner::new(Config {
        cases: cases(150),
        failure_persistence: None,
        ..Config::default()
    });
    let strategy = prop::collection::vec((prop::bool::ANY, 0..16usize, any::<u8>()), 1..10);
    runner
        .run(&strategy, |picks| {
            let mut text = String::new();
            for (keep, i, style) in &picks {
                let e = if *keep {
                    &KEEP[i % KEEP.len()]
                } else {
                    &SECRET[i % SECRET.len()]
                };
                text.push_str(&spell(e, *style));
            }
            let dir = tempfile::tempdir().unwrap();
            let f = dir.path().join("in");
            std::fs::write(&f, &text).unwrap();
            let Some(Some(input)) = git_list(&f, false) else {
                return Ok(()); // a spelling git refuses: nothing to keep
            };
            let out = skarn_sandbox::secrets::dotfiles::sanitized_gitconfig(&text);
            prop_assert!(
                !out.to_ascii_lowercase().contains("secretmark"),
                "credential kept:\n{text}\n=>\n{out}"
            );
            let g = dir.path().join("out");
            std::fs::write(&g, &out).unwrap();
            let output = git_list(&g, false).unwrap();
            prop_assert!(output.is_some(), "git refuses the sanitised file:\n{out}");
            let output = output.unwrap();
            for (k, v) in &input {
                let wanted = KEEP.iter().any(|e| {
                    let key = match e.1 {
                        Some(s) => format!("{}.{s}.{}", e.0, e.2),
                        None => format!("{}.{}", e.0, e.2),
                    };
                    key.eq_ignore_ascii_case(k) && v.as_deref() == Some(e.3)
                });
                if wanted {
                    prop_assert!(
                        output.contains(&(k.clone(), v.clone())),
                        "{k} = {v:?} lost:\n{text}\n=>\n{out}"
                    );
                }
            }
            Ok(())
        })
        .unwrap();
}
