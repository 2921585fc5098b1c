//! Deny-list family: socket families and netlink protocols beyond the few
//! a command needs, plus the extra rules some network policies add.

use super::{ArgCheck, ArgMatch, Cmp, OnMatch, SyscallRule, Width};

/// Socket families a sandboxed command may create, under every network
/// policy: unix, IPv4, IPv6 (inside an empty or loopback-only network
/// namespace unless `--net outbound|all`) and netlink (restricted to
/// [`NETLINK_ALLOWED`]). Everything else (vsock, packet, bluetooth, alg,
/// key, xdp, rds, tipc, can, nfc, pppox, llc, ...) reaches kernel code or
/// peers outside the namespaces and fails with EAFNOSUPPORT, what a
/// kernel without that family says.
pub const SOCKET_FAMILIES_ALLOWED: &[u64] = &[
    libc::AF_UNIX as u64,
    libc::AF_INET as u64,
    libc::AF_INET6 as u64,
    libc::AF_NETLINK as u64,
];

/// Netlink protocols allowed: ROUTE (glibc `getaddrinfo(AI_ADDRCONFIG)`,
/// `if_nameindex`, `ip`), SOCK_DIAG (`ss`), KOBJECT_UEVENT (libudev
/// monitors; read-only). Others (audit, netfilter, xfrm, generic, ...)
/// fail with EAFNOSUPPORT, which libaudit and friends read as "not in this
/// kernel".
pub const NETLINK_ALLOWED: &[u64] = &[
    libc::NETLINK_ROUTE as u64,
    libc::NETLINK_SOCK_DIAG as u64,
    libc::NETLINK_KOBJECT_UEVENT as u64,
];

const fn family_not_allowed(arg: u8) -> [ArgCheck; 4] {
    [
        ArgCheck::dword(arg, Cmp::Ne(libc::AF_UNIX as u64)),
        ArgCheck::dword(arg, Cmp::Ne(libc::AF_INET as u64)),
        ArgCheck::dword(arg, Cmp::Ne(libc::AF_INET6 as u64)),
        ArgCheck::dword(arg, Cmp::Ne(libc::AF_NETLINK as u64)),
    ]
}
const SOCKET_FAMILY_NOT_ALLOWED: [ArgCheck; 4] = family_not_allowed(0);
const NETLINK_PROTO_NOT_ALLOWED: [ArgCheck; 4] = [
    ArgCheck::dword(0, Cmp::Eq(libc::AF_NETLINK as u64)),
    ArgCheck::dword(2, Cmp::Ne(libc::NETLINK_ROUTE as u64)),
    ArgCheck::dword(2, Cmp::Ne(libc::NETLINK_SOCK_DIAG as u64)),
    ArgCheck::dword(2, Cmp::Ne(libc::NETLINK_KOBJECT_UEVENT as u64)),
];

pub(super) const RULES: &[SyscallRule] = &[
    SyscallRule {
        name: "socket(family not unix/inet/inet6/netlink)",
        nr: libc::SYS_socket,
        args: ArgMatch::All(&SOCKET_FAMILY_NOT_ALLOWED),
        on_match: OnMatch::Errno(libc::EAFNOSUPPORT),
        why: "vsock, packet, bluetooth, alg, key, xdp, rds, tipc, can, ... reach the host \
              or kernel code outside the namespaces",
    },
    SyscallRule {
        name: "socket(AF_NETLINK, protocol not route/sock_diag/uevent)",
        nr: libc::SYS_socket,
        args: ArgMatch::All(&NETLINK_PROTO_NOT_ALLOWED),
        on_match: OnMatch::Errno(libc::EAFNOSUPPORT),
        why: "audit, netfilter, xfrm, generic netlink: kernel surface no command needs",
    },
    SyscallRule {
        name: "socketpair(family not unix/inet/inet6/netlink)",
        nr: libc::SYS_socketpair,
        args: ArgMatch::All(&SOCKET_FAMILY_NOT_ALLOWED),
        on_match: OnMatch::Errno(libc::EAFNOSUPPORT),
        why: "same family allow-list as socket(2)",
    },
];

