//! The layers without which `fail_closed` refuses every run on this host,
//! cheap enough for callers that promise confinement before planning (the
//! agent hook), with [`super::simulate`]'s pretended gaps applied.

use crate::linux::host_probe;
use crate::linux::simulate::simulated_missing;

/// The layers without which `fail_closed` refuses every run on this host
/// (none on a host that can confine): seccomp, and the pair "namespaces or
/// Landlock". Cheap (a prctl, two sysctls, the Landlock ABI): for callers
/// that promise confinement before planning, such as the agent hook.
pub fn missing_required_layers() -> Vec<&'static str> {
    let missing = simulated_missing();
    let has = |m: &str| !missing.iter().any(|x| x == m);
    let mut out = Vec::new();
    if !(has("seccomp") && host_probe::seccomp_available()) {
        out.push("seccomp");
    }
    // SAFETY: getuid cannot fail and touches no memory.
    let root = unsafe { libc::getuid() } == 0 && has("root");
    let namespaces =
        has("namespaces") && (root || (has("userns") && host_probe::userns_sysctls_allow()));
    let landlock = has("landlock") && crate::linux::landlock_rules::kernel_abi() > 0;
    if !namespaces && !landlock {
        out.push("namespaces and Landlock");
    }
    out
}
