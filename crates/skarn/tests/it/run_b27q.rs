//! Issue 27, builder b27q: atk22l F14 (credential files inside the
//! toolchain trees every run reads), atk27o F4 (a `command` source ran on
//! a host without user namespaces before the run was refused anyway) and
//! F3 (a variable the source's text assigns was not followed). Each test
//! makes the real attempt and judges from outside: what the command
//! printed, whether a marker file was written by the host.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use skarn_test_support::TempDir;

use crate::common::*;
use crate::support_secret_sources::{as_user, is_root, write_config};

const VALUE: &str = "b27qSecretValue0123456789abcdefXY";

fn write(p: &Path, text: &str) {
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, text).unwrap();
}

/// A virtualenv (no pip copied: the system's pip module is not there
/// either, so with pip) at `dir` holding `pip.conf` `conf`.
fn venv(dir: &Path, conf: &str) {
    let st = Command::new("/usr/bin/python3")
        .args(["-m", "venv"])
        .arg(dir)
        .status()
        .unwrap();
    assert!(st.success(), "venv {}", dir.display());
    write(&dir.join("pip.conf"), conf);
}

/// `skarn run` of `sh -c script` in `ws` with home `home`, as uid 65534
/// when `nobody` (the test's directory `root` given to it).
fn run_sh(ws: &Path, home: &Path, root: &Path, script: &str, nobody: bool) -> Output {
    let mut c = run_command(ws, home, &[], &["sh", "-c", script]);
    c.env_remove("NVM_DIR")
        .env_remove("PYENV_ROOT")
        .env_remove("VIRTUAL_ENV")
        .env_remove("CARGO_HOME")
        .env_remove("NPM_CONFIG_PREFIX")
        .env_remove("PIP_CONFIG_FILE");
    let mut c = if nobody { as_user(c, root) } else { c };
    c.output().unwrap()
}

fn f14(nobody: bool) {
    let t = TempDir::new(if nobody { "b27q_f14_n" } else { "b27q_f14" });
    let root = t.path().to_path_buf();
    let (home, ws) = (t.dir("home"), t.dir("ws"));
    // npm's global configuration of an nvm node (with a token) and of
    // another (clean: still read by npm inside).
    let v20 = home.join(".nvm/versions/node/v20.0.0");
    write(
        &v20.join("etc/npmrc"),
        &format!("fund=false\n//r.example/:_authToken={VALUE}\n"),
    );
    let v18 = home.join(".nvm/versions/node/v18.0.0");
    write(&v18.join("etc/npmrc"), "fund=false\n");
    write(
        &home.join(".nvm/.yarnrc.yml"),
        &format!("npmAuthToken: {VALUE}\n"),
    );
    // conda's root configuration (a channel URL with a password) and an
    // environment's (clean).
    let conda = home.join("miniconda3");
    write(
        &conda.join(".condarc"),
        &format!("channels:\n  - https://u:{VALUE}@conda.example/c\n"),
    );
    write(
        &conda.join("envs/e/.condarc"),
        "channels:\n  - conda-forge\n",
    );
    // A pyenv version's pip site file and `.pypirc`.
    let py = home.join(".pyenv/versions/3.12.0");
    write(
        &py.join("pip.conf"),
        &format!("[global]\nindex-url = https://u:{VALUE}@idx.example/simple\n"),
    );
    write(
        &py.join(".pypirc"),
        &format!("[pypi]\npassword = {VALUE}\n"),
    );
    // Two virtualenvs: pip's site file with a password, and a clean one.
    let envs = home.join(".local/share/virtualenvs");
    let (v1, v2) = (envs.join("v1"), envs.join("v2"));
    venv(
        &v1,
        &format!("[global]\ntimeout = 7\nindex-url = https://u:{VALUE}@idx.example/simple\n"),
    );
    venv(&v2, "[global]\ntimeout = 7\n");
    let secret_files: Vec<PathBuf> = vec![
        v20.join("etc/npmrc"),
        home.join(".nvm/.yarnrc.yml"),
        conda.join(".condarc"),
        py.join("pip.conf"),
        py.join(".pypirc"),
        v1.join("pip.conf"),
    ];
    let cats: Vec<String> = secret_files
        .iter()
        .map(|p| format!("cat '{}' 2>&1;", p.display()))
        .collect();
    let script = format!(
        "{} echo ---; NPM_CONFIG_PREFIX='{}' npm config get fund; echo npm1=$?; \
         NPM_CONFIG_PREFIX='{}' npm config get fund; echo npm2=$?; cat '{}'; \
         '{}/bin/python' -m pip config list; echo pip1=$?; \
         '{}/bin/python' -m pip config list; echo pip2=$?",
        cats.join(" "),
        v20.display(),
        v18.display(),
        conda.join("envs/e/.condarc").display(),
        v1.display(),
        v2.display(),
    );
    let o = run_sh(&ws, &home, &root, &script, nobody);
    let text = out(&o);
    assert_eq!(code(&o), 0, "{text}{}", err(&o));
    assert!(
        !text.contains(VALUE) && !err(&o).contains(VALUE),
        "a toolchain credential file was read: {text}"
    );
    // The tools still work: npm reads the clean global file, pip the
    // clean site file, conda's clean file is readable.
    assert!(text.contains("npm1=0") && text.contains("npm2=0"), "{text}");
    let after = text.split("npm1=0").nth(1).unwrap_or("");
    assert!(
        after.contains("false"),
        "npm did not read the clean file: {text}"
    );
    assert!(text.contains("conda-forge"), "{text}");
    assert!(text.contains("pip1=0") && text.contains("pip2=0"), "{text}");
    assert!(text.contains("global.timeout='7'"), "{text}");
    // The host's files are unchanged.
    for p in &secret_files {
        assert!(std::fs::read_to_string(p).unwrap().contains(VALUE));
    }
}

