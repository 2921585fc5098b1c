//! Where code-running configuration lives in a home: the list
//! [`crate::protect::home_mentions`] reads (ADR 0160). Data, with a reason per
//! entry. What is left out on purpose: history files, caches, editor and
//! agent state (recent-folder lists such as VS Code's `storage.json` or
//! `~/.claude.json`), which name projects without running anything.

/// One home place (relative to the home).
pub struct Place {
    /// The path below the home.
    pub path: &'static str,
    /// A directory read whole (bounded), or one file.
    pub dir: bool,
    /// Why a host program runs what it names.
    pub why: &'static str,
}

const fn f(path: &'static str, why: &'static str) -> Place {
    Place {
        path,
        dir: false,
        why,
    }
}

const fn d(path: &'static str, why: &'static str) -> Place {
    Place {
        path,
        dir: true,
        why,
    }
}

const SH: &str = "a shell reads it at start-up";
const EDITOR: &str = "an editor runs it at start-up";
const TERM: &str = "a terminal or window manager runs the programs it names";
const CRON: &str = "cron runs the commands it names on its schedule";
const UNITS: &str = "systemd starts the programs its units name";

/// The places, in the order they are read.
pub(crate) const PLACES: &[Place] = &[
    // Shells and their login files.
    f(".profile", SH),
    f(".bash_profile", SH),
    f(".bash_login", SH),
    f(".bashrc", SH),
    f(".bash_logout", SH),
    f(".bash_aliases", SH),
    f(".bash_functions", SH),
    f(".shrc", SH),
    f(".kshrc", SH),
    f(".mkshrc", SH),
    f(".zshenv", SH),
    f(".zprofile", SH),
    f(".zshrc", SH),
    f(".zlogin", SH),
    f(".zlogout", SH),
    f(".cshrc", SH),
    f(".tcshrc", SH),
    f(".login", SH),
    f(".logout", SH),
    d(".bashrc.d", SH),
    d(".zshrc.d", SH),
    d(".profile.d", SH),
    d(".zsh", SH),
    d(".config/zsh", SH),
    d(".config/bash", SH),
    d(".config/shell", SH),
    d(
        ".config/fish",
        "fish reads config.fish, conf.d/ and functions/",
    ),
    d(".oh-my-zsh/custom", SH),
    f(
        ".inputrc",
        "readline (every bash) reads it, with its $include files",
    ),
    f(".editrc", "libedit reads it"),
    f(".envrc", "direnv runs it"),
    f(".direnvrc", "direnv runs it"),
    d(".config/direnv", "direnv runs direnvrc and lib/"),
    d(
        ".local/share/direnv/allow",
        "direnv runs each allowed .envrc named here",
    ),
    // Session start-up.
    f(".xprofile", SH),
    f(".xinitrc", SH),
    f(".xsession", SH),
    f(".xsessionrc", SH),
    f(".xserverrc", SH),
    d(".config/systemd/user", "systemd starts the user units"),
    d(
        ".config/environment.d",
        "systemd sets the session's variables",
    ),
    d(".config/autostart", "the desktop starts these programs"),
    d(
        ".local/share/applications",
        "the desktop runs these launchers' programs",
    ),
    // Attack pass atk24k F10: code-running places of the XDG data home
    // (a broad `~/.local/share` grant).
    d(".local/share/systemd/user", UNITS),
    d(
        ".local/share/dbus-1/services",
        "D-Bus starts a session service's Exec= when a program asks for its name",
    ),
    d(
        ".local/share/gnome-shell/extensions",
        "GNOME Shell loads each enabled extension's code at login",
    ),
    d(
        ".local/share/kio/servicemenus",
        "the file manager's service menus run their Exec=",
    ),
    d(
        ".local/share/nautilus/scripts",
        "the file manager runs these scripts",
    ),
    d(".local/share/konsole", TERM),
    d(".local/share/fish/vendor_conf.d", SH),
    d(".local/share/fish/vendor_functions.d", SH),
    d(".local/share/fish/vendor_completions.d", SH),
    d(".local/share/zsh/site-functions", SH),
    d(
        ".local/share/nvim/site",
        "nvim loads its plugin/, ftplugin/, after/ and pack/*/start trees",
    ),
    d(".local/share/vim", EDITOR),
    // Editors.
    f(".vimrc", EDITOR),
    f(".gvimrc", EDITOR),
    f(".exrc", EDITOR),
    f(".nvimrc", EDITOR),
    d(".vim", EDITOR),
    d(".config/nvim", EDITOR),
    f(".emacs", EDITOR),
    f(".emacs.el", EDITOR),
    f(".spacemacs", EDITOR),
    d(".emacs.d", EDITOR),
    d(".config/emacs", EDITOR),
    d(".doom.d", EDITOR),
    d(".config/doom", EDITOR),
    f(".nanorc", EDITOR),
    d(".config/helix", EDITOR),
    d(".config/kak", EDITOR),
    f(".config/Code/User/settings.json", EDITOR),
    f(".config/Code/User/tasks.json", EDITOR),
    f(".config/Code/User/keybindings.json", EDITOR),
    f(".config/VSCodium/User/settings.json", EDITOR),
    f(".config/VSCodium/User/tasks.json", EDITOR),
    f(".config/Cursor/User/settings.json", EDITOR),
    f(".config/Cursor/User/tasks.json", EDITOR),
    // Terminals, multiplexers, window managers.
    f(".tmux.conf", TERM),
    d(".config/tmux", TERM),
    d(".tmux", TERM),
    f(".screenrc", TERM),
    f(".wezterm.lua", TERM),
    d(".config/wezterm", TERM),
    d(".config/kitty", TERM),
    d(".config/alacritty", TERM),
    d(".config/ghostty", TERM),
    d(".config/zellij", TERM),
    d(".config/i3", TERM),
    d(".config/sway", TERM),
    d(".config/hypr", TERM),
    f(
        ".config/starship.toml",
        "the prompt runs its custom commands",
    ),
    // Version control.
    f(".gitconfig", "git runs its programs, hooks and includes"),
    d(".config/git", "git runs its programs, hooks and includes"),
    f(".hgrc", "hg runs its hooks and extensions"),
    d(".config/hg", "hg runs its hooks and extensions"),
    d(".config/jj", "jj runs the programs it names"),
    f(".config/gh/config.yml", "gh runs its shell aliases"),
    // ssh (read here only to search it; nothing of it is shown).
    f(
        ".ssh/config",
        "ssh runs Match exec, ProxyCommand, LocalCommand",
    ),
    d(".ssh/config.d", "ssh includes these"),
    f(".ssh/rc", "sshd runs it at each login"),
    f(".ssh/environment", "sshd sets these variables"),
    f(".ssh/authorized_keys", "sshd runs each key's command="),
    // Language tools.
    f(".cargo/config", "cargo runs rustc-wrapper, runner, linker"),
    f(
        ".cargo/config.toml",
        "cargo runs rustc-wrapper, runner, linker",
    ),
    f(".cargo/env", SH),
    f(".npmrc", "npm passes node-options and runs script-shell"),
    f(".yarnrc", "yarn runs yarn-path"),
    f(".yarnrc.yml", "yarn runs yarnPath"),
    f(".bunfig.toml", "bun preloads the files it names"),
    d(".config/pnpm", "pnpm runs the programs it names"),
    f(".pip/pip.conf", "pip runs the build tools it names"),
    d(".config/pip", "pip runs the build tools it names"),
    f(".pydistutils.cfg", "setuptools reads it"),
    f(".condarc", "conda runs its hooks"),
    f(".pythonrc", "python runs it (PYTHONSTARTUP)"),
    f(".pythonrc.py", "python runs it (PYTHONSTARTUP)"),
    d(".ipython", "ipython runs its profiles' startup files"),
    d(
        ".config/ipython",
        "ipython runs its profiles' startup files",
    ),
    d(".jupyter", "jupyter runs its configuration files"),
    // Attack pass h22b F: kernel specs (`kernel.json`'s argv is the
    // program jupyter starts for a notebook), in jupyter's user data
    // directory (Linux and macOS).
    d(
        ".local/share/jupyter/kernels",
        "jupyter starts the argv of each kernel.json",
    ),
    d(
        "Library/Jupyter/kernels",
        "jupyter starts the argv of each kernel.json (macOS)",
    ),
    f(".irbrc", "irb runs it"),
    f(".pryrc", "pry runs it"),
    f(".gemrc", "gem runs the programs it names"),
    f(".Rprofile", "R runs it"),
    f(".perldb", "the perl debugger runs it"),
    f(".gdbinit", "gdb runs it"),
    d(".config/gdb", "gdb runs it"),
    f(".lldbinit", "lldb runs it"),
    f(".psqlrc", "psql runs its \\! commands"),
    f(".sqliterc", "sqlite3 runs it"),
    f(".mailcap", "mail programs run the viewers it names"),
    f(".lessfilter", "less runs it on every file"),
    // Attack atk22c F2: more files whose programs run what they name.
    f(".lesskey", "less runs its LESSOPEN and other #env programs"),
    f(
        ".config/lesskey",
        "less runs its LESSOPEN and other #env programs",
    ),
    f(
        ".gnupg/gpg-agent.conf",
        "gpg-agent runs its pinentry-program",
    ),
    f(".gnupg/gpg.conf", "gpg runs the programs it names"),
    d(".gradle/init.d", "gradle runs every init script there"),
    f(".gradle/init.gradle", "gradle runs it"),
    f(".gradle/init.gradle.kts", "gradle runs it"),
    f(".julia/config/startup.jl", "julia runs it at start"),
    d(".config/nushell", "nushell runs its config and env files"),
    f(".xonshrc", "xonsh runs it"),
    d(".config/xonsh", "xonsh runs its rc files"),
    d(".config/powershell", "PowerShell runs its profile"),
    f(".tigrc", "tig runs the commands it binds"),
    d(".config/tig", "tig runs the commands it binds"),
    d(".config/lazygit", "lazygit runs its custom commands"),
    f(".config/npm/npmrc", "npm reads it (scripts, node-options)"),
    f(
        ".pam_environment",
        "PAM sets the variables it names at login",
    ),
    f(".wgetrc", "wget reads it"),
    f(".curlrc", "curl reads it"),
    f(".config/mise/config.toml", "mise runs its hooks and tasks"),
    f(".mise.toml", "mise runs its hooks and tasks"),
    // Agents and their hooks.
    f(".claude/settings.json", "the agent runs its hooks"),
    f(".claude/settings.local.json", "the agent runs its hooks"),
    f(".codex/config.toml", "the agent runs its MCP servers"),
    f(
        ".gemini/settings.json",
        "the agent runs its hooks and MCP servers",
    ),
    f(".cursor/mcp.json", "the editor runs these MCP servers"),
    // Tool configurations that name programs or folders of programs
    // (attack atk22d F11): docker's `cliPluginsExtraDirs` (searched before
    // its own plugins: `docker compose`, `docker build` run them) and
    // credential helpers, terraform's `dev_overrides` and plugin folders,
    // kubectl's `exec` credential plugins, the AWS CLI's
    // `credential_process`.
    f(
        ".docker/config.json",
        "docker runs the CLI plugins of the folders it names",
    ),
    f(
        ".terraformrc",
        "terraform runs the providers of the folders it names",
    ),
    f(
        "terraform.rc",
        "terraform runs the providers of the folders it names",
    ),
    f(".kube/config", "kubectl runs its exec credential plugins"),
    f(".aws/config", "the AWS CLI runs its credential_process"),
    // Path-based allow lists of shell plugins that source a directory's
    // `.env` on `cd` with no content check (atk22d F8): oh-my-zsh's
    // dotenv, zsh-autoenv, autoenv.
    f(
        ".oh-my-zsh/cache/dotenv-allowed.list",
        "oh-my-zsh's dotenv sources .env in the directories listed",
    ),
    f(
        ".local/share/autoenv_auth",
        "zsh-autoenv sources the files listed",
    ),
    f(".autoenv_authorized", "autoenv sources the files listed"),
    // node's global folders: `require()` anywhere loads the packages
    // (links made by `npm link`-style set-ups) found there (atk22d F2).
    d(".node_modules", "node loads its packages from anywhere"),
    d(".node_libraries", "node loads its packages from anywhere"),
    // Programs on the user's PATH.
    d(".local/bin", "the shell runs these programs"),
    d("bin", "the shell runs these programs"),
];

