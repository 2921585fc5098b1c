//! `skarn run`, attack atk22j (issue 22): git objects and index entries
//! that git's checkout reads another way than a plain reading does. F1: a
//! tree entry whose mode is written `040000` (git reads octal: a
//! directory) hid a whole subtree from the commit vetting. F2, F2b: an
//! index entry `x/../.git/hooks/pre-commit` (which git never re-checks
//! when it reads an index) made host `git checkout -- .` write where the
//! path leads. Each test makes the attack for real and judges from
//! outside, after the host's own git acted on what the run left.

use std::path::Path;

use crate::common::*;
use crate::run_atk22i_git::{LAYERS, attack, host_git, skip_without_git};
use crate::support_git::repo;
use skarn_test_support::TempDir;

/// Python that adds an entry with any path (argv 1) for the blob argv 2
/// (hex), at stage argv 3 (default 0), to a version 2 `.git/index`, as a
/// run can.
const MKINDEX: &str = r#"
import sys, struct, hashlib
path = sys.argv[1].encode(); blob = bytes.fromhex(sys.argv[2])
b = open('.git/index', 'rb').read()
ver, cnt = struct.unpack('>II', b[4:12]); assert ver == 2
at = 12; ents = []
for i in range(cnt):
    n = struct.unpack('>H', b[at+60:at+62])[0] & 0xfff
    end = at + ((62 + n + 8) & ~7); ents.append(b[at:end]); at = end
stage = int(sys.argv[3]) if len(sys.argv) > 3 else 0
e = struct.pack('>10I', 0, 0, 0, 0, 0, 0, 0o100755, 0, 0, 0) + blob + struct.pack('>H', min(len(path), 0xfff) | stage << 12) + path
e += b'\0' * (8 - len(e) % 8)
ents.append(e)
ents.sort(key=lambda e: e[62:62 + (struct.unpack('>H', e[60:62])[0] & 0xfff)])
body = b'DIRC' + struct.pack('>II', 2, len(ents)) + b''.join(ents)
open('.git/index', 'wb').write(body + hashlib.sha1(body).digest())
print('PLANTED')
"#;

fn skip_without_tools() -> bool {
    skip_without_git() || !host_has("python3", "--version")
}

#[test]
fn a_subtree_behind_a_zero_padded_directory_mode_is_vetted() {
    if skip_without_tools() {
        skarn_test_support::skip!("git or python3 is not installed");
    }
    for layer in LAYERS {
        let t = TempDir::new("atk22j-f1");
        let (home, ws) = (t.dir("home"), t.dir("ws"));
        repo(&ws, "README", "hi\n");
        // A tree `sub` holding `.envrc`, joined to HEAD's tree with the
        // mode written `040000`, committed on a branch.
        let script = "set -e; \
             E=$(printf 'touch PWNED\\n' | git hash-object -w --stdin); \
             S=$(printf '100644 blob %s\\t.envrc\\n' $E | git mktree); \
             T=$( (git cat-file tree HEAD^{tree}; printf '040000 sub\\0'; \
                   python3 -c \"import sys; sys.stdout.buffer.write(bytes.fromhex('$S'))\") \
                   | git hash-object -t tree -w --literally --stdin); \
             C=$(git -c user.name=t -c user.email=t@t commit-tree -p HEAD -m tidy $T); \
             git update-ref refs/heads/agent-work $C; echo PLANTED";
        let e = attack(&ws, &home, layer, script);
        let _ = host_git(&ws, &home, &["merge", "-q", "--ff-only", "agent-work"]);
        assert!(
            !ws.join("sub/.envrc").exists(),
            "{layer}: host `git merge` wrote sub/.envrc from the run's commit: {e}"
        );
    }
}

/// Run `MKINDEX` inside a run in `ws` on the repository `repo_dir`,
/// staging a planted blob at `path`.
fn plant_index(ws: &Path, home: &Path, tools: &Path, flags: &[&str], repo_dir: &Path, path: &str) {
    plant_index_stages(ws, home, tools, flags, repo_dir, path, &["0"]);
}

