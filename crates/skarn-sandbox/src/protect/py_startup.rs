//! Names of the modules Python's start-up imports from any directory on
//! its path, shared by the walk of the grants and the venv guard.

use std::ffi::OsStr;

/// Whether `name` is a customize module (`sitecustomize`, `usercustomize`)
/// in any form the import system loads. Python imports it at start from
/// any directory on its path, not only site-packages: a directory a
/// plain `.pth` line names (an editable install's `src`), `PYTHONPATH`'s
/// (issue 22, A). One made or changed in any directory of a writable
/// grant is set aside after the run, as agents' settings are.
pub fn customize_module(n: &OsStr) -> bool {
    let n = n.as_encoded_bytes();
    [&b"sitecustomize"[..], b"usercustomize"].iter().any(|m| {
        n == *m
            || n.strip_prefix(*m)
                .is_some_and(|rest| rest.starts_with(b"."))
    })
}
