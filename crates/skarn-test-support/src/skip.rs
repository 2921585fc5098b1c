//! Honest skips: a test that cannot run says so, and CI can forbid it.
//!
//! `skip!("why")` prints `SKIPPED <module path>:<line>: why` to stderr and
//! returns from the test. When `SKARN_TEST_FORBID_SKIP` is set to anything
//! but `0` or the empty string (`.ci/run` sets it), the same call panics
//! instead, so a machine that lacks what a test needs fails loudly rather
//! than reporting a pass for a test that checked nothing.

/// Whether skips are forbidden in this run (`SKARN_TEST_FORBID_SKIP`).
pub fn skips_forbidden() -> bool {
    std::env::var_os("SKARN_TEST_FORBID_SKIP").is_some_and(|v| !v.is_empty() && v != "0")
}

/// Report a skip (or fail, when skips are forbidden). Called by [`skip!`].
///
/// # Panics
/// When `SKARN_TEST_FORBID_SKIP` is set.
pub fn report_skip(place: &str, reason: &str) {
    if skips_forbidden() {
        panic!(
            "test could not run and skips are forbidden here (SKARN_TEST_FORBID_SKIP): {place}: {reason}"
        );
    }
    eprintln!("SKIPPED {place}: {reason}");
}

/// Skip the current test with a reason: prints it and returns `()` from
/// the enclosing function (or `$ret` with the two-argument form). Panics
/// instead when `SKARN_TEST_FORBID_SKIP` is set (CI).
#[macro_export]
macro_rules! skip {
    ($($arg:tt)+) => {{
        $crate::skip::report_skip(
            &format!("{}:{}", module_path!(), line!()),
            &format!($($arg)+),
        );
        return;
    }};
}

/// Like [`skip!`], for helpers that return a value: `skip_with!(None, "why")`.
#[macro_export]
macro_rules! skip_with {
    ($ret:expr, $($arg:tt)+) => {{
        $crate::skip::report_skip(
            &format!("{}:{}", module_path!(), line!()),
            &format!($($arg)+),
        );
        return $ret;
    }};
}