/// [`PLACES`] directories of packages: only their links are looked at.
/// System places (absolute) where code-running configuration of every
/// user lives (attack pass h22b F): a system start-up file or kernel spec
/// naming a path inside a writable grant runs what the command left there
/// at the user's next login or notebook. Read like [`PLACES`].
pub(crate) const SYSTEM_PLACES: &[Place] = &[
    f("/etc/profile", SH),
    d("/etc/profile.d", SH),
    f("/etc/bash.bashrc", SH),
    f("/etc/bashrc", SH),
    f("/etc/bash.bash_logout", SH),
    f("/etc/zshenv", SH),
    f("/etc/zprofile", SH),
    f("/etc/zshrc", SH),
    f("/etc/zlogin", SH),
    d("/etc/zsh", SH),
    f("/etc/csh.cshrc", SH),
    f("/etc/csh.login", SH),
    d(
        "/etc/fish",
        "fish reads config.fish and conf.d/ for every user",
    ),
    f(
        "/etc/environment",
        "pam_env sets it for every login (LD_PRELOAD, PATH)",
    ),
    d(
        "/etc/environment.d",
        "systemd sets it for every user session",
    ),
    f(
        "/etc/security/pam_env.conf",
        "pam_env sets it for every login",
    ),
    d("/etc/xdg/autostart", TERM),
    d("/etc/X11/Xsession.d", SH),
    // Schedulers and service managers: what they name runs on its own,
    // for every user or as root, with no shell of the user involved.
    f("/etc/crontab", CRON),
    f("/etc/anacrontab", CRON),
    d("/etc/cron.d", CRON),
    d("/etc/cron.hourly", CRON),
    d("/etc/cron.daily", CRON),
    d("/etc/cron.weekly", CRON),
    d("/etc/cron.monthly", CRON),
    d("/etc/systemd/user", UNITS),
    d("/etc/systemd/system", UNITS),
    d("/etc/xdg/systemd/user", UNITS),
    d("/etc/systemd/user-environment-generators", UNITS),
    f("/etc/rc.local", "the boot runs it as root"),
    d(
        "/etc/update-motd.d",
        "pam_motd runs each script as root at every login",
    ),
    d(
        "/etc/bash_completion.d",
        "bash-completion sources each file in every interactive bash",
    ),
    f(
        "/etc/ld.so.preload",
        "the dynamic loader loads each library it names into every program",
    ),
    d(
        "/etc/ld.so.conf.d",
        "the dynamic loader searches the directories it names",
    ),
    f(
        "/etc/ld.so.conf",
        "the dynamic loader searches the directories it names",
    ),
    d(
        "/etc/logrotate.d",
        "logrotate runs its prerotate and postrotate scripts as root",
    ),
    d(
        "/etc/apt/apt.conf.d",
        "apt runs its Pre-Invoke and Post-Invoke commands as root",
    ),
    d(
        "/etc/udev/rules.d",
        "udev runs the RUN programs of its rules as root",
    ),
    d(
        "/etc/NetworkManager/dispatcher.d",
        "NetworkManager runs each script as root",
    ),
    f(
        "/etc/gitconfig",
        "every user's git runs the programs it names",
    ),
    f("/etc/inputrc", "readline (every bash) reads it"),
    d(
        "/usr/local/share/jupyter/kernels",
        "jupyter starts the argv of each kernel.json",
    ),
    d(
        "/usr/share/jupyter/kernels",
        "jupyter starts the argv of each kernel.json",
    ),
    d(
        "/etc/jupyter",
        "jupyter runs its system configuration files",
    ),
    d(
        "/usr/local/etc/jupyter",
        "jupyter runs its system configuration files",
    ),
];

