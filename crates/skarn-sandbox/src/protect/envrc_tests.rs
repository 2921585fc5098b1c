//! Tests of `envrc`.
use super::*;

#[test]
fn the_files_an_envrc_reads_are_named() {
    let d = Path::new("/w");
    let n = |t: &str| names(t, d);
    assert_eq!(
        n("source_env_if_exists .envrc.local\n"),
        vec![PathBuf::from("/w/.envrc.local")]
    );
    assert_eq!(n("use flake; dotenv\n"), vec![PathBuf::from("/w/.env")]);
    assert_eq!(
        n("[ -f x ] && source \"$PWD/.envrc.private\" # comment .nope"),
        vec![PathBuf::from("/w/.envrc.private")]
    );
    assert_eq!(
        n("dotenv_if_exists 'config/.env.dev'"),
        vec![PathBuf::from("/w/config/.env.dev")]
    );
    assert_eq!(
        n("watch_file a b"),
        vec![PathBuf::from("/w/a"), PathBuf::from("/w/b")]
    );
    // A name only bash knows: the usual companions instead.
    let v = n("source_env \"$HOME_ENV\"");
    assert!(v.contains(&PathBuf::from("/w/.envrc.local")) && v.len() == USUAL.len());
    assert!(n("export FOO=source_env\necho source_env").is_empty());
    assert!(n("").is_empty());
}

/// Attack 24c F3: the call after a reserved word or prefix, `eval`,
/// an input redirection.
#[test]
fn commands_are_read_as_bash_reads_them() {
    let d = Path::new("/w");
    let user = PathBuf::from("/w/.envrc.user");
    for t in [
        "if [ -f .envrc.user ]; then source_env .envrc.user; fi",
        "if [[ -f .envrc.user ]]; then\n  source_env .envrc.user\nfi",
        "for f in .envrc.user; do source_env \"$f\"; done",
        "{ source_env .envrc.user; }",
        "time source_env .envrc.user",
        "time -p command source .envrc.user",
        "! builtin . ./.envrc.user",
        "if false; then :; else source_env .envrc.user; fi",
        "if false; then :; elif true; then dotenv .envrc.user; fi",
        "eval \"$(cat .envrc.user)\"",
        "eval `cat .envrc.user`",
        "eval \"source_env .envrc.user\"",
        "while read -r l; do export \"$l\"; done < .envrc.user",
        "while read -r l; do export \"$l\"; done <.envrc.user",
        "source <(cat .envrc.user)",
        "X=1 source_env .envrc.user",
        "test -f .envrc.user && watch_file .envrc.user && source_env .envrc.user",
        "F=.envrc.user\nsource_env \"$F\"",
    ] {
        assert!(names(t, d).contains(&user), "{t:?}: {:?}", names(t, d));
    }
    // What only bash knows: the usual companions.
    for t in [
        "eval \"$(lorri direnv)\"",
        "eval \"$SETUP\"",
        "load() { source_env \"$1\"; }; load x",
        "source_env \"$(find_up .envrc.user)\"",
        "for f in *.sh; do source_env \"$f\"; done",
    ] {
        let v = names(t, d);
        assert!(
            v.contains(&PathBuf::from("/w/.envrc.local")),
            "{t:?}: {v:?}"
        );
    }
    // Plain commands name nothing: no companions reserved for them.
    for t in [
        "export GIT_SHA=$(git rev-parse HEAD)",
        "find . -name x > out.txt 2>&1",
        "cat <<EOF > x\nhello\nEOF",
    ] {
        assert!(names(t, d).is_empty(), "{t:?}: {:?}", names(t, d));
    }
    // A glob in a directory below: that directory.
    assert!(
        names("for f in .envrc.d/*.sh; do source_env \"$f\"; done", d)
            .contains(&PathBuf::from("/w/.envrc.d"))
    );
}

