//! Issue 22, escape 2 and its class: secret files named elsewhere than by
//! the home's fixed names. The caller's environment (`PGPASSFILE`,
//! `KUBECONFIG`, `KRB5CCNAME=FILE:`, the key of `GIT_SSH_COMMAND`), git's
//! own configuration (`http.sslKey`, `http.cookieFile`, a signing key file,
//! the key of `core.sshCommand`, read through includes, XDG and the
//! environment), and secret directories kept elsewhere whose entries link
//! on into a grant. Each run tries to read the value inside (default
//! flags); the value must not reach the output.

use std::os::unix::fs::symlink;
use std::path::Path;

use crate::common::*;
use skarn_test_support::TempDir;

/// The command's output and skarn's own messages together.
fn all(o: &std::process::Output) -> String {
    format!("{}{}", out(o), err(o))
}

/// Fail naming every secret value that came out.
fn assert_hidden(o: &std::process::Output, values: &[&str]) {
    let seen = all(o);
    assert!(seen.contains("PLAIN-OK"), "the command did not run: {seen}");
    let leaked: Vec<&&str> = values.iter().filter(|v| seen.contains(**v)).collect();
    assert!(
        leaked.is_empty(),
        "secrets readable inside: {leaked:?}\n{seen}"
    );
}

fn cat_all(files: &[&Path]) -> String {
    let mut s = String::from("cat plain; ");
    for f in files {
        s.push_str(&format!("cat '{}'; ", f.display()));
    }
    s.push_str("true");
    s
}

#[test]
fn secret_files_the_callers_environment_names_are_hidden() {
    let t = TempDir::new("named-env");
    let home = t.dir("home");
    let ws = t.dir("ws");
    let rd = t.dir("rd");
    t.file("ws/plain", "PLAIN-OK\n");
    let pg = t.file("ws/pgpass", "h:5432:*:u:SECRET-I-PG\n");
    let svc = t.file("ws/pg_service.conf", "[s]\npassword=SECRET-I-SVC\n");
    let age = t.file("ws/age.txt", "AGE-SECRET-KEY-SECRET-I-AGE\n");
    let krb = t.file("ws/krb5cc", "SECRET-I-KRB\n");
    let kt = t.file("ws/client.keytab", "SECRET-I-KT\n");
    let kube = t.file("ws/kube.yaml", "token: SECRET-I-KUBE\n");
    let gcp = t.file("rd/gcp.json", "{\"private_key\":\"SECRET-I-GCP\"}\n");
    let aws = t.file("ws/aws-creds", "aws_secret_access_key=SECRET-I-AWS\n");
    let dock = t.file("ws/docker/config.json", "{\"auths\":\"SECRET-I-DOCK\"}\n");
    let netrc = t.file("ws/netrc", "machine h password SECRET-I-NETRC\n");
    let key = t.file("ws/deploy key", "SECRET-I-SSHKEY\n");
    // A CARGO_HOME in the workspace makes no workspace (run_b22i): a read grant.
    let cargo = t.file("rd/cargo/credentials.toml", "token = \"SECRET-I-CARGO\"\n");
    // A key named by the ssh configuration file `-F` names.
    let cfg_key = t.file("ws/cfg_key", "SECRET-I-SSHCFG\n");
    let ssh_cfg = t.file(
        "ws/ssh_config",
        format!("Host *\n  IdentityFile {}\n", cfg_key.display()),
    );
    // `NETRC` names a link in the home that leads into the workspace.
    symlink(&netrc, home.join("netrc-link")).unwrap();
    let p = |f: &Path| f.display().to_string();
    let r = p(&rd);
    let o = run_command(
        &ws,
        &home,
        &["--read", &r],
        &[
            "sh",
            "-c",
            &cat_all(&[
                &pg, &svc, &age, &krb, &kt, &kube, &gcp, &aws, &dock, &netrc, &key, &cargo,
            ]),
        ],
    )
    .current_dir(&ws)
    .env("PGPASSFILE", p(&pg))
    // Relative: from where the caller runs its tools.
    .env("PGSERVICEFILE", "pg_service.conf")
    .env("SOPS_AGE_KEY_FILE", p(&age))
    .env("KRB5CCNAME", format!("FILE:{}", p(&krb)))
    .env("KRB5_CLIENT_KTNAME", p(&kt))
    .env("KUBECONFIG", format!("/nonexistent/kube:{}", p(&kube)))
    .env("GOOGLE_APPLICATION_CREDENTIALS", p(&gcp))
    .env("AWS_SHARED_CREDENTIALS_FILE", p(&aws))
    .env("DOCKER_CONFIG", p(&ws.join("docker")))
    .env("NETRC", "~/netrc-link")
    .env(
        "GIT_SSH_COMMAND",
        format!("ssh -o BatchMode=yes -i '{}' -F {}", p(&key), p(&ssh_cfg)),
    )
    .env("CARGO_HOME", p(&rd.join("cargo")))
    .output()
    .unwrap();
    assert_hidden(
        &o,
        &[
            "SECRET-I-PG",
            "SECRET-I-SVC",
            "SECRET-I-AGE",
            "SECRET-I-KRB",
            "SECRET-I-KT",
            "SECRET-I-KUBE",
            "SECRET-I-GCP",
            "SECRET-I-AWS",
            "SECRET-I-DOCK",
            "SECRET-I-NETRC",
            "SECRET-I-SSHKEY",
            "SECRET-I-CARGO",
            "SECRET-I-SSHCFG",
        ],
    );
    // Hidden, not lost.
    assert!(
        std::fs::read_to_string(&pg)
            .unwrap()
            .contains("SECRET-I-PG")
    );
}