/// [`plant_index`] with one entry per stage in `stages`.
fn plant_index_stages(
    ws: &Path,
    home: &Path,
    tools: &Path,
    flags: &[&str],
    repo_dir: &Path,
    path: &str,
    stages: &[&str],
) {
    let adds: Vec<String> = stages
        .iter()
        .map(|st| format!("python3 '{}/mkindex.py' '{path}' $B {st}", tools.display()))
        .collect();
    let script = format!(
        "set -e; cd '{}'; B=$(printf '#!/bin/sh\\ntouch PWNED\\n' | git hash-object -w --stdin); {}",
        repo_dir.display(),
        adds.join("; ")
    );
    let mut all = vec!["--read", tools.to_str().unwrap()];
    all.extend_from_slice(flags);
    let o = run_in(ws, home, &all, &["sh", "-c", &script]);
    assert!(out(&o).contains("PLANTED"), "{}{}", out(&o), err(&o));
}

#[test]
fn index_paths_git_would_refuse_to_write_are_refused() {
    if skip_without_tools() {
        skarn_test_support::skip!("git or python3 is not installed");
    }
    // (where the repository is, the staged path, the file host checkout
    // would then write)
    for case in ["grant", "nested", "workspace"] {
        for layer in LAYERS {
            let t = TempDir::new("atk22j-f2");
            let (home, ws, tools) = (t.dir("home"), t.dir("ws"), t.dir("tools"));
            std::fs::write(tools.join("mkindex.py"), MKINDEX).unwrap();
            repo(&ws, "README", "hi\n");
            let (target, flags, staged, planted) = match case {
                "grant" => {
                    let other = t.dir("other");
                    repo(&other, "a", "a\n");
                    (
                        other.clone(),
                        vec!["--write".to_string(), other.display().to_string()],
                        "x/../.git/hooks/pre-commit",
                        other.join(".git/hooks/pre-commit"),
                    )
                }
                "nested" => {
                    let nested = ws.join("nested");
                    std::fs::create_dir(&nested).unwrap();
                    repo(&nested, "a", "a\n");
                    (
                        nested.clone(),
                        vec![],
                        "x/../.git/hooks/pre-commit",
                        nested.join(".git/hooks/pre-commit"),
                    )
                }
                _ => (
                    ws.clone(),
                    vec![],
                    "x/../.pre-commit-config.yaml",
                    ws.join(".pre-commit-config.yaml"),
                ),
            };
            let mut f: Vec<&str> = vec!["--workspace-layer", layer];
            f.extend(flags.iter().map(String::as_str));
            plant_index(&ws, &home, &tools, &f, &target, staged);
            let _ = host_git(&target, &home, &["checkout", "--", "."]);
            assert!(
                !planted.exists(),
                "{case}, {layer}: host `git checkout -- .` wrote {} from the run's index entry \
                 {staged}",
                planted.display()
            );
        }
    }
}

#[test]
fn index_paths_out_of_the_work_tree_are_refused() {
    // F13, F13b: an absolute path and one climbing out: host `git
    // checkout -- .` wrote the user's file outside with the run's bytes.
    if skip_without_tools() {
        skarn_test_support::skip!("git or python3 is not installed");
    }
    for layer in LAYERS {
        for form in ["absolute", "climbing"] {
            let t = TempDir::new("atk22j-f13");
            let (home, ws, tools) = (t.dir("home"), t.dir("ws"), t.dir("tools"));
            std::fs::write(tools.join("mkindex.py"), MKINDEX).unwrap();
            let victim = t.file("outside/.bashrc", "# the user's bashrc\n");
            repo(&ws, "README", "hi\n");
            std::fs::create_dir(ws.join("x")).unwrap();
            let staged = match form {
                "absolute" => victim.display().to_string(),
                _ => "x/../../outside/.bashrc".to_string(),
            };
            plant_index(
                &ws,
                &home,
                &tools,
                &["--workspace-layer", layer],
                &ws,
                &staged,
            );
            let _ = host_git(&ws, &home, &["checkout", "--", "."]);
            assert_eq!(
                std::fs::read_to_string(&victim).unwrap(),
                "# the user's bashrc\n",
                "{layer}, {form}: host `git checkout -- .` wrote outside the work tree"
            );
        }
    }
}

