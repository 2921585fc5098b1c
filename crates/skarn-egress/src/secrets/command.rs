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

use super::source_view::SourceView;

/// Largest value a source may yield.
pub const MAX_VALUE: usize = 64 * 1024;
/// Time a `command` source has.
pub const COMMAND_TIMEOUT: Duration = Duration::from_secs(30);

pub(super) fn run_command(argv: &[String], view: &SourceView) -> Result<Zeroizing<String>, String> {
    let Some((prog, args)) = argv.split_first() else {
        return Err("command is empty".into());
    };
    // A set-user-ID or set-group-ID program of root's (1Password's `op`
    // with its desktop app is set-group-ID) loses those bits inside the
    // user namespace an unprivileged helper makes, and fails there. It
    // runs in the caller's view when it runs nothing else, named directly
    // or as the one plain command of a shell string (ADR 0302).
    if view.helper.is_some()
        && let Some(words) = super::set_id::direct_form(argv)
    {
        return run_command(&words, &SourceView::direct());
    }
    let mut cmd = match &view.helper {
        Some(h) => {
            let mut c = std::process::Command::new(h);
            c.arg(super::source_view::HELPER_ENTRY)
                .arg(view.hide.len().to_string())
                .args(&view.hide)
                .arg(prog)
                .args(args);
            c
        }
        None => {
            let mut c = std::process::Command::new(prog);
            c.args(args);
            c
        }
    };
    for (k, _) in std::env::vars_os() {
        if super::source_view::stripped(&k) {
            cmd.env_remove(k);
        }
    }
    cmd.current_dir(neutral_dir())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    let status = match view.helper.is_some() {
        true => Some(status_pipe(&mut cmd)?),
        false => {
            cmd.stdin(std::process::Stdio::null());
            None
        }
    };
    let mut child = cmd.spawn().map_err(|e| format!("{prog}: {e}"))?;
    // The parent's copy of the status pipe's writing end goes with `cmd`.
    drop(cmd);
    // Read while the source runs: the helper writes the traced files at
    // its end (ADR 0319).
    let helper = status.map(|st| std::thread::spawn(move || helper_status(st)));
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
    if let Some(st) = helper {
        match st
            .join()
            .unwrap_or(HelperStatus::Failed("the source helper's status".into()))
        {
            HelperStatus::Traced(files) => *READS.lock().unwrap_or_else(|e| e.into_inner()) = files,
            HelperStatus::NoNamespace(why) => return without_view(argv, &why),
            HelperStatus::Failed(why) => return Err(why),
        }
    }
    let buf = buf
        .map_err(|_| "reading its output failed".to_string())?
        .map_err(|e| e.to_string())?;
    if !status.success() {
        return Err(format!(
            "{prog} exited with {status}{}{}",
            hidden_hint(view),
            match view.helper.is_some() {
                true => super::set_id::view_hint(argv),
                false => String::new(),
            }
        ));
    }
    // A pipe's last program may succeed with nothing after the set-ID
    // program before it failed in the view: say why.
    if view.helper.is_some() && buf.iter().all(u8::is_ascii_whitespace) {
        let hint = super::set_id::view_hint(argv);
        if !hint.is_empty() {
            return Err(format!("{prog} printed no value{hint}"));
        }
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

/// Why a source that ran with places hidden may have failed.
fn hidden_hint(view: &SourceView) -> String {
    match view.helper.is_some() && !view.hide.is_empty() {
        true => format!(
            " (it ran with every place a sandboxed run may write hidden, ADR 0283: {}; a \
             program, script or module it needs there was not found)",
            view.hide
                .iter()
                .take(4)
                .map(|p| p.display().to_string())
                .collect::<Vec<_>>()
                .join(", ")
        ),
        false => String::new(),
    }
}

/// What the helper said.
enum HelperStatus {
    /// The source ran traced; the files it opened or executed.
    Traced(Vec<std::path::PathBuf>),
    /// No private mount namespace can be made on this system.
    NoNamespace(String),
    /// Setting up the view, the trace, or starting the source failed.
    Failed(String),
}

/// The files the last traced source opened or executed (ADR 0319).
static READS: std::sync::Mutex<Vec<std::path::PathBuf>> = std::sync::Mutex::new(Vec::new());

/// The files each secret's traced source read, by secret name.
type Named = Vec<(String, Vec<std::path::PathBuf>)>;
static NAMED: std::sync::Mutex<Named> = std::sync::Mutex::new(Vec::new());

/// The files the last `command` source run through the helper opened or
/// executed, kept as secret `name`'s (after it was resolved).
pub fn keep_reads(name: &str) {
    let files = std::mem::take(&mut *READS.lock().unwrap_or_else(|e| e.into_inner()));
    if !files.is_empty() {
        let mut n = NAMED.lock().unwrap_or_else(|e| e.into_inner());
        n.retain(|(k, _)| k != name);
        n.push((name.to_string(), files));
    }
}

/// The files the traced `command` sources resolved so far read, by
/// secret name (taken).
pub fn source_reads() -> Named {
    std::mem::take(&mut *NAMED.lock().unwrap_or_else(|e| e.into_inner()))
}

/// A pipe whose writing end becomes the helper's standard input (it
/// writes why it could not start the source there; the end closes when
/// the source starts): the reading end.
#[cfg(target_os = "linux")]
fn status_pipe(cmd: &mut std::process::Command) -> Result<std::fs::File, String> {
    let (r, w) = rustix::pipe::pipe_with(rustix::pipe::PipeFlags::CLOEXEC)
        .map_err(|e| format!("a pipe for the source helper: {e}"))?;
    cmd.stdin(std::process::Stdio::from(w));
    Ok(std::fs::File::from(r))
}

#[cfg(not(target_os = "linux"))]
fn status_pipe(_cmd: &mut std::process::Command) -> Result<std::fs::File, String> {
    Err("no source helper on this system".into())
}

/// Read the helper's status (at most 1 MiB; ends when the helper exits).
fn helper_status(st: std::fs::File) -> HelperStatus {
    let mut buf = Vec::new();
    let mut st = st;
    if let Err(e) = (&mut st).take(1 << 20).read_to_end(&mut buf) {
        return HelperStatus::Failed(format!("reading the source helper's status: {e}"));
    }
    let _ = std::io::copy(&mut st, &mut std::io::sink());
    match buf.split_first() {
        None => HelperStatus::Failed("the source helper ended without a word".into()),
        Some((b'T', rest)) => HelperStatus::Traced(
            rest.split(|b| *b == 0)
                .filter(|p| !p.is_empty())
                .map(|p| std::path::PathBuf::from(String::from_utf8_lossy(p).into_owned()))
                .collect(),
        ),
        Some((b'N', why)) => HelperStatus::NoNamespace(String::from_utf8_lossy(why).into_owned()),
        Some((_, why)) => HelperStatus::Failed(String::from_utf8_lossy(why).into_owned()),
    }
}

/// Whether the note on sources run without a view was shown.
static SAID_NO_VIEW: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// No private mount namespace here (user namespaces off, a container's
/// seccomp profile): the source would run in the caller's view, where
/// what a sandboxed run wrote is visible, and untraced. Refused (atk27o
/// F4, atk27p F4) unless `REQUIRE_VAR` is `caller` (then judged by its
/// text only, ADR 0250, and said once).
fn without_view(argv: &[String], why: &str) -> Result<Zeroizing<String>, String> {
    let var = super::source_view::REQUIRE_VAR;
    if !std::env::var(var).is_ok_and(|v| v == "caller") {
        return Err(format!(
            "it was not run: a command source runs only where every place a sandboxed run may write is hidden from it and what it reads is traced ({why}); {var}=caller runs it in your own view instead, unhidden"
        ));
    }
    if !SAID_NO_VIEW.swap(true, std::sync::atomic::Ordering::Relaxed) {
        eprintln!(
            "skarn: warning: a secret's command source runs without hiding the places sandboxed \
             runs may write ({why}): only its text was checked (ADR 0250), as {var}=caller says"
        );
    }
    run_command(argv, &SourceView::direct())
}
