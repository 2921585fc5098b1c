//! The configuration files tools read credentials from, wherever they
//! lie (attack atk27g F4, F7, F8, F9): derived from each tool's own
//! search order and the caller's environment, not from a list of places
//! in the home. A run granted a secret has each of these that holds the
//! value hidden (or is refused when it lies in the workspace), whether it
//! sits under `/etc`, `/usr`, `/opt` or a directory a variable names.
//!
//! The search orders followed (each tool's documentation):
//! - git: `$GIT_CONFIG_SYSTEM`, else `<prefix>/etc/gitconfig` (`/etc/gitconfig`
//!   for the `/usr` prefix); `$GIT_CONFIG_GLOBAL`, `$GIT_CONFIG`,
//!   `$XDG_CONFIG_HOME/git/{config,credentials}`, `~/.gitconfig`,
//!   `~/.git-credentials`;
//! - npm: `$NPM_CONFIG_USERCONFIG`, `$NPM_CONFIG_GLOBALCONFIG`,
//!   `<prefix>/etc/npmrc` (prefix: `$NPM_CONFIG_PREFIX`, `$PREFIX`, or the
//!   directory above node's `bin`), npm's own `npmrc`
//!   (`<prefix>/lib/node_modules/npm/npmrc`), `~/.npmrc`;
//! - pip: `$PIP_CONFIG_FILE`, `<dir>/pip/pip.conf` for each of
//!   `$XDG_CONFIG_DIRS` (default `/etc/xdg`), `/etc/pip.conf`,
//!   `<sys.prefix>/pip.conf` (each prefix, `$VIRTUAL_ENV`), the user's
//!   `$XDG_CONFIG_HOME/pip/pip.conf` and `~/.pip/pip.conf`;
//! - conda: `$CONDARC`, `/etc/conda/{.condarc,condarc,condarc.d}`,
//!   `/var/lib/conda/{.condarc,condarc,condarc.d}`,
//!   `<prefix>/{.condarc,condarc,condarc.d,.mambarc}` (also `$CONDA_ROOT`,
//!   `$CONDA_PREFIX`), the user's;
//! - apt: `/etc/apt/auth.conf`, `/etc/apt/auth.conf.d`; Maven:
//!   `/etc/maven/settings.xml`, `<prefix>/conf/settings.xml`; Gradle:
//!   `<prefix>/gradle.properties`; uv: `/etc/uv/uv.toml`, `<dir>/uv/uv.toml`
//!   of `$XDG_CONFIG_DIRS`;
//! - cargo: `$CARGO_HOME/{config.toml,config,credentials.toml,credentials}`
//!   and `.cargo/config.toml` in every ancestor of the workspace;
//! - RubyGems: `$GEMRC` (a `:`-separated list), `<sysconfdir>/gemrc`
//!   (`/etc/gemrc`, `<prefix>/etc/gemrc`), `~/.gemrc`, the push
//!   credentials `$GEM_HOME/credentials`, `~/.gem/credentials`; Bundler:
//!   `$BUNDLE_APP_CONFIG/config` (the ruby images set it to
//!   `/usr/local/bundle`, looked at whatever the caller's environment
//!   says), else `.bundle/config` of the application's root (an ancestor
//!   of the workspace), `$BUNDLE_USER_CONFIG`, `~/.bundle/config`
//!   (atk27q F6);
//! - others by their variables: `DOCKER_CONFIG`, `KUBECONFIG`,
//!   `AWS_SHARED_CREDENTIALS_FILE`, `AWS_CONFIG_FILE`, `NETRC`,
//!   `PGPASSFILE`, `GH_CONFIG_DIR`, `REGISTRY_AUTH_FILE`, `COMPOSER_HOME`,
//!   `GRADLE_USER_HOME`, `M2_HOME`/`MAVEN_HOME`, `TF_CLI_CONFIG_FILE`,
//!   `BUNDLE_USER_CONFIG`, `YARN_RC_FILENAME`, `GEM_HOME`.
//!
//! A "prefix" is the directory above each `bin` directory of the caller's
//! `PATH`, plus `/usr` and `/usr/local` (where the system's tools are
//! installed whatever `PATH` says).

