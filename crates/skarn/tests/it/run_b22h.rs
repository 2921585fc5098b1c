//! Files the host runs on its own through a program's own configuration
//! (attack atk22m F10, F3, F9): make's program variables set in a file a
//! Makefile includes, modules Python imports by a name outside
//! `sys.stdlib_module_names`, and the local modules a protected
//! configuration requires. Each tried for real, as root and as uid 65534,
//! in the default layer and the direct mode, and checked from outside:
//! the host program did not run the planted code.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use crate::common::*;
use crate::support_secret_sources::{as_user, is_root};
use skarn_test_support::TempDir;

/// The workspace modes: the default (copy-on-write layer) and the direct.
const LAYERS: [&[&str]; 2] = [&[], &["--workspace-layer", "direct"]];

fn users() -> Vec<bool> {
    if is_root() {
        vec![false, true]
    } else {
        vec![false]
    }
}

fn run(root: &Path, ws: &Path, home: &Path, nobody: bool, flags: &[&str], cmd: &[&str]) -> Output {
    let c = run_command(ws, home, flags, cmd);
    let mut c = if nobody { as_user(c, root) } else { c };
    c.stdin(std::process::Stdio::null()).output().unwrap()
}

/// The host runs `prog args` in `dir` (as uid 65534 when `nobody`).
fn host(root: &Path, dir: &Path, nobody: bool, prog: &str, args: &[&str]) -> Output {
    let mut c = Command::new(prog);
    c.args(args)
        .current_dir(dir)
        .env_remove("PYTHONPATH")
        .env_remove("PYTHONSAFEPATH")
        .env("PYTHONDONTWRITEBYTECODE", "1");
    let mut c = if nobody { as_user(c, root) } else { c };
    // (`as_user` makes a new command: the directory is set on it.)
    c.current_dir(dir).output().unwrap()
}

/// A committed project in `t/ws` with the files `files`; its home.
fn project(t: &TempDir, files: &[(&str, &str)]) -> (PathBuf, PathBuf) {
    let (ws, home) = (t.dir("ws"), t.dir("home"));
    git(&ws, &["init", "-q"]);
    for (p, text) in files {
        t.file(Path::new("ws").join(p), text);
    }
    git(&ws, &["add", "."]);
    git(&ws, &["commit", "-qm", "init"]);
    std::thread::sleep(std::time::Duration::from_millis(200));
    (ws, home)
}

const MAKEFILE: &str = "-include .env\n-include mk/local.mk\nLINTER ?= true\nexport\n\
                        app: main.c\n\tcc -o app main.c\nclean:\n\t$(RM) *.o app\n\
                        lint:\n\t$(LINTER) main.o\n";

fn make_project(t: &TempDir) -> (PathBuf, PathBuf) {
    project(
        t,
        &[
            ("Makefile", MAKEFILE),
            (".gitignore", "*.o\napp\n.env\nmk/\n"),
            ("main.c", "int main(void) { return 0; }\n"),
        ],
    )
}

/// F10: `RM=sh` in the `.env` a Makefile includes, `LINTER=sh` (a
/// variable a recipe starts a command with) in an included `mk/local.mk`,
/// and an ignored `main.o` holding commands: the host's `make clean` and
/// `make lint` do not run it.
#[test]
fn make_program_variables_in_included_files_do_not_reach_host_make() {
    if !host_has("make", "--version") || !host_has("git", "--version") {
        skarn_test_support::skip!("make or git is not installed");
    }
    for nobody in users() {
        for layer in LAYERS {
            let t = TempDir::new("b22h-make");
            let (ws, home) = make_project(&t);
            let mark = t.path().join("PLANTED_RAN");
            let plant = format!(
                "echo RM=sh > .env; mkdir -p mk; echo LINTER=sh > mk/local.mk; printf 'touch {}\\n' > main.o",
                mark.display()
            );
            let o = run(t.path(), &ws, &home, nobody, layer, &["sh", "-c", &plant]);
            let _ = host(t.path(), &ws, nobody, "make", &["clean"]);
            let _ = host(t.path(), &ws, nobody, "make", &["lint"]);
            assert!(
                !mark.exists(),
                "{nobody} {layer:?}: host make ran the planted file: {}",
                err(&o)
            );
            for f in [".env", "mk/local.mk"] {
                let kept = std::fs::read_to_string(ws.join(f)).unwrap_or_default();
                assert!(!kept.contains("=sh"), "{nobody} {layer:?}: {f}: {kept}");
            }
        }
    }
}

