//! The sources of a secret as a sandboxed command could change them
//! (attack atk27d F5, F6): a `command` source's program or script inside
//! a writable grant is read-only, so the next `skarn run --secret` cannot
//! run a rewritten one on the host; a `file` source that does not exist
//! yet is reserved, so no link can be planted there; a relative `file`
//! source is refused. Each check is made outside the sandbox.

use crate::common::*;
use crate::support_secret_sources::write_config as config;
use skarn_test_support::TempDir;

#[test]
fn a_secrets_command_and_script_in_the_workspace_cannot_be_rewritten() {
    let t = TempDir::new("sec-cmd");
    let home = t.dir("home");
    let ws = t.dir("ws");
    let tools = ws.join("tools");
    std::fs::create_dir_all(&tools).unwrap();
    // The script makes the value without holding it (one holding it in
    // the workspace would refuse the run: ADR 0217).
    let original =
        "#!/bin/sh\nprintf 'cmd-tok%s\\n' \"en-$(printf %s 01234)$(printf %s 56789ab)cdef\"\n";
    for f in ["prog.sh", "script.sh"] {
        std::fs::write(tools.join(f), original).unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(tools.join(f), std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    config(
        &home,
        &format!(
            "[secrets.prog]\ncommand = [\"{p}\"]\nhosts = [\"localhost:1\"]\nenv = \"PROG\"\n\n\
             [secrets.script]\ncommand = [\"sh\", \"{s}\"]\nhosts = [\"localhost:1\"]\n",
            p = tools.join("prog.sh").display(),
            s = tools.join("script.sh").display()
        ),
    );
    let marker = t.path().join("PLANTED_RAN");
    let evil = format!("#!/bin/sh\ntouch {}\necho evil-run\n", marker.display());
    let script = format!(
        "for f in tools/prog.sh tools/script.sh; do printf '%s' '{evil}' > $f; \
         rm -f $f.new; printf '%s' '{evil}' > $f.new && mv -f $f.new $f; done; true"
    );
    // A run without the secret, then one granted it, both try.
    for flags in [&[][..], &["--secret", "prog", "--secret", "script"][..]] {
        let o = run_command(&ws, &home, flags, &["sh", "-c", &script])
            .output()
            .unwrap();
        assert!(!marker.exists(), "{}", err(&o));
        for f in ["prog.sh", "script.sh"] {
            let now = std::fs::read_to_string(tools.join(f)).unwrap();
            assert_eq!(now, original, "{f} rewritten: {}", err(&o));
        }
    }
    // The user's next run: a source whose program lies in the workspace
    // is refused before it runs (atk27j F10), nothing ran on the host.
    let o = run_command(
        &ws,
        &home,
        &["--secret", "prog", "--secret", "script"],
        &["sh", "-c", "echo ran"],
    )
    .output()
    .unwrap();
    assert!(!marker.exists(), "a rewritten helper ran on the host");
    assert_ne!(code(&o), 0, "{}", err(&o));
    assert!(err(&o).contains("secret prog"), "{}", err(&o));
}

#[test]
fn a_missing_file_source_is_reserved_and_a_relative_one_refused() {
    let t = TempDir::new("sec-miss");
    let home = t.dir("home");
    let ws = t.dir("ws");
    let decoy = t.dir("elsewhere").join("vault-token");
    std::fs::write(&decoy, "hvs.DecoyVaultToken0123456789").unwrap();
    let missing = ws.join(".secrets/missing.txt");
    config(
        &home,
        &format!(
            "[secrets.miss]\nfile = \"{}\"\nhosts = [\"localhost:1\"]\nenv = \"MISS\"\n\n\
             [secrets.rel]\nfile = \"rel/tok.txt\"\nhosts = [\"localhost:1\"]\n",
            missing.display()
        ),
    );
    let script = format!(
        "mkdir -p .secrets; ln -s {d} .secrets/missing.txt; ln -s {d} {m}; true",
        d = decoy.display(),
        m = missing.display()
    );
    let o = run_command(&ws, &home, &[], &["sh", "-c", &script])
        .output()
        .unwrap();
    assert!(
        std::fs::symlink_metadata(&missing).is_err(),
        "a link was planted at the missing source: {}",
        err(&o)
    );
    // The next run with the secret: no value (the source is still missing).
    let o = run_command(
        &ws,
        &home,
        &["--secret", "miss"],
        &["sh", "-c", "echo \"M=$MISS\""],
    )
    .output()
    .unwrap();
    assert_ne!(code(&o), 0, "{}", out(&o));
    assert!(!out(&o).contains("DecoyVault") && !err(&o).contains("DecoyVault"));
    // A relative source: refused, said clearly.
    std::fs::create_dir_all(ws.join("rel")).unwrap();
    std::fs::write(ws.join("rel/tok.txt"), "rel-token-0123456789").unwrap();
    let o = run_command(&ws, &home, &["--secret", "rel"], &["true"])
        .current_dir(&ws)
        .output()
        .unwrap();
    assert_ne!(code(&o), 0);
    assert!(err(&o).contains("absolute path"), "{}", err(&o));
}

/// Attack finding atk27i F1: a `command` source starts in a neutral
/// directory, not the workspace: a `json.py` a run planted there is not
/// imported by `python3 -c "import json; ..."` on the host when the next
/// run resolves the secret. Checked on a marker the planted module would
/// write outside every grant.
#[test]
fn a_secrets_command_does_not_load_modules_planted_in_the_workspace() {
    if !host_has("python3", "--version") {
        skarn_test_support::skip!("python3 is not installed");
    }
    let t = TempDir::new("sec-cmd-cwd");
    let home = t.dir("home");
    let ws = t.dir("ws");
    let vals = t.dir("vals");
    std::fs::write(
        vals.join("v.json"),
        "{\"token\": \"cwd-tok-REAL-4242abcdefgh\"}\n",
    )
    .unwrap();
    config(
        &home,
        &format!(
            "[secrets.cmdtok]\ncommand = [\"python3\", \"-c\", \"import json; \
             print(json.load(open('{}'))['token'])\"]\nhosts = [\"localhost:1\"]\nenv = \"CMDTOK\"\n",
            vals.join("v.json").display()
        ),
    );
    let marker = t.path().join("HOST_CODE_RAN");
    let module = format!(
        "import sys\nopen({:?}, 'w').write('ran')\ndel sys.modules['json']\nsys.path.pop(0)\n\
         import json as _j\nsys.modules['json'] = _j\nfrom json import *\n",
        marker.display().to_string()
    );
    // Run 1, no secret: plants the module in its workspace.
    let plant = format!("cat > json.py <<'E'\n{module}E\n");
    let o = run_command(&ws, &home, &[], &["sh", "-c", &plant])
        .output()
        .unwrap();
    assert_eq!(code(&o), 0, "{}", err(&o));
    // The run's module named like the standard library's is refused since
    // atk22k F14: put in place from outside, so that the source's own
    // protection is what is tried.
    if !ws.join("json.py").exists() {
        std::fs::write(ws.join("json.py"), &module).unwrap();
    }
    // Run 2, started in the workspace as usual, resolves the secret: the
    // planted module must not run.
    let o = run_command(
        &ws,
        &home,
        &["--secret", "cmdtok"],
        &["sh", "-c", "echo CMDTOK=$CMDTOK"],
    )
    .current_dir(&ws)
    .output()
    .unwrap();
    assert!(
        !marker.exists(),
        "the planted module ran on the host: {}",
        err(&o)
    );
    assert!(out(&o).starts_with("CMDTOK="), "{}{}", out(&o), err(&o));
    assert!(!out(&o).contains("cwd-tok-REAL"), "{}", out(&o));
}

/// ADR 0243 (atk27h F7): a secret bound to a token endpoint is granted
/// with a warning that what that endpoint returns is not bound; one bound
/// to ordinary API paths gets none.
#[test]
fn a_secret_bound_to_a_token_endpoint_is_granted_with_a_warning() {
    let t = TempDir::new("sec-derived");
    let home = t.dir("home");
    let ws = t.dir("ws");
    let vals = t.dir("vals");
    std::fs::write(vals.join("rt"), "rt-REAL-derived-0123456789abcd").unwrap();
    config(
        &home,
        &format!(
            "[secrets.rt]\nfile = \"{f}\"\nhosts = [\"localhost:1\"]\nmethods = [\"POST\"]\n\
             paths = [\"/oauth/token\"]\n\n[secrets.api]\nfile = \"{f}\"\nhosts = [\"localhost:1\"]\n\
             paths = [\"/v1/*\"]\nenv = \"API\"\n",
            f = vals.join("rt").display()
        ),
    );
    let o = run_command(&ws, &home, &["--secret", "rt"], &["true"])
        .output()
        .unwrap();
    let e = err(&o);
    assert!(
        e.contains("secret rt is bound to /oauth/token") && e.contains("ADR 0243"),
        "{e}"
    );
    let o = run_command(&ws, &home, &["--secret", "api"], &["true"])
        .output()
        .unwrap();
    assert!(!err(&o).contains("ADR 0243"), "{}", err(&o));
}