use std::ffi::OsString;
use std::path::{Path, PathBuf};

/// How a variable names a place.
enum Names {
    /// The file itself.
    File,
    /// A directory holding these files.
    Dir(&'static [&'static str]),
    /// A `:`-separated list of files.
    Files,
}

/// Variables naming a configuration file or directory a tool reads a
/// credential from.
const VARS: &[(&str, Names)] = &[
    ("GIT_CONFIG_GLOBAL", Names::File),
    ("GIT_CONFIG_SYSTEM", Names::File),
    ("GIT_CONFIG", Names::File),
    ("NPM_CONFIG_USERCONFIG", Names::File),
    ("npm_config_userconfig", Names::File),
    ("NPM_CONFIG_GLOBALCONFIG", Names::File),
    ("npm_config_globalconfig", Names::File),
    ("PIP_CONFIG_FILE", Names::File),
    ("CONDARC", Names::File),
    ("YARN_RC_FILENAME", Names::File),
    ("AWS_SHARED_CREDENTIALS_FILE", Names::File),
    ("AWS_CONFIG_FILE", Names::File),
    ("NETRC", Names::File),
    ("PGPASSFILE", Names::File),
    ("REGISTRY_AUTH_FILE", Names::File),
    ("TF_CLI_CONFIG_FILE", Names::File),
    ("BUNDLE_USER_CONFIG", Names::File),
    ("BUNDLE_APP_CONFIG", Names::Dir(&["config"])),
    ("GEMRC", Names::Files),
    ("KUBECONFIG", Names::Files),
    (
        "CARGO_HOME",
        Names::Dir(&["config.toml", "config", "credentials.toml", "credentials"]),
    ),
    ("DOCKER_CONFIG", Names::Dir(&["config.json"])),
    ("GH_CONFIG_DIR", Names::Dir(&["hosts.yml", "config.yml"])),
    ("COMPOSER_HOME", Names::Dir(&["auth.json", "config.json"])),
    ("GRADLE_USER_HOME", Names::Dir(&["gradle.properties"])),
    ("M2_HOME", Names::Dir(&["conf/settings.xml"])),
    ("MAVEN_HOME", Names::Dir(&["conf/settings.xml"])),
    ("GEM_HOME", Names::Dir(&["credentials"])),
    ("VIRTUAL_ENV", Names::Dir(&["pip.conf"])),
    ("CONDA_PREFIX", Names::Dir(&[".condarc", "condarc"])),
    ("CONDA_ROOT", Names::Dir(&[".condarc", "condarc"])),
    ("XDG_RUNTIME_DIR", Names::Dir(&["containers/auth.json"])),
];

/// Files under a tool prefix (`/usr`, `/usr/local`, `~/.nvm/versions/
/// node/vX`, a venv) that the tools installed there read.
const UNDER_PREFIX: &[&str] = &[
    "etc/gitconfig",
    "etc/npmrc",
    "lib/node_modules/npm/npmrc",
    "pip.conf",
    "etc/pip.conf",
    ".condarc",
    "condarc",
    "condarc.d",
    ".mambarc",
    "conf/settings.xml",
    "gradle.properties",
    "etc/gemrc",
];

/// Files under `$XDG_CONFIG_HOME` (or `~/.config`) holding credentials.
const UNDER_XDG_CONFIG: &[&str] = &[
    "git/config",
    "git/credentials",
    "gh/hosts.yml",
    "pip/pip.conf",
    "conda/.condarc",
    "containers/auth.json",
    "hub",
];

