//! The default places of a policy: the system directories every run may
//! read and execute, the secret places no grant may expose, and the home
//! paths whose content a host program runs on its own.

use std::path::{Path, PathBuf};

use super::agent_home;

/// System directories granted read+execute by default (those that exist).
pub const SYSTEM_EXEC_DIRS: &[&str] = &[
    "/usr",
    "/bin",
    "/sbin",
    "/lib",
    "/lib32",
    "/lib64",
    "/libx32",
    "/etc",
    "/opt",
    "/nix/store",
];

/// Host files that are secret even though they live in granted system
/// directories (readable by root).
pub(crate) const SYSTEM_SECRET_PATHS: &[&str] = &[
    "/etc/shadow",
    "/etc/shadow-",
    "/etc/gshadow",
    "/etc/gshadow-",
    "/etc/sudoers",
    "/etc/sudoers.d",
    "/etc/ssh",
    "/etc/ssl/private",
    "/etc/security/opasswd",
];

/// Secret paths relative to the home directory, never granted.
pub(crate) const HOME_SECRET_PATHS: &[&str] = &[
    ".ssh",
    ".aws",
    ".gnupg",
    ".kube",
    ".docker",
    ".netrc",
    ".npmrc",
    ".yarnrc",
    ".yarnrc.yml",
    ".pypirc",
    ".git-credentials",
    ".config/gcloud",
    ".config/gh",
    ".config/hub",
    ".config/op",
    ".config/skarn",
    // Skarn's own state (recall store of raw command output).
    ".local/state/skarn",
    ".azure",
    ".terraform.d/credentials.tfrc.json",
    ".cargo/credentials",
    ".cargo/credentials.toml",
    ".pgpass",
    ".my.cnf",
    ".password-store",
    ".local/share/keyrings",
    ".vault-token",
    ".gem/credentials",
    ".claude/.credentials.json",
    ".codex/auth.json",
    ".gemini/oauth_creds.json",
    ".config/git/credentials",
    ".config/github-copilot",
    ".m2/settings.xml",
    ".config/rclone",
    ".bash_history",
    ".zsh_history",
    ".local/share/fish/fish_history",
    // Credential files of common tools (attack F11): s3cmd, boto and
    // gsutil, Oracle Cloud, the agents' own account files, dotenv files
    // in the home, container registries, cloud and platform CLIs, and
    // the database clients' histories (passwords typed at their prompts).
    ".s3cfg",
    ".boto",
    ".oci",
    ".claude.json",
    ".env",
    ".env.local",
    ".envrc",
    ".dockercfg",
    ".config/containers/auth.json",
    ".config/doctl",
    ".config/hcloud",
    ".config/glab-cli",
    ".config/sops",
    ".config/.wrangler",
    ".config/configstore/firebase-tools.json",
    ".databrickscfg",
    ".fly",
    ".pulumi/credentials.json",
    ".terraformrc",
    ".cloudflared",
    ".huggingface/token",
    ".cache/huggingface/token",
    ".psql_history",
    ".mysql_history",
    // Found by attack round 3 (issue 22): git's cookie file, mysql's
    // login file, mail and other clients' stored passwords, key stores.
    ".gitcookies",
    ".mylogin.cnf",
    ".authinfo",
    ".authinfo.gpg",
    ".msmtprc",
    ".config/msmtp",
    ".fetchmailrc",
    ".subversion/auth",
    ".kaggle",
    ".config/kaggle",
    ".config/solana",
    ".config/helm/repositories.yaml",
    ".vnc/passwd",
];

/// Paths under the home directory that a host program runs or trusts
/// without the user asking (shell and login start-up, git's global
/// configuration, autostart entries, user services, programs on PATH).
/// Protected like secrets' writes whenever they lie under a writable grant,
/// which happens only when the workspace is the home directory or an
/// ancestor of it (refused unless the policy allows it). Agents' and
/// editors' own places follow, with their reasons ([`agent_home`]).
pub(crate) const HOME_PERSISTENCE_PATHS: &[&str] = &HOME_PATHS_ALL;

