//! Reading a value from a program's standard output (the `command` source,
//! and the `keyring` source through the system's own tool): bounded in
//! size and time, started in a neutral directory:
//! never the caller's (the workspace, which every sandboxed run may
//! write), where interpreters find modules before their own (`python3 -c`
//! and `-m` put it first on `sys.path`, `npx` its `node_modules/.bin`,
//! version shims their pin files): a module planted there by one run would
//! run on the host when the next one resolves the secret (atk27i F1).
//! Its stderr is never shown, only its size (shell xtrace, a tool's debug
//! output may quote what it read): what skarn writes on stderr reaches the
//! agent and its model (atk27j F4, atk27k F9).

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
                let _ = reader.join();
                let err = err_reader.join().unwrap_or_default();
                pass_stderr(prog, &err);
                return Err(format!("{prog} did not finish within 30s"));
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(20)),
            Err(e) => return Err(e.to_string()),
        }
    };
    let buf = reader.join();
    let err = err_reader.join().unwrap_or_default();
    pass_stderr(prog, &err);
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

/// What a source program wrote on stderr is never shown, only how much:
/// skarn's stderr reaches the agent and its model, and a source's
/// messages may quote what it read or was given besides the value it
/// printed (xtrace of a refresh token, a debug log of a token exchange),
/// which no test against the value can catch (atk27j F4, atk27k F9).
fn pass_stderr(prog: &str, err: &[u8]) {
    if err.is_empty() {
        return;
    }
    eprintln!(
        "skarn: {prog} (a secret's source) wrote {} bytes on stderr: not shown (they may \
         quote credentials it read); run it yourself to read them",
        err.len()
    );
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
