//! Names of the modules Python's start-up imports from any directory on
//! its path, shared by the walk of the grants and the venv guard.

use std::ffi::OsStr;

/// The modules [`customize_module`] names.
const START_MODULES: &[&[u8]] = &[
    b"sitecustomize",
    b"usercustomize",
    b"readline",
    b"apport_python_hook",
];

/// Whether `name` is a customize module (`sitecustomize`, `usercustomize`)
/// in any form the import system loads. Python imports it at start from
/// any directory on its path, not only site-packages: a directory a
/// plain `.pth` line names (an editable install's `src`), `PYTHONPATH`'s
/// (issue 22, A). One made or changed in any directory of a writable
/// grant is set aside after the run, as agents' settings are.
///
/// Also the other modules start-up imports that an interpreter may lack,
/// and then takes from any later directory of its path: `readline` (an
/// interactive python imports it; builds without it exist),
/// `apport_python_hook` (Debian's and Ubuntu's `sitecustomize` imports it
/// when present). (`_distutils_hack`, which setuptools installs, is the
/// venv guard's: [`crate::protect::venv_guard`].)
pub fn customize_module(n: &OsStr) -> bool {
    let n = n.as_encoded_bytes();
    START_MODULES.iter().any(|m| {
        n == *m
            || n.strip_prefix(*m)
                .is_some_and(|rest| rest.starts_with(b"."))
    })
}
