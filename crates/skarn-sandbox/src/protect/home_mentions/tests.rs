use super::words::find_path;
use super::*;

pub(super) fn tempdir(tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!(
        "skarn-home-mentions-{tag}-{}-{}",
        std::process::id(),
        format!("{:?}", std::thread::current().id())
            .replace(|c: char| !c.is_ascii_alphanumeric(), "")
    ));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    std::fs::canonicalize(d).unwrap()
}

pub(super) fn put(p: &Path, text: &str) {
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
    let r = |w: &str| pattern::reaches(&pattern::comps(w), t, 2);
    assert!(r("/h/src/*/env.sh"));
    assert!(r("/h/src/\u{2}/env.sh"));
    assert!(!r("/h/other/*/env.sh"));
    // A pattern naming a directory of the grant (attack atk22c F1).
    assert!(r("/h/*"));
    assert!(r("/h/src/pro[j]/env.sh") && r("/h/src/pro[!x]") && !r("/h/src/pro[xy]"));
    assert!(r("/h/src/@(proj)/env.sh") && r("/h/src/pr?j"));
    assert!(r("\u{2}/proj/env.sh") && r("\u{2}/src/proj"));
    assert!(!r("\u{2}/env.sh") && !r("\u{2}") && !r("\u{2}/src"));
    let alts = pattern::braces("/h/src/{proj,x}/env.sh");
    assert_eq!(alts.len(), 2, "{alts:?}");
    assert!(alts.iter().any(|a| r(a)));
    assert!(pattern::braces("/h/{a,{b,c}}/{1..3}").len() == 3);
    assert!(pattern::glob(b"p*j", b"proj") && !pattern::glob(b"p*x", b"proj"));
    // Bounded work on a pattern built to backtrack (answer: safe side).
    let (p, n) = ("*a".repeat(40) + "b", "a".repeat(250));
    let _ = pattern::glob(p.as_bytes(), n.as_bytes());
    assert!(pattern::braces(&"{a,b}".repeat(20)).len() <= 64);
}

/// Attack atk22c F1: words that reach the workspace through expansion.
#[test]
fn expanded_words_are_mentions() {
    let t = tempdir("expand");
    let (home, ws) = (t.join("home"), t.join("home/proj"));
    std::fs::create_dir_all(&ws).unwrap();
    put(
        &home.join(".config/projdir"),
        &format!("{}\n", ws.display()),
    );
    for rc in [
        ". ~/pro[j]/env.sh",
        ". ~/{proj,x}/env.sh",
        ". ~/pr\\oj/env.sh",
        ". ~/p\\roj/env.sh",
        "shopt -s extglob; . ~/@(proj)/env.sh",
        ". \"${BASH_SOURCE%/*}/proj/env.sh\"",
        ". \"$(dirname \"$BASH_SOURCE\")/proj/env.sh\"",
        ". \"$(dirname \"${BASH_SOURCE[0]}\")/proj/env.sh\"",
        ". \"$(cat ~/.config/projdi?)\"/env.sh",
        ". \"$(cat ~/.config/projdi[r])\"/env.sh",
        "d=pr; . ~/${d}oj/env.sh",
        ". ~/pro\\\nj/env.sh",
    ] {
        put(&home.join(".bashrc"), &format!("{rc}\n"));
        let m = scan(&home, std::slice::from_ref(&ws));
        assert_eq!(m.found.len(), 1, "{rc}: {m:?}");
    }
    std::fs::remove_dir_all(&t).unwrap();
}

/// Attack atk22c F3: lines that run nothing are not mentions.
#[test]
fn lines_that_run_nothing_are_not_mentions() {
    let t = tempdir("inert");
    let (home, ws) = (t.join("home"), t.join("home/proj"));
    std::fs::create_dir_all(&ws).unwrap();
    let w = ws.display().to_string();
    let cases: &[(&str, String)] = &[
        (".gitconfig", format!("[safe]\n\tdirectory = {w}\n")),
        (
            ".gitconfig",
            format!("[core]\n\texcludesFile = {w}/.gi\n; {w}/x\n"),
        ),
        (".config/git/ignore", format!("{w}/build/\n")),
        (".gitconfig", format!("[includeIf \"gitdir:{w}/\"]\n")),
        (".local/share/direnv/allow/abc", format!("{w}/.envrc\n")),
        (
            ".ssh/config",
            format!("Host x\n  IdentityFile {w}/deploy_key\n"),
        ),
        (
            ".bashrc",
            format!("alias p='cd {w}'\nexport CDPATH=.:{w}\n"),
        ),
        (
            ".bashrc",
            "p() { cd ~/proj; }\nalias q='cd ~/proj && ls'\n".into(),
        ),
        (
            ".bashrc",
            format!("export PATH=$PATH:$HOME/go/bin  # {w}\n"),
        ),
        (
            ".claude/settings.json",
            format!("{{\"permissions\":{{\"additionalDirectories\":[\"{w}\"]}}}}"),
        ),
        (
            ".config/Code/User/settings.json",
            format!("{{\"git.defaultCloneDirectory\":\"{w}\"}}"),
        ),
        (
            ".config/Code/User/settings.json",
            format!("{{\n  // mine\n  \"git.defaultCloneDirectory\": \"{w}\", /* x */\n}}\n"),
        ),
        (".config/fish/config.fish", format!("alias p 'cd {w}'\n")),
    ];
    for (rel, text) in cases {
        put(&home.join(rel), text);
        let m = scan(&home, std::slice::from_ref(&ws));
        assert!(m.is_empty(), "{rel}: {text}: {m:?}");
        std::fs::remove_file(home.join(rel)).unwrap();
    }
    // The same files still count where they run something.
    for (rel, text) in [
        (".gitconfig", "[core]\n\tpager = ~/proj/p\n"),
        (".gitconfig", "[core] pager = ~/proj/p\n"),
        (
            ".gitconfig",
            "[includeIf \"gitdir:/x/\"]\n\tpath = ~/proj/inc\n",
        ),
        (".bashrc", "alias p='cd ~/proj && . ./env.sh'\n"),
        (".bashrc", "cd ~/proj\n"),
        (".bashrc", "X='true\n# ; . ~/proj/env.sh'\neval \"$X\"\n"),
        (".ssh/config", "Host x\n  ProxyCommand ~/proj/p\n"),
        (".claude/settings.json", "{\"hooks\":{\"x\":\"~/proj/h\"}}"),
    ] {
        put(&home.join(rel), text);
        let m = scan(&home, std::slice::from_ref(&ws));
        assert_eq!(m.found.len(), 1, "{rel}: {text}: {m:?}");
        std::fs::remove_file(home.join(rel)).unwrap();
    }
    std::fs::remove_dir_all(&t).unwrap();
}

