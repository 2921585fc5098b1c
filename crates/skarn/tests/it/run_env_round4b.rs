//! `skarn run`, issue 22's third attack pass, F8 remainder: keys and
//! programs that `~/.kube/config` and `~/.aws/config` name inside the
//! workspace. Checked from outside (the key not printed, the host program
//! file as it was).

use crate::common::*;
use skarn_test_support::TempDir;

/// A client key of `~/.kube/config` and a web identity token of
/// `~/.aws/config` kept in a dotfiles repository (the workspace) are
/// hidden; the `credential_process` program there cannot be rewritten;
/// other files of the repository stay readable.
#[test]
fn cloud_config_keys_in_workspace_are_hidden() {
    let t = TempDir::new("r4b-cloud");
    let home = t.dir("home");
    let ws = t.dir("home/dotfiles");
    git(&ws, &["init", "-q"]);
    t.file("home/dotfiles/keys/kube.key", "SECRET-KUBE-R4B\n");
    t.file("home/dotfiles/keys/aws.token", "SECRET-AWS-R4B\n");
    t.file("home/dotfiles/bin/aws-cred", "#!/bin/sh\necho ok\n");
    t.file("home/dotfiles/README", "readable\n");
    t.file(
        "home/.kube/config",
        "users:\n- name: u\n  user:\n    client-key: ../dotfiles/keys/kube.key\n",
    );
    t.file(
        "home/.aws/config",
        "[default]\nweb_identity_token_file = ~/dotfiles/keys/aws.token\n\
         credential_process = ~/dotfiles/bin/aws-cred --profile x\n",
    );
    let o = run_in(
        &ws,
        &home,
        &[],
        &[
            "sh",
            "-c",
            "cat keys/kube.key keys/aws.token README; \
             echo 'echo PWN' > bin/aws-cred; true",
        ],
    );
    assert_eq!(code(&o), 0, "{}", err(&o));
    let text = out(&o);
    assert!(!text.contains("SECRET-KUBE-R4B"), "{text}");
    assert!(!text.contains("SECRET-AWS-R4B"), "{text}");
    assert!(text.contains("readable"), "{text}");
    assert_eq!(
        std::fs::read_to_string(ws.join("bin/aws-cred")).unwrap(),
        "#!/bin/sh\necho ok\n"
    );
}