/// What bash itself runs when the `.envrc` is read (direnv's stdlib
/// calls defined as sourcing functions, as direnv does): every file
/// whose code ran is one [`names`] named.
#[test]
fn differential_against_bash() {
    let t = skarn_test_support::TempDir::new("envrc_bash");
    let d = t.path().to_path_buf();
    let log = d.join("ran.log");
    let texts = [
        "if [ -f .envrc.user ]; then source_env .envrc.user; fi",
        "for f in .envrc.user; do source_env \"$f\"; done",
        "{ source_env .envrc.user; }",
        "time source_env .envrc.user 2>/dev/null",
        "eval \"$(cat .envrc.user)\"",
        "eval `cat .envrc.user`",
        "while read -r l; do eval \"$l\"; done < .envrc.user",
        "source <(cat .envrc.user)",
        "! builtin . ./.envrc.user",
        "X=1 source_env_if_exists .envrc.user",
        "F=.envrc.user; dotenv \"$F\"",
        "test -f .envrc.user && { watch_file .envrc.user; source_env .envrc.user; }",
        "case x in x) source_env .envrc.user;; esac",
        "if true; then source \"${PWD}/.envrc.user\"; fi",
    ];
    let stdlib = "source_env() { . \"$1\"; }\nsource_env_if_exists() { [ -f \"$1\" ] && . \"$1\"; }\n\
                  dotenv() { . \"$1\"; }\nwatch_file() { :; }\n";
    for text in texts {
        let _ = std::fs::remove_file(&log);
        std::fs::write(d.join(".envrc"), text).unwrap();
        std::fs::write(
            d.join(".envrc.user"),
            format!("echo \"$PWD/.envrc.user\" >> {}\n", log.display()),
        )
        .unwrap();
        let out = std::process::Command::new("bash")
            .arg("-c")
            .arg(format!("{stdlib}. ./.envrc"))
            .current_dir(&d)
            .output()
            .unwrap();
        let ran = std::fs::read_to_string(&log).unwrap_or_default();
        assert!(
            !ran.is_empty(),
            "bash did not run the file for {text:?}: {out:?}"
        );
        let named = sourced(&d.join(".envrc"));
        for line in ran.lines() {
            assert!(
                named.contains(&PathBuf::from(line)),
                "{text:?}: bash ran {line}, the reader named {named:?}"
            );
        }
    }
}

/// What real bash runs: each candidate file holds a line that reports
/// its own name when executed, direnv's calls are stubbed to source
/// their file, and `.envrc` is sourced as direnv does. Every file
/// bash ran must be among those [`names`] gives (attack atk24c F3).
#[cfg(unix)]
#[test]
fn every_file_bash_runs_is_named() {
    if std::process::Command::new("bash")
        .arg("--version")
        .output()
        .is_err()
    {
        skarn_test_support::skip!("bash is not installed");
    }
    let cases = [
        "if [ -f .envrc.user ]; then source_env .envrc.user; fi",
        "if [[ -f .envrc.user ]]; then\n  source_env .envrc.user\nfi",
        "for f in .envrc.x; do source_env \"$f\"; done",
        "{ source_env .envrc.x; }",
        "time source_env .envrc.x",
        "eval \"$(cat .envrc.x)\"",
        "eval $(cat a.env)",
        "! source_env .envrc.x",
        "X=1 source .envrc.x",
        "builtin source .envrc.x",
        "command . ./a.env",
        "[[ -f a.env ]] && source_env a.env || true",
        "test -f a.env && . ./a.env",
        "while false; do :; done; source_env_if_exists .envrc.x",
        "case x in x) source_env .envrc.x ;; esac",
        "f() { source_env .envrc.x; }; f",
        // atk24d F4: names bash resolves without running the project.
        "source_env \"$(pwd)/x.sh\"",
        "source_env \"$PWD/x.sh\"",
        "source_env \"$(dirname \"${BASH_SOURCE[0]}\")/x.sh\"",
        "source_env \"$(cd \"$(dirname \"${BASH_SOURCE[0]}\")\" && pwd)/scripts/env.sh\"",
        "source_env \"$(git rev-parse --show-toplevel)/x.sh\"",
        "source_env x.{sh,zz}",
        "source_env scripts/{env,none}.sh",
        "source_env $'x.sh'",
        "source_env $'x\\x2esh'",
        "source_env ${F:-x.sh}",
        "source_env ${F-x.sh}",
        "source_env ${F:=x.sh}",
        "source_env \"$(echo x.sh)\"",
        "source_env `echo x.sh`",
        "source_env \"$(realpath x.sh)\"",
        "arr=(x.sh); source_env \"${arr[0]}\"",
        "s=source_env; $s x.sh",
        // Unresolved: the literal tail, every path the text mentions.
        "top() { echo .; }; source_env \"$(top)/scripts/env.sh\"",
        "load() { source_env \"$1\"; }; load x.sh",
        "d=$(printf scripts); source_env \"$d/env.sh\"",
        // atk24d F3: what the exports make host programs run.
        "export BASH_ENV=\"$PWD/x.sh\"; bash -c true",
        "export PYTHONPATH=\"$PWD/py\"; python3 -c pass",
        "PATH_add bin; hello-skarn",
        "export PATH=$PWD/bin:$PATH; hello-skarn",
    ];
    let stubs = "source_env(){ builtin source \"$1\"; }; \
                 source_env_if_exists(){ [ -f \"$1\" ] && builtin source \"$1\"; }; \
                 dotenv(){ builtin source \"${1:-.env}\"; }; \
                 dotenv_if_exists(){ [ -f \"${1:-.env}\" ] && builtin source \"${1:-.env}\"; }; \
                 watch_file(){ :; }; \
                 PATH_add(){ for d in \"$@\"; do PATH=\"$PWD/$d:$PATH\"; done; export PATH; }";
    let python = std::process::Command::new("python3")
        .arg("-c")
        .arg("pass")
        .output()
        .is_ok_and(|o| o.status.success());
    for text in cases {
        if text.contains("python3") && !python {
            continue; // (python is no part of what bash reads itself)
        }
        let t = skarn_test_support::TempDir::new("envrc-bash");
        let d = t.path().to_path_buf();
        let _ = std::process::Command::new("git")
            .args(["init", "-q"])
            .current_dir(&d)
            .output();
        for f in [
            ".envrc.user",
            ".envrc.x",
            "a.env",
            ".env",
            "x.sh",
            "scripts/env.sh",
            "bin/hello-skarn",
        ] {
            std::fs::create_dir_all(d.join(f).parent().unwrap()).unwrap();
            let sh = if f.starts_with("bin/") {
                "#!/bin/sh\n"
            } else {
                ""
            };
            std::fs::write(d.join(f), format!("{sh}echo \"RAN:{f}\" >&3\n")).unwrap();
        }
        std::fs::set_permissions(
            d.join("bin/hello-skarn"),
            std::os::unix::fs::PermissionsExt::from_mode(0o755),
        )
        .unwrap();
        std::fs::create_dir_all(d.join("py")).unwrap();
        std::fs::write(
            d.join("py/sitecustomize.py"),
            "import os\nos.write(3, b'RAN:py/sitecustomize.py\\n')\n",
        )
        .unwrap();
        std::fs::write(d.join(".envrc"), text).unwrap();
        let o = std::process::Command::new("bash")
            .arg("-c")
            .arg(format!(
                "{stubs}; cd \"$1\" && builtin source ./.envrc 3>&1 >/dev/null 2>&1"
            ))
            .arg("bash")
            .arg(&d)
            .output()
            .unwrap();
        let ran: Vec<String> = String::from_utf8_lossy(&o.stdout)
            .lines()
            .filter_map(|l| l.strip_prefix("RAN:").map(str::to_string))
            .collect();
        assert!(
            !ran.is_empty(),
            "bash ran nothing for {text:?}: the case tests nothing"
        );
        let named = names(text, &d);
        for f in ran {
            // (A directory is named whole.)
            assert!(
                named.iter().any(|n| d.join(&f).starts_with(n)),
                "{text:?}: bash ran {f}, named only {named:?}"
            );
        }
    }
}