/// Fixed system places of the search orders above.
const SYSTEM: &[&str] = &[
    "/etc/gitconfig",
    "/etc/pip.conf",
    "/etc/npmrc",
    "/etc/conda/.condarc",
    "/etc/conda/condarc",
    "/var/lib/conda/.condarc",
    "/var/lib/conda/condarc",
    "/var/lib/conda/condarc.d",
    "/etc/conda/condarc.d",
    "/etc/conda/.mambarc",
    "/etc/containers/auth.json",
    "/etc/apt/auth.conf",
    "/etc/apt/auth.conf.d",
    "/etc/maven/settings.xml",
    "/etc/uv/uv.toml",
    "/etc/gemrc",
    "/usr/local/bundle/config",
];

/// The configuration files and `.d` directories (existing or not) the tools of a run would
/// read credentials from: `env` is the caller's environment, `home` the
/// caller's home, `workspace` the run's.
pub fn config_files(
    env: &dyn Fn(&str) -> Option<OsString>,
    home: Option<&Path>,
    workspace: &Path,
) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = SYSTEM.iter().map(PathBuf::from).collect();
    let abs = |v: OsString| -> Option<PathBuf> {
        let s = v.to_string_lossy().into_owned();
        let p = match (s.strip_prefix("~/"), home) {
            (Some(rest), Some(h)) => h.join(rest),
            _ => PathBuf::from(&s),
        };
        p.is_absolute().then_some(p)
    };
    for (var, names) in VARS {
        let Some(v) = env(var).filter(|v| !v.is_empty()) else {
            continue;
        };
        match names {
            Names::File => out.extend(abs(v)),
            Names::Files => {
                for part in std::env::split_paths(&v) {
                    out.extend(abs(part.into_os_string()));
                }
            }
            Names::Dir(files) => {
                if let Some(d) = abs(v) {
                    out.extend(files.iter().map(|f| d.join(f)));
                }
            }
        }
    }
    // XDG: the user's configuration directory and the system's list.
    let xdg_home = env("XDG_CONFIG_HOME")
        .and_then(abs)
        .or_else(|| home.map(|h| h.join(".config")));
    if let Some(x) = &xdg_home {
        out.extend(UNDER_XDG_CONFIG.iter().map(|f| x.join(f)));
    }
    // The default list is looked at too: the command may not inherit
    // the caller's variable.
    let mut dirs = vec![PathBuf::from("/etc/xdg")];
    if let Some(v) = env("XDG_CONFIG_DIRS") {
        dirs.extend(std::env::split_paths(&v).take(64));
    }
    for d in dirs {
        if d.is_absolute() {
            out.push(d.join("pip/pip.conf"));
            out.push(d.join("git/config"));
            out.push(d.join("uv/uv.toml"));
        }
    }
    // Tool prefixes: from PATH, npm's own prefix variables, the system's.
    for p in prefixes(env) {
        out.extend(UNDER_PREFIX.iter().map(|f| p.join(f)));
        if p == Path::new("/usr") {
            // git and pip built for /usr read /etc instead.
            out.push(PathBuf::from("/etc/gitconfig"));
        }
    }
    if let Some(h) = home {
        for f in [
            ".gitconfig",
            ".git-credentials",
            ".npmrc",
            ".pip/pip.conf",
            ".condarc",
            ".conda/.condarc",
            ".cargo/config.toml",
            ".cargo/credentials.toml",
            ".docker/config.json",
            ".kube/config",
            ".aws/credentials",
            ".netrc",
            ".pgpass",
            ".m2/settings.xml",
            ".gradle/gradle.properties",
            ".gemrc",
            ".gem/credentials",
            ".bundle/config",
        ] {
            out.push(h.join(f));
        }
    }
    // cargo and yarn look in every ancestor of the working directory.
    for a in workspace.ancestors().skip(1) {
        out.push(a.join(".cargo/config.toml"));
        out.push(a.join(".cargo/config"));
        out.push(a.join(".yarnrc.yml"));
        out.push(a.join(".npmrc"));
        out.push(a.join(".bundle/config"));
    }
    out.sort();
    out.dedup();
    out
}

