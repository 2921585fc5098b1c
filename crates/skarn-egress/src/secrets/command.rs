//! Reading a value from a program's standard output (the `command` source,
//! and the `keyring` source through the system's own tool): bounded in
//! size and time, stderr passed through.

use std::io::Read;
use std::time::{Duration, Instant};

use zeroize::Zeroizing;

/// Largest value a source may yield.
pub const MAX_VALUE: usize = 64 * 1024;
/// Time a `command` source has.
pub const COMMAND_TIMEOUT: Duration = Duration::from_secs(30);

pub(super) fn run_command(argv: &[String]) -> Result<Zeroizing<String>, String> {
    let Some((prog, args)) = argv.split_first() else {
        return Err("command is empty".into());
    };
    let mut child = std::process::Command::new(prog)
        .args(args)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::inherit())
        .spawn()
        .map_err(|e| format!("{prog}: {e}"))?;
    let mut out = child.stdout.take().ok_or("no standard output")?;
    let reader = std::thread::spawn(move || {
        let mut buf = Zeroizing::new(Vec::new());
        let r = (&mut out).take(MAX_VALUE as u64 + 1).read_to_end(&mut buf);
        // Drain the rest so the program is not stuck on a full pipe.
        let _ = std::io::copy(&mut out, &mut std::io::sink());
        r.map(|_| buf)
    });
    let start = Instant::now();
    let status = loop {
        match child.try_wait() {
            Ok(Some(s)) => break s,
            Ok(None) if start.elapsed() > COMMAND_TIMEOUT => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(format!("{prog} did not finish within 30s"));
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(20)),
            Err(e) => return Err(e.to_string()),
        }
    };
    let buf = reader
        .join()
        .map_err(|_| "reading its output failed".to_string())?
        .map_err(|e| e.to_string())?;
    if !status.success() {
        return Err(format!("{prog} exited with {status}"));
    }
    if buf.len() > MAX_VALUE {
        return Err("its output is larger than 64 KiB".into());
    }
    let s = std::str::from_utf8(&buf).map_err(|_| "its output is not UTF-8".to_string())?;
    Ok(Zeroizing::new(s.to_string()))
}
