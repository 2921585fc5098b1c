use super::*;

fn tempdir(tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!(
        "skarn-home-mentions-{tag}-{}-{:?}",
        std::process::id(),
        std::thread::current().id()
    ));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    std::fs::canonicalize(d).unwrap()
}

fn put(p: &Path, text: &str) {
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, text).unwrap();
}

#[test]
fn normalise_drops_quotes_and_expands_the_home() {
    let h = "/h";
    assert_eq!(normalise(". \"$HOME\"/p/a.sh", h), ". /h/p/a.sh");
    assert_eq!(normalise("source ~/'p/b.sh'", h), "source /h/p/b.sh");
    assert_eq!(normalise("x ${HOME:-/nope}/p", h), "x /h/p");
    assert_eq!(normalise("${DF:-$HOME/p/sh}", h), "${DF:-/h/p/sh}");
    assert_eq!(normalise("$HOMEBREW_PREFIX/x", h), "$HOMEBREW_PREFIX/x");
    assert_eq!(normalise("let x = $HOME . '/p'", h), "let x = /h/p");
    assert_eq!(normalise("a~/b", h), "a~/b");
    assert_eq!(normalise("Match exec %d/p/x", h), "Match exec /h/p/x");
}

#[test]
fn find_path_needs_whole_names() {
    assert_eq!(find_path("x=/h/p/a:/b", "/h/p").as_deref(), Some("/h/p/a"));
    assert!(find_path("/h/p.bak/x", "/h/p").is_none());
    assert!(find_path("/h/pp", "/h/p").is_none());
    assert!(find_path("/x/h/p", "/h/p").is_none());
    assert_eq!(find_path("cd /h/p", "/h/p").as_deref(), Some("/h/p"));
}

#[test]
fn patterns_reach_into_the_target() {
    let t = Path::new("/h/src/proj");
    assert!(pattern_reaches(Path::new("/h/src/*/env.sh"), t));
    assert!(pattern_reaches(Path::new("/h/src/$X/env.sh"), t));
    assert!(!pattern_reaches(Path::new("/h/other/*/env.sh"), t));
    assert!(!pattern_reaches(Path::new("/h/*"), t));
    assert!(wild(b"p*j", b"proj") && !wild(b"p*x", b"proj"));
}

#[test]
fn every_finding_form_is_a_mention_and_history_is_not() {
    let t = tempdir("forms");
    let (home, ws) = (t.join("home"), t.join("home/proj"));
    std::fs::create_dir_all(&ws).unwrap();
    let cases: &[(&str, &str)] = &[
        (".bashrc", "eval \"$(~/proj/bin/prompt init)\"\n"),
        (
            ".bashrc",
            "export PYTHONPATH=\"$HOME/proj/src${PYTHONPATH:+:$PYTHONPATH}\"\n",
        ),
        (".vimrc", "set runtimepath+=~/proj/vimfiles\n"),
        (
            ".tmux.conf",
            "if-shell \"test -f ~/proj/t.conf\" \"source-file ~/proj/t.conf\"\n",
        ),
        (".ssh/config", "Match exec \"~/proj/bin/onvpn\"\n"),
        (".gitconfig", "[core]\n\tfsmonitor = ~/proj/g/fsmon\n"),
        (
            ".config/fish/conf.d/p.fish",
            "fish_add_path ~/proj/fishbin\n",
        ),
        (".zshenv", "export ZDOTDIR=~/proj/zsh\n"),
        (".inputrc", "$include ~/proj/inputrc\n"),
        (
            ".cargo/config.toml",
            "[build]\nrustc-wrapper = \"proj/tools/wrap.sh\"\n",
        ),
        (
            ".npmrc",
            "node-options=--require ${HOME}/proj/hooks/req.js\n",
        ),
        (
            ".local/lib/python3.11/site-packages/_p.pth",
            "../../../../proj/src\n",
        ),
        (".bashrc", "source ${DF:-$HOME/proj/sh}/env.sh\n"),
        (".bashrc", "for f in ~/*/env.d/*.sh; do . $f; done\n"),
        (".local/share/direnv/allow/abc", "PLACEHOLDER/.envrc\n"),
    ];
    for (rel, text) in cases {
        let _ = std::fs::remove_dir_all(home.join(".config"));
        for f in [
            ".bashrc",
            ".vimrc",
            ".tmux.conf",
            ".ssh",
            ".gitconfig",
            ".zshenv",
            ".inputrc",
            ".cargo",
            ".npmrc",
            ".local",
        ] {
            let p = home.join(f);
            let _ = std::fs::remove_file(&p);
            let _ = std::fs::remove_dir_all(&p);
        }
        let text = text.replace("PLACEHOLDER", &ws.to_string_lossy());
        put(&home.join(rel), &text);
        let m = scan(&home, std::slice::from_ref(&ws));
        assert_eq!(m.found.len(), 1, "{rel}: {text}: {m:?}");
        assert_eq!(m.found[0].file, home.join(rel), "{m:?}");
        std::fs::remove_file(home.join(rel)).unwrap();
    }
    // History, editor state and another project's mention: not mentions.
    put(&home.join(".bash_history"), "cd ~/proj\n");
    put(
        &home.join(".config/Code/User/globalStorage/storage.json"),
        "\"/h/proj\"\n",
    );
    put(
        &home.join(".bashrc"),
        "alias x='cd ~/project2'\nsource ~/proj.bak/x\n",
    );
    let m = scan(&home, std::slice::from_ref(&ws));
    assert!(m.found.is_empty() && m.over_budget.is_none(), "{m:?}");
    std::fs::remove_dir_all(&t).unwrap();
}

#[test]
fn a_linked_start_up_file_and_a_followed_file_are_mentions() {
    let t = tempdir("links");
    let (home, ws) = (t.join("home"), t.join("dotfiles"));
    put(&ws.join("bash/bashrc"), "true\n");
    std::fs::create_dir_all(&home).unwrap();
    std::os::unix::fs::symlink(ws.join("bash/bashrc"), home.join(".bashrc")).unwrap();
    let m = scan(&home, std::slice::from_ref(&ws));
    assert_eq!(m.found.len(), 1, "{m:?}");
    assert_eq!(m.found[0].line, 0);
    std::fs::remove_file(home.join(".bashrc")).unwrap();
    // Two hops inside the home, then the workspace.
    put(&home.join(".bashrc"), ". ~/.config/sh/a.sh\n");
    put(&home.join(".config/sh/a.sh"), ". ~/.config/sh/b.sh\n");
    put(
        &home.join(".config/sh/b.sh"),
        &format!("PATH={}/bin:$PATH\n", ws.display()),
    );
    let m = scan(&home, std::slice::from_ref(&ws));
    assert_eq!(m.found.len(), 1, "{m:?}");
    assert_eq!(m.found[0].file, home.join(".config/sh/b.sh"));
    std::fs::remove_dir_all(&t).unwrap();
}

#[test]
fn a_file_over_the_budget_counts_as_a_mention() {
    let t = tempdir("budget");
    let (home, ws) = (t.join("home"), t.join("ws"));
    std::fs::create_dir_all(&ws).unwrap();
    put(
        &home.join(".bashrc"),
        &"x".repeat(MAX_FILE_BYTES as usize + 1),
    );
    let m = scan(&home, std::slice::from_ref(&ws));
    assert!(m.over_budget.is_some(), "{m:?}");
    std::fs::remove_dir_all(&t).unwrap();
}
