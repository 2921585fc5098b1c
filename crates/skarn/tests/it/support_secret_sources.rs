//! Set-up shared by the tests of `command` sources (ADR 0283, 0302):
//! a home with an honest helper in `~/bin` reading a value kept outside
//! every grant, planting through a real `skarn run` in a project, a run
//! granted the secret, and the checks from outside.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use skarn_test_support::TempDir;

use crate::common::{code, err, out, run_command};

pub const VALUE: &str = "tokREALh27nValue0123456789abcdef";

/// One attack's directories.
pub struct Setup {
    pub _t: TempDir,
    pub home: PathBuf,
    /// Outside every grant: the honest helpers and the value.
    pub safe: PathBuf,
    /// Where the planted code writes (outside every grant).
    pub marker: PathBuf,
    /// The workspace of the runs granted the secret.
    pub ws2: PathBuf,
    pub root: PathBuf,
}

pub fn setup(name: &str) -> Setup {
    let t = TempDir::new(name);
    let root = t.path().to_path_buf();
    let home = t.dir("home");
    let safe = t.dir("safe");
    let ws2 = t.dir("ws2");
    std::fs::create_dir_all(home.join("bin")).unwrap();
    std::fs::write(safe.join("val"), format!("{VALUE}\n")).unwrap();
    // The honest source: a helper in `~/bin` reading a file outside.
    script(
        &home.join("bin/tok"),
        &format!("#!/bin/sh\ncat {}\n", safe.join("val").display()),
    );
    let marker = t.dir("out").join("planted-ran");
    Setup {
        _t: t,
        home,
        safe,
        marker,
        ws2,
        root,
    }
}

pub fn script(p: &Path, text: &str) {
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, text).unwrap();
    std::fs::set_permissions(p, std::fs::Permissions::from_mode(0o755)).unwrap();
}

pub fn config(home: &Path, name: &str, command: &[&str]) {
    let words: Vec<String> = command.iter().map(|w| format!("{w:?}")).collect();
    write_config(
        home,
        &format!(
            "[secrets.{name}]\ncommand = [{}]\nhosts = [\"example.test\"]\n\n\
             [secrets.ok]\ncommand = [{:?}]\nhosts = [\"example.test\"]\n",
            words.join(", "),
            home.join("bin/tok").display().to_string()
        ),
    );
}

/// What a run said: its output, then its errors.
pub fn seen(o: &std::process::Output) -> String {
    format!("{}{}", out(o), err(o))
}

/// Write the user's skarn configuration of `home`.
pub fn write_config(home: &Path, text: &str) {
    std::fs::create_dir_all(home.join(".config/skarn")).unwrap();
    std::fs::write(home.join(".config/skarn/config.toml"), text).unwrap();
}

/// `skarn run` in `ws` (writable, recorded in `granted-dirs`) running
/// `sh -c plant`, with `PATH` = `path`.
pub fn plant(s: &Setup, ws: &Path, plant: &str, path: &str) {
    let o = run_command(
        ws,
        &s.home,
        &["--workspace-layer", "direct"],
        &["sh", "-c", plant],
    )
    .env("PATH", path)
    .output()
    .unwrap();
    assert_eq!(
        code(&o),
        0,
        "the planting run failed: {}{}",
        out(&o),
        err(&o)
    );
}

/// `skarn run --secret NAME` in the second workspace, printing the
/// variable; its output.
pub fn granted(s: &Setup, name: &str, path: &str) -> std::process::Output {
    let var = name.to_ascii_uppercase();
    run_command(
        &s.ws2,
        &s.home,
        &["--secret", name],
        &["sh", "-c", &format!("echo \"{var}=${var}\"")],
    )
    .env("PATH", path)
    .output()
    .unwrap()
}

/// The planted code did not run on the host, and the honest source in
/// `~/bin` still gives a placeholder (no error, no mount left behind).
pub fn check(s: &Setup, o: &std::process::Output, path: &str) {
    assert!(
        !s.marker.exists(),
        "the host ran the planted code ({}): {}{}",
        std::fs::read_to_string(&s.marker).unwrap_or_default(),
        out(o),
        err(o)
    );
    assert!(!out(o).contains(VALUE) && !err(o).contains(VALUE));
    let ok = granted(s, "ok", path);
    assert_eq!(code(&ok), 0, "{}{}", out(&ok), err(&ok));
    let line = out(&ok);
    assert!(line.starts_with("OK=") && line.trim().len() > 10, "{line}");
    assert!(!line.contains(VALUE), "{line}");
    let mounts = std::fs::read_to_string("/proc/self/mountinfo").unwrap();
    assert!(!mounts.contains("skarn-hidden"), "a hiding mount leaked");
}

