//! Where a named workspace path leads through symbolic links (attack
//! atk24t F7): a trusted line's `sh scripts/ctx.sh`, with `scripts/ctx.sh
//! -> ../tools/real.sh`, runs `tools/real.sh`; keeping only the link
//! read-only leaves what runs writable. Every hop is kept: the link
//! itself, each link it leads through, and the end.

use std::path::{Path, PathBuf};

/// Most hops followed: the kernel's own bound (`ELOOP` past it), so a
/// longer chain is one no program can run through either.
const MAX_HOPS: usize = 40;

/// The workspace paths (inside `base`) the path `p` leads to through
/// links, in order, without `p` itself: for each hop the place with its
/// directories resolved (a link among them counts), and what a link
/// there names.
pub fn hops(p: &Path, base: &Path) -> Vec<PathBuf> {
    let cbase = std::fs::canonicalize(base).unwrap_or_else(|_| base.to_path_buf());
    let inside =
        |q: &Path| (q.starts_with(base) || q.starts_with(&cbase)) && q != base && q != cbase;
    let mut out = Vec::new();
    let mut cur = p.to_path_buf();
    for _ in 0..MAX_HOPS {
        let (Some(parent), Some(name)) = (cur.parent(), cur.file_name()) else {
            break;
        };
        let Ok(cparent) = std::fs::canonicalize(parent) else {
            break;
        };
        let real = cparent.join(name);
        if real != cur && inside(&real) && !out.contains(&real) {
            out.push(real.clone());
        }
        let Ok(target) = std::fs::read_link(&real) else {
            break;
        };
        cur = crate::policy::config::normalize(&cparent.join(target));
        if inside(&cur) && !out.contains(&cur) {
            out.push(cur.clone());
        }
    }
    out
}

#[cfg(test)]
mod tests;
