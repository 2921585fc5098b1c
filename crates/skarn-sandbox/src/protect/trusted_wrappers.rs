//! Programs that run another program named in their arguments (g24, issue
//! 24's open gap): `xargs sh .ci.sh`, `sudo sh .ci.sh`, `find . -exec sh
//! x {} ;`. skarn reads the wrappers of [`super::trusted_shell::program_start`]
//! (`env`, `nice`, `timeout`, ...) and judges the program after them; the
//! wrappers here it does not read, so what they run (a script a confined
//! command may rewrite) would be neither judged nor kept read-only: a
//! trusted line run by one of them is not trusted, and `skarn init` says
//! so (the client's entry is then wrapped or refused like any other).

/// Programs that run a program given in their arguments or on their
/// standard input.
const WRAPPERS: &[&str] = &[
    "xargs",
    "parallel",
    "sudo",
    "doas",
    "su",
    "runuser",
    "pkexec",
    "setpriv",
    "sg",
    "chroot",
    "flock",
    "watch",
    "strace",
    "ltrace",
    "valgrind",
    "gdb",
    "ionice",
    "chrt",
    "taskset",
    "numactl",
    "unshare",
    "nsenter",
    "systemd-run",
    "script",
    "fakeroot",
    "eatmydata",
    "proot",
    "firejail",
    "bwrap",
    "xvfb-run",
    "dbus-run-session",
    "ssh-agent",
    "busybox",
    "entr",
    "caffeinate",
];

/// `find`'s actions that run a program.
const FIND_RUNS: &[&str] = &["-exec", "-execdir", "-ok", "-okdir"];

/// Why the program `name` with `args` cannot stay trusted: it runs
/// another program skarn does not read.
pub fn refusal(name: &str, args: &[&str]) -> Option<String> {
    if WRAPPERS.contains(&name) {
        return Some(format!(
            "`{name}` runs another program from its arguments or input, which skarn does not \
             read, so what it runs is neither judged nor kept read-only (name the program \
             itself in the trusted line)"
        ));
    }
    if name == "find" && args.iter().any(|a| FIND_RUNS.contains(a)) {
        return Some(
            "`find` with -exec runs another program, which skarn does not read, so what it \
             runs is neither judged nor kept read-only"
                .to_string(),
        );
    }
    None
}
