//! Issue 27, builder b27r (ADR 0319): a secret's value, or the file or
//! program holding it, stayed readable inside runs because skarn guessed
//! what a `command` source reads from its text (atk27o F1, F2, F5, F6,
//! F7; atk27p F2's shell forms), and a source ran unhidden where no
//! namespace can be made (atk27o F4, atk27p F4). Each test makes the
//! real attempt and judges from outside: what the command printed,
//! whether a marker file was written on the host.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Output;

use skarn_test_support::TempDir;

use crate::common::*;
use crate::support_secret_sources::{PATH, as_user, is_root, write_config};

/// A value with no run of common letters or digits in it.
const VALUE: &str = "Qk3xZ9pL0vT7mWq2Rb8NcY4sHd1JfKa6";

/// One attempt: files holding the value (`@V@` is replaced by it), the
/// secret's source (TOML lines), the files a run then tries to read.
struct Case {
    name: &'static str,
    files: Vec<(PathBuf, String, u32)>,
    source: String,
    reads: Vec<PathBuf>,
}

/// A place outside every grant that every run can read.
fn place(tag: &str) -> PathBuf {
    PathBuf::from(format!("/opt/skarn-b27r-{}-{tag}", std::process::id()))
}

fn write(p: &Path, text: &str, mode: u32) {
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, text.replace("@V@", VALUE)).unwrap();
    std::fs::set_permissions(p, std::fs::Permissions::from_mode(mode)).unwrap();
}

fn chown(p: &Path) {
    let st = std::process::Command::new("chown")
        .args(["-R", "65534:65534"])
        .arg(p)
        .status()
        .unwrap();
    assert!(st.success());
}

/// `skarn run` as the user (uid 65534 when `nobody`).
fn run(t: &TempDir, ws: &Path, home: &Path, flags: &[&str], script: &str, nobody: bool) -> Output {
    let mut c = run_command(ws, home, flags, &["sh", "-c", script]);
    c.env("PATH", PATH);
    if script.contains("SKARN_B27R_TOK") {
        c.env("SKARN_B27R_TOK", VALUE);
    }
    match nobody {
        true => as_user(c, t.path()).output().unwrap(),
        false => c.output().unwrap(),
    }
}

/// Run `case`: a run granted the secret (which resolves it), then one
/// not granted it; neither may print the value. The failures.
fn attempt(case: &Case, nobody: bool) -> Vec<String> {
    let t = TempDir::new(&format!("b27r_{}", case.name));
    let home = t.dir("home");
    let ws = t.dir("ws");
    write_config(
        &home,
        &format!("[secrets.s]\n{}\nhosts = [\"example.test\"]\n", case.source),
    );
    let made: Vec<bool> = (case.files.iter())
        .map(|(p, _, _)| !p.parent().unwrap().exists())
        .collect();
    for (p, text, mode) in &case.files {
        write(p, text, *mode);
        if nobody && !p.starts_with("/etc/profile.d") && !p.starts_with("/usr/local/bin") {
            chown(p.parent().unwrap());
        }
    }
    let cat: Vec<String> = case
        .reads
        .iter()
        .map(|p| format!("'{}'", p.display()))
        .collect();
    let cat = format!("cat {} 2>/dev/null; true", cat.join(" "));
    let who = if nobody { "uid 65534" } else { "root" };
    let mut failed = Vec::new();
    let o = run(
        &t,
        &ws,
        &home,
        &["--secret", "s"],
        &format!("echo \"S=$S$SKARN_B27R_TOK\"; {cat}"),
        nobody,
    );
    if out(&o).contains(VALUE) || err(&o).contains(VALUE) {
        failed.push(format!(
            "{} ({who}): the granted run read the value",
            case.name
        ));
    } else if code(&o) != 0 || !out(&o).lines().any(|l| l.len() > 10 && l.starts_with("S=")) {
        failed.push(format!(
            "{} ({who}): the granted run failed: {}",
            case.name,
            err(&o)
        ));
    }
    let o = run(
        &t,
        &ws,
        &home,
        &[],
        &format!(": $SKARN_B27R_TOK; {cat}"),
        nobody,
    );
    if out(&o).contains(VALUE) {
        failed.push(format!(
            "{} ({who}): a run not granted it read the value",
            case.name
        ));
    }
    for ((p, _, _), made) in case.files.iter().zip(made) {
        let _ = std::fs::remove_file(p);
        if made {
            let _ = std::fs::remove_dir(p.parent().unwrap());
        }
    }
    failed
}

