//! The workspace's `.git/HEAD`, kept before a run and put back when the
//! run leaves it invalid.

use std::path::{Path, PathBuf};

/// The workspace's `.git/HEAD` before the run, to put back if the run
/// spoils it (a `.git` that is no longer a repository makes git take the
/// workspace itself for one, with a configuration the command wrote).
#[derive(Debug, Clone, Default, serde::Serialize, serde::Deserialize)]
pub(crate) struct HeadGuard {
    head: Option<(PathBuf, String)>,
}

fn valid_head(text: &str) -> bool {
    let t = text.trim_end_matches('\n');
    if let Some(r) = t.strip_prefix("ref: ") {
        return r.starts_with("refs/") && !r.contains("..") && !r.contains(char::is_whitespace);
    }
    (t.len() == 40 || t.len() == 64) && t.bytes().all(|b| b.is_ascii_hexdigit())
}

impl HeadGuard {
    /// Remember `ws/.git/HEAD` when it is a valid HEAD.
    pub fn save(ws: &Path) -> HeadGuard {
        let p = ws.join(".git/HEAD");
        let head = std::fs::read_to_string(&p)
            .ok()
            .filter(|t| t.len() < 512 && valid_head(t))
            .map(|t| (p, t));
        HeadGuard { head }
    }

    /// Put HEAD back if the run left it invalid; one line when it did.
    pub fn check(&self) -> Option<String> {
        let (p, before) = self.head.as_ref()?;
        let now = std::fs::read_to_string(p).unwrap_or_default();
        if valid_head(&now) {
            return None;
        }
        let restored = std::fs::write(p, before).is_ok();
        Some(format!(
            "{} was left invalid by the command (git would then take the workspace itself for a \
             repository); {}",
            p.display(),
            if restored {
                "restored"
            } else {
                "it could not be restored: review it before running git"
            }
        ))
    }
}
