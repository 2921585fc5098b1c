use super::*;

const GIT: &str = r#"
[user]
name = Ada
email = ada@example.org
[core]
autocrlf = input
fsmonitor = /usr/bin/evil
hooksPath = ~/hooks
sshCommand = ssh -i key
pager = less
editor = vim
excludesFile = ~/.gitignore
[init]
defaultBranch = main
[safe]
directory = /src/x
[credential]
helper = store
[credential "https://h.example"]
username = ada
[alias]
co = checkout
sh = !sh -c evil
p = -c core.pager=evil log
[filter "lfs"]
process = git-lfs filter-process
[diff "bin"]
textconv = hexdump
[merge "ours"]
driver = true
[include]
path = ~/.gitconfig.local
[includeIf "gitdir:~/w/"]
path = ~/.work
[http]
extraHeader = Authorization: Bearer t0ken
sslCAInfo = /etc/ca.pem
[url "https://tok@h.example/"]
insteadOf = https://h.example/
[url "https://mirror.example/"]
insteadOf = https://x.example/
[url "git@h.example:"]
insteadOf = https://h.example/
[url "https://m2.example/"]
insteadOf = https://u:p@x.example/
[pull]
rebase = true
[diff]
external = evil
algorithm = histogram
[gpg]
program = evil
"#;

#[test]
fn pipconf_keeps_only_the_sections_pip_reads() {
    // Found by the `dotfiles` fuzz target: a token glued into a section
    // name passed the old syntax check.
    let out = sanitized_pipconf(
        "[globalghp_Mk7Qz2Lw9Xr4Tb6Nc8Vd1Fh3Jp5Sg0Ya2Ue]\ntimeout = 1\n[install]\ntimeout = 2\n",
    );
    assert_eq!(out, "[install]\ntimeout = 2\n");
}

#[test]
fn npmrc_keeps_only_registries_of_real_scopes() {
    // Found by the `dotfiles` fuzz target: a token in the scope's place
    // of a `@scope:registry` key was copied in.
    let tok = "ghp_Mk7Qz2Lw9Xr4Tb6Nc8Vd1Fh3Jp5Sg0Ya2Ue";
    let out = sanitized_npmrc(&format!(
        "@my-org:registry=https://npm.example/\n@x/{tok}:registry=https://h/\n@Up:registry=https://h/\n"
    ));
    assert_eq!(out, "@my-org:registry=https://npm.example/\n");
}

#[test]
fn gitconfig_keeps_identity_and_drops_commands_and_credentials() {
    let s = sanitized_gitconfig(GIT);
    let keys: Vec<String> = gitconfig::parse(&s)
        .items
        .iter()
        .map(|i| format!("{}={}", i.key(), i.value.clone().unwrap_or_default()))
        .collect();
    assert_eq!(
        keys,
        [
            "user.name=Ada",
            "user.email=ada@example.org",
            "core.autocrlf=input",
            "core.excludesfile=~/.gitignore",
            "init.defaultbranch=main",
            "safe.directory=/src/x",
            "alias.co=checkout",
            "http.sslcainfo=/etc/ca.pem",
            "url.https://mirror.example/.insteadof=https://x.example/",
            "url.git@h.example:.insteadof=https://h.example/",
            "pull.rebase=true",
            "diff.algorithm=histogram",
        ]
    );
    for bad in [
        "evil", "t0ken", "tok@", "u:p@", "store", "lfs", "hexdump", "include",
    ] {
        assert!(!s.contains(bad), "{bad} survived:\n{s}");
    }
}

#[test]
fn gitconfig_hostile_input_never_panics_and_is_requoted() {
    for t in [
        "[",
        "[a \"",
        "\\",
        "=",
        "[x]\nk=\"\\",
        "[user]\nname = \"a\n[core]\nfsmonitor=x",
    ] {
        let _ = sanitized_gitconfig(t);
    }
    // A value cannot smuggle a new section through quoting.
    let s = sanitized_gitconfig("[user]\nname = \"x\\n[core]\\nfsmonitor = evil\"\n");
    let p = gitconfig::parse(&s);
    assert_eq!(p.items.len(), 1);
    assert_eq!(p.items[0].key(), "user.name");
}

#[test]
fn urls_with_credentials() {
    assert!(url_has_credentials("https://tok@h/x"));
    assert!(url_has_credentials("https://u:p@h/x"));
    assert!(url_has_credentials("ssh://u:p@h/x"));
    assert!(!url_has_credentials("ssh://git@h/x"));
    assert!(!url_has_credentials("git@h:x/y"));
    assert!(!url_has_credentials("https://h/x@y"));
    assert_eq!(strip_userinfo("https://u:p@h:8/x"), "https://h:8/x");
    assert_eq!(strip_userinfo("https://h/a@b"), "https://h/a@b");
}

#[test]
fn npmrc_keeps_registries_and_drops_credentials_and_scripts() {
    let s = sanitized_npmrc(
        "registry=https://u:p@reg.example/\n@corp:registry=https://reg.corp.example/\n\
         //reg.corp.example/:_authToken=SECRET1\n_authToken=SECRET2\n_auth=SECRET3\n\
         _password=SECRET4\nusername=ada\nemail=ada@example.org\ncafile=/etc/ca.pem\n\
         strict-ssl=true\nproxy=http://u:SECRET5@proxy:3128/\ncertfile=/k.pem\n\
         keyfile=/k.key\nscript-shell=/bin/evil\nnode-options=--require /evil.js\n\
         init-module=/evil.js\n# comment\nnonsense line\n",
    );
    assert_eq!(
        s,
        "registry=https://reg.example/\n@corp:registry=https://reg.corp.example/\n\
         email=ada@example.org\ncafile=/etc/ca.pem\nstrict-ssl=true\n\
         proxy=http://proxy:3128/\n"
    );
}

#[test]
fn pipconf_strips_index_credentials() {
    let s = sanitized_pipconf(
        "[global]\nindex-url = https://u:SECRET@idx.example/simple\n\
         extra-index-url =\n    https://tok@a.example/simple\n    https://b.example/simple\n\
         trusted-host = idx.example\nclient-cert = /k.pem\ntimeout: 30\n[install]\n\
         keyring-provider = subprocess\n",
    );
    assert_eq!(
        s,
        "[global]\nindex-url = https://idx.example/simple\nextra-index-url = \n    \
         https://a.example/simple\n    https://b.example/simple\ntrusted-host = idx.example\n\
         timeout = 30\n[install]\n"
    );
    assert!(!s.contains("SECRET") && !s.contains("tok"));
}
