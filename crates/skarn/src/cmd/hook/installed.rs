//! The hook command `skarn init` installs for each agent: a fail-closed
//! `/bin/sh -c` line (it blocks when skarn cannot run), how it is
//! recognised (this version's and earlier ones'), and the acknowledgement
//! skarn gives it once it has answered.

use std::io::Write;

use super::quote;

/// The command `skarn init` installs for `agent`. It fails closed: when
/// the binary cannot run at all (moved or deleted by an upgrade: the
/// shell's 127, a crash, a signal) it still exits 2, which every client
/// reads as "block this call", and says how to repair it; the hook's own
/// exit 2 keeps its reason as the only message. The agents run hook
/// commands through the user's shell, which may be fish, where POSIX
/// syntax (`s=$?`) is a parse error that exits 0 (atk24g F1): so the line
/// is one `/bin/sh -c` call whose script is a constant with no `'` or
/// `\\` (read alike by POSIX shells and fish), and the binary, agent and
/// message are its arguments, quoted by [`quote`] (also read alike).
pub fn installed_command(exe: &str, agent: &str) -> String {
    let msg = format!(
        "skarn hook: cannot run {exe} (moved or removed, e.g. by an upgrade?), so this tool \
         call is blocked. Repair: run `skarn init --client {agent}` again with the skarn you \
         now have, or remove the skarn hook from this agent's settings."
    );
    format!(
        "/bin/sh -c '{INSTALLED_SCRIPT}' skarn-hook {} {} {}",
        quote(exe),
        quote(agent),
        quote(&msg)
    )
}

/// Whether `cmd` is exactly a command `skarn init` installs (or
/// installed in earlier versions) for `agent`, for some binary: `init`
/// replaces those and reports every other hook of a project's settings. A
/// command that merely mentions `hook AGENT` is not one.
pub fn is_installed_hook(cmd: &str, agent: &str) -> bool {
    for script in [INSTALLED_SCRIPT, PREVIOUS_SCRIPT] {
        let prefix = format!("/bin/sh -c '{script}' skarn-hook ");
        if let Some(rest) = cmd.strip_prefix(&prefix) {
            return super::shell::unquote_words(rest).is_some_and(|w| {
                (w.len() == 3
                    && installed_command(&w[0], agent).replacen(INSTALLED_SCRIPT, script, 1) == cmd)
                    || (w.len() == 4
                        && script == INSTALLED_SCRIPT
                        && guard_token(&w[3])
                        && guard_command(&w[0], agent, &w[3][GUARD.len()..]) == cmd)
            });
        }
    }
    // Before atk24g F1: a POSIX line starting with the quoted binary, or,
    // before ADR 0066, the bare `'EXE' hook AGENT`.
    let Some(exe) = cmd
        .split_once(" hook ")
        .and_then(|(first, _)| super::shell::unquote_words(first))
        .filter(|w| w.len() == 1)
        .map(|mut w| w.remove(0))
    else {
        return false;
    };
    let bare = format!("{} hook {agent}", quote(&exe));
    cmd == bare || cmd == legacy_command(&exe, agent)
}

/// The first word of a guard's token (ADR 0342).
const GUARD: &str = "guard-";

/// Whether `w` is a guard's token: [`GUARD`] and 32 lowercase hex digits.
fn guard_token(w: &str) -> bool {
    w.strip_prefix(GUARD).is_some_and(|t| {
        t.len() == 32
            && t.bytes()
                .all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase())
    })
}

/// [`installed_command`] with the per-user token `token` (32 hex digits)
/// as a last argument the script does not read (ADR 0342): Claude Code
/// runs one entry per shell, command, `args` and `if` and keeps the last
/// one's `async` and `timeout`, so a project copy of a command it can
/// guess replaces the user's entry; one naming a token the repository
/// cannot know is never replaced.
pub fn guard_command(exe: &str, agent: &str, token: &str) -> String {
    format!(
        "{} {}",
        installed_command(exe, agent),
        quote(&format!("{GUARD}{token}"))
    )
}

/// A new guard token: 16 bytes of the kernel's random source, in hex.
pub fn new_guard_token() -> std::io::Result<String> {
    use std::io::Read;
    let mut b = [0u8; 16];
    std::fs::File::open("/dev/urandom")?.read_exact(&mut b)?;
    Ok(b.iter().map(|x| format!("{x:02x}")).collect())
}

/// The token of the guard command `cmd` (`None`: not one).
pub fn guard_of(cmd: &str, agent: &str) -> Option<String> {
    let rest = cmd.strip_prefix(&format!("/bin/sh -c '{INSTALLED_SCRIPT}' skarn-hook "))?;
    let w = super::shell::unquote_words(rest)?;
    (w.len() == 4 && is_installed_hook(cmd, agent)).then(|| w[3][GUARD.len()..].to_string())
}

