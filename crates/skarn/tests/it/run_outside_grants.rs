//! Things outside the grants (issue 23 item 8): a host program the run
//! cannot see is named with its host path and the flag that grants it,
//! also when a shell script names it; a port of the sandbox's loopback
//! can be published on the host's 127.0.0.1 (`--publish`, ADR 0183), off
//! by default.

use std::io::{Read, Write};
use std::os::unix::fs::PermissionsExt;

use crate::common::*;
use skarn_test_support::TempDir;

#[test]
fn a_host_program_outside_the_grants_is_named_with_the_flag() {
    let t = TempDir::new("outside-prog");
    let (ws, home, bin) = (t.dir("ws"), t.dir("home"), t.dir("hostbin"));
    let tool = bin.join("skarn-test-tool");
    std::fs::write(&tool, "#!/bin/sh\necho ran\n").unwrap();
    std::fs::set_permissions(&tool, std::fs::Permissions::from_mode(0o755)).unwrap();
    let path = format!("{}:/usr/bin:/bin", bin.display());
    for cmd in [
        vec!["skarn-test-tool"],
        vec!["sh", "-c", "cd . && skarn-test-tool --version"],
    ] {
        let o = run_command(&ws, &home, &[], &cmd)
            .env("PATH", &path)
            .output()
            .unwrap();
        assert_eq!(code(&o), 127, "{}", err(&o));
        let e = err(&o);
        assert!(
            e.contains(&format!("is {} on the host", tool.display())),
            "{e}"
        );
        assert!(e.contains(&format!("--exec {}", bin.display())), "{e}");
    }
    // Granted: it runs.
    let o = run_command(
        &ws,
        &home,
        &["--exec", bin.to_str().unwrap()],
        &["skarn-test-tool"],
    )
    .env("PATH", &path)
    .output()
    .unwrap();
    assert_eq!(out(&o), "ran\n", "{}", err(&o));
}

/// A free port on the host's loopback.
fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

#[test]
fn a_published_loopback_port_is_reached_from_the_host() {
    if !host_has("python3", "--version") {
        skarn_test_support::skip!("python3 is not installed");
    }
    let t = TempDir::new("publish");
    let (ws, home) = (t.dir("ws"), t.dir("home"));
    let port = free_port();
    let server = "import socket\n\
        s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)\n\
        s.bind(('127.0.0.1', 3999)); s.listen(1); print('ready', flush=True)\n\
        c, _ = s.accept(); d = c.recv(100); c.sendall(b'inside got ' + d); c.close()\n";
    let mut child = run_command(
        &ws,
        &home,
        &["--net", "loopback", "--publish", &format!("{port}:3999")],
        &["python3", "-c", server],
    )
    .stdout(std::process::Stdio::piped())
    .stderr(std::process::Stdio::piped())
    .spawn()
    .unwrap();
    let mut first = [0u8; 6];
    child
        .stdout
        .as_mut()
        .unwrap()
        .read_exact(&mut first)
        .unwrap();
    assert_eq!(&first, b"ready\n");
    // A client on the host, through the published port.
    let mut c = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
    c.write_all(b"hello").unwrap();
    let mut got = String::new();
    c.read_to_string(&mut got).unwrap();
    assert_eq!(got, "inside got hello");
    let o = child.wait_with_output().unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", err(&o));
    // The listener ended with the run.
    assert!(std::net::TcpStream::connect(("127.0.0.1", port)).is_err());
}

#[test]
fn publish_is_off_by_default_and_needs_the_loopback() {
    let t = TempDir::new("publish-off");
    let (ws, home) = (t.dir("ws"), t.dir("home"));
    let port = free_port();
    let o = run_in(&ws, &home, &["--publish", &format!("{port}:80")], &["true"]);
    assert_eq!(code(&o), 2, "{}", err(&o));
    assert!(err(&o).contains("--net loopback"), "{}", err(&o));
    let o = run_in(
        &ws,
        &home,
        &["--net", "loopback", "--publish", "80"],
        &["true"],
    );
    assert_eq!(code(&o), 2, "{}", err(&o));
}
