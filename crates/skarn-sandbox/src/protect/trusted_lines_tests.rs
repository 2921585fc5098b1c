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
        "xargs sh .ci.sh",
        "sudo sh .ci.sh",
        "nice -n 5 sudo bash build",
        "find . -name x -exec sh {} ;",
        "echo .ci.sh | xargs sh",
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
        let j = judge(l, &p);
        assert!(j.refused.is_none() && j.unknown.is_empty(), "{l}");
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

#[test]
fn an_interpreters_script_is_kept_as_it_loads_it() {
    let t = skarn_test_support::TempDir::new("trusted-scripts");
    let p = t.dir("p");
    t.file("p/__main__.py", "print(0)\n");
    t.file("p/srv.js", "1\n");
    t.file("p/app/package.json", r#"{"main":"../lib/m.js"}"#);
    t.file("p/lib/m.js", "1\n");
    let kept = |l: &str| judge(l, &p).inputs;
    for (l, f) in [
        ("sh -e .c1.sh", ".c1.sh"),
        ("bash -o pipefail .c2.sh", ".c2.sh"),
        ("python3 -W ignore tool1", "tool1"),
        ("sh < .c3.sh", ".c3.sh"),
        ("source .c4.sh", ".c4.sh"),
        ("cat .c5.sh | sh", ".c5.sh"),
        ("bash -c 'sh -e .c8.sh'", ".c8.sh"),
        ("python3 .", "__main__.py"),
        ("python3 gen", "gen"),
        ("node srv", "srv.js"),
        ("node srv", "srv"),
        ("node app", "lib/m.js"),
        ("node .", "index.js"),
        ("node -r ./pre.js x.js", "pre.js"),
        ("env A=1 sh .c9.sh", ".c9.sh"),
        ("env -i -u X sh .c11.sh", ".c11.sh"),
        ("nice -n 5 bash -e .c12.sh", ".c12.sh"),
        ("timeout -k 2 10 sh .c13.sh", ".c13.sh"),
    ] {
        assert!(kept(l).contains(&p.join(f)), "{l}: {:?}", kept(l));
    }
    assert!(!kept("python3 .").contains(&p));
    for l in ["node --frob srv", "sh $X", "ruby -C d x", "go run ."] {
        assert!(refusal(l, &p).is_some(), "{l}");
    }
}

#[test]
fn the_clients_project_variable_leads_to_the_project() {
    let t = skarn_test_support::TempDir::new("trusted-vars");
    let p = t.dir("p");
    let j = judge(r#"sh "$CLAUDE_PROJECT_DIR"/tools/check.sh"#, &p);
    assert!(
        j.refused.is_none() && j.inputs.contains(&p.join("tools/check.sh")),
        "{j:?}"
    );
    let j = judge(r#"cd "${CLAUDE_PROJECT_DIR}"/scripts && sh ./lint.sh"#, &p);
    assert!(j.inputs.contains(&p.join("scripts/lint.sh")), "{j:?}");
}
