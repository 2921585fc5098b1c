//! Why a policy cannot be planned on Windows (a leaf: the command-line
//! builder and the plan both return it).

/// Why a policy cannot be planned on Windows.
#[derive(Debug, thiserror::Error)]
pub enum WindowsPlanError {
    /// No command.
    #[error("no command given")]
    EmptyCommand,
    /// A program name that cannot be passed on a Windows command line.
    #[error("program name {0:?} cannot be passed to CreateProcessW")]
    BadProgram(String),
    /// An argument holding a NUL character.
    #[error("an argument holds a NUL character")]
    NulInArgument,
    /// A batch file given directly.
    #[error(
        "{0}: batch files re-parse their arguments with cmd.exe's rules; run it as `cmd /c {0} ...`"
    )]
    BatchFile(String),
    /// A path is not absolute.
    #[error("path must be absolute: {0}")]
    RelativePath(String),
    /// A grant would rewrite the ACL of a whole drive or share.
    #[error("refusing to grant {0}: it is a drive or share root (every file's ACL would change)")]
    RootGrant(String),
    /// The workspace holds the profile directory.
    #[error(
        "workspace {0} holds the profile directory: a command could then change what the host \
         runs or trusts; run from a project directory, or pass --allow-home-workspace"
    )]
    HomeWorkspace(String),
    /// A writable grant in a system directory.
    #[error("refusing to make {0} writable: it is, holds or lies in a system directory")]
    SystemWrite(String),
    /// The working directory lies outside the workspace.
    #[error("working directory {0} lies outside the workspace")]
    CwdOutside(String),
}
