use super::*;
use std::path::Path;
use std::process::Command;

fn git(dir: &Path, args: &[&str]) -> Option<String> {
    let o = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(["-c", "user.name=t", "-c", "user.email=t@t"])
        .args(args)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("HOME", dir)
        .output()
        .ok()?;
    o.status
        .success()
        .then(|| String::from_utf8_lossy(&o.stdout).trim().to_string())
}

/// Real reftable stacks (one table per update, then compacted, then
/// many refs in one table so it spans blocks): the reader sees what git
/// sees, replace refs and deletions included.
#[test]
fn a_reftable_stack_reads_as_git_lists_it() {
    let t = skarn_test_support::TempDir::new("reftable-read");
    let ws = t.dir("ws");
    if git(&ws, &["init", "-q", "-b", "main", "--ref-format=reftable"]).is_none() {
        skarn_test_support::skip!("git without the reftable format");
    }
    t.file("ws/a", "a\n");
    git(&ws, &["add", "a"]).unwrap();
    git(&ws, &["commit", "-qm", "one"]).unwrap();
    let tree = git(&ws, &["rev-parse", "HEAD^{tree}"]).unwrap();
    let blob = git(&ws, &["rev-parse", "HEAD:a"]).unwrap();
    git(&ws, &["replace", "-f", &tree, &blob]).unwrap();
    git(&ws, &["branch", "gone"]).unwrap();
    git(&ws, &["branch", "-D", "gone"]).unwrap();
    let check = |what: &str| {
        let refs = dir_refs(&ws.join(".git/reftable")).expect(what);
        let listed = git(&ws, &["for-each-ref", "--format=%(refname) %(objectname)"]).unwrap();
        let mine: Vec<String> = refs
            .iter()
            .filter_map(|(n, v)| match v {
                Value::Oid(o) => Some(format!("{n} {}", super::super::pack_read::hex(o))),
                Value::Symref(_) => None,
            })
            .filter(|l| l.starts_with("refs/"))
            .collect();
        let theirs: Vec<String> = listed.lines().map(str::to_string).collect();
        assert_eq!(mine, theirs, "{what}");
        assert_eq!(
            replace_refs(&refs).len(),
            1,
            "{what}: the replace ref is seen"
        );
    };
    check("one table per update");
    git(&ws, &["pack-refs", "--all"]).unwrap();
    check("compacted");
    let head = git(&ws, &["rev-parse", "HEAD"]).unwrap();
    let many: String = (0..3000)
        .map(|i| format!("create refs/tags/t{i:05} {head}\n"))
        .collect();
    let mut c = Command::new("git")
        .arg("-C")
        .arg(&ws)
        .args(["update-ref", "--stdin"])
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("HOME", &ws)
        .stdin(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    use std::io::Write;
    c.stdin.take().unwrap().write_all(many.as_bytes()).unwrap();
    assert!(c.wait().unwrap().success());
    git(&ws, &["pack-refs", "--all"]).unwrap();
    check("many refs, one table");
}

#[test]
fn a_table_that_does_not_parse_is_none() {
    assert!(table_refs(b"REFT").is_none());
    assert!(table_refs(b"not a table at all, longer than a header").is_none());
    let mut list_read = |_: &str| None;
    assert!(stack_refs(b"0x1-0x1-abc.ref\n", &mut list_read).is_none());
    assert!(stack_refs(b"../x.ref\n", &mut |_| Some(Vec::new())).is_none());
}
