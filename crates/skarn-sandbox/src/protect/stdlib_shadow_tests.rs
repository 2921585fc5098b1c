#![cfg(unix)]

use super::*;

fn names(p: &str) -> Vec<&OsStr> {
    Path::new(p).iter().collect()
}

fn judged(p: &str) -> Option<(String, Form, usize)> {
    of_path(&names(p), false).map(|s| (s.module, s.form, s.dir))
}

#[test]
fn the_names_are_sorted_for_the_search() {
    let n = crate::protect::stdlib_names::NAMES;
    assert!(n.windows(2).all(|w| w[0].as_bytes() < w[1].as_bytes()));
    assert!(is_stdlib(b"json") && is_stdlib(b"cProfile") && is_stdlib(b"_json"));
    assert!(!is_stdlib(b"test") && !is_stdlib(b"requests") && !is_stdlib(b"__main__"));
}

/// Every extension-module suffix of the host's pythons (their
/// `importlib.machinery` lists), and the sources' and bytecode's, are
/// module files here.
#[test]
fn every_suffix_of_the_host_pythons_is_a_module_file() {
    let mut asked = 0;
    for py in ["python3", "python3.11", "python3.12", "python3.13", "pypy3"] {
        let Ok(o) = std::process::Command::new(py)
            .args([
                "-c",
                "import importlib.machinery as m; print('\\n'.join(m.all_suffixes()))",
            ])
            .output()
        else {
            continue;
        };
        if !o.status.success() {
            continue;
        }
        asked += 1;
        for suffix in String::from_utf8_lossy(&o.stdout).lines() {
            let f = format!("json{suffix}");
            assert!(
                module_file(OsStr::new(&f)).is_some_and(|(m, _)| m == b"json"),
                "{py}: {f}"
            );
            assert!(judged(&format!("tools/{f}")).is_some(), "{py}: {f}");
            assert!(
                judged(&format!("json/__init__{suffix}")).is_some(),
                "{py}: {f}"
            );
        }
    }
    if asked == 0 {
        skarn_test_support::skip!("no python on this host");
    }
}

#[test]
fn modules_named_like_the_standard_library_are_found_in_every_form() {
    let c = Form::Compiled;
    let s = Form::Source;
    assert_eq!(judged("json.py"), Some(("json".into(), s, 0)));
    assert_eq!(judged("a/b/json.pyc"), Some(("json".into(), c, 2)));
    assert_eq!(judged("json.abi3.so"), Some(("json".into(), c, 0)));
    assert_eq!(judged("json.so"), Some(("json".into(), c, 0)));
    assert_eq!(
        judged("x/json.cpython-311-x86_64-linux-gnu.so"),
        Some(("json".into(), c, 1))
    );
    assert_eq!(judged("Json.PYD"), None);
    assert_eq!(judged("json/__init__.py"), Some(("json".into(), s, 0)));
    assert_eq!(
        judged("src/json/__init__.cpython-311-x86_64-linux-gnu.so"),
        Some(("json".into(), c, 1))
    );
    assert_eq!(
        of_path(&names("tools/json"), true).map(|s| s.dir),
        Some(1),
        "a link by the name"
    );
    // Not modules, other names, installed packages, an installation's own
    // library.
    for p in [
        "json",
        "json.txt",
        "json.py.bak",
        "app/__init__.py",
        "mylib.so",
        "libjson.so.1",
        "__pycache__/json.cpython-311.pyc",
        "__init__.py",
        ".venv/lib/python3.11/site-packages/typing.py",
        "/usr/lib/python3/dist-packages/enum/__init__.py",
        "env/lib/python3.11/json/__init__.py",
        "test/__init__.py",
    ] {
        assert_eq!(judged(p), None, "{p}");
    }
    assert!(judged("libs/python-utils/json.py").is_some());
}

#[test]
fn a_package_before_the_layer_is_kept_as_it_was() {
    let t = skarn_test_support::TempDir::new("stdlib-shadow-pkg");
    let (pkg, plain) = (t.path().join("pkg"), t.path().join("plain"));
    std::fs::create_dir_all(&pkg).unwrap();
    std::fs::create_dir_all(&plain).unwrap();
    std::fs::write(pkg.join("__init__.py"), "").unwrap();
    assert!(is_package(&pkg) && !is_package(&plain));
    scoped(|| {
        assert!(!package_before(&plain));
        // The layer's `__init__.py` lands after the first question.
        std::fs::write(plain.join("__init__.py"), "").unwrap();
        assert!(!package_before(&plain));
        assert!(package_before(&pkg));
    });
    assert!(package_before(&plain));
}

#[test]
fn modules_python_imports_by_hook_names_are_judged() {
    for (p, m) in [
        (
            "_sysconfigdata__linux_x86_64-linux-gnu.so",
            "_sysconfigdata__linux_x86_64-linux-gnu",
        ),
        (
            "_sysconfigdata__x86_64-linux-gnu.py",
            "_sysconfigdata__x86_64-linux-gnu",
        ),
        (
            "_distutils_system_mod.cpython-311-x86_64-linux-gnu.so",
            "_distutils_system_mod",
        ),
        ("sitecustomize.py", "sitecustomize"),
    ] {
        assert_eq!(judged(p).map(|j| j.0), Some(m.to_string()), "{p}");
    }
    assert_eq!(judged("test/__init__.py"), None);
}
