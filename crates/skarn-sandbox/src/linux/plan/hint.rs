//! Planning part 8: the line printed when the command fails, and the
//! watch on a workspace inside the run's private /tmp.

use std::path::{Path, PathBuf};

use super::grants::Granted;
use super::{Access, Namespaces};
use crate::policy::{NetPolicy, Policy};

/// The parts of [`failure_hint`]'s line that name a wider policy (flags
/// and where to read more): for a person at a terminal. What relays the
/// line to a model (the gateway) removes them: the model gets the fact.
pub const ADVICE: &[&str] = crate::report::advice::FRAGMENTS;

/// What the sandbox denies, in one line, for an agent to tell a denial
/// from a bug and ask for exactly the grant it needs.
pub(super) fn failure_hint(policy: &Policy, g: &Granted, ns: Namespaces, home: bool) -> String {
    let writable: Vec<String> = g
        .binds
        .iter()
        .filter(|(_, a, _)| *a == Access::ReadWrite)
        .map(|(p, _, _)| p.display().to_string())
        .collect();
    let mut private: Vec<&str> = Vec::new();
    if ns.mount {
        private.push("/tmp");
    }
    if home {
        private.push("~");
    }
    format!(
        "skarn: sandbox: the command failed; denied here: network {}; writes {}{}; \
         secret paths (~/.ssh, ~/.aws, ...){}",
        match policy.net {
            NetPolicy::DenyAll => format!("(all of it: names do not resolve{})", ADVICE[0]),
            NetPolicy::AllowLoopback => format!("beyond the sandbox's own loopback{}", ADVICE[1]),
            NetPolicy::AllowOutbound => "inbound (listen/bind)".into(),
            NetPolicy::AllowAll => "nothing".into(),
            NetPolicy::AllowHosts(_) =>
                "to hosts outside the allow list (see skarn: net: lines)".into(),
        },
        if writable.is_empty() {
            // The workspace itself was made read-only (a home start-up
            // file reaches it; --report says which).
            format!(
                "anywhere (the workspace {} is read-only for this run: a home start-up file \
                 reaches it)",
                policy.workspace.display()
            )
        } else {
            format!("outside {}", writable.join(", "))
        },
        if private.is_empty() {
            String::new()
        } else {
            format!(
                " ({} {} private to the run and discarded)",
                private.join(" and "),
                if private.len() > 1 { "are" } else { "is" }
            )
        },
        ADVICE[2],
    )
}

/// When the command, or a command a `sh -c`/`bash -c` script names, is a
/// program the host has but the run cannot see (a PATH directory outside
/// the grants, `~/bin`, `~/.local/bin`): the line that names its host path
/// and the grant that makes it visible, printed when the command is not
/// found (exit 127). Decided on the host before the run, against the same
/// PATH the command inherits.
pub(super) fn not_found_hint(
    argv: &[std::ffi::OsString],
    path_var: Option<&std::ffi::OsStr>,
    g: &Granted,
) -> Option<String> {
    let hidden: Vec<(String, PathBuf)> = candidates(argv)
        .into_iter()
        .filter_map(|n| hidden_program(&n, path_var, g).map(|p| (n, p)))
        .take(4)
        .collect();
    let (name, found) = hidden.first()?;
    let dir = found.parent()?.display().to_string();
    let mut line = format!(
        "skarn: {name} is {} on the host, outside what this run may see: grant its directory \
         with --exec {dir} (or exec = [\"{dir}\"] under [run] in ~/.config/skarn/config.toml)",
        found.display()
    );
    for (n, p) in &hidden[1..] {
        line.push_str(&format!(
            "; {n} is {} (--exec {})",
            p.display(),
            p.parent()
                .map(|d| d.display().to_string())
                .unwrap_or_default()
        ));
    }
    Some(line)
}

/// The program names to look for: the command's, and for a shell given a
/// script (`sh -c 'make && deploy'`) the first word of each of the
/// script's commands (at most 64; assignments and shell keywords skipped).
fn candidates(argv: &[std::ffi::OsString]) -> Vec<String> {
    let Some(first) = argv.first() else {
        return Vec::new();
    };
    let mut out = vec![first.to_string_lossy().into_owned()];
    let base = Path::new(first)
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let shell = matches!(base.as_str(), "sh" | "bash" | "dash" | "zsh" | "ksh");
    let script = argv
        .iter()
        .position(|a| a == "-c" || a == "-lc" || a == "-ec")
        .and_then(|i| argv.get(i + 1));
    if let (true, Some(script)) = (shell, script) {
        let script = script.to_string_lossy();
        const KEYWORDS: &[&str] = &[
            "if", "then", "else", "elif", "fi", "do", "done", "while", "until", "for", "case",
            "esac", "!", "{", "}", "time", "exec", "env", "command", "nohup", "sudo", "xargs",
        ];
        for seg in script.split(['\n', ';', '|', '&', '(', ')', '`']).take(64) {
            let word = seg
                .split_whitespace()
                .find(|w| !w.contains('=') && !KEYWORDS.contains(w));
            if let Some(w) = word
                && !w.starts_with(['$', '-', '\'', '"', '<', '>'])
                && !out.iter().any(|o| o == w)
            {
                out.push(w.to_string());
            }
        }
    }
    out
}

