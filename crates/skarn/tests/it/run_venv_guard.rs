//! Python start-up files of a project's virtual environment (attack
//! atk24d F9, F10): a `.pth` that runs code or a customize module a run
//! plants is never left for host python, however many decoys the run
//! makes and in either workspace mode, while pip and editable installs
//! inside keep working. Each attempt is judged from outside: host python
//! started from the environment did not run the planted code.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::common::*;
use skarn_test_support::TempDir;

/// The two workspace modes.
const MODES: [&[&str]; 2] = [&[], &["--workspace-layer", "cow"]];

/// A git work tree `ws` holding `.venv` (made by host python, `pip`: with
/// pip) and its site-packages directory.
fn venv(ws: &Path, pip: bool) -> Option<PathBuf> {
    git(ws, &["init", "-q"]);
    let mut c = Command::new("python3");
    c.args(["-m", "venv"]);
    if !pip {
        c.arg("--without-pip");
    }
    let o = c.arg(ws.join(".venv")).output().ok()?;
    if !o.status.success() {
        return None;
    }
    let ver = std::fs::read_dir(ws.join(".venv/lib"))
        .ok()?
        .flatten()
        .find(|e| e.file_name().to_string_lossy().starts_with("python"))?;
    let sp = ver.path().join("site-packages");
    std::fs::create_dir_all(&sp).ok()?;
    // Past the after-run check's clock margin (what is here is the user's).
    std::thread::sleep(std::time::Duration::from_millis(200));
    Some(sp)
}

/// Host python of the environment starts (what an IDE's interpreter
/// discovery does on open): whether the planted code left `marker`.
fn host_python_ran(ws: &Path, marker: &Path) -> bool {
    let o = Command::new(ws.join(".venv/bin/python"))
        .args(["-c", "pass"])
        .env_remove("PYTHONPATH")
        .output()
        .unwrap();
    assert_eq!(code(&o), 0, "host python: {}", err(&o));
    marker.exists()
}

/// A line of Python that appends `what` to `marker`.
fn plant(marker: &Path, what: &str) -> String {
    format!(
        "import os; open({:?}, 'a').write('{what}\\n')",
        marker.display().to_string()
    )
}

/// F9: under `--workspace-layer cow`, what a run plants inside `target/`
/// and `.venv/` is vetted like anywhere else: the upward names, cargo's
/// configuration, a `.pth` that runs code and a customize module are not
/// applied; ordinary files are.
#[test]
fn the_layer_applies_no_plant_inside_build_and_venv_trees() {
    let t = TempDir::new("venv-cow");
    let (ws, home) = (t.dir("ws"), t.dir("home"));
    let Some(sp) = venv(&ws, false) else {
        skarn_test_support::skip!("python3 -m venv is not usable here");
    };
    let (marker, tc_marker) = (t.path().join("ran"), t.path().join("tc-ran"));
    std::fs::write(ws.join("evil.pth"), plant(&marker, "PTH")).unwrap();
    std::fs::write(ws.join("sitecustomize.py"), plant(&marker, "SITECUSTOMIZE")).unwrap();
    let script = format!(
        "set -e; cp {top}/evil.pth {top}/sitecustomize.py {sp}/; cp {top}/sitecustomize.py {sp}/usercustomize.py
         mkdir -p {sp}/pkg; echo 'X = 1' > {sp}/pkg/__init__.py; echo /x/src > {sp}/paths.pth
         mkdir -p target/.cargo tc/bin target/x/.claude
         printf '[toolchain]\\npath = \"{ws}/tc\"\\n' > target/rust-toolchain.toml
         printf '[build]\\nrustc-wrapper = \"{ws}/tc/bin/cargo\"\\n' > target/.cargo/config.toml
         echo '{{}}' > target/x/.claude/settings.json
         printf '#!/bin/sh\\necho TC >> {m}\\n' > tc/bin/cargo; chmod +x tc/bin/cargo
         echo built > target/app.txt; echo ok",
        top = ws.display(),
        sp = sp.display(),
        ws = ws.display(),
        m = tc_marker.display()
    );
    let o = run_in(
        &ws,
        &home,
        &["--workspace-layer", "cow"],
        &["bash", "-c", &script],
    );
    assert_eq!(code(&o), 0, "{}", err(&o));
    assert_eq!(out(&o).trim(), "ok");
    for p in [
        sp.join("evil.pth"),
        sp.join("sitecustomize.py"),
        sp.join("usercustomize.py"),
        ws.join("target/rust-toolchain.toml"),
        ws.join("target/.cargo/config.toml"),
        ws.join("target/x/.claude/settings.json"),
    ] {
        assert!(
            std::fs::symlink_metadata(&p).is_err(),
            "{} was applied: {}",
            p.display(),
            err(&o)
        );
    }
    assert_eq!(
        std::fs::read_to_string(ws.join("target/app.txt")).unwrap(),
        "built\n"
    );
    // Ordinary files of site-packages (and a `.pth` of plain paths) are.
    assert!(sp.join("pkg/__init__.py").is_file(), "{}", err(&o));
    assert!(sp.join("paths.pth").is_file(), "{}", err(&o));
    assert!(!host_python_ran(&ws, &marker), "host python ran the plant");
    // Host rustup reads rust-toolchain.toml upward (when it is the one
    // installed: the toolchain the test harness runs under is unset).
    if host_has("rustup", "--version") {
        let _ = Command::new("cargo")
            .arg("--version")
            .current_dir(ws.join("target"))
            .env_remove("RUSTUP_TOOLCHAIN")
            .env_remove("CARGO")
            .output();
        assert!(!tc_marker.exists(), "host rustup ran the planted toolchain");
    }
}

