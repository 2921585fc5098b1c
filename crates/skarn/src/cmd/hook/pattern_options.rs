//! What a `*` pattern of `[hook] unsandboxed` never stretches over: the
//! options and words with which the matched program runs another program,
//! reads another repository's or tool's configuration, reads any file or
//! writes outside the project. A command holding one runs confined.

/// Whether the word `w` (unquoted) is an option that makes the program run
/// another program it names, or read another repository's or tool's
/// configuration: git's pack programs, configuration, exec path and
/// repository (a long option also by any prefix git accepts: `--rece=`);
/// rsync's remote shell and program; ssh's `-o ProxyCommand=`; scp's
/// `-S`; find's and xargs' exec; npm's script shell and configuration. A
/// short-option cluster (`-avessh`, `-oProxyCommand=`) counts when any of
/// its letters takes such a program or directory.
pub(super) fn runs_a_program(w: &str) -> bool {
    const LONG: &[&str] = &[
        "--receive-pack",
        "--upload-pack",
        "--exec",
        "--exec-path",
        "--extcmd",
        "--config",
        "--config-env",
        "--git-dir",
        "--work-tree",
        "--template",
        "--rsh",
        "--rsync-path",
        "--script-shell",
        "--node-options",
        "--userconfig",
        "--globalconfig",
        // git grep's pager, instaweb's server, send-email's SMTP program,
        // filter-branch's filters, archive's remote (atk24m F6).
        "--open-files-in-pager",
        "--httpd",
        "--smtp-server",
        "--tree-filter",
        "--index-filter",
        "--msg-filter",
        "--env-filter",
        "--commit-filter",
        "--parent-filter",
        "--tag-name-filter",
        "--remote",
        "--tool",
        // Write a file anywhere or read any file (atk24n F4): the diff
        // family's and log's output, config's file, checkout-index's and
        // read-tree's prefix, apply's directory, diff outside a repository,
        // help's browser.
        "--output",
        "--file",
        "--blob",
        "--prefix",
        "--directory",
        "--no-index",
        "--web",
        // Read any file into the repository, or write anywhere (atk24o
        // F5): blame's contents, fast-import's marks.
        "--contents",
        "--import-marks",
        "--import-marks-if-exists",
        "--export-marks",
    ];
    /// Words (not options) that make the program run another program or
    /// write outside the repository (`git bisect run X`, `git submodule
    /// foreach X`, `git filter-branch`, `git worktree add ../x`, `npm run`,
    /// `cargo run`, ...): a `*` pattern does not stretch over them
    /// (atk24m F6); such a command runs confined.
    const RUNNERS: &[&str] = &[
        "run",
        "foreach",
        "filter-branch",
        "filter-repo",
        "instaweb",
        "send-email",
        "worktree",
        "difftool",
        "mergetool",
        "daemon",
        "exec",
        // Sub-commands that write configuration (which names programs),
        // write to a directory they are given, read any file, or start a
        // browser (atk24n F4).
        "config",
        "clone",
        "bundle",
        "checkout-index",
        "read-tree",
        "hash-object",
        "web--browse",
        "help",
        "lfs",
        // Make a repository anywhere, import or apply any file, add a
        // remote anywhere (atk24o F5).
        "init",
        "fast-import",
        "am",
        "apply",
        "remote",
    ];
    const FIND: &[&str] = &["-exec", "-execdir", "-ok", "-okdir"];
    /// Short options that take a program, a configuration or a directory.
    /// (`-F FILE`: a message read from any file; `-t`: a template.)
    const SHORT: &str = "ecoSxuOCFt";
    let name = w.split_once('=').map_or(w, |(n, _)| n);
    if let Some(long) = name.strip_prefix("--") {
        // Any prefix git accepts (`--rece=`), and a longer option that
        // starts with a listed one (`--output-directory`: atk24o F5).
        return !long.is_empty()
            && LONG
                .iter()
                .any(|o| o[2..].starts_with(long) || long.starts_with(&o[2..]));
    }
    // A path outside the project (`git diff /dev/null ~/.ssh/id_ed25519`
    // reads any file: atk24o F5): the command runs confined.
    if !w.starts_with('-')
        && (w.starts_with('/')
            || w.starts_with('~')
            || w == ".."
            || w.starts_with("../")
            || w.contains("/../"))
    {
        return true;
    }
    if FIND.contains(&name) || RUNNERS.contains(&w) {
        return true;
    }
    match name.strip_prefix('-') {
        Some(cluster) => cluster.chars().any(|c| SHORT.contains(c)),
        None => false,
    }
}
