use super::*;
use std::ffi::OsStr;

fn judged(name: &str, new: &str, old: Option<&str>) -> bool {
    let d = tempfile::tempdir().unwrap();
    let (np, op) = (d.path().join("new"), d.path().join("old"));
    std::fs::write(&np, new).unwrap();
    if let Some(o) = old {
        std::fs::write(&op, o).unwrap();
    }
    layer_change(&[OsStr::new("sub"), OsStr::new(name)], &np, &op).is_some()
}

#[test]
fn package_json_tool_keys() {
    let old = r#"{"name":"p","prettier":{"semi":false}}"#;
    assert!(!judged(
        "package.json",
        r#"{"name":"p","version":"2","prettier":{"semi":false}}"#,
        Some(old)
    ));
    assert!(judged(
        "package.json",
        r#"{"name":"p","prettier":"./fmt.cjs"}"#,
        Some(old)
    ));
    assert!(judged(
        "package.json",
        r#"{"name":"p","eslintConfig":{"parser":"./x.js"}}"#,
        None
    ));
    assert!(judged(
        "package.json",
        r#"{"name":"p","config":{"commitizen":{"path":"./a"}}}"#,
        Some(r#"{"name":"p"}"#)
    ));
    assert!(judged("package.json", "{not json", Some(old)));
    assert!(!judged("package.json", r#"{"name":"q"}"#, None));
}

#[test]
fn pyproject_tool_keys() {
    let old = "[project]\nname = \"p\"\n[tool.pylint.main]\njobs = 2\n";
    assert!(!judged(
        "pyproject.toml",
        "[project]\nname = \"p\"\nversion = \"2\"\n[tool.pylint.main]\njobs = 4\n",
        Some(old)
    ));
    assert!(judged(
        "pyproject.toml",
        "[tool.pylint.main]\ninit-hook = 'open(1)'\n",
        Some(old)
    ));
    assert!(judged(
        "pyproject.toml",
        "[tool.pylint.MASTER]\nload_plugins = ['x']\n",
        Some(old)
    ));
    assert!(judged(
        "pyproject.toml",
        "[tool.mypy]\nplugins = ['./p.py']\n",
        None
    ));
    assert!(judged(
        "pyproject.toml",
        "[tool.uv]\nfind-links = ['w']\n",
        Some(old)
    ));
    assert!(judged(
        "pyproject.toml",
        "[[tool.uv.index]]\nurl = 'http://x'\n",
        Some(old)
    ));
    assert!(judged(
        "pyproject.toml",
        "[tool.uv.pip]\nindex-url = 'http://x'\n",
        Some(old)
    ));
    assert!(judged(
        "pyproject.toml",
        "[[tool.poetry.source]]\nname = 'x'\n",
        None
    ));
    assert!(judged("pyproject.toml", "[tool\n", Some(old)));
    assert!(!judged(
        "pyproject.toml",
        "[tool.uv]\ndev-dependencies = []\n",
        None
    ));
}

#[test]
fn ini_tool_keys() {
    let old = "[metadata]\nname = p\n[mypy]\nstrict = true\n";
    assert!(!judged(
        "setup.cfg",
        "[metadata]\nname = q\n[mypy]\nstrict = false\n",
        Some(old)
    ));
    assert!(judged("setup.cfg", "[mypy]\nplugins = p.py\n", Some(old)));
    assert!(judged(
        "tox.ini",
        "[pylint.MAIN]\ninit_hook=\n    import os\n",
        None
    ));
    assert!(judged(
        "setup.cfg",
        "[flake8:local-plugins]\nextension =\n  X = p:X\npaths = ./\n",
        Some(old)
    ));
    // A continuation line changed under a judged key.
    let a = "[pylint.main]\nload-plugins =\n    a\n";
    assert!(judged(
        "setup.cfg",
        "[pylint.main]\nload-plugins =\n    b\n",
        Some(a)
    ));
}

#[test]
fn installed_packages_are_not_judged() {
    let d = tempfile::tempdir().unwrap();
    let np = d.path().join("new");
    std::fs::write(&np, r#"{"prettier":"./x"}"#).unwrap();
    let n = [
        OsStr::new("node_modules"),
        OsStr::new("x"),
        OsStr::new("package.json"),
    ];
    assert!(layer_change(&n, &np, &d.path().join("old")).is_none());
}