#[test]
fn secret_files_gits_configuration_names_are_hidden() {
    if !host_has("git", "--version") {
        skarn_test_support::skip!("git is not installed");
    }
    let t = TempDir::new("named-git");
    let home = t.dir("home");
    let ws = t.dir("ws");
    assert!(git(&ws, &["init", "-q"]).status.success());
    t.file("ws/plain", "PLAIN-OK\n");
    let cookies = t.file(
        "ws/cookies.txt",
        "h\tFALSE\t/\tTRUE\t0\to\tSECRET-J-COOKIE\n",
    );
    let ssl_key = t.file("ws/client.key", "SECRET-J-SSLKEY\n");
    let ssl_cert = t.file("ws/client.pem", "SECRET-J-SSLCERT\n");
    let sign = t.file("ws/sign", "SECRET-J-SIGN\n");
    t.file("ws/sign.pub", "ssh-ed25519 AAAA\n");
    let ssh_key = t.file("ws/deploy_key", "SECRET-J-SSHCMD\n");
    let proxy = t.file("ws/proxy.key", "SECRET-J-PROXY\n");
    let repo_cookie = t.file("ws/repo.cookies", "SECRET-J-REPO\n");
    let gitcookies = t.file("ws/gitcookies", "SECRET-J-GITCOOKIES\n");
    let w = ws.display();
    // The global file includes another; the XDG file holds a URL's key.
    t.file(
        "home/.gitconfig",
        format!(
            "[http]\n\tcookieFile = {w}/cookies.txt\n[include]\n\tpath = ~/git/more.inc\n\
             [gpg]\n\tformat = ssh\n[user]\n\tsigningKey = {w}/sign.pub\n"
        ),
    );
    t.file(
        "home/git/more.inc",
        format!("[core]\n\tsshCommand = ssh -i {w}/deploy_key -o BatchMode=yes\n"),
    );
    t.file(
        "home/.config/git/config",
        format!(
            "[http \"https://git.test/\"]\n\tsslKey = {w}/client.key\n\tsslCert = {w}/client.pem\n"
        ),
    );
    // The workspace repository's own file, with a relative value.
    let cfg = ws.join(".git/config");
    let mut c = std::fs::read_to_string(&cfg).unwrap();
    c.push_str("[http]\n\tcookieFile = repo.cookies\n");
    std::fs::write(&cfg, c).unwrap();
    symlink(&gitcookies, home.join(".gitcookies")).unwrap();
    let o = run_command(
        &ws,
        &home,
        &[],
        &[
            "sh",
            "-c",
            &cat_all(&[
                &cookies,
                &ssl_key,
                &ssl_cert,
                &sign,
                &ssh_key,
                &proxy,
                &repo_cookie,
                &gitcookies,
            ]),
        ],
    )
    .current_dir(&ws)
    .env("GIT_CONFIG_COUNT", "1")
    .env("GIT_CONFIG_KEY_0", "http.proxySSLKey")
    .env("GIT_CONFIG_VALUE_0", proxy.display().to_string())
    .env_remove("GIT_CONFIG_GLOBAL")
    .env_remove("GIT_CONFIG_SYSTEM")
    .env_remove("XDG_CONFIG_HOME")
    .output()
    .unwrap();
    assert_hidden(
        &o,
        &[
            "SECRET-J-COOKIE",
            "SECRET-J-SSLKEY",
            "SECRET-J-SSLCERT",
            "SECRET-J-SIGN",
            "SECRET-J-SSHCMD",
            "SECRET-J-PROXY",
            "SECRET-J-REPO",
            "SECRET-J-GITCOOKIES",
        ],
    );
}