/// F10 A: 100 decoy `lib/pythonN/site-packages` directories do not hide
/// a `.pth` planted in the one python reads (also a link to another
/// directory of the workspace in place of `lib64`), in either mode.
#[test]
fn decoy_site_packages_directories_hide_no_plant() {
    for mode in MODES {
        let t = TempDir::new("venv-decoy-dirs");
        let (ws, home) = (t.dir("ws"), t.dir("home"));
        let Some(sp) = venv(&ws, false) else {
            skarn_test_support::skip!("python3 -m venv is not usable here");
        };
        let marker = t.path().join("ran");
        let ver = sp.parent().unwrap().file_name().unwrap().to_string_lossy();
        std::fs::write(ws.join("evil.pth"), plant(&marker, "DECOYS")).unwrap();
        let script = format!(
            "set -e; for i in $(seq 0 99); do mkdir -p .venv/lib/python$i/site-packages; done
             cp {top}/evil.pth {sp}/evil.pth
             mkdir -p other/{ver}/site-packages; cp {top}/evil.pth other/{ver}/site-packages/linked.pth
             rm -rf .venv/lib64; ln -s ../other .venv/lib64; echo ok",
            top = ws.display(),
            sp = sp.display(),
        );
        let o = run_in(&ws, &home, mode, &["bash", "-c", &script]);
        assert_eq!(code(&o), 0, "{mode:?}: {}", err(&o));
        assert!(!sp.join("evil.pth").exists(), "{mode:?}: kept: {}", err(&o));
        assert!(
            !ws.join(format!("other/{ver}/site-packages/linked.pth"))
                .exists(),
            "{mode:?}: kept behind the link: {}",
            err(&o)
        );
        assert!(
            !host_python_ran(&ws, &marker),
            "{mode:?}: host python ran the plant"
        );
    }
}

/// F10 B: 30,000 entries in one site-packages do not hide any of ten
/// `.pth` files planted among them, in either mode.
#[test]
fn thirty_thousand_entries_hide_no_plant() {
    for mode in MODES {
        let t = TempDir::new("venv-decoy-entries");
        let (ws, home) = (t.dir("ws"), t.dir("home"));
        let Some(sp) = venv(&ws, false) else {
            skarn_test_support::skip!("python3 -m venv is not usable here");
        };
        let marker = t.path().join("ran");
        let maker = format!(
            "import sys\nsp = sys.argv[1]\n\
             for i in range(30000): open(f'{{sp}}/f{{i}}', 'w').close()\n\
             for i in range(10): open(f'{{sp}}/e{{i}}.pth', 'w').write({:?} + '\\n')\n",
            plant(&marker, "ENTRIES")
        );
        std::fs::write(ws.join("mk.py"), maker).unwrap();
        let mk = ws.join("mk.py");
        let o = run_in(
            &ws,
            &home,
            mode,
            &["python3", &mk.to_string_lossy(), &sp.to_string_lossy()],
        );
        assert_eq!(code(&o), 0, "{mode:?}: {}", err(&o));
        let kept: Vec<usize> = (0..10)
            .filter(|i| sp.join(format!("e{i}.pth")).exists())
            .collect();
        assert!(kept.is_empty(), "{mode:?}: kept e{kept:?}.pth");
        assert!(sp.join("f29999").exists(), "{mode:?}: ordinary files kept");
        assert!(
            !host_python_ran(&ws, &marker),
            "{mode:?}: host python ran the plant"
        );
    }
}

