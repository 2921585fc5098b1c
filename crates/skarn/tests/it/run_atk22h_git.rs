//! `skarn run`, attack atk22h (issue 22), the git side left open (helper
//! h22i): refs moved to a commit that was set aside (F38), replace refs
//! in every repository a run can write (F15), links out of the work tree
//! staged in a commit or the index (F21), refs kept in the reftable
//! format (F40), and a loose object file rewritten with other content.
//! Each test makes the attack for real, in both workspace layers, in the
//! workspace's repository and in a `--write` grant's, and judges from
//! outside: host git still works, did not check out the planted content,
//! and the planted command did not run.

use std::path::{Path, PathBuf};

use super::run_atk22h::{host_git, repo, run_script};
use crate::common::*;
use crate::support_git::{planted_commit, settle};
use skarn_test_support::TempDir;

const LAYERS: &[&str] = &["direct", "cow"];

/// One place to attack: the workspace's repository, or a `--write`
/// grant's outside it.
pub(crate) struct Place {
    pub(crate) home: PathBuf,
    pub(crate) ws: PathBuf,
    /// The repository attacked.
    pub(crate) repo: PathBuf,
    pub(crate) flags: Vec<String>,
}

fn places(t: &TempDir) -> Vec<(&'static str, Place)> {
    places_with(t, &[])
}

/// [`places`] whose repositories are made with `git init <init>` (a
/// reftable one: `--ref-format=reftable`); empty when git cannot.
pub(crate) fn places_with(t: &TempDir, init: &[&str]) -> Vec<(&'static str, Place)> {
    let mut v = Vec::new();
    for (what, grant) in [("workspace", false), ("write grant", true)] {
        let home = t.dir(format!("{what}-home").replace(' ', "-"));
        let ws = t.dir(format!("{what}-ws").replace(' ', "-"));
        if grant || init.is_empty() {
            git(&ws, &["init", "-q"]);
        }
        let (repo_dir, flags) = if grant {
            let lib = t.dir(format!("{what}-lib").replace(' ', "-"));
            (
                lib.clone(),
                vec!["--write".to_string(), lib.display().to_string()],
            )
        } else {
            (ws.clone(), Vec::new())
        };
        if !init.is_empty() {
            let mut a = vec!["init", "-q"];
            a.extend_from_slice(init);
            if !git(&repo_dir, &a).status.success() {
                return Vec::new();
            }
        }
        repo(&repo_dir);
        v.push((
            what,
            Place {
                home,
                ws,
                repo: repo_dir,
                flags,
            },
        ));
    }
    v
}

pub(crate) fn run_in(p: &Place, layer: &str, script: &str) -> String {
    let flags: Vec<&str> = p.flags.iter().map(String::as_str).collect();
    let s = format!("cd {} && {script}", p.repo.display());
    let o = run_script(&p.ws, &p.home, layer, &flags, &s);
    format!("{}{}", out(&o), err(&o))
}

fn rev(dir: &Path, home: &Path, what: &str) -> Option<String> {
    let o = host_git(dir, home, &["rev-parse", "--verify", "-q", what]);
    o.status
        .success()
        .then(|| String::from_utf8_lossy(&o.stdout).trim().to_string())
}

/// Host `git reset --hard` (and `checkout -- .`), then direnv's step:
/// `.envrc` sourced if it is there.
fn host_resets(dir: &Path, home: &Path) {
    let _ = host_git(dir, home, &["reset", "-q", "--hard"]);
    let _ = host_git(dir, home, &["checkout", "--", "."]);
    crate::support_git::enter(dir);
}

#[test]
fn a_branch_moved_to_a_commit_set_aside_is_put_back() {
    // F38: the run commits planted content on the user's branch; the
    // commit is set aside, and the branch must not be left naming it
    // ("fatal: bad object HEAD" for every host git command).
    for layer in LAYERS {
        let t = TempDir::new("atk22h-f38");
        for (what, p) in places(&t) {
            let before = rev(&p.repo, &p.home, "HEAD").unwrap();
            settle();
            let marker = t.join(format!("PLANTED-{what}"));
            let script = format!(
                "{}git update-ref HEAD $(git rev-parse agent) && echo RAN",
                planted_commit(&marker)
            );
            let said = run_in(&p, layer, &script);
            let log = host_git(&p.repo, &p.home, &["log", "--oneline"]);
            assert!(
                log.status.success(),
                "{layer}, {what}: host git log fails after the run: {} / {said}",
                err(&log)
            );
            assert_eq!(
                rev(&p.repo, &p.home, "HEAD").as_deref(),
                Some(before.as_str()),
                "{layer}, {what}: the branch was not put back: {said}"
            );
            let _ = host_git(&p.repo, &p.home, &["checkout", "-q", "agent"]);
            host_resets(&p.repo, &p.home);
            assert!(
                !marker.exists(),
                "{layer}, {what}: host git checked out the planted .envrc: {said}"
            );
        }
    }
}

