//! Attack pass atk27g F1-F4, F7-F9: a granted secret's value in any file
//! the run can read — a credential file anywhere in the workspace, a
//! file of a directory the user grants, a toolchain's `etc/npmrc` or
//! `pip.conf`, a wrapper script in a toolchain's `bin`, what a `command`
//! source reads and an editor's backup of a `file` source, a tool's
//! configuration under `XDG_CONFIG_HOME`, `/opt` or a directory a
//! variable names — never reaches the command: in the workspace the run
//! is refused (the file named, the command not run), elsewhere the file
//! is hidden. Each check is made outside: the command's output and a
//! marker file (ADR 0217).

use std::path::{Path, PathBuf};

use crate::common::*;
use skarn_test_support::TempDir;

const REAL: &str = "tok-REAL-anywhere-9f8e7d6c5b4a3210";

/// A home whose configuration defines secret `tok` read from `src` and
/// secret `cmd` read by running `sh -c "cat <cmdfile>"`.
fn home(t: &TempDir, src: &Path, cmdfile: &Path) -> PathBuf {
    let home = t.dir("home");
    std::fs::create_dir_all(home.join(".config/skarn")).unwrap();
    std::fs::write(
        home.join(".config/skarn/config.toml"),
        format!(
            "[secrets.tok]\nfile = \"{}\"\nhosts = [\"localhost:4443\"]\nenv = \"TOKEN\"\n\n\
             [secrets.cmd]\ncommand = [\"sh\", \"-c\", \"cat {}\"]\nhosts = [\"localhost:4443\"]\n\
             env = \"CMD_TOKEN\"\n",
            src.display(),
            cmdfile.display()
        ),
    )
    .unwrap();
    home
}

fn write(p: &Path, text: &str) {
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, text).unwrap();
}

/// Run `cat` on every file of `files` (also its marker) with the secret.
fn cat(
    ws: &Path,
    home: &Path,
    flags: &[&str],
    env: &[(&str, String)],
    files: &[PathBuf],
) -> std::process::Output {
    let list: Vec<String> = files.iter().map(|f| format!("'{}'", f.display())).collect();
    let script = format!("touch ran; cat {} 2>/dev/null; true", list.join(" "));
    let mut f = vec!["--secret", "tok"];
    f.extend_from_slice(flags);
    let mut c = run_command(ws, home, &f, &["sh", "-c", &script]);
    for (k, v) in env {
        c.env(k, v);
    }
    c.output().unwrap()
}

fn no_value(o: &std::process::Output, what: &str) {
    assert!(
        !out(o).contains(REAL) && !err(o).contains(REAL),
        "{what}: the value came out: {}{}",
        out(o),
        err(o)
    );
}

/// F2: credential files of many tools anywhere in the workspace (nested
/// `.env`, a submodule's git configuration, `.aws/credentials`, ...) and
/// any other file there refuse the run, each named.
#[test]
fn the_value_in_any_workspace_file_refuses_the_run() {
    let t = TempDir::new("sec-any-ws");
    let vals = t.dir("vals");
    write(&vals.join("tok"), &format!("{REAL}\n"));
    let home = home(&t, &vals.join("tok"), &vals.join("cmdtok"));
    let ws = t.dir("ws");
    let o = cat(&ws, &home, &[], &[], &[]);
    assert_eq!(code(&o), 0, "{}", err(&o));
    std::fs::remove_file(ws.join("ran")).unwrap();
    for (rel, text) in [
        (
            ".git-credentials",
            format!("https://u:{REAL}@localhost:4443\n"),
        ),
        (
            "pip.conf",
            format!("[global]\nindex-url = https://u:{REAL}@h/simple\n"),
        ),
        ("app/config/.env", format!("TOKEN={REAL}\n")),
        ("pkgs/web/.npmrc", format!("//h/:_authToken={REAL}\n")),
        (
            ".git/modules/sub/config",
            format!("[remote \"o\"]\n\turl = https://x:{REAL}@h/r\n"),
        ),
        (
            ".aws/credentials",
            format!("[default]\naws_secret_access_key = {REAL}\n"),
        ),
        (
            ".kube/config",
            format!("users:\n- user:\n    token: {REAL}\n"),
        ),
        (".m2/settings.xml", format!("<password>{REAL}</password>\n")),
        (".pgpass", format!("h:5432:*:u:{REAL}\n")),
        ("auth.json", format!("{{\"token\": \"{REAL}\"}}\n")),
        ("gradle.properties", format!("repoPassword={REAL}\n")),
        ("notes/todo.txt", format!("remember {REAL}\n")),
    ] {
        let f = ws.join(rel);
        write(&f, &text);
        let o = cat(&ws, &home, &[], &[], std::slice::from_ref(&f));
        assert_eq!(code(&o), 2, "{rel}: {}", err(&o));
        let record = crate::run_secret_stored::take_exposed(&home, "tok");
        assert!(record.contains(&f.display().to_string()), "{rel}: {record}");
        assert!(!ws.join("ran").exists(), "{rel}: the command ran");
        no_value(&o, rel);
        std::fs::remove_file(&f).unwrap();
    }
}

