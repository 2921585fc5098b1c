use super::*;

fn tempdir(tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("skarn-ancestor-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d.canonicalize().unwrap()
}

fn put(p: &Path, text: &str) {
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, text).unwrap();
}

#[test]
fn path_words_resolve_as_the_programs_do() {
    let b = Path::new("/w");
    let h = Path::new("/h");
    let got = path_words(
        "rustc-wrapper = \"proj/tools/wrap\"\npath=~/x/tc\nurl=\"https://host/a/b\" # c\nuse ./p\n\
         fetch = +refs/*:x",
        &[b],
        Some(h),
    );
    assert!(
        got.contains(&PathBuf::from("/w/proj/tools/wrap")),
        "{got:?}"
    );
    assert!(got.contains(&PathBuf::from("/h/x/tc")), "{got:?}");
    assert!(got.contains(&PathBuf::from("/w/p")), "{got:?}");
    assert!(!got.iter().any(|p| p.starts_with("/host")), "{got:?}");
    assert!(
        !got.iter().any(|p| p.to_string_lossy().contains('*')),
        "{got:?}"
    );
}

#[test]
fn parents_configuration_naming_grant_files_is_found() {
    let d = tempdir("parents");
    let ws = d.join("work/proj");
    std::fs::create_dir_all(ws.join("bin")).unwrap();
    put(&ws.join("scripts/env.sh"), "true\n");
    put(&ws.join("tools/wrap"), "#!/bin/sh\n");
    put(
        &d.join("work/.envrc"),
        "source proj/scripts/env.sh\nPATH_add proj/bin\n",
    );
    put(
        &d.join(".cargo/config.toml"),
        &format!("[build]\nrustc-wrapper = \"{}/tools/wrap\"\n", ws.display()),
    );
    put(
        &d.join("work/rust-toolchain.toml"),
        "[toolchain]\npath = \"proj/tc\"\n",
    );
    put(&d.join("work/.yarnrc"), "yarn-path \"proj/y.js\"\n");
    let got: Vec<(PathBuf, bool)> = places(&ws, None)
        .into_iter()
        .map(|t| (t.target, t.tree.is_some()))
        .collect();
    for (p, tree) in [
        (ws.join("scripts/env.sh"), false),
        (ws.join("bin"), true),
        (ws.join("tools/wrap"), false),
        (ws.join("tc"), false),
        (ws.join("y.js"), false),
    ] {
        assert!(
            got.contains(&(p.clone(), tree)),
            "{} {tree}: {got:?}",
            p.display()
        );
    }
    // Nothing outside the grant.
    assert!(got.iter().all(|(p, _)| p.starts_with(&ws)), "{got:?}");
    std::fs::remove_dir_all(&d).unwrap();
}

#[test]
fn enclosing_repository_configuration_is_read_relative_to_its_top() {
    let d = tempdir("enclosing");
    let repo = d.join("repo");
    std::fs::create_dir_all(repo.join(".git/objects")).unwrap();
    put(&repo.join(".git/HEAD"), "ref: refs/heads/main\n");
    put(
        &repo.join(".git/config"),
        "[core]\n\thooksPath = tools/hooks\n\tfsmonitor = tools/fsmon.sh\n\
         [remote \"origin\"]\n\turl = git@host:tools/x.git\n\tfetch = +refs/heads/*:refs/remotes/origin/*\n",
    );
    std::fs::create_dir_all(repo.join("tools/hooks")).unwrap();
    put(&repo.join("tools/fsmon.sh"), "#!/bin/sh\n");
    let ws = repo.join("tools");
    let got: Vec<PathBuf> = places(&ws, None).into_iter().map(|t| t.target).collect();
    assert!(got.contains(&ws.join("hooks")), "{got:?}");
    assert!(got.contains(&ws.join("fsmon.sh")), "{got:?}");
    assert!(!got.contains(&ws.join("x.git")), "{got:?}");
    std::fs::remove_dir_all(&d).unwrap();
}