#[test]
fn a_link_out_of_the_work_tree_in_a_commit_or_the_index_is_not_checked_out() {
    // F21: the layer refuses the link `out -> ~/.local/bin` itself; the
    // same link in a commit (branch `agent`) or staged in the index
    // would be made by host `git checkout`.
    for layer in LAYERS {
        let t = TempDir::new("atk22h-f21");
        let bin = t.dir("outside/.local/bin");
        for (what, p) in places(&t) {
            settle();
            let script = format!(
                "L=$(printf %s {b} | git hash-object -w --stdin) && \
                 git update-index --add --cacheinfo 120000,$L,out && \
                 c=$(git -c user.name=a -c user.email=a@a commit-tree $(git write-tree) -p HEAD \
                 -m out) && git update-ref refs/heads/agent $c && echo RAN",
                b = bin.display()
            );
            let said = run_in(&p, layer, &script);
            // The index form: the work tree gets what the index stages.
            let _ = host_git(&p.repo, &p.home, &["checkout", "--", "."]);
            let link = p.repo.join("out");
            assert!(
                std::fs::symlink_metadata(&link).is_err(),
                "{layer}, {what}: host `git checkout -- .` made the link the run staged: {said}"
            );
            // The commit form.
            let _ = host_git(&p.repo, &p.home, &["checkout", "-q", "-f", "agent"]);
            assert!(
                std::fs::read_link(&link).map_or(true, |l| !l.starts_with(&bin)),
                "{layer}, {what}: host `git checkout agent` made the link out: {said}"
            );
        }
    }
}

/// Shell lines (in the repository, inside the run) storing a tree that
/// is HEAD's plus `.envrc` (running `touch marker`): its id in `$T`.
pub(crate) fn planted_tree(marker: &Path) -> String {
    format!(
        "B=$(printf 'touch {m}\\n' | git hash-object -w --stdin) && \
         GIT_INDEX_FILE=.git/agent-index git read-tree HEAD && \
         GIT_INDEX_FILE=.git/agent-index git update-index --add --cacheinfo 100644,$B,.envrc && \
         T=$(GIT_INDEX_FILE=.git/agent-index git write-tree) && rm -f .git/agent-index && ",
        m = marker.display()
    )
}

/// After the run: host git works, and its reset brought nothing planted.
fn judge(p: &Place, layer: &str, what: &str, marker: &Path, said: &str) {
    host_resets(&p.repo, &p.home);
    assert!(
        !marker.exists() && !p.repo.join(".envrc").exists(),
        "{layer}, {what}: host git checked out the planted tree: {said}"
    );
}

#[test]
fn replace_refs_of_any_type_do_not_reach_host_git() {
    // F15: `git replace <HEAD's tree> <planted tree>` (no commit made),
    // the same packed, and a replaced commit: host `git reset --hard`
    // would check out the planted `.envrc`.
    let variants = [
        ("tree", "git replace -f $(git rev-parse HEAD^{tree}) $T"),
        (
            "packed tree",
            "git replace -f $(git rev-parse HEAD^{tree}) $T && git pack-refs --all",
        ),
        (
            "commit",
            "C=$(git -c user.name=a -c user.email=a@a commit-tree $T -p HEAD~1 -m two) && \
             git replace -f HEAD $C",
        ),
    ];
    for layer in LAYERS {
        for (kind, replace) in variants {
            let t = TempDir::new("atk22h-f15");
            for (what, p) in places(&t) {
                settle();
                let marker = t.join(format!("PLANTED-{}", what.replace(' ', "-")));
                let script = format!("{}{replace} && echo RAN", planted_tree(&marker));
                let said = run_in(&p, layer, &script);
                let log = host_git(&p.repo, &p.home, &["log", "--oneline"]);
                assert!(
                    log.status.success(),
                    "{layer}, {what}, {kind}: host git log fails after the run: {} / {said}",
                    err(&log)
                );
                judge(&p, layer, &format!("{what}, {kind}"), &marker, &said);
            }
        }
    }
}

