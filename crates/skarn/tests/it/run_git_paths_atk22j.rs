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
use crate::run_atk22i_git::{LAYERS, attack, host_git, repo, skip_without_git};
use skarn_test_support::TempDir;

/// Python that adds a stage-0 entry with any path (argv 1) for the blob
/// argv 2 (hex) to a version 2 `.git/index`, as a run can.
const MKINDEX: &str = r#"
import sys, struct, hashlib
path = sys.argv[1].encode(); blob = bytes.fromhex(sys.argv[2])
b = open('.git/index', 'rb').read()
ver, cnt = struct.unpack('>II', b[4:12]); assert ver == 2
at = 12; ents = []
for i in range(cnt):
    n = struct.unpack('>H', b[at+60:at+62])[0] & 0xfff
    end = at + ((62 + n + 8) & ~7); ents.append(b[at:end]); at = end
e = struct.pack('>10I', 0, 0, 0, 0, 0, 0, 0o100755, 0, 0, 0) + blob + struct.pack('>H', len(path)) + path
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
    let script = format!(
        "set -e; cd '{}'; B=$(printf '#!/bin/sh\\ntouch PWNED\\n' | git hash-object -w --stdin); \
         python3 '{}/mkindex.py' '{path}' $B",
        repo_dir.display(),
        tools.display()
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
