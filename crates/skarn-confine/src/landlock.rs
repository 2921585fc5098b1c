//! Landlock with the ABI pinned and the compatibility level explicit per
//! part.
//!
//! Every right and scope is taken from [`PINNED_ABI`], whatever the
//! running kernel offers; each part of a [`Request`] says whether it is a
//! hard requirement ([`Need::Required`]: the ruleset is refused when the
//! kernel lacks it) or best effort ([`Need::BestEffort`]: left out when
//! the kernel lacks it, and reported). The [`Outcome`] lists every part
//! asked with what the kernel enforced of it.

use std::io;
use std::path::PathBuf;

pub use ::landlock::{ABI, Access, AccessFs, AccessNet, BitFlags, Scope};
use ::landlock::{
    CompatLevel, Compatible, PathBeneath, PathFd, Ruleset, RulesetAttr, RulesetCreatedAttr,
    RulesetStatus,
};

use crate::{Enforcement, Layer, Status};

/// The Landlock ABI this build asks for. ABI 7 adds no access right or
/// scope over ABI 6 (only audit logging), so a kernel with ABI 6 enforces
/// every request fully.
pub const PINNED_ABI: ABI = ABI::V7;

/// Whether a part must be enforced.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Need {
    /// Refuse the whole ruleset when the kernel cannot enforce this part.
    Required,
    /// Take what the kernel offers and report the rest.
    BestEffort,
}

impl Need {
    fn level(self) -> CompatLevel {
        match self {
            Need::Required => CompatLevel::HardRequirement,
            Need::BestEffort => CompatLevel::BestEffort,
        }
    }
}

/// A Landlock ruleset to apply to the calling thread.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Request {
    /// Handle the ABI 1 filesystem rights (read, write, execute, create,
    /// remove, ...): nothing outside `rules` is reachable.
    pub fs_floor: Need,
    /// Handle the later filesystem rights (rename across directories,
    /// truncate, device ioctls).
    pub fs_newer: Need,
    /// Network rights handled (refused unless a rule grants them; there
    /// are no network rules here, so refused).
    pub net: Option<(BitFlags<AccessNet>, Need)>,
    /// Scopes (signals, abstract unix sockets outside the domain).
    pub scopes: Option<(BitFlags<Scope>, Need)>,
    /// Path rules: beneath `path`, `access` is granted. A missing path is
    /// skipped; on a file, directory-only rights are dropped.
    pub rules: Vec<(PathBuf, BitFlags<AccessFs>)>,
}

/// One part of the request and what the kernel enforced of it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PartOutcome {
    /// `fs_floor`, `fs_newer`, `net` or `scopes`.
    pub part: &'static str,
    /// How it was asked.
    pub need: Need,
    /// What the kernel enforced.
    pub status: Status,
    /// The ABI that enforces the part fully.
    pub full_from_abi: u32,
}

/// What [`restrict_self`] achieved.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Outcome {
    /// The running kernel's Landlock ABI (0 = none).
    pub kernel_abi: u32,
    /// Overall, as the kernel reported it.
    pub status: Status,
    /// Each part asked.
    pub parts: Vec<PartOutcome>,
    /// Path rules skipped (missing paths).
    pub skipped_rules: usize,
}

impl Outcome {
    /// The Landlock line of an enforcement report.
    pub fn enforcement(&self) -> Enforcement {
        let missing: Vec<String> = self
            .parts
            .iter()
            .filter(|p| p.status != Status::FullyEnforced)
            .map(|p| format!("{} (needs ABI {})", p.part, p.full_from_abi))
            .collect();
        let detail = if missing.is_empty() {
            format!("ABI {}: every part enforced", self.kernel_abi)
        } else {
            format!(
                "ABI {}: not enforced: {}",
                self.kernel_abi,
                missing.join(", ")
            )
        };
        Enforcement {
            layer: Layer::Landlock,
            status: self.status,
            detail,
        }
    }
}