#[test]
fn replace_refs_kept_in_the_reftable_format_do_not_reach_host_git() {
    // F40: a repository whose refs are in the reftable format (binary
    // tables the loose and packed rules do not read).
    for layer in LAYERS {
        let t = TempDir::new("atk22h-f40");
        let places = places_with(&t, &["--ref-format=reftable"]);
        if places.is_empty() {
            skarn_test_support::skip!("git without the reftable format");
        }
        for (what, p) in places {
            settle();
            let marker = t.join(format!("PLANTED-{}", what.replace(' ', "-")));
            let script = format!(
                "{}git replace -f $(git rev-parse HEAD^{{tree}}) $T && echo RAN",
                planted_tree(&marker)
            );
            let said = run_in(&p, layer, &script);
            judge(&p, layer, what, &marker, &said);
        }
    }
}

#[test]
fn moving_the_workspaces_refs_to_reftable_keeps_the_hosts_refs() {
    // F40, the one-run form: `git refs migrate` of the host's repository,
    // then the replace ref in the new tables.
    for layer in LAYERS {
        let t = TempDir::new("atk22h-f40m");
        let home = t.dir("home");
        let ws = t.dir("ws");
        repo(&ws);
        let before = rev(&ws, &home, "HEAD").unwrap();
        settle();
        let marker = t.join("PLANTED");
        let script = format!(
            "rm -rf .git/logs && git refs migrate --ref-format=reftable && {}\
             git replace -f $(git rev-parse HEAD^{{tree}}) $T; echo RAN",
            planted_tree(&marker)
        );
        let o = run_script(&ws, &home, layer, &[], &script);
        let said = format!("{}{}", out(&o), err(&o));
        assert_eq!(
            rev(&ws, &home, "HEAD").as_deref(),
            Some(before.as_str()),
            "{layer}: the host's repository lost its refs: {said}"
        );
        host_resets(&ws, &home);
        assert!(
            !marker.exists() && !ws.join(".envrc").exists(),
            "{layer}: host git checked out the planted tree: {said}"
        );
    }
}

#[test]
fn an_object_file_rewritten_with_other_content_is_not_read_by_host_git() {
    // h22g's gap: the loose file of HEAD's tree overwritten with the
    // planted tree's; host git reads an object file without checking it
    // against its name.
    for layer in LAYERS {
        let t = TempDir::new("atk22h-obj");
        for (what, p) in places(&t) {
            settle();
            let marker = t.join(format!("PLANTED-{}", what.replace(' ', "-")));
            let script = format!(
                "{}H=$(git rev-parse HEAD^{{tree}}) && \
                 F=.git/objects/$(echo $H | cut -c1-2)/$(echo $H | cut -c3-) && \
                 N=.git/objects/$(echo $T | cut -c1-2)/$(echo $T | cut -c3-) && \
                 rm -f $F && cp $N $F && echo RAN",
                planted_tree(&marker)
            );
            let said = run_in(&p, layer, &script);
            judge(&p, layer, what, &marker, &said);
        }
    }
}

// Attack atk22i (same session), assigned to h22i: F4, F1, F6.

#[test]
fn a_commit_above_an_unsafe_commit_of_the_run_is_set_aside_too() {
    // atk22i F4: Y adds `.envrc`; C has Y's tree and Y as parent, and a
    // name sorting before Y's: judged against Y it looked unchanged.
    for layer in LAYERS {
        let t = TempDir::new("atk22i-f4");
        for (what, p) in places(&t) {
            settle();
            let marker = t.join(format!("PLANTED-{}", what.replace(' ', "-")));
            let script = format!(
                "{}G='git -c user.name=a -c user.email=a@a' && Y=$($G commit-tree $T -p HEAD -m y) && \
                 i=0; while :; do C=$($G commit-tree $T -p $Y -m c$i); \
                 [ \"$C\" \\< \"$Y\" ] && break; i=$((i+1)); done; \
                 git update-ref refs/heads/feature $C && echo RAN",
                planted_tree(&marker)
            );
            let said = run_in(&p, layer, &script);
            let _ = host_git(&p.repo, &p.home, &["checkout", "-q", "-f", "feature"]);
            judge(&p, layer, what, &marker, &said);
        }
    }
}

