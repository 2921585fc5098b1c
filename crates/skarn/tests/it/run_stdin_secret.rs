//! A granted secret's real value piped into `skarn run` (the
//! `--password-stdin` pattern) reaches the command as its placeholder,
//! never as itself (atk27t F4); input without a value passes byte for
//! byte, from a pipe or a regular file. Checked from outside: what the
//! command wrote into the workspace, as root and as uid 65534.

use std::io::Write;
use std::process::{Output, Stdio};

use skarn_test_support::TempDir;

use crate::support_secret_sources::{as_user, file_secret, find, users};

const VALUE: &str = "tokREALstdin27u0123456789abcdefXY";

/// `skarn run --secret s -- sh -c SCRIPT` in a fresh workspace, fed
/// `input` on a pipe (or, with `file`, from a regular file).
fn fed(nobody: bool, input: &[u8], file: bool, script: &str) -> (Output, TempDir) {
    let t = TempDir::new("stdin-secret");
    let home = t.dir("home");
    let ws = t.dir("ws");
    file_secret(&t, &home, "s", VALUE, "localhost:9", "TOK", "");
    let c = crate::common::run_command(&ws, &home, &["--secret", "s"], &["sh", "-c", script]);
    let mut c = if nobody { as_user(c, t.path()) } else { c };
    let out = if file {
        let p = t.path().join("input");
        std::fs::write(&p, input).unwrap();
        c.stdin(std::fs::File::open(&p).unwrap()).output().unwrap()
    } else {
        c.stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut child = c.spawn().unwrap();
        let mut w = child.stdin.take().unwrap();
        let data = input.to_vec();
        let feeder = std::thread::spawn(move || {
            let _ = w.write_all(&data);
        });
        let out = child.wait_with_output().unwrap();
        feeder.join().unwrap();
        out
    };
    (out, t)
}

#[test]
fn a_piped_value_reaches_the_command_as_its_placeholder() {
    for nobody in users() {
        let input = format!(
            "user\n{VALUE}\n{{\"t\":\"{}\"}}\n",
            VALUE.replace('R', "\\u0052")
        );
        let (o, t) = fed(
            nobody,
            input.as_bytes(),
            false,
            "cat > got; printf %s \"$TOK\" > ph",
        );
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(o.status.success(), "nobody={nobody}: {err}");
        let got = std::fs::read(t.path().join("ws/got")).unwrap();
        let ph = std::fs::read_to_string(t.path().join("ws/ph")).unwrap();
        assert_eq!(ph.len(), VALUE.len(), "placeholder: {ph:?}");
        assert!(
            find(&got, VALUE.as_bytes()).is_none(),
            "nobody={nobody}: the real value went in"
        );
        assert!(
            find(&got, b"\\u0052EAL").is_none(),
            "nobody={nobody}: the escaped value went in: {}",
            String::from_utf8_lossy(&got)
        );
        assert_eq!(
            &got[..5 + ph.len() + 1],
            format!("user\n{ph}\n").as_bytes(),
            "nobody={nobody}"
        );
        assert!(
            err.contains("standard input held a granted secret's real value"),
            "{err}"
        );
    }
}

#[test]
fn input_without_a_value_passes_byte_for_byte() {
    let input: Vec<u8> = (0..3_000_000u32)
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
        .collect();
    for nobody in users() {
        for file in [false, true] {
            let (o, t) = fed(nobody, &input, file, "cat > got");
            assert!(
                o.status.success(),
                "nobody={nobody} file={file}: {}",
                String::from_utf8_lossy(&o.stderr)
            );
            let got = std::fs::read(t.path().join("ws/got")).unwrap();
            assert!(
                got == input,
                "nobody={nobody} file={file}: {} bytes",
                got.len()
            );
        }
    }
}

#[test]
fn a_command_that_stops_reading_ends_the_run() {
    // `yes | ... head -1`: the relay ends when the command's side closes.
    for nobody in users() {
        let t = TempDir::new("stdin-secret-stop");
        let home = t.dir("home");
        let ws = t.dir("ws");
        file_secret(&t, &home, "s", VALUE, "localhost:9", "TOK", "");
        let c = crate::common::run_command(&ws, &home, &["--secret", "s"], &["head", "-c", "2"]);
        let mut c = if nobody { as_user(c, t.path()) } else { c };
        let mut yes = std::process::Command::new("yes")
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let o = c.stdin(yes.stdout.take().unwrap()).output().unwrap();
        let _ = yes.kill();
        let _ = yes.wait();
        assert_eq!(
            o.stdout,
            b"y\n",
            "nobody={nobody}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
    }
}
