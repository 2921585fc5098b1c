//! TEMPORARY timing marks (not committed).
pub fn mark(label: &str) {
    if std::env::var_os("SKARN_TIMING").is_none() { return; }
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    let us = ts.tv_sec as u64 * 1_000_000 + ts.tv_nsec as u64 / 1000;
    let pid = unsafe { libc::getpid() };
    crate::sys::write_fd(2, format!("T {us} {pid} {label}\n").as_bytes());
}
