//! The environment file Gemini CLI loads at start (attack atk24r F6): the
//! first of `.gemini/.env` and `.env` found from its working directory
//! up. Its variables reach every process Gemini starts: this hook and the
//! host shell that runs the hook's rewritten `skarn run ...` command, so a
//! cloned repository's `BASH_ENV=./tools/rc` or `LD_PRELOAD=./x.so` runs
//! its code on the host before skarn starts, on every shell call. While
//! the file sets a variable by which host programs run code
//! ([`skarn_sandbox::protect::dotenv::judge`], the rule `skarn run`
//! applies to the `.env` files a run leaves), every call is refused (fail
//! closed): the user removes those lines and restarts Gemini CLI. The
//! user's own files (the home and above) are not looked at.

use std::path::Path;
#[cfg(unix)]
use std::path::PathBuf;

/// The file Gemini CLI loads from `cwd`, below the home, if any.
#[cfg(unix)]
fn loaded(cwd: &Path, home: Option<&Path>) -> Option<PathBuf> {
    let mut d = Some(cwd);
    while let Some(x) = d {
        if home.is_some_and(|h| x == h || h.starts_with(x)) || x.parent().is_none() {
            return None;
        }
        for f in [x.join(".gemini/.env"), x.join(".env")] {
            if f.is_file() {
                return Some(f);
            }
        }
        d = x.parent();
    }
    None
}

/// Why every call is refused, when the file Gemini CLI loaded from `cwd`
/// sets a variable by which host programs run code.
#[cfg(unix)]
pub fn refusal(cwd: &Path) -> Option<String> {
    let home = std::env::var_os("HOME")
        .map(PathBuf::from)
        .filter(|h| h.is_absolute());
    let f = loaded(cwd, home.as_deref())?;
    let why = skarn_sandbox::protect::dotenv::judge(&f)?;
    Some(skarn_sandbox::protect::terminal_filter::one_line(&format!(
        "skarn: refused: {} is the environment file Gemini CLI loaded at start into every \
         process it starts (this hook and the host shell running each command, before skarn \
         runs): {why}. Remove those lines (or the file) and restart Gemini CLI",
        f.display()
    )))
}

/// Elsewhere the loader variables are not judged here.
#[cfg(not(unix))]
pub fn refusal(_cwd: &Path) -> Option<String> {
    None
}