fn attempts(cases: &[Case]) {
    let mut failed = Vec::new();
    for c in cases {
        failed.extend(attempt(c, false));
        if is_root() {
            failed.extend(attempt(c, true));
        }
    }
    assert!(failed.is_empty(), "{failed:#?}");
}

fn command(words: &[&str]) -> String {
    let w: Vec<String> = words.iter().map(|w| format!("{w:?}")).collect();
    format!("command = [{}]", w.join(", "))
}

/// atk27o F1 (a value file under `/usr/local/etc` or `/etc`), F2 (the
/// copies beside it), F5 (the source's own script holding the value) and
/// F7 (the file a wrapper on `PATH` reads).
#[test]
fn files_a_source_really_read_the_value_from_are_hidden_from_every_run() {
    let usr = PathBuf::from(format!("/usr/local/etc/skarn-b27r-{}", std::process::id()));
    let etc = PathBuf::from(format!("/etc/skarn-b27r-{}", std::process::id()));
    let f2 = place("f2");
    let f5 = place("f5");
    let f7 = place("f7");
    let wrapper = PathBuf::from(format!(
        "/usr/local/bin/skarn-b27r-get-{}",
        std::process::id()
    ));
    let cases = vec![
        Case {
            name: "f1_usr_local_etc",
            files: vec![(usr.join("tok"), "@V@\n".into(), 0o600)],
            source: command(&["cat", &usr.join("tok").to_string_lossy()]),
            reads: vec![usr.join("tok")],
        },
        Case {
            name: "f1_etc",
            files: vec![(etc.join("tok"), "@V@\n".into(), 0o600)],
            source: command(&["cat", &etc.join("tok").to_string_lossy()]),
            reads: vec![etc.join("tok")],
        },
        Case {
            name: "f2_copies",
            files: vec![
                (f2.join("gh-token"), "@V@\n".into(), 0o600),
                (f2.join("gh-token.bak"), "@V@\n".into(), 0o600),
                (f2.join("gh-token~"), "@V@\n".into(), 0o600),
            ],
            source: command(&["cat", &f2.join("gh-token").to_string_lossy()]),
            reads: vec![f2.join("gh-token.bak"), f2.join("gh-token~")],
        },
        Case {
            name: "f5_script",
            files: vec![(
                f5.join("print-token"),
                "#!/bin/sh\necho @V@\n".into(),
                0o755,
            )],
            source: command(&[&f5.join("print-token").to_string_lossy()]),
            reads: vec![f5.join("print-token")],
        },
        Case {
            name: "f7_wrapper",
            files: vec![
                (f7.join(".tok"), "@V@\n".into(), 0o644),
                (
                    wrapper.clone(),
                    format!("#!/bin/sh\ncat {}\n", f7.join(".tok").display()),
                    0o755,
                ),
            ],
            source: command(&[&wrapper.file_name().unwrap().to_string_lossy()]),
            reads: vec![f7.join(".tok")],
        },
    ];
    attempts(&cases);
}

/// atk27p F2: shell forms the text reading followed wrongly or not at all
/// (a prefix assignment, a subshell, `HOME=`, `CDPATH=`, `set --`,
/// `eval`, `printf -v`): the file the source really read is hidden.
#[test]
fn shell_forms_do_not_unhide_the_file_a_source_reads() {
    let forms: &[(&str, &str)] = &[
        ("prefix", "d=@D@; d=@D@/safe true; cat \"$d/tok\""),
        ("subshell", "d=@D@; (d=@D@/safe); cat \"$d/tok\""),
        ("home", "HOME=@D@; cat ~/tok"),
        ("cdpath", "CDPATH=@P@; cd @B@ >/dev/null && cat tok"),
        ("set", "set -- @D@; cat \"$1/tok\""),
        ("eval", "eval d=@D@; cat \"$d/tok\""),
        ("printf", "printf -v d %s @D@; cat \"$d/tok\""),
    ];
    let cases: Vec<Case> = forms
        .iter()
        .map(|(name, text)| {
            let d = place(name);
            let text = text
                .replace("@D@", &d.to_string_lossy())
                .replace("@P@", &d.parent().unwrap().to_string_lossy())
                .replace("@B@", &d.file_name().unwrap().to_string_lossy());
            Case {
                name,
                files: vec![(d.join("tok"), "@V@\n".into(), 0o600)],
                source: command(&["bash", "-c", &text]),
                reads: vec![d.join("tok")],
            }
        })
        .collect();
    attempts(&cases);
}

