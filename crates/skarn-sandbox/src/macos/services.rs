//! The system services, sysctls and secret locations of the macOS
//! profile, as data: each entry says why it is there.
//!
//! Left out on purpose (each lets a command act outside the sandbox or
//! read a secret through a daemon): `com.apple.SecurityServer` and
//! `com.apple.securityd.xpc` (keychain items), LaunchServices
//! (`com.apple.coreservices.launchservicesd`, `com.apple.lsd.*`: `open`
//! would start an unconfined application), `com.apple.pasteboard.1` (the
//! clipboard), `com.apple.FSEvents` (change events for the whole disk),
//! Apple Events, and every `sysctl` that lists other processes
//! (`kern.proc.all`, `kern.proc.uid.`).

/// One Mach service a command may look up, with the reason.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Service {
    /// The global name.
    pub name: &'static str,
    /// Only when the network is open (outbound, all, allow-list).
    pub network_only: bool,
    /// Why common tools need it.
    pub why: &'static str,
}

const fn svc(name: &'static str, network_only: bool, why: &'static str) -> Service {
    Service {
        name,
        network_only,
        why,
    }
}

/// Mach services looked up by common command-line tools.
pub(crate) const MACH_SERVICES: &[Service] = &[
    svc(
        "com.apple.system.opendirectoryd.libinfo",
        false,
        "getpwuid/getpwnam/getgrgid: whoami, id, ls -l, git and ssh read the user database",
    ),
    svc(
        "com.apple.system.opendirectoryd.membership",
        false,
        "group membership checks (mbr_*) behind access() and id",
    ),
    svc(
        "com.apple.system.notification_center",
        false,
        "notify(3): libc watches time-zone and resolver changes through it",
    ),
    svc(
        "com.apple.bsd.dirhelper",
        false,
        "confstr(_CS_DARWIN_USER_TEMP_DIR / _CACHE_DIR): xcrun, clang and Foundation ask for them",
    ),
    svc(
        "com.apple.cfprefsd.agent",
        false,
        "CFPreferences reads (xcrun, swift, Foundation tools); writes stay refused",
    ),
    svc(
        "com.apple.cfprefsd.daemon",
        false,
        "CFPreferences reads of system-wide defaults",
    ),
    svc(
        "com.apple.trustd.agent",
        true,
        "TLS certificate evaluation by Security.framework (curl, git, native-tls)",
    ),
    svc(
        "com.apple.ocspd",
        true,
        "certificate revocation checks during TLS evaluation",
    ),
    svc(
        "com.apple.SystemConfiguration.DNSConfiguration",
        true,
        "the resolver configuration used by getaddrinfo",
    ),
    svc(
        "com.apple.SystemConfiguration.configd",
        true,
        "network reachability and proxy settings (CFNetwork)",
    ),
    svc(
        "com.apple.dnssd.service",
        true,
        "DNS lookups through mDNSResponder",
    ),
];

/// Sysctl names (exact) readable by the command: hardware and OS facts
/// that runtimes, compilers and build tools query at start-up.
pub(crate) const SYSCTL_NAMES: &[&str] = &[
    "kern.argmax",
    "kern.bootargs",
    "kern.hostname",
    "kern.maxfiles",
    "kern.maxfilesperproc",
    "kern.maxproc",
    "kern.ngroups",
    "kern.osproductversion",
    "kern.osrelease",
    "kern.ostype",
    "kern.osvariant_status",
    "kern.osversion",
    "kern.secure_kernel",
    "kern.usrstack64",
    "kern.version",
    "kern.boottime",
    "kern.hv_support",
    "sysctl.proc_cputype",
    "sysctl.proc_translated",
    "vm.loadavg",
    "vm.pagesize",
    "security.mac.lockdown_mode_state",
];

/// Sysctl name prefixes readable by the command. `kern.proc.pid.` is a
/// process's own information (Rust's, Go's and Node's runtimes read it for
/// themselves; it names one pid, not a list).
pub(crate) const SYSCTL_PREFIXES: &[&str] =
    &["hw.", "machdep.cpu.", "machdep.ptrauth", "kern.proc.pid."];

/// macOS locations holding credentials or private data, relative to the
/// home directory, denied in addition to
/// [`crate::policy::HOME_SECRET_PATHS`].
pub(crate) const MAC_HOME_SECRET_PATHS: &[&str] = &[
    // Keychain files (the keychain daemon is not reachable either).
    "Library/Keychains",
    // Browser cookies, saved passwords and sessions.
    "Library/Cookies",
    "Library/Safari",
    "Library/Application Support/Google/Chrome",
    "Library/Application Support/BraveSoftware",
    "Library/Application Support/Microsoft Edge",
    "Library/Application Support/Firefox/Profiles",
    "Library/Application Support/Arc",
    // Mail and messages.
    "Library/Mail",
    "Library/Messages",
    // Password managers and cloud sync clients.
    "Library/Application Support/1Password",
    "Library/Group Containers/2BUA8C4S2C.com.1password",
    "Library/Application Support/Bitwarden",
    "Library/Application Support/com.apple.TCC",
    // Cloud CLIs that keep tokens under Library on macOS.
    "Library/Application Support/gcloud",
    "Library/Application Support/heroku",
    // Editors' stored sessions and tokens.
    "Library/Application Support/Code/User/globalStorage",
    "Library/Application Support/Cursor/User/globalStorage",
];

/// System-wide macOS secrets (readable by root).
pub(crate) const MAC_SYSTEM_SECRET_PATHS: &[&str] = &[
    "/Library/Keychains",
    "/private/var/db/sudo",
    "/private/var/root",
    "/private/etc/master.passwd",
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_service_is_explained_and_unique() {
        let mut seen = std::collections::BTreeSet::new();
        for s in MACH_SERVICES {
            assert!(seen.insert(s.name), "duplicate {}", s.name);
            assert!(!s.why.is_empty());
            for banned in [
                "SecurityServer",
                "securityd",
                "launchservices",
                "lsd.",
                "pasteboard",
            ] {
                assert!(!s.name.contains(banned), "{} reaches outside", s.name);
            }
        }
        assert!(
            !SYSCTL_PREFIXES
                .iter()
                .any(|p| "kern.proc.all".starts_with(p))
        );
    }
}
