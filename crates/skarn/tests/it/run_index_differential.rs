//! `skarn run`, issue 22: the index a run leaves is read exactly as git
//! reads it. A run writes a version 2 index whose first name's length in
//! its flags is shorter than the name up to its NUL: git reads a staged
//! `.envrc` there that a reader going by NULs does not see. Judged from
//! outside: the host restores `.envrc` from the index and sources it
//! (direnv); the planted command did not run.

use crate::common::*;
use crate::support_git::{enter, report_ran};
use skarn_test_support::TempDir;

/// Python (run inside the sandbox) writing `.git/index`: entries `!`
/// (flags length 1, followed by `y`) and `.envrc`, both the blob `$1`.
const CRAFT: &str = r#"
import hashlib, struct, sys
blob = bytes.fromhex(sys.argv[1])
def head(flags, fill):
    return fill * 24 + struct.pack('>IIII', 0o100644, 0, 0, 0) + blob + struct.pack('>H', flags)
b = bytearray(b'DIRC' + struct.pack('>II', 2, 2))
b += head(1, b'\0') + b'!y'
b += head(6, b'A') + b'.envrc\0\0\0\0'
b += b'ZZZZ' + struct.pack('>I', 24) + bytes(24)
b[168:170] = struct.pack('>H', 1); b[170] = ord('q'); b[172:176] = b'YYYY'
b += hashlib.sha1(bytes(b)).digest()
open('.git/index', 'wb').write(b)
"#;

#[test]
fn an_index_git_reads_otherwise_cannot_stage_a_protected_file() {
    for layer in ["cow", "direct"] {
        let t = TempDir::new("ixdiff");
        let home = t.dir("home");
        let ws = t.dir("ws");
        git(&ws, &["init", "-q", "-b", "main"]);
        t.file("ws/README", "hi\n");
        git(&ws, &["add", "README"]);
        git(&ws, &["commit", "-qm", "one"]);
        std::thread::sleep(std::time::Duration::from_millis(200));
        t.file("ws/craft.py", CRAFT);
        let marker = t.join("PLANTED-RAN");
        let script = format!(
            "b=$(printf 'touch {m}\\n' | git hash-object -w --stdin) && python3 craft.py $b && \
             git ls-files -s; echo RAN",
            m = marker.display()
        );
        let said = report_ran(&ws, &home, layer, &script);
        assert!(
            said.contains("\t.envrc"),
            "{layer}: git inside did not read the crafted index as staging .envrc: {said}"
        );
        // From outside: host git restores what the index stages, and the
        // user's direnv sources `.envrc`.
        let _ = git(&ws, &["checkout", "--", ".envrc"]);
        enter(&ws);
        assert!(
            !marker.exists(),
            "{layer}: an index git reads otherwise than skarn staged .envrc for the host: {said}"
        );
    }
}
