//! Environment variables of the caller naming what host programs read or
//! run on their own, as data (a leaf module: [`crate::protect::host_programs`]
//! uses it for the caller's environment, [`crate::protect::dotenv`] for
//! the variables an environment file sets).

/// Environment variables of the caller naming a file or directory a host
/// program reads on its own (start-up files, configuration homes) or a
/// program it runs: (variable, secret).
pub(crate) const ENV_PLACES: &[(&str, bool)] = &[
    ("XDG_CONFIG_HOME", false),
    ("XDG_DATA_HOME", false),
    ("XDG_STATE_HOME", false),
    ("ZDOTDIR", false),
    // The agents' own homes when moved: their settings, hooks, skills and
    // MCP servers (issue 24; ADR 0255).
    ("CLAUDE_CONFIG_DIR", false),
    ("CODEX_HOME", false),
    ("BASH_ENV", false),
    ("ENV", false),
    ("INPUTRC", false),
    ("PYTHONSTARTUP", false),
    ("GIT_CONFIG_GLOBAL", false),
    ("NPM_CONFIG_USERCONFIG", false),
    ("PIP_CONFIG_FILE", false),
    ("MYVIMRC", false),
    ("EDITOR", false),
    ("VISUAL", false),
    ("PAGER", false),
    ("GIT_EDITOR", false),
    ("GIT_PAGER", false),
    ("GIT_SSH", false),
    ("GIT_SSH_COMMAND", false),
    ("GIT_ASKPASS", false),
    ("SSH_ASKPASS", false),
    ("SUDO_ASKPASS", false),
    ("BROWSER", false),
    ("SHELL", false),
    ("LESSOPEN", false),
    ("LESSCLOSE", false),
    // Start-up and configuration files of other host programs that run
    // commands from them (attack atk22g F1: vim `!cmd`, less `#env
    // LESSOPEN`, ripgrep `--pre`, starship `[custom]`, psql `\!`, ...).
    // Any other variable naming an existing file is caught by the shape
    // rule (`protect::env_named`); listed ones also reserve a missing name.
    ("VIMINIT", false),
    ("EXINIT", false),
    ("GVIMINIT", false),
    ("LESSKEYIN", false),
    ("LESSKEY", false),
    ("RIPGREP_CONFIG_PATH", false),
    ("STARSHIP_CONFIG", false),
    ("PSQLRC", false),
    ("R_PROFILE", false),
    ("R_PROFILE_USER", false),
    ("R_ENVIRON_USER", false),
    ("LUA_INIT", false),
    ("PHPRC", false),
    ("PHP_INI_SCAN_DIR", false),
    ("IRBRC", false),
    ("PRYRC", false),
    ("GEMRC", false),
    ("HGRCPATH", false),
    ("SCREENRC", false),
    ("FZF_DEFAULT_OPTS_FILE", false),
    ("WGETRC", false),
    ("CURL_HOME", false),
    ("GIT_SEQUENCE_EDITOR", false),
    ("GIT_EXTERNAL_DIFF", false),
    ("KUBE_EDITOR", false),
    ("MANPAGER", false),
    ("RUSTC_WRAPPER", false),
    ("RUSTC_WORKSPACE_WRAPPER", false),
    ("CMAKE_TOOLCHAIN_FILE", false),
    ("BUNDLE_GEMFILE", false),
    ("npm_config_userconfig", false),
    ("npm_config_globalconfig", false),
    ("NPM_CONFIG_GLOBALCONFIG", false),
    // Search paths host programs load code from (the PATH class for other
    // loaders: a `json.py` in a PYTHONPATH directory shadows the standard
    // library's for every host python; a library in an LD_LIBRARY_PATH
    // directory is loaded by every dynamically linked program).
    ("PYTHONPATH", false),
    ("PYTHONUSERBASE", false),
    ("NODE_PATH", false),
    ("NODE_OPTIONS", false),
    ("LD_LIBRARY_PATH", false),
    ("LD_PRELOAD", false),
    ("LD_AUDIT", false),
    ("PERL5LIB", false),
    ("PERLLIB", false),
    ("RUBYLIB", false),
    ("GEM_PATH", false),
    ("GEM_HOME", false),
    ("CLASSPATH", false),
    ("JULIA_LOAD_PATH", false),
    ("R_LIBS", false),
    ("R_LIBS_USER", false),
    ("GUILE_LOAD_PATH", false),
    ("TCLLIBPATH", false),
    ("GIT_EXEC_PATH", false),
    ("GIT_TEMPLATE_DIR", false),
    // Options that make a runtime load code from a file on every start
    // (atk22e: `JAVA_TOOL_OPTIONS=-javaagent:<workspace jar>`); glued
    // forms (`-I/dir`, `@argfile`) are read too.
    ("JAVA_TOOL_OPTIONS", false),
    ("_JAVA_OPTIONS", false),
    ("JDK_JAVA_OPTIONS", false),
    ("MAVEN_OPTS", false),
    ("GRADLE_OPTS", false),
    ("PERL5OPT", false),
    ("RUBYOPT", false),
    ("PYTHONHOME", false),
    ("PROMPT_COMMAND", false),
    ("XDG_CONFIG_DIRS", false),
    // Jupyter's search paths (attack pass h22b F): kernel specs there are
    // programs jupyter starts; configuration files it runs.
    ("JUPYTER_PATH", false),
    ("JUPYTER_DATA_DIR", false),
    ("JUPYTER_CONFIG_DIR", false),
    ("JUPYTER_CONFIG_PATH", false),
    ("IPYTHONDIR", false),
    ("XDG_DATA_DIRS", false),
    // (Variables naming secret files are `secrets::env_files`'s list.)
];