/// Extra rule for `NetPolicy::DenyAll` without a network namespace.
pub const DENY_INET_SOCKETS: SyscallRule = SyscallRule {
    name: "socket(AF_INET|AF_INET6|AF_PACKET)",
    nr: libc::SYS_socket,
    args: ArgMatch::OneOf {
        arg: 0,
        width: Width::Dword,
        values: &[
            libc::AF_INET as u64,
            libc::AF_INET6 as u64,
            libc::AF_PACKET as u64,
        ],
    },
    on_match: OnMatch::Errno(libc::EACCES),
    why: "network denied and no network namespace: refuse IP and packet sockets",
};

/// Extra rule for `NetPolicy::AllowOutbound`.
pub const DENY_LISTEN: SyscallRule = SyscallRule {
    name: "listen",
    nr: libc::SYS_listen,
    args: ArgMatch::Any,
    on_match: OnMatch::Errno(libc::EACCES),
    why: "outbound-only network: accept no inbound connections",
};

/// `socketpair(2)` types that make unix datagram sockets (`SOCK_RAW` is
/// one for `AF_UNIX`), matched on the type's low bits (flags such as
/// `SOCK_CLOEXEC` lie above them).
const UNIX_DGRAM_PAIR: [ArgCheck; 2] = [
    ArgCheck::dword(0, Cmp::Eq(libc::AF_UNIX as u64)),
    ArgCheck::dword(
        1,
        Cmp::MaskedEq {
            mask: 0xf,
            value: libc::SOCK_DGRAM as u64,
        },
    ),
];
const UNIX_RAW_PAIR: [ArgCheck; 2] = [
    ArgCheck::dword(0, Cmp::Eq(libc::AF_UNIX as u64)),
    ArgCheck::dword(
        1,
        Cmp::MaskedEq {
            mask: 0xf,
            value: libc::SOCK_RAW as u64,
        },
    ),
];

/// Extra rules for a run whose walk of the writable grants was cut short
/// (ADR 0204): a host server's socket it did not reach is not hidden, so
/// no socket that could name a path is made. `socket(AF_UNIX, ...)` is
/// refused whatever the type; `socketpair(AF_UNIX, ...)` stays allowed for
/// stream and seqpacket pairs (connected to each other for good: neither
/// `connect(2)` nor a `sendto(2)` address moves them), not for datagram
/// ones, which `sendto(2)` or a new `connect(2)` can point at any path.
pub const DENY_UNIX_SOCKETS: [SyscallRule; 3] = [
    SyscallRule {
        name: "socket(AF_UNIX) [walk cut short]",
        nr: libc::SYS_socket,
        args: ArgMatch::OneOf {
            arg: 0,
            width: Width::Dword,
            values: &[libc::AF_UNIX as u64],
        },
        on_match: OnMatch::Errno(libc::EACCES),
        why: "the walk of the writable grants stopped at a bound: a host server's unix socket \
              past it is not hidden",
    },
    SyscallRule {
        name: "socketpair(AF_UNIX, SOCK_DGRAM) [walk cut short]",
        nr: libc::SYS_socketpair,
        args: ArgMatch::All(&UNIX_DGRAM_PAIR),
        on_match: OnMatch::Errno(libc::EACCES),
        why: "a unix datagram socket can send to any path (sendto, connect)",
    },
    SyscallRule {
        name: "socketpair(AF_UNIX, SOCK_RAW) [walk cut short]",
        nr: libc::SYS_socketpair,
        args: ArgMatch::All(&UNIX_RAW_PAIR),
        on_match: OnMatch::Errno(libc::EACCES),
        why: "SOCK_RAW is a datagram type for AF_UNIX",
    },
];
