//! skarn-egress: network access limited to allow-listed hosts.
//!
//! - [`Pattern`]: `example.com`, `*.example.com`, `10.0.0.0/8`, `[::1]`,
//!   each with an optional `:port` (none = 80 and 443, `:*` = any);
//! - [`Rules`]: allow and deny patterns (deny wins); a first decision on
//!   the requested host and port, then one on each resolved address:
//!   loopback, private, link-local, unique-local, CGNAT, multicast,
//!   unspecified and cloud-metadata addresses (in every IPv6 form that
//!   embeds them) are reached only through a pattern naming that address
//!   or range explicitly, so an allowed name cannot point at the host or
//!   its network; deny ranges apply to the IPv4 addresses such forms embed;
//! - [`Proxy`]: an HTTP (CONNECT and absolute-form plain HTTP) and SOCKS5
//!   proxy served on listening sockets handed to it, which may belong to
//!   another network namespace: it accepts there and connects from its own
//!   namespace, to the exact address it checked; [`Limits`] bound the
//!   connections at once and the bytes of the whole run (taken before
//!   they are forwarded);
//! - [`secrets`]: secrets bound to hosts: for those hosts the proxy
//!   terminates TLS with the run's CA ([`ca`]), verifies the real server,
//!   replaces placeholders by values only where a secret may go, scrubs
//!   echoed values from responses, and records each use and refusal;
//! - [`registries`]: package-registry hosts of the active toolchains, read
//!   from each tool's own configuration and defaults.

pub mod addr;
pub mod audit;
mod authority;
mod bound;
pub mod ca;
mod error;
mod fields;
mod http;
mod intercept;
mod link;
mod open;
mod pattern;
pub mod proxy;
pub mod registries;
mod relay;
mod resolve;
pub mod root_pem;
mod rules;
pub mod secrets;
mod server;
mod socks;
#[cfg(target_os = "linux")]
mod splice;
pub mod stats;

pub use audit::{AuditRecord, AuditSink};
pub use ca::{CaMaterial, make_run_ca};
pub use error::PatternError;
#[doc(hidden)]
pub use intercept::bench_kind_seconds;
#[cfg(feature = "fuzzing")]
#[doc(hidden)]
pub use intercept::scrub_differential;
pub use intercept::stream_scrub::StreamScrub;
pub use intercept::{FINDER_SOURCES, Interceptor, ValueFinder};
#[doc(hidden)]
pub use intercept::{bench_search_seconds, bench_startup_seconds};
pub use pattern::{HostMatch, Pattern, Ports};
pub use proxy::{DenialLog, Limits, Listeners, Proxy};
#[doc(hidden)]
pub use relay::bench_copy_only;
pub use resolve::Resolver;
pub use rules::{Denial, Rules, Target};
pub use stats::{EgressReport, HostDenial, HostUsage, SecretUse};
