use super::*;

#[test]
fn the_pnpmfile_settings_are_read_in_each_spelling() {
    assert_eq!(
        from_workspace_yaml("packages:\n  - 'a/*'\npnpmfile: \"hooks/p.cjs\" # x\n"),
        ["hooks/p.cjs"]
    );
    assert_eq!(
        from_workspace_yaml(
            "globalPnpmfile: g.cjs\npnpmfile:\n  - a.cjs\n  - 'b.mjs'\nx: 1\n- c\n"
        ),
        ["g.cjs", "a.cjs", "b.mjs"]
    );
    assert_eq!(
        from_workspace_yaml("pnpmfile: [a.cjs, \"b.cjs\"]\n"),
        ["a.cjs", "b.cjs"]
    );
    assert_eq!(
        from_npmrc("registry=x\npnpmfile = tools/p.cjs\nglobal-pnpmfile=\"g.js\"\n"),
        ["tools/p.cjs", "g.js"]
    );
    let t = skarn_test_support::TempDir::new("pnpm-file");
    t.file("pnpm-workspace.yaml", "pnpmfile: hooks/p.cjs\n");
    t.file(".npmrc", "pnpmfile=~/x.cjs\nglobal-pnpmfile=/abs/g.cjs\n");
    assert_eq!(
        named(t.path()),
        [
            t.join("hooks/p.cjs"),
            std::path::PathBuf::from("/abs/g.cjs")
        ]
    );
}

#[test]
fn code_settings_are_compared_and_the_rest_is_not() {
    let cs = |t: &str| code_settings(t.as_bytes());
    let base = "packages:\n  - 'a/*'\ncatalog:\n  x: 1.0.0\n";
    assert_eq!(cs(base), Ok(None));
    assert_eq!(
        cs("packages: []\npnpmfile: p.cjs\ncatalog:\n  y: 2\n"),
        Ok(Some("pnpmfile: p.cjs\n".into()))
    );
    assert_eq!(
        cs("onlyBuiltDependencies:\n  - esbuild\n# c\nx: 1\n"),
        Ok(Some("onlyBuiltDependencies:\n  - esbuild\n".into()))
    );
    assert!(cs("\"pnpm-file\": p.cjs\n").is_ok_and(|v| v.is_some()));
    for hidden in [
        "? pnpmfile\n: p.cjs\n",
        "{pnpmfile: p.cjs}\n",
        "\"pnpm\\x66ile\": p.cjs\n",
        "a: &x p.cjs\npnpmfile: *x\n",
        "<<: {pnpmfile: p.cjs}\n",
    ] {
        assert_eq!(cs(hidden), Err(()), "{hidden:?}");
    }
}
