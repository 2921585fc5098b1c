//! The keys of git's configuration whose values name a program (or a
//! directory of programs) git runs: read by the global-configuration scan
//! (`protect::host_programs`) and the repository vetting (`git_vet`).

use crate::protect::git::gitconfig;

/// Whether a git configuration key names a program (or a directory of
/// programs) git runs.
pub fn names_program(it: &gitconfig::Item) -> bool {
    let (sec, name) = (it.section.as_str(), it.name.as_str());
    matches!(
        (sec, name),
        (
            "core",
            "pager" | "editor" | "fsmonitor" | "hookspath" | "sshcommand" | "askpass"
        ) | ("sequence", "editor")
            | ("init", "templatedir")
            | ("credential", "helper")
            | ("diff", "command" | "textconv" | "external")
            | ("merge", "driver")
            | ("difftool" | "mergetool", "cmd" | "path")
            | ("filter", "clean" | "smudge" | "process")
            | ("gpg", "program")
            | ("interactive", "difffilter")
            | ("pager", _)
            | ("alias", _)
            | ("sendemail", "smtpserver" | "tocmd" | "cccmd")
            | ("uploadpack", "packobjectshook")
            | ("core", "gitproxy")
            | ("gpg", "defaultkeycommand")
            | ("tar", "command")
            | ("browser", "cmd" | "path")
            | ("man", "cmd" | "path")
            | ("sendemail", "sendmailcmd")
            | ("trailer", "command" | "cmd")
            | ("guitool", "cmd")
            | ("remote", "uploadpack" | "receivepack")
            | ("credential", _)
    )
}
