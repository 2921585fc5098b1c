use super::*;

fn scan_text(home: &Path, name: &str, text: &str) -> Scanned {
    let f = home.join(name);
    let mut s = Scanned::default();
    let mut next = Vec::new();
    scan_file(&f, text, home, &mut Vars::default(), &mut s, &mut next);
    s
}

fn has(s: &Scanned, p: &str, tree: Option<Tree>) -> bool {
    s.reached
        .iter()
        .any(|r| r.path == Path::new(p) && r.tree == tree)
}

#[test]
fn sourced_paths_are_found_as_the_shell_expands_them() {
    let home = Path::new("/h");
    let text = "# source /no/comment.sh\n\
                source ~/dotfiles/aliases.sh\n\
                . \"$HOME/dotfiles/env.sh\"\n\
                [ -f ~/x/local.sh ] && . ~/x/local.sh\n\
                if true; then source ${HOME}/y.sh; fi\n\
                source-file -q /etc/tmux.extra\n\
                echo source /not/this.sh\n\
                builtin source ~/b2.sh\n\
                command . ~/b3.sh\n";
    let s = scan_text(home, ".bashrc", text);
    for want in [
        "/h/dotfiles/aliases.sh",
        "/h/dotfiles/env.sh",
        "/h/x/local.sh",
        "/h/y.sh",
        "/etc/tmux.extra",
        "/h/b2.sh",
        "/h/b3.sh",
    ] {
        assert!(has(&s, want, None), "{want} not in {s:?}");
    }
    assert!(!has(&s, "/no/comment.sh", None), "{s:?}");
    assert!(!has(&s, "/not/this.sh", None), "{s:?}");
    assert!(s.unresolved.is_empty(), "{s:?}");
}

#[test]
fn what_is_not_resolved_exactly_protects_its_directory() {
    let home = Path::new("/h");
    let text = "for f in ~/dotfiles/bash.d/*.sh; do [ -r \"$f\" ] && . \"$f\"; done\n\
                DF=~/dotfiles; . $DF/b4.sh\n\
                export PATH=\"$HOME/dotfiles/bin:$PATH\"\n\
                for g in ~/deep/*/x.sh; do . $g; done\n\
                . \"$(dirname \"$(readlink -f ~/.bashrc)\")/aliases.sh\"\n";
    let s = scan_text(home, ".bashrc", text);
    assert!(has(&s, "/h/dotfiles/bash.d", Some(Tree::Dir)), "{s:?}");
    assert!(has(&s, "/h/dotfiles", Some(Tree::Dir)), "{s:?}");
    assert!(has(&s, "/h/dotfiles/b4.sh", None), "{s:?}");
    assert!(has(&s, "/h/dotfiles/bin", Some(Tree::Dir)), "{s:?}");
    assert!(has(&s, "/h/deep", Some(Tree::Below)), "{s:?}");
    assert_eq!(s.unresolved.len(), 1, "{s:?}");
}

#[test]
fn editor_directories_are_trees() {
    let t = skarn_test_support::TempDir::new("shsrc-vim");
    let home = t.path().to_path_buf();
    std::fs::create_dir_all(home.join("dotfiles/vim")).unwrap();
    let s = scan_text(&home, ".vimrc", "set runtimepath+=~/dotfiles/vim\n");
    assert!(
        has(
            &s,
            &home.join("dotfiles/vim").display().to_string(),
            Some(Tree::Dir)
        ),
        "{s:?}"
    );
}
