use super::*;

#[test]
fn pth_lines_that_run_code_are_told_apart() {
    assert!(runs_code("/x/src\nimport os; os.system('x')\n"));
    assert!(runs_code("import\t__editable___p_finder\n"));
    assert!(!runs_code("/home/u/proj/src\n# import nothing\n ../lib\n"));
}

fn since_now() -> std::time::SystemTime {
    // (Past the coarse clock of status-change times.)
    std::thread::sleep(std::time::Duration::from_millis(60));
    let since = std::time::SystemTime::now();
    std::thread::sleep(std::time::Duration::from_millis(60));
    since
}

#[test]
fn new_code_pth_is_set_aside_and_path_pth_kept() {
    let tmp = skarn_test_support::TempDir::new("venv-guard");
    let env = tmp.path().join(".venv");
    let sp = env.join("lib/python3.11/site-packages");
    std::fs::create_dir_all(&sp).unwrap();
    std::fs::write(env.join("pyvenv.cfg"), "home = /usr/bin\n").unwrap();
    std::fs::write(sp.join("old.pth"), "import os\n").unwrap();
    std::os::unix::fs::symlink("lib", env.join("lib64")).unwrap();
    assert!(is_venv(&env));
    assert_eq!(protected(&env).len(), 2, "{:?}", protected(&env));
    let since = since_now();
    std::fs::write(sp.join("__editable__.p.pth"), "/proj/src\n").unwrap();
    std::fs::write(sp.join("evil.pth"), "import os; os.system('x')\n").unwrap();
    std::fs::write(sp.join("sitecustomize.py"), "x = 1\n").unwrap();
    let roots = [tmp.path().to_path_buf()];
    let c = set_aside(&roots, std::slice::from_ref(&env), since);
    assert!(sp.join("__editable__.p.pth").exists());
    assert!(!sp.join("evil.pth").exists());
    assert!(!sp.join("sitecustomize.py").exists());
    assert_eq!(c.lines.len(), 2, "{:?}", c.lines);
    assert!(!c.incomplete);
}

/// Attack atk24d F10: decoy site-packages directories and entries do not
/// hide a plant; a site-packages reached through a link made in the run
/// is vetted at its real place.
#[test]
fn no_decoy_count_hides_a_plant() {
    let tmp = skarn_test_support::TempDir::new("venv-guard-decoys");
    let env = tmp.path().join(".venv");
    std::fs::create_dir_all(&env).unwrap();
    std::fs::write(env.join("pyvenv.cfg"), "home = /usr/bin\n").unwrap();
    let since = since_now();
    for i in 0..100 {
        std::fs::create_dir_all(env.join(format!("lib/python{i}/site-packages"))).unwrap();
    }
    let sp = env.join("lib/python3.11/site-packages");
    std::fs::create_dir_all(&sp).unwrap();
    for i in 0..25_000 {
        std::fs::write(sp.join(format!("f{i}")), "").unwrap();
    }
    std::fs::write(sp.join("evil.pth"), "import os\n").unwrap();
    // A link in place of a lib directory, to a plain directory of the grant.
    let other = tmp.path().join("other/python3.11/site-packages");
    std::fs::create_dir_all(&other).unwrap();
    std::fs::write(other.join("linked.pth"), "import os\n").unwrap();
    std::os::unix::fs::symlink("../other", env.join("lib32")).unwrap();
    let roots = [tmp.path().to_path_buf()];
    let c = set_aside(&roots, std::slice::from_ref(&env), since);
    assert!(!sp.join("evil.pth").exists(), "{:?}", c.lines);
    assert!(!other.join("linked.pth").exists(), "{:?}", c.lines);
    assert!(!c.incomplete);
}