/// Attack atk22c F8: the user's code in plugin directories and files with
/// state-looking names where shells source every file.
#[test]
fn plugin_directories_are_read() {
    let t = tempdir("plugins");
    let (home, ws) = (t.join("home"), t.join("home/proj"));
    std::fs::create_dir_all(&ws).unwrap();
    let line = format!("source {}/x\n", ws.display());
    for rel in [
        ".vim/pack/my/start/p/plugin/p.vim",
        ".oh-my-zsh/custom/plugins/my/my.plugin.zsh",
        ".zsh/plugins/my/init.zsh",
        ".config/fish/plugins/x.fish",
        ".config/nvim/plugins/x.lua",
        ".vim/bundle/p/plugin/p.vim",
        ".config/zsh/cache/x.zsh",
        ".bashrc.d/dev.log",
        ".config/zsh/env.db",
    ] {
        put(&home.join(rel), &line);
        let m = scan(&home, std::slice::from_ref(&ws));
        assert_eq!(m.found.len(), 1, "{rel}: {m:?}");
        std::fs::remove_dir_all(home.join(rel.split('/').next().unwrap())).unwrap();
    }
    // A plugin manager's clone (it has a remote): third-party code,
    // links only.
    put(&home.join(".vim/plugged/p/.git/HEAD"), "ref\n");
    put(
        &home.join(".vim/plugged/p/.git/config"),
        "[remote \"origin\"]\n\turl = https://example.test/p.git\n",
    );
    put(&home.join(".vim/plugged/p/plugin/p.vim"), &line);
    assert!(scan(&home, std::slice::from_ref(&ws)).is_empty());
    std::fs::remove_dir_all(&t).unwrap();
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
        (
            ".local/share/direnv/allow/abc",
            "PLACEHOLDER/tools/.envrc.sh\n",
        ),
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

/// Usability: common start-up files (a distribution's `.bashrc`, version
/// managers, prompt tools) name no project.
#[test]
fn common_start_up_files_name_no_project() {
    let t = tempdir("common");
    let home = t.join("home");
    let grants = [home.join("src/app"), home.join("proj"), home.join("bin2")];
    for g in &grants {
        std::fs::create_dir_all(g).unwrap();
    }
    let skel = std::fs::read_to_string("/etc/skel/.bashrc").unwrap_or_default();
    let rc = format!(
        "{skel}\n\
         export NVM_DIR=\"$HOME/.nvm\"\n\
         [ -s \"$NVM_DIR/nvm.sh\" ] && \\. \"$NVM_DIR/nvm.sh\"\n\
         export PYENV_ROOT=\"$HOME/.pyenv\"\n\
         [[ -d $PYENV_ROOT/bin ]] && export PATH=\"$PYENV_ROOT/bin:$PATH\"\n\
         eval \"$(pyenv init - bash)\"\n\
         eval \"$(starship init bash)\"\n\
         [ -f ~/.fzf.bash ] && source ~/.fzf.bash\n\
         for f in ~/.bashrc.d/*.sh; do [ -r \"$f\" ] && . \"$f\"; done\n\
         __conda_setup=\"$('/opt/conda/bin/conda' 'shell.bash' 'hook' 2> /dev/null)\"\n\
         case $- in *i*) ;; *) return;; esac\n\
         export GOPATH=$HOME/go; export PATH=$PATH:$GOPATH/bin:${{CARGO_HOME:-$HOME/.cargo}}/bin\n\
         source <(kubectl completion bash)\n\
         PS1='${{debian_chroot:+($debian_chroot)}}\\u@\\h:\\w\\$ '\n"
    );
    put(&home.join(".bashrc"), &rc);
    put(&home.join(".bashrc.d/a.sh"), "alias ll='ls -l'\n");
    put(
        &home.join(".vimrc"),
        "set nocompatible\nset undodir=~/.vim/undo//\nlet g:x = expand('~/.vim/*')\n",
    );
    let m = scan(&home, &grants);
    assert!(m.is_empty(), "{m:?}");
    std::fs::remove_dir_all(&t).unwrap();
}