/// A build backend in the project itself (no index, no setuptools): an
/// editable install writes a `.pth` of the project's `src` directory, as
/// hatchling and flit do.
const BACKEND: &str = r#"import os, zipfile
def _wheel(wd, editable):
    n = open('name').read().strip(); d = n + '-0.1.dist-info/'
    files = {d + 'METADATA': 'Metadata-Version: 2.1\nName: ' + n + '\nVersion: 0.1\n',
             d + 'WHEEL': 'Wheel-Version: 1.0\nGenerator: t\nRoot-Is-Purelib: true\nTag: py3-none-any\n'}
    if editable:
        files['__editable__.' + n + '.pth'] = os.path.abspath('src') + '\n'
    else:
        files[n + '/__init__.py'] = open('src/' + n + '/__init__.py').read()
    w = n + '-0.1-py3-none-any.whl'
    with zipfile.ZipFile(os.path.join(wd, w), 'w') as z:
        for k, v in files.items(): z.writestr(k, v)
        z.writestr(d + 'RECORD', ''.join(k + ',,\n' for k in files) + d + 'RECORD,,\n')
    return w
def build_wheel(wd, config_settings=None, metadata_directory=None): return _wheel(wd, False)
def build_editable(wd, config_settings=None, metadata_directory=None): return _wheel(wd, True)
def build_sdist(sd, config_settings=None): raise NotImplementedError
"#;

fn project(dir: &Path, name: &str, value: &str) {
    std::fs::create_dir_all(dir.join("src").join(name)).unwrap();
    std::fs::write(
        dir.join("src").join(name).join("__init__.py"),
        format!("VALUE = {value:?}\n"),
    )
    .unwrap();
    std::fs::write(dir.join("name"), name).unwrap();
    std::fs::write(dir.join("backend.py"), BACKEND).unwrap();
    std::fs::write(
        dir.join("pyproject.toml"),
        "[build-system]\nrequires = []\nbuild-backend = \"backend\"\nbackend-path = [\".\"]\n",
    )
    .unwrap();
}

/// Usability: in a standard venv (with pip, its own `.pth` files),
/// `pip install` of a package and `pip install -e .` of a src-layout
/// project work inside the sandbox in either mode, and stay installed
/// for host python after the run.
#[test]
fn pip_and_editable_installs_in_a_venv_still_work() {
    for mode in MODES {
        let t = TempDir::new("venv-pip");
        let (ws, home) = (t.dir("ws"), t.dir("home"));
        let Some(sp) = venv(&ws, true) else {
            skarn_test_support::skip!("python3 -m venv with pip is not usable here");
        };
        if !ws.join(".venv/bin/pip").exists() {
            skarn_test_support::skip!("python3 -m venv made no pip here");
        }
        let before: Vec<_> = std::fs::read_dir(&sp)
            .unwrap()
            .flatten()
            .map(|e| e.file_name())
            .filter(|n| n.to_string_lossy().ends_with(".pth"))
            .collect();
        project(&ws.join("app"), "skarnapp", "editable");
        project(&ws.join("dep"), "skarndep", "installed");
        let script = ".venv/bin/pip install -q --no-index --no-build-isolation --no-cache-dir \
                      --disable-pip-version-check ./dep -e ./app && \
                      .venv/bin/python -c 'import skarnapp, skarndep; print(skarnapp.VALUE, skarndep.VALUE)'";
        let o = run_in(&ws, &home, mode, &["sh", "-c", script]);
        assert_eq!(code(&o), 0, "{mode:?}: {}", err(&o));
        assert_eq!(out(&o).trim(), "editable installed", "{mode:?}");
        let o = Command::new(ws.join(".venv/bin/python"))
            .args([
                "-c",
                "import skarnapp, skarndep; print(skarnapp.VALUE, skarndep.VALUE)",
            ])
            .output()
            .unwrap();
        assert_eq!(
            out(&o).trim(),
            "editable installed",
            "{mode:?}: host python after the run: {}",
            err(&o)
        );
        for n in before {
            assert!(sp.join(&n).exists(), "{mode:?}: {n:?} went away");
        }
    }
}