/// Usability: editing sources and `make` inside a run work; plain data
/// in `.env` and in an included file is kept; host make builds after.
#[test]
fn make_and_plain_data_in_included_files_still_work() {
    if !host_has("make", "--version") || !host_has("cc", "--version") {
        skarn_test_support::skip!("make or cc is not installed");
    }
    for nobody in users() {
        for layer in LAYERS {
            let t = TempDir::new("b22h-make-ok");
            let (ws, home) = make_project(&t);
            let work = "printf 'int main(void) { return 3; }\\n' > main.c && make app && \
                        echo APP_ENV=production > .env && mkdir -p mk && echo VERSION=2 > mk/local.mk && \
                        make lint && echo built";
            let o = run(t.path(), &ws, &home, nobody, layer, &["sh", "-c", work]);
            assert_eq!(code(&o), 0, "{nobody} {layer:?}: {}{}", out(&o), err(&o));
            assert!(out(&o).contains("built"), "{}", out(&o));
            let src = std::fs::read_to_string(ws.join("main.c")).unwrap_or_default();
            assert!(src.contains("return 3"), "{nobody} {layer:?}: {src}");
            let env = std::fs::read_to_string(ws.join(".env")).unwrap_or_default();
            assert!(env.contains("APP_ENV=production"), "{nobody} {layer:?}");
            let mk = std::fs::read_to_string(ws.join("mk/local.mk")).unwrap_or_default();
            assert!(mk.contains("VERSION=2"), "{nobody} {layer:?}: {}", err(&o));
            let m = host(t.path(), &ws, nobody, "make", &["clean", "app"]);
            assert!(m.status.success(), "{}", err(&m));
        }
    }
}

/// A shared object that writes `mark` when it is loaded.
fn planted_object(t: &TempDir, name: &str, mark: &Path) -> PathBuf {
    let c = t.file(
        format!("{name}.c"),
        format!(
            "#include <stdio.h>\n__attribute__((constructor)) static void planted(void) {{ \
             FILE *f = fopen(\"{}\", \"w\"); if (f) {{ fputs(\"ran\\n\", f); fclose(f); }} }}\n",
            mark.display()
        ),
    );
    let so = t.path().join(format!("ws/{name}.bin"));
    let st = Command::new("cc")
        .args(["-shared", "-fPIC", "-o"])
        .arg(&so)
        .arg(&c)
        .status()
        .unwrap();
    assert!(st.success());
    so
}

/// F3: compiled modules named `_sysconfigdata_*` (what `sysconfig`
/// imports at `python3 -m venv`) and `_distutils_system_mod` (what
/// setuptools imports), hidden by `*.so` in `.gitignore`, are not kept:
/// the host's `python3 -m venv` and `python3 setup.py` do not load them.
#[test]
fn modules_python_imports_by_hook_names_are_not_kept() {
    if !host_has("python3", "--version") || !host_has("cc", "--version") {
        skarn_test_support::skip!("python3 or cc is not installed");
    }
    for nobody in users() {
        // (uid 65534 cannot run root's own pythons.)
        let py = if nobody {
            "/usr/bin/python3"
        } else {
            "python3"
        };
        let name = Command::new(py)
            .args([
                "-c",
                "import sysconfig; print(sysconfig._get_sysconfigdata_name())",
            ])
            .output()
            .unwrap();
        let name = out(&name).trim().to_string();
        assert!(name.starts_with("_sysconfigdata"), "{name}");
        for layer in LAYERS {
            let t = TempDir::new("b22h-sysconfig");
            let (ws, home) = project(
                &t,
                &[
                    (".gitignore", "*.so\n*.bin\n*.py[cod]\n.venv/\n"),
                    ("setup.py", "import setuptools\n"),
                    ("main.py", "print(1)\n"),
                ],
            );
            let mark = t.path().join("PLANTED_RAN");
            planted_object(&t, "a", &mark);
            planted_object(&t, "b", &mark);
            let plant =
                format!("mv a.bin {name}.so && mv b.bin _distutils_system_mod.so && echo planted");
            let o = run(t.path(), &ws, &home, nobody, layer, &["sh", "-c", &plant]);
            assert!(out(&o).contains("planted"), "{}{}", out(&o), err(&o));
            assert!(
                !ws.join(format!("{name}.so")).exists(),
                "{nobody} {layer:?}"
            );
            assert!(
                !ws.join("_distutils_system_mod.so").exists(),
                "{nobody} {layer:?}"
            );
            let v = host(
                t.path(),
                &ws,
                nobody,
                py,
                &["-m", "venv", "--without-pip", ".venv"],
            );
            let s = host(t.path(), &ws, nobody, py, &["setup.py"]);
            assert!(
                !mark.exists(),
                "{nobody} {layer:?}: host python loaded the planted module: {}{}",
                err(&v),
                err(&s)
            );
        }
    }
}