/// The host path of the program `name` when the run cannot see it.
fn hidden_program(name: &str, path_var: Option<&std::ffi::OsStr>, g: &Granted) -> Option<PathBuf> {
    use std::os::unix::fs::PermissionsExt;
    let visible = |p: &Path| g.binds.iter().any(|(b, _, _)| p.starts_with(b));
    let executable = |p: &Path| {
        std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
    };
    let found: PathBuf = if name.contains('/') {
        let p = PathBuf::from(name);
        (p.is_absolute() && executable(&p)).then_some(p)?
    } else {
        let path_var = path_var?;
        std::env::split_paths(path_var)
            .filter(|d| d.is_absolute())
            .map(|d| d.join(name))
            .find(|p| executable(p))?
    };
    // Visible inside under its own name or its real one: then a 127 came
    // from somewhere else.
    let real = std::fs::canonicalize(&found).unwrap_or_else(|_| found.clone());
    if visible(&found) || visible(&real) {
        return None;
    }
    Some(found)
}

/// Where the read hint's advice starts (cut for a model, ADR 0240).
pub use crate::report::advice::READ_ADVICE;

/// When the command names a path (an argument, a word of a `sh -c`
/// script, `~/` expanded) the host has outside what the run may see:
/// inside, that path is a missing file, and the kernel records no denial
/// for it (paths outside the grants are not in the run's root at all).
/// The line naming it, with the grant, printed when the command fails and
/// nothing was recorded (issue 23 item 6). Secrets are never named.
pub(super) fn read_hint(
    argv: &[std::ffi::OsString],
    home: Option<&Path>,
    g: &Granted,
) -> Option<String> {
    let visible = |p: &Path| g.binds.iter().any(|(b, _, _)| p.starts_with(b));
    let secret = |p: &Path| g.secrets.iter().any(|(s, _)| p.starts_with(s));
    let mut found: Vec<PathBuf> = Vec::new();
    for w in path_words(argv) {
        let p = match (w.strip_prefix("~/"), home) {
            (Some(rest), Some(h)) => h.join(rest),
            _ => PathBuf::from(&w),
        };
        if !p.is_absolute()
            || ["/proc", "/dev", "/sys"].iter().any(|s| p.starts_with(s))
            || std::fs::symlink_metadata(&p).is_err()
            || found.contains(&p)
        {
            continue;
        }
        let real = std::fs::canonicalize(&p).unwrap_or_else(|_| p.clone());
        if visible(&p) || visible(&real) || secret(&p) || secret(&real) {
            continue;
        }
        found.push(p);
        if found.len() == 4 {
            break;
        }
    }
    let first = found.first()?.display().to_string();
    let others: Vec<String> = found[1..]
        .iter()
        .map(|p| format!(" {}", p.display()))
        .collect();
    Some(format!(
        "skarn: sandbox: the command failed and no denial was recorded; it names {}, which the \
         host has outside what this run may read: inside, {} a missing file (the kernel records \
         nothing for reads outside the grants){READ_ADVICE}{first}{} (or read = [...] under \
         [run] in skarn.toml, for the hook and the run tool)",
        found
            .iter()
            .map(|p| p.display().to_string())
            .collect::<Vec<_>>()
            .join(", "),
        if found.len() > 1 { "each is" } else { "it is" },
        others.concat(),
    ))
}

/// The words of `argv` that may be paths: every argument (`--opt=PATH`:
/// the value), and for a shell given a script, the script's words (at
/// most 256), quotes removed.
fn path_words(argv: &[std::ffi::OsString]) -> Vec<String> {
    let mut out = Vec::new();
    let mut push = |w: &str| {
        let w = w.trim_matches(['\'', '"']);
        let w = w.rsplit_once('=').map_or(w, |(_, v)| v);
        let w = w.trim_start_matches(['<', '>']);
        if (w.starts_with('/') || w.starts_with("~/")) && !w.contains(['$', '*', '?', '`']) {
            out.push(w.to_string());
        }
    };
    for a in argv.iter().skip(1) {
        let a = a.to_string_lossy();
        if a.contains(char::is_whitespace) {
            for w in a
                .split(|c: char| c.is_whitespace() || ";|&()`".contains(c))
                .take(256)
            {
                push(w);
            }
        } else {
            push(&a);
        }
    }
    out
}

/// The workspace when it lies in the run's private /tmp.
pub(super) fn tmp_watch(ws: &Path, ns: Namespaces) -> Option<PathBuf> {
    (ns.mount && ws.starts_with("/tmp") && ws != Path::new("/tmp")).then(|| ws.to_path_buf())
}