#[test]
fn chains_are_followed_within_bounds() {
    let t = skarn_test_support::TempDir::new("envrc");
    let d = t.path().to_path_buf();
    std::fs::write(d.join(".envrc"), "source_env .envrc.local\n").unwrap();
    std::fs::write(d.join(".envrc.local"), "dotenv .env.secret\n").unwrap();
    let v = sourced(&d.join(".envrc"));
    assert_eq!(v, vec![d.join(".envrc.local"), d.join(".env.secret")]);
    // A loop ends.
    std::fs::write(
        d.join(".envrc.local"),
        "source_env .envrc\nsource_env .envrc.local\n",
    )
    .unwrap();
    assert_eq!(sourced(&d.join(".envrc")), vec![d.join(".envrc.local")]);
    // Texts at the size bound read quickly, whatever their shape.
    for unit in [
        "eval \"$(eval \"$(cat x)\")\" ",
        "$($($($(",
        "source_env a; ",
        "<(<(<(",
        "watch_file a b c d e f; ",
        "{{{{{,",
        "source_env x.{a,b}{c,d}{e,f}{g,h}{i,j}{k,l}{m,n}; ",
        "source_env \"$(dirname \"$(dirname \"$(pwd)\")\")/$'\\x2e'a\"; ",
        "export PATH=$PWD/a:$PATH PYTHONPATH=${X:-b}; ",
        "use flake; layout python; ",
        "eval \"$(x)\" a/b.sh ${Y}/c.sh ",
    ] {
        let big = unit.repeat(MAX_BYTES as usize / unit.len());
        let v = names(&big, &d);
        let mut u = v.clone();
        u.sort();
        u.dedup();
        assert_eq!(u.len(), v.len(), "no name twice");
    }
    // Past the cap: the whole tree, said (atk24d F4: no silent cut).
    let many: String = (0..5000).map(|i| format!("watch_file f{i}\n")).collect();
    std::fs::write(d.join(".envrc"), many).unwrap();
    let v = sourced(&d.join(".envrc"));
    assert_eq!(v.len(), MAX_PATHS + 1);
    assert_eq!(v.last(), Some(&d));
    assert!(over_cap(&d.join(".envrc")).is_some());
    std::fs::write(d.join(".envrc"), "watch_file a\n").unwrap();
    assert!(over_cap(&d.join(".envrc")).is_none());
}

