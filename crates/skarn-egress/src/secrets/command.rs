//! Reading a value from a program's standard output (the `command` source,
//! and the `keyring` source through the system's own tool): bounded in
//! size and time, started in a neutral directory:
//! never the caller's (the workspace, which every sandboxed run may
//! write), where interpreters find modules before their own (`python3 -c`
//! and `-m` put it first on `sys.path`, `npx` its `node_modules/.bin`,
//! version shims their pin files): a module planted there by one run would
//! run on the host when the next one resolves the secret (atk27i F1).
//! Its stderr is held until it ends and shown only when it does not hold
//! the value it printed (shell xtrace, a tool's debug output): what skarn
//! writes on stderr reaches the agent and its model (atk27j F4).

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
        .current_dir(neutral_dir())
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .map_err(|e| format!("{prog}: {e}"))?;
    let mut out = child.stdout.take().ok_or("no standard output")?;
    let mut err = child.stderr.take().ok_or("no standard error")?;
    let err_reader = std::thread::spawn(move || {
        let mut buf = Zeroizing::new(Vec::new());
        let _ = (&mut err).take(MAX_STDERR as u64).read_to_end(&mut buf);
        let _ = std::io::copy(&mut err, &mut std::io::sink());
        buf
    });
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
                let out = reader.join().ok().and_then(Result::ok);
                let err = err_reader.join().unwrap_or_default();
                pass_stderr(prog, &err, out.as_deref().map(Vec::as_slice));
                return Err(format!("{prog} did not finish within 30s"));
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(20)),
            Err(e) => return Err(e.to_string()),
        }
    };
    let buf = reader.join();
    let err = err_reader.join().unwrap_or_default();
    let out = buf.as_ref().ok().and_then(|r| r.as_ref().ok());
    pass_stderr(prog, &err, out.map(|b| b.as_slice()));
    let buf = buf
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

/// Most of a source program's stderr that is kept (the rest is drained).
const MAX_STDERR: usize = 64 * 1024;

/// Show what a source program wrote on stderr, unless it holds the value
/// it printed on stdout (`out`, trailing line breaks dropped) in any form
/// the echo scrubber knows: then only how much it wrote.
fn pass_stderr(prog: &str, err: &[u8], out: Option<&[u8]>) {
    use std::io::Write;
    if err.is_empty() {
        return;
    }
    let value = out
        .and_then(|o| std::str::from_utf8(o).ok())
        .map(|v| v.trim_matches(['\n', '\r', ' ', '\t']))
        .filter(|v| !v.is_empty());
    let holds = value.is_some_and(|v| {
        memchr::memmem::find(err, v.as_bytes()).is_some()
            || crate::ValueFinder::for_values(v.lines().map(str::trim).filter(|l| !l.is_empty()))
                .found_in(err)
    });
    if holds {
        eprintln!(
            "skarn: {prog} (a secret's source) wrote {} bytes on stderr that hold the value \
             it gave: not shown",
            err.len()
        );
    } else {
        let _ = std::io::stderr().write_all(err);
    }
}

/// Where a source program starts: nothing there is a project, and no run
/// is granted it.
fn neutral_dir() -> std::path::PathBuf {
    #[cfg(windows)]
    if let Some(r) = std::env::var_os("SystemRoot") {
        return std::path::PathBuf::from(r);
    }
    std::path::PathBuf::from("/")
}