/// F1, F2, F3, F4: outside the workspace — a directory the user grants
/// (`--read`, with a tool's configuration under an `XDG_CONFIG_HOME`
/// outside the home), a toolchain (nvm's `etc/npmrc`, pyenv's
/// `pip.conf`, a venv's `.condarc` and a wrapper script in its `bin`),
/// the file a `command` source reads, an editor's backup of a `file`
/// source — the files are hidden and the run goes ahead.
#[test]
fn the_value_outside_the_workspace_is_hidden() {
    let t = TempDir::new("sec-any-out");
    let nvm = t.dir("nvm");
    let pyenv = t.dir("pyenv");
    let venv = t.dir("venv");
    let xdg = t.dir("xdg");
    let cfg = t.dir("cfg");
    // The sources, inside a toolchain's tree (readable by the run), in a
    // directory it does not look at whole.
    let src = nvm.join("keep/tok");
    let cmdfile = nvm.join("keep/cmdtok");
    write(&src, &format!("{REAL}\n"));
    write(&cmdfile, &format!("{REAL}\n"));
    let backup = nvm.join("keep/tok~");
    write(&backup, &format!("{REAL}\n"));
    let home = home(&t, &src, &cmdfile);
    let files = [
        nvm.join("versions/node/v20.0.0/etc/npmrc"),
        pyenv.join("versions/3.12.0/pip.conf"),
        venv.join(".condarc"),
        venv.join("bin/with-token"),
        xdg.join("gh/hosts.yml"),
        xdg.join("git/credentials"),
        cfg.join("tool/settings.ini"),
    ];
    for f in &files {
        write(f, &format!("token: {REAL}\n"));
    }
    let ws = t.dir("ws");
    let read = format!("--read={}", xdg.display());
    let read2 = format!("--read={}", cfg.display());
    let env = [
        ("NVM_DIR", nvm.display().to_string()),
        ("PYENV_ROOT", pyenv.display().to_string()),
        ("VIRTUAL_ENV", venv.display().to_string()),
        ("XDG_CONFIG_HOME", xdg.display().to_string()),
    ];
    let mut all: Vec<PathBuf> = files.to_vec();
    all.extend([cmdfile.clone(), backup.clone(), src.clone()]);
    let o = cat(&ws, &home, &["--secret", "cmd", &read, &read2], &env, &all);
    assert_eq!(code(&o), 0, "{}", err(&o));
    assert!(ws.join("ran").exists(), "{}", err(&o));
    no_value(&o, "outside the workspace");
}

