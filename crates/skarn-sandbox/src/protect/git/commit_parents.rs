//! A commit's parents as git reads them (attack atk22j H1): git's commit
//! parser takes `parent` lines only as the block right after the `tree`
//! line; a `parent` header anywhere else (after `committer`, say) is an
//! extra header to git, not a parent. The vetting of new commits judges a
//! commit's tree against its parents' (what they hold was there before),
//! so a commit naming some other commit in such a header would have that
//! one's tree counted as "there before". Git never writes one: a commit
//! holding one is judged unsafe before anything else.

use super::commit_walk::{Source, WorkTree, object_unsafe};

/// Whether the headers of the commit `body` hold a `parent` line outside
/// the block git reads parents from (right after the first line).
pub(crate) fn misplaced_parent(body: &[u8]) -> bool {
    let mut in_block = true;
    for l in body
        .split(|b| *b == b'\n')
        .skip(1)
        .take_while(|l| !l.is_empty())
    {
        let is_parent = l.starts_with(b"parent ");
        if !is_parent {
            in_block = false;
        } else if !in_block {
            return true;
        }
    }
    false
}

/// [`object_unsafe`], with a commit holding a misplaced `parent` header
/// unsafe whatever its tree.
pub(crate) fn judge(
    src: &mut dyn Source,
    work: &WorkTree<'_>,
    kind: &str,
    body: &[u8],
) -> Option<String> {
    if kind == "commit" && misplaced_parent(body) {
        return Some(
            "has a parent header where git does not read one (judged against it, its tree \
             would look unchanged)"
                .into(),
        );
    }
    object_unsafe(src, work, kind, body)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parents_are_the_block_after_the_tree_line() {
        let t = "tree 0123456789012345678901234567890123456789\n";
        let p = "parent 1111111111111111111111111111111111111111\n";
        let a = "author a <a@b> 1 +0000\ncommitter a <a@b> 1 +0000\n";
        let ok = [
            format!("{t}{a}\nmsg\nparent x\n"),
            format!("{t}{p}{p}{a}\nmsg\n"),
            format!("{t}{a}gpgsig x\n \n\nparent in message\n"),
        ];
        for b in ok {
            assert!(!misplaced_parent(b.as_bytes()), "{b}");
        }
        let bad = [format!("{t}{p}{a}{p}\nmsg\n"), format!("{t}{a}{p}\nmsg\n")];
        for b in bad {
            assert!(misplaced_parent(b.as_bytes()), "{b}");
        }
    }
}