/// atk24d F3: what an `.envrc` exports that host programs load.
#[cfg(unix)]
#[test]
fn exports_are_named() {
    let d = Path::new("/w");
    let v = names(
        "export PYTHONPATH=\"$PWD/src\"\nexport NODE_OPTIONS=\"--require $PWD/lib/init.js\"\n\
         export BASH_ENV=\"$PWD/lib/bashenv\"\nPATH_add bin\nlayout python3",
        d,
    );
    for want in [
        "/w/src",
        "/w/lib/init.js",
        "/w/lib/bashenv",
        "/w/bin",
        "/w/.direnv",
    ] {
        assert!(v.contains(&PathBuf::from(want)), "{want}: {v:?}");
    }
}

/// atk24d F3: `use flake` names the `.nix` files the flake imports;
/// `use devbox` its `devbox.json`.
#[cfg(unix)]
#[test]
fn loaders_name_their_files() {
    let t = skarn_test_support::TempDir::new("envrc_nix");
    let d = t.path().to_path_buf();
    std::fs::create_dir_all(d.join("nix/shells")).unwrap();
    for f in [
        "flake.nix",
        "flake.lock",
        "nix/devshell.nix",
        "nix/shells/py.nix",
    ] {
        std::fs::write(d.join(f), "{}").unwrap();
    }
    std::fs::write(d.join("nix/README.md"), "x").unwrap();
    let v = names("use flake\nuse devbox\n", &d);
    for f in [
        "flake.nix",
        "flake.lock",
        "nix/devshell.nix",
        "nix/shells/py.nix",
        "devbox.json",
    ] {
        assert!(v.contains(&d.join(f)), "{f}: {v:?}");
    }
    assert!(!v.contains(&d.join("nix/README.md")), "{v:?}");
}

/// Texts made of the characters the reader treats specially (a fixed
/// pseudo-random sequence): no panic, absolute names only, none twice
/// (what the fuzz target `envrc` checks, here on every test run).
#[test]
fn shell_significant_noise_is_read_safely() {
    const ALPHABET: &[&str] = &[
        "$",
        "(",
        ")",
        "{",
        "}",
        ",",
        "'",
        "\"",
        "`",
        "\\",
        "$'",
        "${",
        "[",
        "]",
        ":",
        "=",
        "-",
        "/",
        ".",
        " ",
        "\n",
        ";",
        "x",
        "é",
        "source_env ",
        "export PATH=",
        "PATH_add ",
        "$(pwd)",
        "$(dirname ",
        "${BASH_SOURCE[0]}",
        "use flake ",
        "eval ",
        "arr=(",
        "#",
        ":-",
        ":=",
        "\\x2",
        "\\u00e9",
        "\\777",
    ];
    let d = Path::new("/nonexistent-skarn/w");
    let mut seed: u64 = 0x5eed_1234_abcd_0001;
    for _ in 0..3000 {
        let mut text = String::new();
        for _ in 0..(seed % 40) {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            text.push_str(ALPHABET[(seed % ALPHABET.len() as u64) as usize]);
        }
        seed = seed.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let v = names(&text, d);
        for (i, p) in v.iter().enumerate() {
            assert!(p.is_absolute(), "{text:?}: {p:?}");
            assert!(!v[..i].contains(p), "{text:?}: {p:?} twice");
        }
    }
}

/// atk22d F3: a file sourced by a file the `.envrc` sources, named
/// relative to the `.envrc`'s directory (where bash runs it), is named.
#[test]
fn a_second_level_relative_source_is_named_against_the_envrc_directory() {
    let t = skarn_test_support::TempDir::new("envrc-chain");
    let d = t.path().to_path_buf();
    std::fs::create_dir_all(d.join("scripts")).unwrap();
    std::fs::write(d.join(".envrc"), "source scripts/env.sh\n").unwrap();
    std::fs::write(d.join("scripts/env.sh"), "export A=1\n. scripts/lib.sh\n").unwrap();
    let v = sourced(&d.join(".envrc"));
    assert!(v.contains(&d.join("scripts/env.sh")), "{v:?}");
    assert!(v.contains(&d.join("scripts/lib.sh")), "{v:?}");
}