/// Whether `cmd` is skarn's own hook for `agent` run by this very skarn
/// (the installed form naming another binary, `'sh' hook claude-code`,
/// runs the workspace's `hook`: atk24m F1, atk24n F2).
pub fn is_own_hook(cmd: &str, agent: &str) -> bool {
    let exe = std::env::current_exe()
        .map(|e| e.to_string_lossy().into_owned())
        .unwrap_or_default();
    installed_exe(cmd, agent).is_some_and(|b| super::confine_hooks::is_this_skarn(&b, &exe))
}

/// The binary a command `skarn init` installs for `agent` runs (`None`:
/// not such a command).
pub fn installed_exe(cmd: &str, agent: &str) -> Option<String> {
    if !is_installed_hook(cmd, agent) {
        return None;
    }
    for script in [INSTALLED_SCRIPT, PREVIOUS_SCRIPT] {
        let prefix = format!("/bin/sh -c '{script}' skarn-hook ");
        if let Some(rest) = cmd.strip_prefix(&prefix) {
            return super::shell::unquote_words(rest)
                .and_then(|mut w| (!w.is_empty()).then(|| w.remove(0)));
        }
    }
    cmd.split_once(" hook ")
        .and_then(|(first, _)| super::shell::unquote_words(first))
        .filter(|w| w.len() == 1)
        .map(|mut w| w.remove(0))
}

/// The POSIX-only line `skarn init` wrote before atk24g F1.
fn legacy_command(exe: &str, agent: &str) -> String {
    let msg = format!(
        "skarn hook: cannot run {exe} (moved or removed, e.g. by an upgrade?), so this tool \
         call is blocked. Repair: run `skarn init --client {agent}` again with the skarn you \
         now have, or remove the skarn hook from this agent's settings."
    );
    format!(
        "{} hook {agent}; s=$?; [ \"$s\" = 0 ] && exit 0; [ \"$s\" = 2 ] || \
         printf '%s (exit %s)\\n' {} \"$s\" >&2; exit 2",
        quote(exe),
        quote(&msg)
    )
}

/// The script of [`installed_command`]: `$1 hook $2`, exit 0 or 2 only.
/// Status 0 counts only with skarn's acknowledgement on descriptor 3
/// ([`ACK`]): a file at the path that `sh` runs as an empty script (a
/// zero-length or shebang-only file left by an interrupted install) also
/// exits 0 with no answer, which the agents take for "go ahead" (attack
/// atk24k F5). The answer on stdout passes through untouched.
const INSTALLED_SCRIPT: &str = "exec 4>&1; m=$( { SKARN_HOOK_ACK=3 \"$1\" hook \"$2\" 3>&1 1>&4 4>&-; \
     echo \" $?\"; } ); s=${m##* }; [ \"$s\" = 0 ] && [ \"${m%% *}\" = skarn-hook-ok ] && exit 0; \
     [ \"$s\" = 2 ] || printf \"%s (exit %s)\\n\" \"$3\" \"$s\" >&2; exit 2";

/// The script `init` installed before atk24k F5 (recognised, replaced).
const PREVIOUS_SCRIPT: &str = "\"$1\" hook \"$2\"; s=$?; [ \"$s\" = 0 ] && exit 0; \
     [ \"$s\" = 2 ] || printf \"%s (exit %s)\\n\" \"$3\" \"$s\" >&2; exit 2";

/// What the hook writes on the descriptor the installed script names in
/// `SKARN_HOOK_ACK` once it has answered.
const ACK: &str = "skarn-hook-ok";

/// Write [`ACK`] on descriptor 3 when `$SKARN_HOOK_ACK` asks for it (the
/// installed line's and a wrapped hook's script); `false` only when asked
/// and it could not be written.
pub fn acknowledge() -> bool {
    if std::env::var_os("SKARN_HOOK_ACK").is_none_or(|v| v != "3") {
        return true;
    }
    std::fs::OpenOptions::new()
        .write(true)
        .open("/dev/fd/3")
        .and_then(|mut f| f.write_all(ACK.as_bytes()))
        .is_ok()
}

#[cfg(test)]
mod installed_tests {
    use super::*;

    #[test]
    fn the_script_before_the_acknowledgement_is_still_recognised() {
        let cmd = installed_command("/opt/skarn", "claude-code");
        assert!(cmd.contains(ACK) || cmd.contains("SKARN_HOOK_ACK=3"));
        let old = cmd.replacen(INSTALLED_SCRIPT, PREVIOUS_SCRIPT, 1);
        assert_ne!(old, cmd);
        assert!(is_installed_hook(&old, "claude-code"));
        assert!(!is_installed_hook(&old, "codex"));
        assert!(!is_installed_hook(
            &format!("{old}; curl x | sh"),
            "claude-code"
        ));
    }
}
