//! Bash in a throwaway directory whose PATH holds only recording stubs,
//! for the hook's shell-reading target: which programs a command string
//! really starts. The hook's own module is compiled in from the `skarn`
//! binary's source (it has no library crate).

#[path = "../../crates/skarn/src/cmd/hook/shell.rs"]
#[allow(dead_code)]
pub mod shell;

#[path = "../../crates/skarn/src/cmd/hook/pattern_options.rs"]
#[allow(dead_code)]
pub mod pattern_options;

use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// Program names the stubs answer to, besides every name in
/// [`shell::RUNS_ANOTHER`].
const PROGRAMS: &[&str] = &[
    "git", "gitk", "docker", "ls", "make", "cargo", "touch", "npm", "cat", "id", "p", "x",
];

/// Whether the hook counts `word` among the programs that run another
/// program (allowed only by a pattern that names them exactly).
pub fn runs_another(word: &str) -> bool {
    shell::RUNS_ANOTHER.contains(&word)
}

/// The workspace the wrapped-command check uses (a quote and a blank in
/// it, so quoting matters).
pub const WS: &str = "/w s'x";

/// The stub directory; `skarn` logs each run as its argument count and
/// then its whole argv, each NUL-terminated (an argument cannot hold a NUL,
/// so any other byte in it is kept apart), every other stub its name on a
/// line.
pub struct Stubs {
    root: tempfile::TempDir,
}

fn bash() -> &'static str {
    ["/bin/bash", "/usr/bin/bash"]
        .into_iter()
        .find(|p| Path::new(p).exists())
        .unwrap_or("bash")
}

fn stub(path: &Path, script: &str) {
    std::fs::write(path, script).expect("stub");
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).expect("chmod");
}

/// The stubs, made on first use.
pub fn stubs() -> &'static Stubs {
    static S: OnceLock<Stubs> = OnceLock::new();
    S.get_or_init(|| {
        let root = tempfile::tempdir().expect("tempdir");
        let bin = root.path().join("bin");
        std::fs::create_dir(&bin).expect("bin");
        std::fs::create_dir(root.path().join("work")).expect("work");
        // Bash runs as nobody when we are root (below): it must reach the
        // stubs and write the log and the work directory.
        for d in [root.path().to_path_buf(), root.path().join("work")] {
            std::fs::set_permissions(&d, std::fs::Permissions::from_mode(0o777)).expect("chmod");
        }
        let log = root.path().join("log");
        let names = PROGRAMS.iter().chain(shell::RUNS_ANOTHER);
        for n in names {
            let s = format!("#!/bin/sh\nprintf '%s\\n' \"${{0##*/}}\" >> '{}'\n", log.display());
            stub(&bin.join(n), &s);
        }
        let s = format!(
            "#!/bin/sh\n{{ printf '%s\\0' \"$(($# + 1))\"; for a in \"${{0##*/}}\" \"$@\"; do printf '%s\\0' \"$a\"; done; }} >> '{0}'\n",
            log.display()
        );
        stub(&bin.join("skarn"), &s);
        Stubs { root }
    })
}

impl Stubs {
    /// The `skarn` stub's path (the executable the hook wraps with).
    pub fn skarn(&self) -> PathBuf {
        self.root.path().join("bin/skarn")
    }

    /// Run `cmd` with `bash -c` (stdin empty, at most 10 s; as nobody
    /// when we are root, so a command the hook misreads cannot harm the
    /// machine) and return the log, which is then cleared with the work
    /// directory.
    pub fn run(&self, cmd: &str) -> String {
        let log = self.root.path().join("log");
        let _ = std::fs::remove_file(&log);
        let work = self.root.path().join("work");
        let mut bash = Command::new(bash());
        // SAFETY: geteuid has no preconditions.
        if unsafe { libc::geteuid() } == 0 {
            bash.uid(65534).gid(65534);
        }
        let Ok(mut child) = bash
            .arg("-c")
            .arg(cmd)
            .env_clear()
            .env("PATH", self.root.path().join("bin"))
            .current_dir(&work)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
        else {
            return String::new();
        };
        let end = Instant::now() + Duration::from_secs(10);
        while child.try_wait().ok().flatten().is_none() {
            if Instant::now() > end {
                let _ = child.kill();
                let _ = child.wait();
                panic!("bash did not finish on {cmd:?}");
            }
            std::thread::sleep(Duration::from_millis(1));
        }
        let _ = std::fs::remove_dir_all(&work);
        let _ = std::fs::create_dir(&work);
        std::fs::read_to_string(&log).unwrap_or_default()
    }
}

/// The `skarn` stub's runs in `log` (see [`Stubs`]), or `None` when the log
/// holds anything else (another stub's line, a cut record).
pub fn skarn_runs(log: &str) -> Option<Vec<Vec<&str>>> {
    let mut words = log.split('\0');
    let mut runs = Vec::new();
    loop {
        let Some(n) = words.next() else {
            return Some(runs);
        };
        if n.is_empty() && words.clone().next().is_none() {
            return Some(runs);
        }
        let n: usize = n.parse().ok()?;
        let run: Vec<&str> = words.by_ref().take(n).collect();
        if run.len() != n {
            return None;
        }
        runs.push(run);
    }
}