/// Errors applying a ruleset.
#[derive(Debug, thiserror::Error)]
pub enum LandlockError {
    /// The landlock crate (or the kernel, for a required part) refused.
    #[error("landlock: {0}")]
    Ruleset(#[from] ::landlock::RulesetError),
}

/// The Landlock ABI version offered by the running kernel (0 = none).
pub fn kernel_abi() -> u32 {
    // SAFETY: landlock_create_ruleset(NULL, 0, LANDLOCK_CREATE_RULESET_VERSION)
    // only returns the ABI version; it reads no memory.
    let r = unsafe {
        libc::syscall(
            libc::SYS_landlock_create_ruleset,
            std::ptr::null::<u8>(),
            0usize,
            1u32,
        )
    };
    u32::try_from(r).unwrap_or(0)
}

fn part_status(kernel: u32, partial_from: u32, full_from: u32) -> Status {
    if kernel >= full_from {
        Status::FullyEnforced
    } else if kernel >= partial_from {
        Status::PartiallyEnforced
    } else {
        Status::NotEnforced
    }
}

/// Apply `req` to the calling thread and its future children. Requires
/// `no_new_privs` (set it first with [`crate::process::set_no_new_privs`])
/// unless the caller has `CAP_SYS_ADMIN`. Irreversible.
pub fn restrict_self(req: &Request) -> Result<Outcome, LandlockError> {
    let kernel = kernel_abi();
    let mut parts = vec![
        PartOutcome {
            part: "fs_floor",
            need: req.fs_floor,
            status: part_status(kernel, 1, 1),
            full_from_abi: 1,
        },
        PartOutcome {
            part: "fs_newer",
            need: req.fs_newer,
            status: part_status(kernel, 2, 5),
            full_from_abi: 5,
        },
    ];
    let floor = AccessFs::from_all(ABI::V1);
    let mut rs = Ruleset::default()
        .set_compatibility(req.fs_floor.level())
        .handle_access(floor)?
        .set_compatibility(req.fs_newer.level())
        .handle_access(AccessFs::from_all(PINNED_ABI) & !floor)?;
    if let Some((net, need)) = req.net {
        parts.push(PartOutcome {
            part: "net",
            need,
            status: part_status(kernel, 4, 4),
            full_from_abi: 4,
        });
        rs = rs.set_compatibility(need.level()).handle_access(net)?;
    }
    if let Some((scopes, need)) = req.scopes {
        parts.push(PartOutcome {
            part: "scopes",
            need,
            status: part_status(kernel, 6, 6),
            full_from_abi: 6,
        });
        rs = rs.set_compatibility(need.level()).scope(scopes)?;
    }
    let mut created = rs.create()?.set_compatibility(CompatLevel::BestEffort);
    let mut skipped = 0;
    for (path, access) in &req.rules {
        match open_rule(path, *access) {
            Ok(Some((fd, access))) => created = created.add_rule(PathBeneath::new(fd, access))?,
            Ok(None) => {}
            Err(_) => skipped += 1,
        }
    }
    let st = created.restrict_self()?;
    let status = match st.ruleset {
        RulesetStatus::FullyEnforced => Status::FullyEnforced,
        RulesetStatus::PartiallyEnforced => Status::PartiallyEnforced,
        RulesetStatus::NotEnforced => Status::NotEnforced,
    };
    if status == Status::NotEnforced {
        for p in &mut parts {
            p.status = Status::NotEnforced;
        }
    }
    Ok(Outcome {
        kernel_abi: kernel,
        status,
        parts,
        skipped_rules: skipped,
    })
}

/// Open `path` for a rule; a file keeps only the rights a file can have.
/// `Ok(None)` when nothing is left to grant.
fn open_rule(
    path: &std::path::Path,
    access: BitFlags<AccessFs>,
) -> io::Result<Option<(PathFd, BitFlags<AccessFs>)>> {
    let is_dir = std::fs::metadata(path)?.is_dir();
    let fd = PathFd::new(path).map_err(io::Error::other)?;
    let access = if is_dir {
        access
    } else {
        access & AccessFs::from_file(PINNED_ABI)
    };
    Ok((!access.is_empty()).then_some((fd, access)))
}
