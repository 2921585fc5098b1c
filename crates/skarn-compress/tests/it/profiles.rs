//! Profile choice from whole command lines, and colour-coded output.

use std::collections::HashSet;
use std::path::PathBuf;

use skarn_compress::{Compressor, lines};

#[test]
fn profiles_are_chosen_from_the_whole_command_line() {
    let c = Compressor::builtin();
    let cases = [
        ("cargo test", "cargo-test"),
        (
            "cargo +nightly test --workspace -- --nocapture",
            "cargo-test",
        ),
        ("cargo nextest run", "cargo-test"),
        (
            "RUST_BACKTRACE=1 cargo test -p foo 2>&1 | tee out.log",
            "cargo-test",
        ),
        ("cargo --color always test", "cargo-test"),
        ("cargo build --release", "cargo"),
        ("cargo check --all-targets", "cargo"),
        ("cargo clippy --workspace -- -D warnings", "cargo"),
        ("cd crates/x && cargo clippy", "cargo"),
        ("npm install", "npm"),
        ("npm i --legacy-peer-deps", "npm"),
        ("pnpm install --frozen-lockfile", "npm"),
        ("yarn add react", "npm"),
        ("yarn", "npm"),
        ("npx tsc --noEmit", "tsc"),
        ("tsc -p tsconfig.json", "tsc"),
        ("./node_modules/.bin/tsc", "tsc"),
        ("npx jest --verbose", "jest"),
        ("npm test", "jest"),
        ("pytest -x tests/", "pytest"),
        ("python -m pytest -q", "pytest"),
        ("python3.11 -m pytest", "pytest"),
        ("./venv/bin/python -m pytest -v", "pytest"),
        ("uv run pytest", "pytest"),
        ("python manage.py migrate", "python"),
        ("python3 script.py --flag", "python"),
        ("pip install -r requirements.txt", "pip"),
        ("python -m pip install requests", "pip"),
        ("pip3 install .", "pip"),
        ("go test ./...", "go"),
        ("go build -o bin/app ./cmd/app", "go"),
        ("go vet ./...", "go"),
        ("make -j8", "make"),
        ("make -C build test", "make"),
        ("gcc -Wall -o x x.c", "make"),
        ("cc main.c", "make"),
        ("clang++ -std=c++20 a.cpp", "make"),
        ("git diff", "git-diff"),
        ("git --no-pager diff --cached", "git-diff"),
        ("git -C repo diff HEAD~3", "git-diff-range"),
        ("git diff v1.2.0 v1.3.0 -- src", "git-diff-range"),
        ("git diff main..feature", "git-diff-range"),
        ("git diff -- src/lib.rs", "git-diff"),
        ("mypy --strict src", "mypy"),
        ("ruff check .", "ruff"),
        ("python -m unittest -v tests.test_more", "unittest"),
        ("npx mocha", "mocha"),
        ("node --test test/", "tap"),
        ("javac -d build src/A.java", "javac"),
        ("dpkg -l", "package-list"),
        ("npm ls --all", "package-list"),
        ("pip list", "package-list"),
        ("flake8 src", "generic"),
        ("diff -u a.txt b.txt", "git-diff"),
        ("git log --stat", "git-log"),
        ("git log -p -5", "git-log"),
        ("git log --oneline -20", "git-log-oneline"),
        ("git status", "git-status"),
        ("git show HEAD~1", "git-show"),
        ("git grep -n foo", "grep"),
        ("ls -la /usr/bin", "ls"),
        ("ls", "ls"),
        ("find . -name '*.rs'", "find"),
        ("fd -e rs", "find"),
        ("tree -L 2", "tree"),
        ("grep -rn TODO src", "grep"),
        ("rg -n 'fn main'", "grep"),
        ("bash -lc 'cd app && cargo test'", "cargo-test"),
        ("sudo -E env FOO=1 make install", "make"),
        ("timeout 60 go test ./pkg/...", "go"),
        ("sudo apt-get install -y ruby", "apt"),
        ("apt install --no-install-recommends tree", "apt"),
        ("docker build .", "generic"),
        ("", "generic"),
        ("./run-everything.sh", "generic"),
    ];
    let mut wrong = Vec::new();
    for (cmd, want) in cases {
        let got = c.profile_for(cmd);
        if got != want {
            wrong.push(format!("{cmd:?}: {got} (want {want})"));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn colour_codes_do_not_hide_diagnostics() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("fixtures");
    let raw = std::fs::read(dir.join("extra_cargo_clippy_color.out")).unwrap();
    assert!(raw.windows(2).any(|w| w == b"\x1b["), "really coloured");
    let keep = std::fs::read_to_string(dir.join("cargo_clippy.keep")).unwrap();
    let out = Compressor::builtin().compress(&raw, "cargo clippy --color always", Some(0));
    assert!(out.changed);
    assert!(!out.text.contains('\x1b'), "colour codes removed");
    let got: HashSet<String> = lines::clean(&out.text).into_iter().collect();
    for want in keep.lines().filter(|l| !l.trim().is_empty()) {
        if want.starts_with("    Finished") {
            continue; // timing differs between the two runs
        }
        assert!(got.contains(want), "lost {want:?}");
    }
    assert!(out.text.len() * 5 < raw.len());
}

#[test]
fn any_profile_on_any_fixture_never_grows_or_goes_empty() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("fixtures");
    let base = Compressor::builtin();
    let names: Vec<String> = base
        .rules()
        .profiles
        .iter()
        .map(|p| p.name.clone())
        .collect();
    let mut fixtures = Vec::new();
    for e in std::fs::read_dir(&dir).unwrap() {
        let p = e.unwrap().path();
        // The small and medium ones: the cross product is large.
        if p.extension().is_some_and(|x| x == "out")
            && std::fs::metadata(&p).unwrap().len() < 60_000
        {
            let raw = std::fs::read(&p).unwrap();
            let cleaned: usize = lines::clean(&String::from_utf8_lossy(&raw))
                .iter()
                .map(|l| l.len() + 1)
                .sum();
            fixtures.push((raw, cleaned));
        }
    }
    assert!(fixtures.len() >= 25);
    for (k, name) in names.iter().enumerate() {
        let c = Compressor::builtin().force_profile(name).unwrap();
        // Alternate success and failure across profiles (debug builds are slow).
        let exit = (k % 2) as i32;
        for (raw, cleaned) in &fixtures {
            let out = c.compress(raw, "", Some(exit));
            assert!(
                out.text.len() <= *cleaned.max(&raw.len()),
                "{name}: output grew"
            );
            if raw.iter().any(|b| !b.is_ascii_whitespace()) {
                assert!(!out.text.trim().is_empty(), "{name}: came back empty");
            }
        }
    }
}

fn with_user(user: &str) -> Result<Compressor, skarn_compress::RulesError> {
    let base = skarn_compress::RulesFile::parse(skarn_compress::rules::DEFAULT_RULES, "built-in")?;
    let user = skarn_compress::RulesFile::parse(user, "user")?;
    Ok(Compressor::new(skarn_compress::Rules::compile(
        base.merge(user),
    )?))
}

#[test]
fn user_rules_extend_replace_and_fail_cleanly() {
    let mut s = String::new();
    for i in 0..300 {
        s.push_str(&format!("test t{i} ... ok\n"));
    }
    s.push_str("CUSTOM-MARKER: flaky retry used\n");
    s.push_str("test result: ok. 300 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.01s\n");

    // extend: the built-in rules stay, the user's keep comes first.
    let c = with_user(
        "[[profile]]\nname = \"cargo-test\"\nmode = \"extend\"\nkeep = ['^CUSTOM-MARKER']\n",
    )
    .unwrap();
    let out = c.compress(s.as_bytes(), "cargo test", Some(0));
    assert!(out.text.contains("CUSTOM-MARKER: flaky retry used\n"));
    assert!(!out.text.contains("test t5 ... ok"));
    assert!(out.text.contains("test result: ok. 300 passed"));

    // replace: a same-named profile replaces the built-in one entirely.
    let c = with_user(
        "[[profile]]\nname = \"cargo-test\"\ncommands = ['^cargo test']\nother = \"keep\"\nrun_head = 1000\n",
    )
    .unwrap();
    let out = c.compress(s.as_bytes(), "cargo test", Some(0));
    assert!(
        out.text.contains("test t0 ... ok\n"),
        "the built-in drop rule no longer applies"
    );

    // an inherit cycle is cut, not followed forever
    let c = with_user(
        "[[profile]]\nname = \"a\"\ncommands = ['^zz']\ninherit = ['b']\n[[profile]]\nname = \"b\"\ninherit = ['a']\n",
    )
    .unwrap();
    assert_eq!(c.profile_for("zz"), "a");

    // a new profile is tried before the built-ins
    let c = with_user("[[profile]]\nname = \"mine\"\ncommands = ['^cargo']\n").unwrap();
    assert_eq!(c.profile_for("cargo test"), "mine");

    for bad in [
        "[[profile]]\nname = \"a\"\ncommands = ['^a']\n[[profile]]\nname = \"a\"\ncommands = ['^b']\n",
        "[[profile]]\nname = \"a\"\ncommands = ['^a']\ninherit = ['nope']\n",
        "[[profile]]\nname = \"a\"\ncommands = ['(']\n",
        "[[profile]]\nname = \"a\"\nunknown_key = 1\n",
        "[[profile]]\nname = \"a\"\nother = \"sideways\"\n",
        "not toml at all [[[",
    ] {
        match with_user(bad) {
            Ok(_) => panic!("accepted bad rules: {bad:?}"),
            Err(e) => {
                let err = e.to_string();
                assert!(!err.contains('\n'), "one line: {err}");
            }
        }
    }
}