pub const PATH: &str = "/usr/local/bin:/usr/bin:/bin";

/// The line the planted code runs: makes the marker.
pub fn mark(s: &Setup) -> String {
    format!("echo ran-as-$(id -u) > {}", s.marker.display())
}

/// Whether this test runs as root.
pub fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions and cannot fail.
    unsafe { libc::geteuid() == 0 }
}

/// The users each attack is made as: `false` for the caller, and `true`
/// (uid 65534, through [`as_user`]) too when the caller is root.
pub fn users() -> Vec<bool> {
    if is_root() {
        vec![false, true]
    } else {
        vec![false]
    }
}

/// The workspace modes: the default (copy-on-write layer) and the direct.
pub const LAYER_FLAGS: [&[&str]; 2] = [&[], &["--workspace-layer", "direct"]];

/// A `skarn run` of `cmd` in `ws` as the caller or, with `nobody`, as uid
/// 65534 (`root`, the test's directory, is given to that user first).
pub fn run_as(
    root: &Path,
    ws: &Path,
    home: &Path,
    nobody: bool,
    flags: &[&str],
    cmd: &[&str],
) -> std::process::Output {
    let c = crate::common::run_command(ws, home, flags, cmd);
    let mut c = if nobody { as_user(c, root) } else { c };
    c.stdin(std::process::Stdio::null()).output().unwrap()
}

/// `cmd` run as an unprivileged user: as root through `setpriv` as uid
/// and gid 65534 (what `dir` holds is given to that user first), else as
/// it is. Its environment changes are kept.
pub fn as_user(cmd: std::process::Command, dir: &Path) -> std::process::Command {
    if !is_root() {
        return cmd;
    }
    let st = std::process::Command::new("chown")
        .args(["-R", "65534:65534"])
        .arg(dir)
        .status()
        .unwrap();
    assert!(st.success(), "chown -R 65534 {}", dir.display());
    let mut c = std::process::Command::new("setpriv");
    c.args(["--reuid=65534", "--regid=65534", "--clear-groups", "--"])
        .arg(cmd.get_program())
        .args(cmd.get_args())
        .stdin(std::process::Stdio::null());
    for (k, v) in cmd.get_envs() {
        match v {
            Some(v) => c.env(k, v),
            None => c.env_remove(k),
        };
    }
    c
}

pub use crate::support_hook::claude_write;

/// A secret `name` read from a file outside every grant (`<t>/vals/tok`,
/// holding `value`), bound to `host` and given to runs as `env`, with
/// `extra` configuration lines after it, in `home`'s skarn configuration.
pub fn file_secret(
    t: &TempDir,
    home: &Path,
    name: &str,
    value: &str,
    host: &str,
    env: &str,
    extra: &str,
) {
    let vals = t.dir("vals");
    std::fs::write(vals.join("tok"), format!("{value}\n")).unwrap();
    std::fs::create_dir_all(home.join(".config/skarn")).unwrap();
    std::fs::write(
        home.join(".config/skarn/config.toml"),
        format!(
            "[secrets.{name}]\nfile = \"{}\"\nhosts = [\"{host}\"]\nenv = \"{env}\"\n{extra}",
            vals.join("tok").display()
        ),
    )
    .unwrap();
}

/// How many secrets named `<name>.*` the run recorded as exposed (the
/// probe lock-out's records in the caller's state).
pub fn exposed(home: &Path, name: &str) -> usize {
    let prefix = format!("{name}.");
    std::fs::read_dir(home.join(".local/state/skarn/exposed"))
        .map(|rd| {
            rd.flatten()
                .filter(|e| e.file_name().to_string_lossy().starts_with(&prefix))
                .count()
        })
        .unwrap_or(0)
}

/// The position of `needle` in `hay`.
pub fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}