/// Secret directories kept elsewhere (`~/.aws -> elsewhere`), a secret
/// directory's entry that is a link to a directory elsewhere, and chains
/// of links: what their entries finally reach inside the workspace or a
/// read grant is hidden.
#[test]
fn links_inside_secret_directories_kept_elsewhere_are_hidden_in_any_grant() {
    let t = TempDir::new("named-links");
    let home = t.dir("home");
    let ws = t.dir("ws");
    let rd = t.dir("rd");
    let other = t.dir("other");
    t.file("ws/plain", "PLAIN-OK\n");
    let aws = t.file("rd/aws-creds", "SECRET-K-AWS\n");
    let gh = t.file("ws/gh.yml", "oauth_token: SECRET-K-GH\n");
    let id = t.file("ws/id_ed25519", "SECRET-K-SSH\n");
    let kube = t.file("ws/kubedir/config", "token: SECRET-K-KUBE\n");
    let pgpass = t.file("rd/pgpass", "SECRET-K-PG\n");
    // ~/.aws is a link to a directory outside every grant; its entry
    // links into the read grant.
    t.dir("other/aws");
    symlink(other.join("aws"), home.join(".aws")).unwrap();
    symlink(&aws, other.join("aws/credentials")).unwrap();
    // ~/.config is a link too; gh's entry links into the workspace.
    t.dir("other/config/gh");
    symlink(other.join("config"), home.join(".config")).unwrap();
    symlink(&gh, other.join("config/gh/hosts.yml")).unwrap();
    // An entry of ~/.ssh is a link to a directory elsewhere.
    t.dir("home/.ssh");
    t.dir("other/keys");
    symlink(other.join("keys"), home.join(".ssh/keys")).unwrap();
    symlink(&id, other.join("keys/id_ed25519")).unwrap();
    // A chain: ~/.kube -> other/kube, whose config passes through a
    // directory link into the workspace.
    t.dir("other/kube");
    symlink(other.join("kube"), home.join(".kube")).unwrap();
    symlink(ws.join("kubedir"), other.join("chain")).unwrap();
    symlink(other.join("chain/config"), other.join("kube/config")).unwrap();
    // A file secret whose link sits in a directory link's target.
    symlink(other.join("pg"), home.join(".pgpass")).unwrap();
    symlink(&pgpass, other.join("pg")).unwrap();
    let r = rd.display().to_string();
    let o = run_in(
        &ws,
        &home,
        &["--read", &r],
        &["sh", "-c", &cat_all(&[&aws, &gh, &id, &kube, &pgpass])],
    );
    assert_hidden(
        &o,
        &[
            "SECRET-K-AWS",
            "SECRET-K-GH",
            "SECRET-K-SSH",
            "SECRET-K-KUBE",
            "SECRET-K-PG",
        ],
    );
}

/// A secret directory the caller's environment names (`DOCKER_CONFIG`,
/// `GNUPGHOME`) or `--deny-read` names, kept outside the grants: the links
/// inside it that reach into the workspace are hidden too.
#[test]
fn links_inside_secret_directories_named_elsewhere_are_hidden() {
    let t = TempDir::new("named-dir-links");
    let home = t.dir("home");
    let ws = t.dir("ws");
    let other = t.dir("other");
    t.file("ws/plain", "PLAIN-OK\n");
    let dock = t.file("ws/docker.json", "{\"auths\":\"SECRET-K2-DOCK\"}\n");
    let gpg = t.file("ws/gpgkeys/k.key", "SECRET-K2-GPG\n");
    let denied = t.file("ws/vault.txt", "SECRET-K2-DENIED\n");
    t.dir("other/docker");
    symlink(&dock, other.join("docker/config.json")).unwrap();
    t.dir("other/gnupg");
    symlink(ws.join("gpgkeys"), other.join("gnupg/private-keys-v1.d")).unwrap();
    t.dir("other/vault");
    symlink(&denied, other.join("vault/token")).unwrap();
    let deny = format!("--deny-read={}", other.join("vault").display());
    let o = run_command(
        &ws,
        &home,
        &[&deny],
        &["sh", "-c", &cat_all(&[&dock, &gpg, &denied])],
    )
    .env("DOCKER_CONFIG", other.join("docker"))
    .env("GNUPGHOME", other.join("gnupg"))
    .output()
    .unwrap();
    assert_hidden(&o, &["SECRET-K2-DOCK", "SECRET-K2-GPG", "SECRET-K2-DENIED"]);
}

/// The ssh configuration file `GIT_SSH_COMMAND` names with `-F`: the key
/// it names is hidden (alone: with other variables set, another
/// protection may hide the directory).
#[test]
fn a_key_the_ssh_configuration_of_git_ssh_command_names_is_hidden() {
    let t = TempDir::new("named-ssh-f");
    let home = t.dir("home");
    let ws = t.dir("ws");
    t.file("ws/plain", "PLAIN-OK\n");
    let key = t.file("ws/cfg_key", "SECRET-I2-SSHCFG\n");
    let cfg = t.file(
        "ws/ssh_config",
        format!("Host *\n  IdentityFile {}\n", key.display()),
    );
    let o = run_command(&ws, &home, &[], &["sh", "-c", &cat_all(&[&key])])
        .env("GIT_SSH_COMMAND", format!("ssh -F {}", cfg.display()))
        .output()
        .unwrap();
    assert_hidden(&o, &["SECRET-I2-SSHCFG"]);
}