#[test]
fn unmerged_entries_and_split_indexes_of_a_write_grant_are_judged() {
    // F2c: stages 2 and 3 at `.envrc` (`git checkout --theirs -- .envrc`
    // wrote stage 3). F2d: a split index whose new shared file stages
    // `.envrc` (`git checkout -- .`).
    if skip_without_tools() {
        skarn_test_support::skip!("git or python3 is not installed");
    }
    for case in ["unmerged", "split"] {
        for layer in LAYERS {
            let t = TempDir::new("atk22j-f2c");
            let (home, ws, tools, other) =
                (t.dir("home"), t.dir("ws"), t.dir("tools"), t.dir("other"));
            std::fs::write(tools.join("mkindex.py"), MKINDEX).unwrap();
            repo(&ws, "README", "hi\n");
            repo(&other, "a", "a\n");
            let grant = other.display().to_string();
            let flags = ["--workspace-layer", layer, "--write", grant.as_str()];
            if case == "unmerged" {
                plant_index_stages(&ws, &home, &tools, &flags, &other, ".envrc", &["2", "3"]);
                let _ = host_git(&other, &home, &["checkout", "--theirs", "--", ".envrc"]);
            } else {
                let _ = host_git(&other, &home, &["update-index", "--split-index"]);
                let script = format!(
                    "set -e; cd '{grant}'; B=$(printf 'touch PWNED\\n' | git hash-object -w --stdin); \
                     git update-index --add --cacheinfo 100644,$B,.envrc; \
                     git update-index --split-index; echo PLANTED"
                );
                let mut all = vec!["--read", tools.to_str().unwrap()];
                all.extend_from_slice(&flags);
                let o = run_in(&ws, &home, &all, &["sh", "-c", &script]);
                assert!(out(&o).contains("PLANTED"), "{}{}", out(&o), err(&o));
                let _ = host_git(&other, &home, &["checkout", "--", "."]);
            }
            assert!(
                !other.join(".envrc").exists(),
                "{case}, {layer}: host git wrote the run's .envrc"
            );
        }
    }
}

#[test]
fn refs_to_planted_trees_in_reftable_and_in_padded_ref_files_are_judged() {
    // F7: a lightweight tag naming a planted tree in a reftable
    // repository. F10: a loose ref file holding the tree's id and then 17
    // MB of blanks (git reads the id). Host `git checkout v1 -- .` wrote
    // the planted `.envrc`.
    use crate::run_atk22h_git::{places_with, planted_tree, run_in as run_at};
    use crate::support_git::settle;
    let forms: [(&str, &[&str], &str); 2] = [
        ("reftable", &["--ref-format=reftable"], "git tag v1 $T"),
        (
            "padded ref file",
            &[],
            "printf '%s' $T > .git/refs/tags/v1 && \
             head -c 17000000 /dev/zero | tr '\\0' ' ' >> .git/refs/tags/v1",
        ),
    ];
    for (form, init, tag) in forms {
        for layer in LAYERS {
            let t = TempDir::new("atk22j-f7");
            let places = places_with(&t, init);
            if places.is_empty() {
                skarn_test_support::skip!("git without the reftable format");
            }
            for (what, p) in places {
                settle();
                let marker = t.path().join(format!("PLANTED-{}", what.replace(' ', "-")));
                let script = format!("{}{tag} && echo RAN", planted_tree(&marker));
                let said = run_at(&p, layer, &script);
                let _ = host_git(&p.repo, &p.home, &["checkout", "v1", "--", "."]);
                assert!(
                    !p.repo.join(".envrc").exists(),
                    "{form}, {layer}, {what}: host `git checkout v1 -- .` wrote the planted \
                     tree: {said}"
                );
            }
        }
    }
}
