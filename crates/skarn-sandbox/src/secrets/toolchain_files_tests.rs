#![cfg(unix)]

use super::*;

fn write(p: &Path, text: &str) {
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, text).unwrap();
}

#[test]
fn credentials_in_toolchain_configs_are_found_by_what_they_hold() {
    assert!(holds_credential(
        "//registry.example/:_authToken=npm_abcdefghijklmnopqrstuvwxyz0123\n"
    ));
    assert!(holds_credential("_auth = dXNlcjpwYXNz\n"));
    assert!(holds_credential(
        "channels:\n  - https://u:CONDASECRET@conda.example/c\n"
    ));
    assert!(holds_credential(
        "[global]\nindex-url = https://u:pw123@idx.example/simple\n"
    ));
    assert!(holds_credential("npmAuthToken: \"abc\"\n"));
    assert!(!holds_credential(
        "[global]\nindex-url = https://mirror.example/simple\ntimeout = 5\n"
    ));
    assert!(!holds_credential(
        "channels:\n  - conda-forge\n  - defaults\n"
    ));
    assert!(!holds_credential(
        "fund=false\nregistry=https://mirror.example/\n"
    ));
}

#[test]
fn the_tools_places_in_each_tree_are_found_and_clean_files_kept() {
    let t = skarn_test_support::TempDir::new("toolchain_files");
    let h = t.path().to_path_buf();
    let nvm = h.join(".nvm");
    let npmrc = nvm.join("versions/node/v20.0.0/etc/npmrc");
    write(&npmrc, "//r.example/:_authToken=SECRETTOKEN\n");
    let volta = h.join(".volta");
    let vnpmrc = volta.join("tools/image/node/20.1.0/etc/npmrc");
    write(&vnpmrc, "//r.example/:_authToken=SECRETTOKEN\n");
    let conda = h.join("miniconda3");
    let condarc = conda.join(".condarc");
    write(
        &condarc,
        "channels: [https://u:CONDASECRET@conda.example/c]\n",
    );
    let clean_env = conda.join("envs/e1/.condarc");
    write(&clean_env, "channels: [conda-forge]\n");
    let pyenv = h.join(".pyenv");
    let pipconf = pyenv.join("versions/3.12.0/pip.conf");
    write(
        &pipconf,
        "[global]\nindex-url = https://u:PW@idx.example/simple\n",
    );
    let pypirc = pyenv.join("versions/3.12.0/.pypirc");
    write(&pypirc, "[pypi]\n");
    // Installed code is not looked into.
    let deep = pyenv.join("versions/3.12.0/lib/python3.12/pip.conf");
    write(
        &deep,
        "[global]\nindex-url = https://u:PW@idx.example/simple\n",
    );
    let ws = h.join("ws");
    std::fs::create_dir_all(&ws).unwrap();
    let mut p = Policy::new(ws);
    for r in [&nvm, &volta, &conda, &pyenv] {
        p.exec
            .push(crate::policy::Grant::new(r, "default (toolchains)"));
    }
    let f = find(&p, Some(&h));
    for want in [&npmrc, &vnpmrc, &condarc, &pipconf, &pypirc] {
        assert!(f.files.contains(want), "{want:?} not in {:?}", f.files);
    }
    assert!(!f.files.contains(&clean_env), "{:?}", f.files);
    assert!(!f.files.contains(&deep), "{:?}", f.files);
    assert!(!f.truncated);
}