/// F7, F8, F9 (as root: `/opt` is a system directory every run reads and
/// only root can write): the configuration of tools installed under a
/// prefix on `PATH` (`<prefix>/etc/gitconfig`, `<prefix>/etc/npmrc`),
/// pip's system file in an `XDG_CONFIG_DIRS` directory, a `CARGO_HOME`'s
/// `credentials.toml`, and the files `NPM_CONFIG_USERCONFIG`,
/// `PIP_CONFIG_FILE`, `GIT_CONFIG_GLOBAL`, `DOCKER_CONFIG`, `KUBECONFIG`
/// name are hidden.
#[test]
fn tool_configuration_under_system_directories_is_hidden() {
    // SAFETY: geteuid has no preconditions and cannot fail.
    if unsafe { libc::geteuid() } != 0 {
        skarn_test_support::skip!("only root can write under /opt, a system directory");
    }
    let t = TempDir::new("sec-any-sys");
    let vals = t.dir("vals");
    write(&vals.join("tok"), &format!("{REAL}\n"));
    let home = home(&t, &vals.join("tok"), &vals.join("cmdtok"));
    let opt = PathBuf::from(format!("/opt/skarn-test-h27-{}", std::process::id()));
    struct Cleanup(PathBuf);
    impl Drop for Cleanup {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }
    let _c = Cleanup(opt.clone());
    let files = [
        opt.join("prefix/etc/gitconfig"),
        opt.join("prefix/etc/npmrc"),
        opt.join("xdg/pip/pip.conf"),
        opt.join("cargo/credentials.toml"),
        opt.join("u/npmrc"),
        opt.join("u/pip.conf"),
        opt.join("u/gitconfig"),
        opt.join("docker/config.json"),
        opt.join("kube/config"),
    ];
    for f in &files {
        write(f, &format!("# {REAL}\n"));
    }
    std::fs::create_dir_all(opt.join("prefix/bin")).unwrap();
    let path = format!(
        "{}:{}",
        opt.join("prefix/bin").display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let d = |p: &str| opt.join(p).display().to_string();
    let env = [
        ("PATH", path),
        ("XDG_CONFIG_DIRS", d("xdg")),
        ("CARGO_HOME", d("cargo")),
        ("NPM_CONFIG_USERCONFIG", d("u/npmrc")),
        ("PIP_CONFIG_FILE", d("u/pip.conf")),
        ("GIT_CONFIG_GLOBAL", d("u/gitconfig")),
        ("DOCKER_CONFIG", d("docker")),
        ("KUBECONFIG", d("kube/config")),
    ];
    let ws = t.dir("ws");
    let o = cat(&ws, &home, &[], &env, &files);
    assert_eq!(code(&o), 0, "{}", err(&o));
    assert!(ws.join("ran").exists(), "{}", err(&o));
    no_value(&o, "under /opt");
}

/// ADR 0230: the clean verdicts a run keeps never hide a later change.
/// A file seen clean is rewritten to hold the value with its size and
/// modification time kept (what a run could do to look unchanged): the
/// next run still reads it and refuses. A second file, unchanged, is
/// the one the cache spares.
#[test]
fn a_kept_clean_verdict_never_hides_a_change() {
    let t = TempDir::new("sec-cache");
    let vals = t.dir("vals");
    write(&vals.join("tok"), &format!("{REAL}\n"));
    let home = home(&t, &vals.join("tok"), &vals.join("cmdtok"));
    let ws = t.dir("ws");
    let f = ws.join("notes.txt");
    let pad = "x".repeat(REAL.len() + 8);
    write(&f, &format!("{pad}\n"));
    write(&ws.join("other.txt"), "nothing\n");
    // Verdicts are kept only for files unchanged for two seconds.
    std::thread::sleep(std::time::Duration::from_millis(2500));
    for _ in 0..2 {
        let o = cat(&ws, &home, &[], &[], &[]);
        assert_eq!(code(&o), 0, "{}", err(&o));
    }
    let kept = home.join(".local/state/skarn/value-checks");
    assert!(
        std::fs::read_dir(&kept).unwrap().count() >= 2,
        "no verdicts kept in {}",
        kept.display()
    );
    let before = std::fs::metadata(&f).unwrap();
    write(&f, &format!("{REAL}xxxxxxxx\n"));
    let t0 = std::fs::FileTimes::new().set_modified(before.modified().unwrap());
    std::fs::File::options()
        .write(true)
        .open(&f)
        .unwrap()
        .set_times(t0)
        .unwrap();
    assert_eq!(std::fs::metadata(&f).unwrap().len(), before.len());
    std::fs::remove_file(ws.join("ran")).unwrap();
    let o = cat(&ws, &home, &[], &[], std::slice::from_ref(&f));
    assert_eq!(code(&o), 2, "{}", err(&o));
    let record = crate::run_secret_stored::take_exposed(&home, "tok");
    assert!(record.contains("notes.txt"), "{record}");
    no_value(&o, "a changed file behind a kept verdict");
    assert!(!ws.join("ran").exists());
}
