#![cfg(unix)]

use super::*;

#[test]
fn programs_running_the_projects_code_are_refused_and_definition_files_kept() {
    let t = skarn_test_support::TempDir::new("trusted-lines");
    let p = t.dir("p");
    for l in [
        "python3 -m pytest -q",
        "cargo test",
        "cd web && npx jest",
        "tox",
        "go test ./...",
        "npm install",
        "$(TOOL) x",
    ] {
        assert!(refusal(l, &p).is_some(), "{l}");
    }
    for l in [
        "sh scripts/c.sh",
        "go run gen.go",
        "notify-send done",
        "git status",
        "python3 -m tools.e",
    ] {
        assert_eq!(judge(l, &p), Judged::default(), "{l}");
    }
    t.file(
        "p/Makefile",
        "lint: fmt\n\techo lint\nfmt:\n\t$(MAKE) -C sub\ntest:\n\tpytest\n",
    );
    let j = judge("make lint", &p);
    assert_eq!(j.refused, None);
    assert!(j.inputs.contains(&p.join("makefile")), "{j:?}");
    // A goal whose recipe runs the project's tests.
    assert!(refusal("make test", &p).is_some());
    t.file(
        "p/package.json",
        r#"{"scripts":{"lint":"echo lint","test":"jest","prebuild":"cargo build","build":"echo b"}}"#,
    );
    let j = judge("npm run lint", &p);
    assert_eq!(j.refused, None);
    assert!(j.inputs.contains(&p.join(".npmrc")), "{j:?}");
    assert!(refusal("npm test", &p).is_some());
    assert!(refusal("npm run build", &p).is_some());
    assert_eq!(judge("my-audit", &p).unknown, vec!["my-audit".to_string()]);
}
