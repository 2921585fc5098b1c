//! A configured secret's real value in the command's own arguments
//! (atk27r F6): the caller's shell expanded `$NPM_TOKEN` inside double
//! quotes, so the value would reach the sandboxed process in its `argv`
//! (readable in `/proc/self/cmdline`, by every child, sendable anywhere
//! the run may reach). Every argument is searched, in every form the
//! proxy's scrubber knows, for the values that can be read without
//! running anything (`file`, `from_env`: granted or not) and for the
//! values resolved for the run; a hit refuses the run naming the
//! argument's position, never the value.

use std::ffi::OsStr;

use skarn_egress::ValueFinder;
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
    let finder = (!resolved.is_empty()).then(|| ValueFinder::new(resolved));
    for (i, a) in argv.iter().enumerate() {
        let text = a.as_ref().as_encoded_bytes();
        let name = known
            .and_then(|k| k.holding(text))
            .map(str::to_string)
            .or_else(|| {
                let f = finder.as_ref()?;
                f.found_in(text).then(|| {
                    (resolved.iter())
                        .find(|s| ValueFinder::new(std::slice::from_ref(*s)).found_in(text))
                        .map_or_else(|| "a granted secret".to_string(), |s| s.name.clone())
                })
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