pub(crate) const LINKS_ONLY_PLACES: &[&str] = &[".node_modules", ".node_libraries"];

/// Directory names inside [`PLACES`] directories that package managers
/// fill (third-party code): only their links (up to three levels) are
/// looked at. Plugin directories (`pack`, `plugged`, `bundle`, `plugins`)
/// are read like the rest, but for subdirectories that are git checkouts
/// (a plugin manager's clone): links only there too (attack atk22c F8,
/// ADR 0206).
pub(crate) const LINKS_ONLY: &[&str] = &[
    "elpa",
    "straight",
    "quelpa",
    "el-get",
    "node_modules",
    "site-packages",
];

/// Directory names never entered at any depth: git's own, caches of
/// compiled code.
pub(crate) const ALWAYS_SKIP: &[&str] = &[".git", ".cache", "__pycache__", "eln-cache"];

/// Directory names not entered right below a place: program-written state
/// (undo, swap and backup copies, views and sessions, caches, histories);
/// deeper they are read (a user's `lua/plugins/db/`). `cache` is entered
/// below a shell's directories (zsh keeps sourced caches there).
pub(crate) const SKIP_DIRS: &[&str] = &[
    ".git",
    ".cache",
    "cache",
    "eln-cache",
    "auto-save-list",
    "backups",
    "backup",
    "swap",
    "undo",
    "view",
    "sessions",
    "shada",
    "__pycache__",
    "db",
    "history",
];

/// Directory names whose every file a shell or fish sources (a
/// `for f in ~/.bashrc.d/*` loop, fish's `conf.d`): read whatever the
/// file names (attack atk22c F8).
pub(crate) const SOURCED_WHOLE: &[&str] = &[
    ".bashrc.d",
    ".zshrc.d",
    ".profile.d",
    "conf.d",
    "functions",
    "completions",
];

/// Whether a file name is a list the program keeps of places used
/// (histories, recent files, known projects), never configuration. Read
/// all the same in a [`SOURCED_WHOLE`] directory and when a read file
/// names it.
pub(crate) fn is_state_name(name: &str) -> bool {
    let n = name.to_ascii_lowercase();
    n.contains("history")
        || n == "viminfo"
        || n == ".viminfo"
        || n == ".netrwhist"
        || n == "storage.json"
        || n == "recentf"
        || n == "projects"
}
