//! A configured secret's real value in the command's own arguments
//! (atk27r F6): the caller's shell expanded `$NPM_TOKEN` inside double
//! quotes, so the value would reach the sandboxed process in its `argv`
//! (readable in `/proc/self/cmdline`, by every child, sendable anywhere
//! the run may reach). Every argument is searched for the whole values
//! that can be read without running anything (`file`, `from_env`:
//! granted or not) and for the values resolved for the run; a hit
//! refuses the run naming the argument's position, never the value.
//! Only whole values (verbatim, hex, base64): the arguments are the sandboxed side's
//! own text (the hook passes the agent's command), and a refusal for a
//! piece of a value would answer its guesses one by one; pieces are the
//! probe lock-out's (ADR 0314), which records the first and answers no
//! more.

use std::ffi::OsStr;

use skarn_egress::secrets::SecretSpec;
use skarn_egress::secrets::known::KnownValues;

/// Why `argv` is refused: the first argument holding a configured
/// secret's value (`known`) or a resolved one (`resolved`), by position
/// (0 is the program) and secret name.
pub fn refusal<S: AsRef<OsStr>>(
    argv: &[S],
    known: Option<&KnownValues>,
    resolved: &[SecretSpec],
) -> Option<String> {
    for (i, a) in argv.iter().enumerate() {
        let text = a.as_ref().as_encoded_bytes();
        let name = known
            .and_then(|k| k.holding_whole(text))
            .map(str::to_string)
            .or_else(|| {
                resolved
                    .iter()
                    .find(|s| skarn_egress::secrets::known::whole_found(s.value.as_bytes(), text))
                    .map(|s| s.name.clone())
            });
        if let Some(name) = name {
            return Some(format!(
                "argument {i} of the command holds the real value of secret {name} (not \
                 shown): the command would get it in its argv; refer to the variable inside \
                 the command instead (sh -c 'tool \"$VAR\"', single quotes) so the run gets \
                 the placeholder"
            ));
        }
    }
    None
}
