//! How the plan reaches the helper: an inherited pipe named by
//! [`PLAN_FD_ENV`] (the usual way), else environment variables of at most
//! [`MAX_PLAN_BYTES`] in all.

/// The largest plan handed to the helper (its pieces share the 2 MiB the
/// kernel allows for arguments and environment with the command's own).
pub(crate) const MAX_PLAN_BYTES: usize = 1024 * 1024;

/// Environment variable carrying the JSON plan to the helper.
pub(crate) const PLAN_ENV: &str = "SKARN_SANDBOX_PLAN";

/// Environment variable naming the inherited pipe the plan is read from
/// (the usual way; [`PLAN_ENV`] only when no pipe could hold it).
pub(crate) const PLAN_FD_ENV: &str = "SKARN_SANDBOX_PLAN_FD";

/// Read the whole plan from the inherited descriptor `fd` and close it.
pub(crate) fn read_plan_fd(fd: i32) -> Option<zeroize::Zeroizing<Vec<u8>>> {
    use std::io::Read;
    use std::os::fd::FromRawFd;
    if fd < 3 {
        return None;
    }
    // SAFETY: `fd` was inherited for this purpose (`launch::helper_command`)
    // and nothing else in this fresh process uses it: it is taken over and
    // closed here.
    let f = unsafe { std::fs::File::from_raw_fd(fd) };
    let mut buf = zeroize::Zeroizing::new(Vec::new());
    f.take(MAX_PLAN_BYTES as u64 + 1)
        .read_to_end(&mut buf)
        .ok()?;
    Some(buf)
}

/// The variable holding piece `i` of the plan: [`PLAN_ENV`] for the first,
/// `SKARN_SANDBOX_PLAN_<i>` for the others.
pub(crate) fn plan_piece_var(i: usize) -> String {
    if i == 0 {
        PLAN_ENV.to_owned()
    } else {
        format!("{PLAN_ENV}_{i}")
    }
}