/// atk27o F6: a `from_env` value exported by a system start-up file.
#[test]
fn a_start_up_file_exporting_a_from_env_value_is_hidden() {
    let f = PathBuf::from(format!(
        "/etc/profile.d/zz-skarn-b27r-{}.sh",
        std::process::id()
    ));
    if !is_root() {
        skarn_test_support::skip!("writing /etc/profile.d needs root");
    }
    let cases = vec![Case {
        name: "f6_profile_d",
        files: vec![(f.clone(), "export SKARN_B27R_TOK=@V@\n".into(), 0o644)],
        source: "from_env = \"SKARN_B27R_TOK\"".into(),
        reads: vec![f],
    }];
    attempts(&cases);
}

/// A filter like a container runtime's default seccomp profile for a
/// process without `CAP_SYS_ADMIN` (atk27p's `dockerish`): `unshare` and
/// a `clone` making a user namespace fail with `EPERM`, `clone3` with
/// `ENOSYS`; the sysctls still allow user namespaces.
fn dockerish(c: &mut std::process::Command, nobody: bool) {
    use std::os::unix::process::CommandExt;
    let j = |k: u32, t: u8, f: u8| libc::sock_filter {
        code: (libc::BPF_JMP | libc::BPF_JEQ | libc::BPF_K) as u16,
        jt: t,
        jf: f,
        k,
    };
    let ret = |k: u32| libc::sock_filter {
        code: (libc::BPF_RET | libc::BPF_K) as u16,
        jt: 0,
        jf: 0,
        k,
    };
    let ld = |k: u32| libc::sock_filter {
        code: (libc::BPF_LD | libc::BPF_W | libc::BPF_ABS) as u16,
        jt: 0,
        jf: 0,
        k,
    };
    let filter = vec![
        ld(0),
        j(libc::SYS_unshare as u32, 0, 1),
        ret(libc::SECCOMP_RET_ERRNO | libc::EPERM as u32),
        j(435, 0, 1),
        ret(libc::SECCOMP_RET_ERRNO | libc::ENOSYS as u32),
        j(libc::SYS_clone as u32, 0, 3),
        ld(16),
        libc::sock_filter {
            code: (libc::BPF_JMP | libc::BPF_JSET | libc::BPF_K) as u16,
            jt: 0,
            jf: 1,
            k: libc::CLONE_NEWUSER as u32,
        },
        ret(libc::SECCOMP_RET_ERRNO | libc::EPERM as u32),
        ret(libc::SECCOMP_RET_ALLOW),
    ];
    // SAFETY: between fork and exec only set*id, prctl and seccomp run,
    // on the filter built before the fork.
    unsafe {
        c.pre_exec(move || {
            let prog = libc::sock_fprog {
                len: filter.len() as u16,
                filter: filter.as_ptr() as *mut _,
            };
            if nobody
                && (libc::setgroups(0, std::ptr::null()) != 0
                    || libc::setresgid(65534, 65534, 65534) != 0
                    || libc::setresuid(65534, 65534, 65534) != 0)
            {
                return Err(std::io::Error::last_os_error());
            }
            if libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0
                || libc::prctl(libc::PR_SET_SECCOMP, libc::SECCOMP_MODE_FILTER, &prog) != 0
            {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
}

/// atk27o F4, atk27p F4: where user namespaces are refused by seccomp
/// (the sysctls allow them), a run planting a script that the source's
/// text reaches through a form the text reading misses, then a run
/// granted the secret: the planted script never runs on the host, and
/// the run is refused with one clear error (exit 2). As root and as uid
/// 65534.
#[test]
fn where_namespaces_are_refused_no_source_runs() {
    let mut failed = Vec::new();
    for nobody in [false, true].into_iter().filter(|n| !n || is_root()) {
        let t = TempDir::new("b27r_f4");
        let home = t.dir("home");
        let ws = t.dir("ws");
        let ws2 = t.dir("ws2");
        let outd = t.dir("out");
        let marker = outd.join("planted-ran");
        let root = t.path().to_string_lossy().into_owned();
        for (name, text) in [
            ("set", format!("set -- {root}; \"$1/ws/bin/get-token\"")),
            (
                "printf",
                format!("printf -v d %s {root}; \"$d/ws/bin/get-token\""),
            ),
            (
                "prefix",
                format!("d={root}; d=/usr true; \"$d/ws/bin/get-token\""),
            ),
        ] {
            write_config(
                &home,
                &format!(
                    "[secrets.gh]\n{}\nhosts = [\"example.test\"]\n",
                    command(&["bash", "-c", &text])
                ),
            );
            if nobody {
                chown(t.path());
                std::fs::set_permissions(&outd, std::fs::Permissions::from_mode(0o777)).unwrap();
            }
            let plant = format!(
                "mkdir -p bin && printf '#!/bin/sh\\necho ran-as-$(id -u) > {}\\necho fakeTokenValue0123456789\\n' > bin/get-token && chmod +x bin/get-token",
                marker.display()
            );
            let mut c = run_command(&ws, &home, &[], &["sh", "-c", &plant]);
            dockerish(&mut c, nobody);
            let o = c.output().unwrap();
            assert!(
                ws.join("bin/get-token").exists(),
                "planting failed: {}",
                err(&o)
            );
            let mut c = run_command(
                &ws2,
                &home,
                &["--secret", "gh"],
                &["sh", "-c", "echo GH=$GH"],
            );
            c.env_remove("SKARN_SECRET_SOURCE_VIEW");
            dockerish(&mut c, nobody);
            let o = c.output().unwrap();
            let who = if nobody { "uid 65534" } else { "root" };
            if marker.exists() {
                failed.push(format!(
                    "{name} ({who}): the planted script ran on the host: {}",
                    err(&o)
                ));
                let _ = std::fs::remove_file(&marker);
            }
            if code(&o) != 2 || !err(&o).contains("no secret source was run") {
                failed.push(format!(
                    "{name} ({who}): not refused first: {} {}",
                    code(&o),
                    err(&o)
                ));
            }
        }
    }
    assert!(failed.is_empty(), "{failed:#?}");
}

/// Usability: sources that start a daemon outliving them (as `pass`
/// starts `gpg-agent`) or run an interpreter reading a token file (as
/// `gh auth token` does) still work, and the daemon's own file reads
/// still work once the trace has let it go.
#[test]
fn helper_sources_and_their_daemons_still_work() {
    let t = TempDir::new("b27r_use");
    let home = t.dir("home");
    let ws = t.dir("ws");
    let outd = t.dir("out");
    let daemon_out = outd.join("daemon-read");
    std::fs::write(
        home.join("hosts.yml"),
        format!("github.com:\n  oauth_token: {VALUE}\n"),
    )
    .unwrap();
    let agent = format!(
        "(sleep 1; cat /etc/hostname > {} 2>&1) </dev/null >/dev/null 2>&1 & echo {VALUE}",
        daemon_out.display()
    );
    let py = format!(
        "import re; print(re.search(r'oauth_token: (\\S+)', open('{}').read()).group(1))",
        home.join("hosts.yml").display()
    );
    write_config(
        &home,
        &format!(
            "[secrets.agent]\n{}\nhosts = [\"example.test\"]\n[secrets.gh]\n{}\nhosts = [\"example.test\"]\n",
            command(&["sh", "-c", &agent]),
            command(&["python3", "-c", &py])
        ),
    );
    for s in ["agent", "gh"] {
        let var = s.to_uppercase();
        let o = run(
            &t,
            &ws,
            &home,
            &["--secret", s],
            &format!("echo \"V=${var}\"; git --version"),
            false,
        );
        assert_eq!(code(&o), 0, "{s}: {}", err(&o));
        assert!(!out(&o).contains(VALUE), "{s}");
        assert!(out(&o).contains("git version"), "{s}: {}", out(&o));
        assert!(
            out(&o).lines().any(|l| l.len() > 10 && l.starts_with("V=")),
            "{s}: {}",
            out(&o)
        );
    }
    let host = std::fs::read_to_string("/etc/hostname").unwrap_or_default();
    for _ in 0..100 {
        if std::fs::read_to_string(&daemon_out).is_ok_and(|t| !t.is_empty()) {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    assert_eq!(
        std::fs::read_to_string(&daemon_out).unwrap_or_default(),
        host
    );
}