/// The install prefixes of the caller's tools: the directory above each
/// `bin`/`sbin` directory of `PATH` (and above the directory a program
/// there links to: nvm's and pyenv's shims resolve into their versions),
/// npm's prefix variables, `/usr` and `/usr/local`.
fn prefixes(env: &dyn Fn(&str) -> Option<OsString>) -> Vec<PathBuf> {
    let mut out = vec![PathBuf::from("/usr"), PathBuf::from("/usr/local")];
    for var in ["NPM_CONFIG_PREFIX", "npm_config_prefix", "PREFIX"] {
        if let Some(p) = env(var).map(PathBuf::from).filter(|p| p.is_absolute()) {
            out.push(p);
        }
    }
    let mut bins: Vec<PathBuf> = Vec::new();
    if let Some(path) = env("PATH") {
        for d in std::env::split_paths(&path).take(256) {
            if !d.is_absolute() {
                continue;
            }
            if let Ok(real) = std::fs::canonicalize(&d) {
                bins.push(real);
            }
            // The programs a version manager's links point at.
            for prog in [
                "git", "node", "npm", "python3", "python", "pip", "conda", "mvn", "gradle",
            ] {
                if let Ok(t) = std::fs::canonicalize(d.join(prog))
                    && let Some(dir) = t.parent()
                {
                    bins.push(dir.to_path_buf());
                }
            }
            bins.push(d);
        }
    }
    for b in bins {
        let is_bin = b
            .file_name()
            .is_some_and(|n| n == "bin" || n == "sbin" || n == "Scripts");
        if is_bin && let Some(p) = b.parent() {
            out.push(p.to_path_buf());
        }
    }
    out.sort();
    out.dedup();
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn with<'a>(vars: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Option<OsString> + 'a {
        move |k| {
            vars.iter()
                .find(|(n, _)| *n == k)
                .map(|(_, v)| OsString::from(v))
        }
    }

    #[test]
    fn search_orders_and_variables_name_the_places() {
        let env = with(&[
            ("PATH", "/opt/tool/bin:/home/u/.nvm/versions/node/v20/bin"),
            ("NPM_CONFIG_USERCONFIG", "/opt/cfg/npmrc"),
            ("PIP_CONFIG_FILE", "/opt/cfg/pip.conf"),
            ("CARGO_HOME", "/usr/local/cargo"),
            ("XDG_CONFIG_HOME", "/srv/xdg"),
            ("KUBECONFIG", "/opt/k1:/opt/k2"),
            ("XDG_CONFIG_DIRS", "/opt/xdg"),
            ("BUNDLE_APP_CONFIG", "/opt/bundle-cfg"),
            ("GEMRC", "/opt/g1:/opt/g2"),
        ]);
        let got = config_files(&env, Some(Path::new("/home/u")), Path::new("/w/p"));
        for want in [
            "/usr/local/etc/gitconfig",
            "/etc/gitconfig",
            "/usr/etc/npmrc",
            "/etc/xdg/pip/pip.conf",
            "/opt/xdg/pip/pip.conf",
            "/opt/tool/etc/gitconfig",
            "/home/u/.nvm/versions/node/v20/etc/npmrc",
            "/opt/cfg/npmrc",
            "/opt/cfg/pip.conf",
            "/usr/local/cargo/credentials.toml",
            "/srv/xdg/gh/hosts.yml",
            "/srv/xdg/git/credentials",
            "/opt/k1",
            "/opt/k2",
            "/w/.cargo/config.toml",
            "/opt/bundle-cfg/config",
            "/opt/g2",
            "/etc/gemrc",
            "/usr/local/bundle/config",
            "/usr/local/etc/gemrc",
            "/w/.bundle/config",
        ] {
            assert!(got.contains(&PathBuf::from(want)), "{want}: {got:?}");
        }
        // Without XDG_CONFIG_DIRS: the default list.
        let got = config_files(&with(&[]), None, Path::new("/w"));
        assert!(got.contains(&PathBuf::from("/etc/xdg/pip/pip.conf")));
    }
}