const HOME_PATHS_ALL: [&str; HOME_PATHS_BASE.len() + agent_home::COUNT] =
    agent_home::with_agent_paths(HOME_PATHS_BASE);

const HOME_PATHS_BASE: &[&str] = &[
    // git runs core.fsmonitor, hooksPath hooks, filters and pagers from here.
    ".gitconfig",
    ".config/git",
    // Login and desktop autostart, user services and session environment.
    ".config/autostart",
    ".config/systemd",
    ".config/environment.d",
    ".pam_environment",
    ".xprofile",
    ".xinitrc",
    ".xsession",
    // Shells beyond the rc files of SHELL_RC_PATHS.
    ".config/fish",
    ".inputrc",
    // sshd runs ~/.ssh/rc; authorized_keys lies in the secret ~/.ssh too.
    ".ssh",
    // Programs found on PATH before the system's.
    ".local/bin",
    "bin",
    ".cargo/bin",
    ".cargo/config.toml",
    ".cargo/config",
    // Editors that run code from their configuration.
    ".vimrc",
    ".vim",
    ".config/nvim",
    ".emacs",
    ".emacs.d",
    // Package managers' configuration (registries, scripts, credentials).
    ".npmrc",
    ".config/pip",
    ".pip",
    ".pydistutils.cfg",
    // Python runs *.pth files and sitecustomize from the user site.
    ".local/lib",
    // Start-up and tool files found by an attack round.
    ".bash_aliases",
    ".tmux.conf",
    ".gdbinit",
    ".gradle",
    ".ipython",
    ".config",
    ".local",
    ".cache",
    ".npm",
    ".rustup",
    ".pyenv",
    ".nvm",
    // Agents' and tools' own settings and hooks.
    ".claude",
    ".claude.json",
    ".codex",
    ".gemini",
    ".cursor",
    ".config/skarn",
    // Found by attack round 3: start-up files and tool homes host
    // programs read on their own.
    ".bashrc.d",
    ".oh-my-zsh",
    ".zsh",
    ".p10k.zsh",
    ".tmux",
    ".screenrc",
    ".login",
    ".direnvrc",
    ".hgrc",
    ".psqlrc",
    ".sqliterc",
    ".pythonrc",
    ".irbrc",
    ".pryrc",
    ".Rprofile",
    ".ghci",
    ".lldbinit",
    ".mavenrc",
    ".vscode",
    ".m2",
    ".sbt",
    ".condarc",
    ".gemrc",
    ".curlrc",
    ".wgetrc",
    ".ansible.cfg",
    ".terraformrc",
    ".tool-versions",
    ".asdfrc",
    ".npm-global",
    ".deno",
    ".Xresources",
    ".xbindkeysrc",
    // Code-running places of the XDG data home, for a grant below
    // `~/.local` (attack atk24k F10).
    ".local/share/applications",
    ".local/share/systemd",
    ".local/share/dbus-1",
    ".local/share/gnome-shell/extensions",
    ".local/share/kio/servicemenus",
    ".local/share/nautilus/scripts",
    ".local/share/konsole",
    ".local/share/fish/vendor_conf.d",
    ".local/share/fish/vendor_functions.d",
    ".local/share/fish/vendor_completions.d",
    ".local/share/zsh/site-functions",
    ".local/share/nvim/site",
    ".local/share/vim",
    ".local/share/jupyter/kernels",
    // Non-dot entries host programs load or run from.
    "go",
    "node_modules",
    "snap",
    "perl5",
    "R",
];

/// The deny list's places for `home` (and the system's): what no grant a
/// caller makes for its own reasons may hold (a server's installation,
/// atk27m F3).
pub fn secret_paths_of(home: &Path) -> Vec<PathBuf> {
    default_secret_paths(Some(home))
}

/// All default secret paths for a home directory.
pub(crate) fn default_secret_paths(home: Option<&Path>) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = SYSTEM_SECRET_PATHS.iter().map(PathBuf::from).collect();
    if let Some(home) = home {
        v.extend(HOME_SECRET_PATHS.iter().map(|p| home.join(p)));
    }
    v
}

// The workspace persistence paths (what later runs code on the host) are
// data in `crate::protect::persistence`, each with its reservation rule and reason.