/// atk22l F14: npm's global `etc/npmrc` of an nvm node, conda's root
/// `.condarc`, a pyenv version's `pip.conf` and `.pypirc`, a virtualenv's
/// `pip.conf`, a `.yarnrc.yml` in a toolchain tree were readable in every
/// run. Now hidden when they hold a credential; npm and pip still run
/// and read the clean ones.
#[test]
fn toolchain_credential_files_are_hidden_and_the_tools_still_work() {
    f14(false);
    if is_root() {
        f14(true);
    }
}

/// atk27o F3: `d=DIR; cat "$d/val"` in a source's own text: the file it
/// reads (here in `~/.local/bin`, which every run reads) was not hidden
/// in runs not granted the secret.
#[test]
fn a_variable_the_source_text_assigns_is_followed() {
    for nobody in [false, true] {
        if nobody && !is_root() {
            continue;
        }
        let t = TempDir::new(if nobody { "b27q_f3_n" } else { "b27q_f3" });
        let root = t.path().to_path_buf();
        let (home, ws) = (t.dir("home"), t.dir("ws"));
        // A place every run reads (a toolchain directory on `PATH`).
        let safe = home.join(".local/bin/app");
        write(&safe.join("val"), &format!("{VALUE}\n"));
        let src = format!("d={}; cat \"$d/val\"", safe.display());
        write_config(
            &home,
            &format!(
                "[secrets.v]\ncommand = [\"sh\", \"-c\", {src:?}]\nhosts = [\"example.test\"]\n"
            ),
        );
        let o = run_sh(
            &ws,
            &home,
            &root,
            &format!("cat '{}' 2>&1; echo done", safe.join("val").display()),
            nobody,
        );
        assert!(
            !out(&o).contains(VALUE),
            "the source's value file was read: {}{}",
            out(&o),
            err(&o)
        );
        assert!(out(&o).contains("done"), "{}{}", out(&o), err(&o));
    }
}

/// The helper that makes a host without unprivileged user namespaces: a
/// user namespace (as root) whose `max_user_namespaces` is 0, then uid
/// and gid 65534, then the command.
const NO_USERNS: &str = r#"import ctypes, os, sys
r1, w1 = os.pipe(); r2, w2 = os.pipe()
pid = os.fork()
if pid == 0:
    if ctypes.CDLL(None, use_errno=True).unshare(0x10000000) != 0:
        os._exit(90)
    os.write(w1, b'u'); os.read(r2, 1)
    fd = os.open('/proc/sys/user/max_user_namespaces', os.O_WRONLY); os.write(fd, b'0'); os.close(fd)
    os.setgroups([]); os.setgid(65534); os.setuid(65534)
    os.execvp(sys.argv[1], sys.argv[1:])
os.read(r1, 1)
for f in ('uid_map', 'gid_map'):
    fd = os.open('/proc/%d/%s' % (pid, f), os.O_WRONLY); os.write(fd, b'0 0 65536\n'); os.close(fd)
os.write(w2, b'g')
_, st = os.waitpid(pid, 0)
sys.exit(os.waitstatus_to_exitcode(st))
"#;

/// atk27o F4: where no user namespace can be made, `skarn run --secret`
/// ran the `command` source on the host (unhidden, judged by its text
/// only) and then refused the run for lack of a network namespace. Now
/// refused before any source runs.
#[test]
fn without_user_namespaces_no_source_runs_before_the_refusal() {
    if !is_root() {
        // Making a host without user namespaces needs root here; the
        // suite runs as root.
        skarn_test_support::skip!("needs root to make a user namespace without user namespaces");
    }
    let t = TempDir::new("b27q_f4");
    let root = t.path().to_path_buf();
    let (home, ws, outd) = (t.dir("home"), t.dir("ws"), t.dir("out"));
    let marker = outd.join("source-ran");
    let src = format!(
        "echo ran-as-$(id -u) > {}; echo fakeTokenValue0123456789",
        marker.display()
    );
    write_config(
        &home,
        &format!("[secrets.gh]\ncommand = [\"sh\", \"-c\", {src:?}]\nhosts = [\"example.test\"]\n"),
    );
    let helper = root.join("nouserns.py");
    write(&helper, NO_USERNS);
    let st = Command::new("chown")
        .args(["-R", "65534:65534"])
        .arg(&root)
        .status()
        .unwrap();
    assert!(st.success());
    let o = Command::new("python3")
        .arg(&helper)
        .arg(exe())
        .args(["run", "--no-config", "--workspace"])
        .arg(&ws)
        .args(["--secret", "gh", "--", "sh", "-c", "echo GH=$GH"])
        .env("HOME", &home)
        .env_remove("XDG_STATE_HOME")
        .env_remove("SKARN_SECRET_SOURCE_VIEW")
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    assert!(
        !marker.exists(),
        "the source ran on the host ({}) before the refusal: {}",
        std::fs::read_to_string(&marker).unwrap_or_default(),
        err(&o)
    );
    assert_ne!(code(&o), 0, "{}{}", out(&o), err(&o));
    assert!(err(&o).contains("network namespace"), "{}", err(&o));
    // The same host still runs commands without secrets.
    let o = Command::new("python3")
        .arg(&helper)
        .arg(exe())
        .args(["run", "--no-config", "--workspace"])
        .arg(&ws)
        .args(["--", "sh", "-c", "echo plain-ok"])
        .env("HOME", &home)
        .env_remove("XDG_STATE_HOME")
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    assert!(out(&o).contains("plain-ok"), "{}{}", out(&o), err(&o));
}