/// A project whose protected configurations load local modules: a
/// pnpmfile, an ESLint configuration, Prettier's `package.json` key and
/// pytest's `-p` plugin.
fn config_project(t: &TempDir) -> (PathBuf, PathBuf) {
    project(
        t,
        &[
            (
                "package.json",
                "{\"name\": \"x\", \"version\": \"1.0.0\", \"prettier\": \"./fmt.cjs\"}\n",
            ),
            (
                ".pnpmfile.cjs",
                "module.exports = require('./scripts/pnpm-hooks.js')\n",
            ),
            ("scripts/pnpm-hooks.js", "module.exports = { hooks: {} }\n"),
            (
                "eslint.config.js",
                "module.exports = require('./eslint/rules')\n",
            ),
            ("eslint/rules.js", "module.exports = []\n"),
            ("fmt.cjs", "module.exports = {}\n"),
            ("pytest.ini", "[pytest]\naddopts = -p local_plugin\n"),
            ("local_plugin.py", "X = 1\n"),
            ("test_a.py", "def test_a():\n    assert True\n"),
            ("src/app.js", "console.log(1)\n"),
        ],
    )
}

/// F9: the modules a protected configuration loads stay read-only (and
/// the name node would try first is reserved): host pnpm, node loading
/// the ESLint and Prettier configurations, and pytest do not run what the
/// run wrote there.
#[test]
fn modules_protected_configurations_load_are_kept_read_only() {
    if !host_has("node", "--version") || !host_has("pnpm", "--version") {
        skarn_test_support::skip!("node or pnpm is not installed");
    }
    let pytest = host_has("python3", "-c") && {
        let o = Command::new("python3")
            .args(["-m", "pytest", "--version"])
            .output();
        o.is_ok_and(|o| o.status.success())
    };
    for nobody in users() {
        for layer in LAYERS {
            let t = TempDir::new("b22h-refs");
            let (ws, home) = config_project(&t);
            let mark = t.path().join("PLANTED_RAN");
            let js = format!(
                "require('fs').writeFileSync('{}', 'x'); module.exports = {{ hooks: {{}} }}",
                mark.display()
            );
            let py = format!("open('{}', 'w').write('x')", mark.display());
            let plant = format!(
                "for f in scripts/pnpm-hooks.js eslint/rules.js eslint/rules fmt.cjs; do \
                 printf '%s\\n' \"{js}\" > $f; done; printf '%s\\n' \"{py}\" > local_plugin.py; \
                 echo tried"
            );
            let o = run(t.path(), &ws, &home, nobody, layer, &["sh", "-c", &plant]);
            assert!(out(&o).contains("tried"), "{}{}", out(&o), err(&o));
            let home_s = home.to_string_lossy().into_owned();
            let mut c = Command::new("pnpm");
            c.args(["install", "--offline"])
                .current_dir(&ws)
                .env("HOME", &home_s);
            let mut c = if nobody { as_user(c, t.path()) } else { c };
            let p = c.current_dir(&ws).output().unwrap();
            assert!(p.status.success(), "pnpm: {}{}", out(&p), err(&p));
            let n = host(
                t.path(),
                &ws,
                nobody,
                "node",
                &["-e", "require('./eslint.config.js'); require('./fmt.cjs')"],
            );
            assert!(n.status.success(), "node: {}", err(&n));
            if pytest && !nobody {
                let _ = host(t.path(), &ws, false, "python3", &["-m", "pytest", "-q"]);
            }
            assert!(
                !mark.exists(),
                "{nobody} {layer:?}: a host tool ran a module the run wrote: {}",
                err(&o)
            );
            let kept = std::fs::read_to_string(ws.join("local_plugin.py")).unwrap_or_default();
            assert_eq!(kept, "X = 1\n", "{nobody} {layer:?}");
        }
    }
}

/// Usability: ordinary sources (the project's own modules no
/// configuration loads) stay writable, and node and pytest work in the
/// run.
#[test]
fn ordinary_sources_beside_protected_configurations_stay_writable() {
    if !host_has("node", "--version") {
        skarn_test_support::skip!("node is not installed");
    }
    for nobody in users() {
        for layer in LAYERS {
            let t = TempDir::new("b22h-refs-ok");
            let (ws, home) = config_project(&t);
            let work = "printf 'console.log(2)\\n' > src/app.js && \
                        printf 'def test_a():\\n    assert 1\\n' > test_a.py && \
                        node -e \"require('./.pnpmfile.cjs')\" && node src/app.js";
            let o = run(t.path(), &ws, &home, nobody, layer, &["sh", "-c", work]);
            assert_eq!(code(&o), 0, "{nobody} {layer:?}: {}{}", out(&o), err(&o));
            assert!(out(&o).contains('2'), "{}", out(&o));
            let src = std::fs::read_to_string(ws.join("src/app.js")).unwrap_or_default();
            assert_eq!(src, "console.log(2)\n", "{nobody} {layer:?}");
            let te = std::fs::read_to_string(ws.join("test_a.py")).unwrap_or_default();
            assert!(te.contains("assert 1"), "{nobody} {layer:?}");
        }
    }
}
