//! What a run in place (`--workspace-layer direct`) left where host tools
//! trust it without looking (issue 22, eighth round), judged after the
//! run by one bounded walk of the writable grants over the entries it
//! made or changed (change time at or after its start; the change time
//! cannot be set back by the command):
//! - a compiled object by its first bytes
//!   ([`crate::protect::build_output_kind`]) is dated 1970, as the layer
//!   does: the host's make, ninja, scons or javac build it again instead
//!   of linking it (text files keep their time: in place, nothing tells
//!   an output from a new source);
//! - a directory host tools search by name (`node_modules`, `.bin`,
//!   `__pycache__`, `site-packages`, `dist-packages`) made a link is set
//!   aside, as the layer refuses it ([`crate::protect::searched_dirs`]);
//! - a `node_modules/.bin` entry is judged as the layer judges a new one
//!   ([`crate::protect::node_tools::check_direct_bin`]) and set aside when
//!   refused.
//!
//! Past [`MAX_ENTRIES`] entries the walk stops and says so: the run then
//! fails (what was not looked at may be trusted by a host build).

use std::path::{Path, PathBuf};
use std::time::SystemTime;

/// Entries looked at, at most, over every grant.
const MAX_ENTRIES: usize = 500_000;

/// Directory names tools search, never links.
const SEARCHED: &[&str] = &[
    "node_modules",
    ".bin",
    "__pycache__",
    "site-packages",
    "dist-packages",
];

/// The after-run lines for the grants `roots` of a run started at `since`
/// (`cut` is called when the walk stops at its bound: the run fails).
pub fn after_run(roots: &[PathBuf], since: SystemTime, cut: fn()) -> Vec<String> {
    let changed = |p: &Path| crate::protect::grant_walk::changed_since(p, since);
    let mut out = Vec::new();
    let (mut dated, mut undated) = (0usize, 0usize);
    let mut seen = 0usize;
    let mut todo: Vec<PathBuf> = roots.to_vec();
    while let Some(d) = todo.pop() {
        let Ok(rd) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in rd.flatten() {
            seen += 1;
            if seen > MAX_ENTRIES {
                cut();
                out.push(format!(
                    "more than {MAX_ENTRIES} entries in the writable grants: build outputs and \
                     node_modules/.bin entries past them were not vetted, so the run fails"
                ));
                return finish(out, dated, undated);
            }
            let Ok(t) = e.file_type() else { continue };
            let p = e.path();
            let name = e.file_name();
            if t.is_dir() {
                if name != ".git" {
                    todo.push(p);
                }
                continue;
            }
            if !changed(&p) {
                continue;
            }
            let in_bin = d.file_name().is_some_and(|n| n == ".bin")
                && d.parent()
                    .and_then(Path::file_name)
                    .is_some_and(|n| n == "node_modules");
            if t.is_symlink() && SEARCHED.iter().any(|s| name == *s) {
                let a = crate::protect::set_aside::set_aside(&p, "skarn-set-aside");
                out.push(format!(
                    "{} was made a link: host tools search that directory by name; {}",
                    p.display(),
                    a.describe("what it leads to is not trusted")
                ));
            } else if in_bin {
                if let Err(why) = crate::protect::node_tools::check_direct_bin(&p) {
                    let a = crate::protect::set_aside::set_aside(&p, "skarn-set-aside");
                    out.push(format!(
                        "{}: {why}; {}",
                        p.display(),
                        a.describe("check it before renaming it back")
                    ));
                }
            } else if t.is_file() && crate::protect::build_output_kind::is_object(&p) {
                if crate::protect::build_output_kind::date_old(&p) {
                    dated += 1;
                } else {
                    undated += 1;
                }
            }
        }
    }
    finish(out, dated, undated)
}

fn finish(mut out: Vec<String>, dated: usize, undated: usize) -> Vec<String> {
    if dated + undated > 0 {
        let mut s = format!(
            "{dated} compiled object(s) the run made or changed were dated 1970-01-01: \
             time-stamp build tools (make, ninja, scons, javac) build them again instead of \
             trusting them"
        );
        if undated > 0 {
            s.push_str(&format!(
                "; {undated} could not be dated: a host build may take them as up to date"
            ));
        }
        out.push(s);
    }
    out
}