#[test]
fn legacy_remote_files_bring_no_hidden_repository_in() {
    // atk22i F1: `.git/remotes/origin` / `.git/branches/origin` naming a
    // repository no run was granted; host `git fetch` would copy it into
    // the repository, where the next run reads it.
    let files = [
        (
            "remotes",
            "mkdir -p .git/remotes && printf 'URL: {u}\\nPull: +refs/heads/*:refs/remotes/origin/*\\n' \
             > .git/remotes/origin",
        ),
        (
            "branches",
            "mkdir -p .git/branches && printf '{u}\\n' > .git/branches/origin",
        ),
    ];
    for layer in LAYERS {
        for (kind, plant) in files {
            let t = TempDir::new("atk22i-f1");
            let private = t.dir("private");
            repo(&private);
            for (what, p) in places(&t) {
                let script = format!(
                    "{} && echo RAN",
                    plant.replace("{u}", &private.display().to_string())
                );
                let said = run_in(&p, layer, &script);
                let _ = host_git(&p.repo, &p.home, &["fetch", "-q"]);
                let refs = host_git(
                    &p.repo,
                    &p.home,
                    &["for-each-ref", "refs/remotes", "FETCH_HEAD"],
                );
                let fetched = host_git(
                    &p.repo,
                    &p.home,
                    &["rev-parse", "--verify", "-q", "FETCH_HEAD"],
                );
                assert!(
                    out(&refs).trim().is_empty() && !fetched.status.success(),
                    "{layer}, {what}, {kind}: host git fetch took the run's remote file: {} / {said}",
                    out(&refs)
                );
            }
        }
    }
}

#[test]
fn a_remote_through_a_link_the_layer_adds_is_judged_with_the_link() {
    // atk22i F6: `mirror -> <a repository the run cannot read and no one
    // can write>`, `git remote add m ./mirror`: the configuration was
    // judged before the link reached the host. The repository is made
    // unwritable by a read-only bind (root, in a mount namespace of its
    // own) or by its mode (another user).
    let root = skarn_test_support::is_root();
    if root
        && !std::process::Command::new("unshare")
            .args(["-m", "true"])
            .status()
            .is_ok_and(|s| s.success())
    {
        skarn_test_support::skip!("unshare -m is not available to root here");
    }
    let t = TempDir::new("atk22i-f6");
    let home = t.dir("home");
    let vault = t.dir("vault");
    let store = t.dir("vault/store");
    repo(&store);
    std::fs::write(store.join("s.txt"), "VAULT-SECRET\n").unwrap();
    git(&store, &["add", "s.txt"]);
    git(&store, &["commit", "-qm", "s"]);
    let ws = t.dir("ws");
    repo(&ws);
    let script = format!(
        "ln -s {s} mirror && git remote add m ./mirror && echo RAN",
        s = store.display()
    );
    let v = vault.display().to_string();
    let mut c = if root {
        let mut c = std::process::Command::new("unshare");
        c.args(["-m", "--propagation", "private", "sh", "-c"])
            .arg(format!(
                "mount --bind {v} {v} && mount -o remount,bind,ro {v} {v} && exec \"$@\""
            ))
            .arg("sh")
            .arg(env!("CARGO_BIN_EXE_skarn"));
        c
    } else {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&vault, std::fs::Permissions::from_mode(0o555)).unwrap();
        std::process::Command::new(env!("CARGO_BIN_EXE_skarn"))
    };
    let o = c
        .args(["run", "--no-config", "--workspace"])
        .arg(&ws)
        .args(["--", "sh", "-c", &script])
        .env("HOME", &home)
        .env_remove("XDG_STATE_HOME")
        .current_dir(&ws)
        .output()
        .unwrap();
    let said = format!("{}{}", out(&o), err(&o));
    assert!(said.contains("RAN"), "the run did not run: {said}");
    let _ = host_git(&ws, &home, &["fetch", "-q", "--all"]);
    let refs = host_git(&ws, &home, &["for-each-ref", "refs/remotes"]);
    if !root {
        use std::os::unix::fs::PermissionsExt;
        let _ = std::fs::set_permissions(&vault, std::fs::Permissions::from_mode(0o755));
    }
    assert!(
        out(&refs).trim().is_empty(),
        "host git fetch --all copied the unreadable repository in: {} / {said}",
        out(&refs)
    );
}
