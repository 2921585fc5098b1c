//! The attack pass atk24c on issue 24 (notes: findings-atk24c), the
//! findings of builder s33b: the `.envrc` reader misses commands after a
//! reserved word, `eval` and redirections (F3). Each is the attack,
//! judged from outside: the file not written, the planted code not run
//! by bash reading the `.envrc` as direnv does.

use crate::agent_files::{git_ok, judge, run_sh};
use skarn_test_support::TempDir;

/// F3: the one-line `if ...; then source_env x; fi`, `{ source_env x; }`,
/// `eval "$(cat x)"` and `done < x`: each file is read-only to a
/// sandboxed command (missing or not) and refused to the file tools; the
/// `.envrc` read by bash afterwards runs nothing the run wrote.
#[test]
fn files_an_envrc_reads_after_a_reserved_word_are_protected() {
    let cases = [
        (
            "if [ -f .envrc.user ]; then source_env .envrc.user; fi\n",
            ".envrc.user",
        ),
        ("{ source_env .envrc.x; }\n", ".envrc.x"),
        (
            "for f in .envrc.f; do source_env \"$f\"; done\n",
            ".envrc.f",
        ),
        ("time source_env .envrc.t\n", ".envrc.t"),
        ("eval \"$(cat .envrc.e)\"\n", ".envrc.e"),
        (
            "while read -r l; do eval \"$l\"; done < .envrc.r\n",
            ".envrc.r",
        ),
    ];
    for (text, name) in cases {
        let t = TempDir::new("atk24c_envrc");
        let (ws, home) = (t.dir("ws"), t.dir("home"));
        git_ok(&ws, &["init", "-q", "."]);
        std::fs::write(ws.join(".envrc"), text).unwrap();
        // Past the after-run check's clock margin.
        std::thread::sleep(std::time::Duration::from_millis(200));
        let mark = t.path().join("ran");
        let o = run_sh(
            &ws,
            &home,
            &format!(
                "echo 'echo RAN > {}' > {name}; echo ok > other.txt",
                mark.display()
            ),
        );
        assert!(
            !std::fs::read_to_string(ws.join(name))
                .unwrap_or_default()
                .contains("RAN"),
            "{text:?}: {name} was written: {o:?}"
        );
        assert_eq!(
            std::fs::read_to_string(ws.join("other.txt")).unwrap_or_default(),
            "ok\n",
            "{o:?}"
        );
        // What direnv does at the next `cd` (its stdlib's calls source).
        let _ = std::process::Command::new("bash")
            .arg("-c")
            .arg("source_env() { [ -f \"$1\" ] && . \"$1\"; }; . ./.envrc")
            .current_dir(&ws)
            .output()
            .unwrap();
        assert!(!mark.exists(), "{text:?}: the planted code ran");
        let why = judge(&ws.join(name).display().to_string(), &ws, &home);
        assert!(
            why.as_deref().is_some_and(|w| w.contains("direnv")),
            "{name}: {why:?}"
        );
    }
}