/// Past the bound of `lib*` entries the check is incomplete (the run
/// fails), never silently short.
#[test]
fn a_check_cut_short_says_so() {
    let tmp = skarn_test_support::TempDir::new("venv-guard-bound");
    let env = tmp.path().join(".venv");
    for i in 0..20 {
        std::fs::create_dir_all(env.join(format!("lib/python{i}/site-packages"))).unwrap();
    }
    std::fs::write(env.join("pyvenv.cfg"), "home = /usr/bin\n").unwrap();
    let roots = [tmp.path().to_path_buf()];
    let c = set_aside_within(&roots, std::slice::from_ref(&env), since_now(), 10);
    assert!(c.incomplete);
    assert!(
        c.lines.iter().any(|l| l.contains("so the run fails")),
        "{:?}",
        c.lines
    );
    let c = set_aside_within(&roots, std::slice::from_ref(&env), since_now(), 100);
    assert!(!c.incomplete && c.lines.is_empty(), "{:?}", c.lines);
}

#[test]
fn layer_changes_that_run_at_start_are_refused() {
    let tmp = skarn_test_support::TempDir::new("venv-guard-layer");
    let (code, path) = (tmp.path().join("a.pth"), tmp.path().join("b.pth"));
    std::fs::write(&code, "import os\n").unwrap();
    std::fs::write(&path, "/proj/src\n").unwrap();
    let n = |s: &'static str| s.split('/').map(OsStr::new).collect::<Vec<_>>();
    let sp = ".venv/lib/python3.12/site-packages";
    let chk = |p: &str, file: bool, up: &Path, host: bool| {
        let s: &'static str = Box::leak(p.to_string().into_boxed_str());
        check_layer_change(&n(s), file, up, host, std::path::Path::new("/nonexistent"))
    };
    assert!(chk(&format!("{sp}/evil.pth"), true, &code, false).is_err());
    assert!(chk(&format!("{sp}/__editable__.p.pth"), true, &path, false).is_ok());
    assert!(chk(&format!("{sp}/sitecustomize.py"), true, &path, false).is_err());
    assert!(chk(&format!("{sp}/x.pth"), false, &path, false).is_err());
    assert!(chk(&format!("{sp}/pkg/mod.py"), true, &code, false).is_ok());
    assert!(chk(".venv/lib/python3.12/site-packages", false, &path, false).is_err());
    assert!(chk(".venv/pyvenv.cfg", true, &path, true).is_err());
    assert!(chk("new/pyvenv.cfg", true, &path, false).is_ok());
}

#[test]
fn start_up_forms_python_loads_are_recognised() {
    use std::ffi::OsStr;
    // atk24e F2: a line Python's reader splits at a lone CR or after a BOM.
    assert!(runs_code("# x\rimport os"));
    assert!(runs_code("\u{feff}import os"));
    // Python 3.13 splits with str.splitlines() (atk22k F7).
    for br in [
        "\u{0c}", "\u{0b}", "\u{1d}", "\u{85}", "\u{2028}", "\u{2029}",
    ] {
        assert!(runs_code(&format!("zz{br}import os")), "{br:?}");
    }
    // Not UTF-8: read as Latin-1 too, where 0x85 breaks the line.
    let b = b"zz\x85import os\xff\n";
    assert!(
        crate::protect::pth_imports::decodings(b)
            .iter()
            .any(|t| runs_code(t))
    );
    assert!(!runs_code("/some/path\n"));
    // atk24e F3, F4: compiled, extension and package forms, and the
    // module every pip-made environment's .pth imports.
    for n in [
        "sitecustomize.pyc",
        "sitecustomize",
        "usercustomize.cpython-312-x86_64-linux-gnu.so",
        "_distutils_hack",
        "a.pth",
    ] {
        assert!(start_up_name(OsStr::new(n)), "{n}");
    }
    for n in ["sitecustomizer.py", "requests", "_distutils_hacks"] {
        assert!(!start_up_name(OsStr::new(n)), "{n}");
    }
    // A file inside a start-up package, in the copy-on-write layer.
    let names = [
        OsStr::new("lib"),
        OsStr::new("site-packages"),
        OsStr::new("_distutils_hack"),
        OsStr::new("__init__.py"),
    ];
    assert!(
        check_layer_change(
            &names,
            true,
            std::path::Path::new("/nonexistent"),
            true,
            std::path::Path::new("/nonexistent"),
        )
        .is_err()
    );
}
