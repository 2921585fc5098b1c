//! Where a `command` (or `keyring`) source runs (ADR 0283): through this
//! binary re-entered as a helper that hides, in a private mount namespace,
//! every place a sandboxed run may write before it starts the source. What
//! the source loads is then decided by the kernel's view, not by a reading
//! of the source's text (its `#!` lines, the shell's `cd`, quoting, `PATH`
//! lookups: atk27l F1-F6): a module, interpreter or program planted there
//! by a run is simply not there when the host runs the source.
//!
//! The variables that make loaders and interpreters load code from a
//! directory they name are removed from the source's environment
//! ([`stripped`]): with the places hidden they would only fail every start
//! (`LD_PRELOAD`), and one naming a place that is not hidden would load it.

use std::ffi::OsStr;
use std::path::PathBuf;

/// The hidden entry of the skarn binary that runs a source.
pub const HELPER_ENTRY: &str = "__source-helper";

/// The variable that, set to `caller`, makes a system without user
/// namespaces run `command` sources in the caller's view, unhidden and
/// untraced, instead of refusing them (the default, ADR 0319).
pub const REQUIRE_VAR: &str = "SKARN_SECRET_SOURCE_VIEW";

/// How a source is started.
#[derive(Debug, Clone, Default)]
pub struct SourceView {
    /// The skarn binary to re-enter (`None`: the source is started
    /// directly, as on systems without a helper, and in unit tests).
    pub(super) helper: Option<PathBuf>,
    /// The places hidden from it (absolute paths).
    pub(super) hide: Vec<PathBuf>,
}

impl SourceView {
    /// Start sources through `helper` (`HELPER_ENTRY`), hiding `hide`.
    pub fn through(helper: PathBuf, hide: Vec<PathBuf>) -> SourceView {
        SourceView {
            helper: Some(helper),
            hide,
        }
    }

    /// Start sources directly (no helper on this system).
    pub fn direct() -> SourceView {
        SourceView::default()
    }

    /// The places hidden from the source.
    pub fn hidden(&self) -> &[PathBuf] {
        &self.hide
    }
}

/// Variables that name code or directories a loader, shell or interpreter
/// loads code from at start.
const STRIPPED: &[&str] = &[
    "BASH_ENV",
    "ENV",
    "PYTHONPATH",
    "PYTHONSTARTUP",
    "PYTHONHOME",
    "PYTHONUSERBASE",
    "PYTHONEXECUTABLE",
    "PYTHONBREAKPOINT",
    "NODE_OPTIONS",
    "NODE_PATH",
    "NODE_REPL_EXTERNAL_MODULE",
    "PERL5LIB",
    "PERLLIB",
    "PERL5OPT",
    "PERL5DB",
    "RUBYOPT",
    "RUBYLIB",
    "GEM_PATH",
    "JAVA_TOOL_OPTIONS",
    "JDK_JAVA_OPTIONS",
    "_JAVA_OPTIONS",
    "CLASSPATH",
    "GCONV_PATH",
    "LUA_PATH",
    "LUA_CPATH",
    "TCLLIBPATH",
    "R_PROFILE",
    "R_PROFILE_USER",
    "R_LIBS",
    "PHPRC",
    "PHP_INI_SCAN_DIR",
];

/// Whether variable `name` is removed from a source's environment: the
/// ones above and every `LD_` one (the dynamic loader's).
pub fn stripped(name: &OsStr) -> bool {
    let Some(n) = name.to_str() else {
        return false;
    };
    STRIPPED.contains(&n) || n.starts_with("LD_")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loader_and_search_path_variables_are_stripped() {
        for v in [
            "LD_PRELOAD",
            "LD_AUDIT",
            "PYTHONPATH",
            "BASH_ENV",
            "NODE_OPTIONS",
        ] {
            assert!(stripped(OsStr::new(v)), "{v}");
        }
        for v in ["PATH", "HOME", "DBUS_SESSION_BUS_ADDRESS", "OP_SESSION"] {
            assert!(!stripped(OsStr::new(v)), "{v}");
        }
    }
}
