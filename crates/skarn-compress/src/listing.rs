//! Long listings (`find`, `ls -l`, `tree`, `grep -n`): the first and last
//! entries verbatim, the middle summarised as counts per directory, entry
//! type or file, so the agent still sees the shape of what was cut.

use std::collections::HashMap;

use crate::engine::omitted;
use crate::rules::{ListingGroup, Profile};

/// One output item of a listing.
pub enum Item {
    Line(usize),
    Text(String),
}

/// How many directories a summary names before "and N more".
const TOP_DIRS: usize = 8;
/// How many files a grep summary names before "and N more".
const TOP_FILES: usize = 30;

pub fn render(p: &Profile, lines: &[String], entries: &[usize]) -> Vec<Item> {
    let (h, t) = (p.listing_head, p.listing_tail);
    if entries.len() <= h + t + 2 {
        return entries.iter().map(|&x| Item::Line(x)).collect();
    }
    let mut items: Vec<Item> = entries[..h].iter().map(|&x| Item::Line(x)).collect();
    let middle = &entries[h..entries.len() - t];
    items.push(Item::Text(summary(p.listing_group, lines, middle)));
    items.extend(entries[entries.len() - t..].iter().map(|&x| Item::Line(x)));
    items
}

fn summary(group: ListingGroup, lines: &[String], middle: &[usize]) -> String {
    let n = middle.len();
    let base = omitted(n);
    match group {
        ListingGroup::None => base,
        ListingGroup::Ls => {
            let (mut d, mut f, mut l, mut o) = (0, 0, 0, 0);
            for &x in middle {
                match lines[x].chars().next() {
                    Some('d') => d += 1,
                    Some('-') => f += 1,
                    Some('l') => l += 1,
                    _ => o += 1,
                }
            }
            let mut parts = Vec::new();
            for (c, what) in [
                (d, "directories"),
                (f, "files"),
                (l, "symlinks"),
                (o, "other"),
            ] {
                if c > 0 {
                    parts.push(format!("{c} {what}"));
                }
            }
            format!("{base} ({})", parts.join(", "))
        }
        ListingGroup::Dir | ListingGroup::File => {
            let keys: Vec<&str> = middle
                .iter()
                .map(|&x| match group {
                    ListingGroup::File => file_key(&lines[x]),
                    _ => lines[x].as_str(),
                })
                .collect();
            let depth = if group == ListingGroup::Dir {
                dir_depth(&keys)
            } else {
                usize::MAX
            };
            let mut counts: HashMap<&str, (usize, usize)> = HashMap::new();
            for (order, k) in keys.iter().enumerate() {
                let key = if group == ListingGroup::Dir {
                    prefix(k, depth)
                } else {
                    k
                };
                counts.entry(key).or_insert((0, order)).0 += 1;
            }
            let mut v: Vec<(&str, usize, usize)> =
                counts.into_iter().map(|(k, (c, o))| (k, c, o)).collect();
            v.sort_by(|a, b| b.1.cmp(&a.1).then(a.2.cmp(&b.2)));
            let what = if group == ListingGroup::File {
                "by file"
            } else {
                "under"
            };
            let top = if group == ListingGroup::File {
                TOP_FILES
            } else {
                TOP_DIRS
            };
            let shown: Vec<String> = v
                .iter()
                .take(top)
                .map(|(k, c, _)| format!("{k} ({c})"))
                .collect();
            let rest = v.len().saturating_sub(top);
            let more = if rest > 0 {
                format!(", and {rest} more")
            } else {
                String::new()
            };
            format!("{base}, {what}: {}{more}", shown.join(", "))
        }
    }
}

/// `path:12:text` or `path:text` -> `path`.
fn file_key(line: &str) -> &str {
    match line.find(':') {
        Some(i) if i > 0 => &line[..i],
        _ => line,
    }
}

/// The depth that splits the omitted paths into a useful number of groups:
/// one level below their common prefix.
fn dir_depth(paths: &[&str]) -> usize {
    let Some(first) = paths.first() else {
        return 1;
    };
    let mut common: Vec<&str> = first.split('/').collect();
    common.pop(); // the entry itself
    for p in paths.iter().skip(1) {
        let parts: Vec<&str> = p.split('/').collect();
        let same = common
            .iter()
            .zip(parts.iter())
            .take_while(|(a, b)| a == b)
            .count();
        common.truncate(same.min(parts.len().saturating_sub(1)));
        if common.is_empty() {
            break;
        }
    }
    common.len() + 1
}

/// The first `depth` components of a path (`/usr/share/doc/x/y`, 4 ->
/// `/usr/share/doc`).
fn prefix(path: &str, depth: usize) -> &str {
    let mut seen = 0;
    for (i, c) in path.char_indices() {
        if c == '/' {
            seen += 1;
            if seen == depth && i > 0 {
                return &path[..i];
            }
        }
    }
    path
}
