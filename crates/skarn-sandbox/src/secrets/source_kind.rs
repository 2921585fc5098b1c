//! Which files a traced source read are hidden from every run whatever
//! they hold (atk27q F2, F3, F8; atk27r F3): a value the source derives
//! (decrypts, decodes) from files it read lies in none of them, and a
//! file too big to be searched cannot be said not to hold it. The rule is
//! by what a file is, never by its name or an execute bit alone: every
//! regular file the source opened is recorded unless it is
//! - a package file of the system: in the distribution's package trees
//!   (`/usr/{bin,sbin,lib*,libexec,share,include}`, `/bin`, `/sbin`,
//!   `/lib*`; not `/usr/src` or `/usr/local`), owned by root, readable by
//!   all and writable by root only; or a kernel file (`/proc`, `/sys`,
//!   `/dev`), or a world-readable file under `/etc`;
//! - a program or library by its content: an ELF, an archive, a class,
//!   a WebAssembly or a compiled Python module (their magic numbers); or,
//!   readable by all (a key or store is private), a `#!` script with an
//!   execute bit, a file with a module's extension or a package's
//!   metadata name, or a file inside an installation tree;
//! - a shell's or git's own settings in the home (`.gitconfig`,
//!   `.bashrc`, ...), which runs need.
//!
//! Those are still searched for the value (`source_reads::holding`).

use std::io::Read;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Component, Path};

/// The distribution's package trees under `/usr` (not `src`, `local`).
const USR_TREES: &[&str] = &[
    "bin", "sbin", "lib", "lib32", "lib64", "libx32", "libexec", "share", "include", "games",
];

/// Whether `p` is a file of the system's package trees: by place (a
/// package tree, not `/usr/src` or `/usr/local`) and by what it is
/// (owned by root, readable by all, writable by root only), or a kernel
/// file.
pub fn system(p: &Path) -> bool {
    let s = p.to_string_lossy();
    let mut parts = s.split('/').skip(1);
    let top = parts.next().unwrap_or("");
    if ["proc", "sys", "dev"].contains(&top) {
        return true;
    }
    let packaged = match top {
        "usr" => parts.next().is_some_and(|d| USR_TREES.contains(&d)),
        "bin" | "sbin" | "lib" | "lib32" | "lib64" | "libx32" => true,
        _ => s.starts_with("/etc/ld.so"),
    };
    packaged
        && std::fs::metadata(p)
            .is_ok_and(|m| m.uid() == 0 && m.mode() & 0o004 != 0 && m.mode() & 0o022 == 0)
}

/// Extensions of programs, modules and libraries.
const CODE_EXT: &[&str] = &[
    "py", "pyi", "pth", "js", "mjs", "cjs", "ts", "jar", "rb", "pm", "pl", "lua", "dll", "dylib",
];
/// Names of package metadata files.
const CODE_NAMES: &[&str] = &[
    "package.json",
    "METADATA",
    "RECORD",
    "WHEEL",
    "INSTALLER",
    "REQUESTED",
    "entry_points.txt",
    "top_level.txt",
    "direct_url.json",
    "pyvenv.cfg",
];
/// Directory names of installation trees (a file anywhere below is code).
const TREES: &[&str] = &[
    "site-packages",
    "dist-packages",
    "node_modules",
    "__pycache__",
    ".rustup",
    "gems",
];
/// A shell's and git's own settings in the home, which runs need.
const SETTINGS: &[&str] = &[
    ".gitconfig",
    ".gitignore",
    ".gitattributes",
    ".bashrc",
    ".bash_profile",
    ".profile",
    ".zshrc",
    ".zshenv",
    ".zprofile",
    ".inputrc",
    ".selected_editor",
];

/// Magic numbers of programs and compiled modules: ELF, `ar` archives,
/// Java classes, WebAssembly.
const MAGIC: &[&[u8]] = &[b"\x7fELF", b"!<arch>\n", b"\xca\xfe\xba\xbe", b"\0asm"];

/// Whether `p` is a program, library or module: by its content (a magic
/// number), or, when readable by all, a `#!` script with an execute bit,
/// a module's extension or package metadata name, or a place inside an
/// installation tree. A private file (not readable by all) is never code
/// by name or mode: a key or store is private (atk27r F3).
pub fn code(p: &Path) -> bool {
    let Ok(mut f) = std::fs::File::open(p) else {
        return false;
    };
    let Ok(md) = f.metadata() else {
        return false;
    };
    let mut head = [0u8; 8];
    let n = f.read(&mut head).unwrap_or(0);
    let head = &head[..n];
    let ext = p.extension().map(|e| e.to_string_lossy().into_owned());
    if MAGIC.iter().any(|m| head.starts_with(m))
        || (matches!(ext.as_deref(), Some("pyc" | "pyo")) && head.get(2..4) == Some(b"\r\n"))
    {
        return true;
    }
    if md.permissions().mode() & 0o004 == 0 {
        return false;
    }
    if md.permissions().mode() & 0o111 != 0 && head.starts_with(b"#!") {
        return true;
    }
    let name = p
        .file_name()
        .map(|n| n.to_string_lossy())
        .unwrap_or_default();
    if CODE_NAMES.contains(&name.as_ref()) || ext.is_some_and(|e| CODE_EXT.contains(&e.as_str())) {
        return true;
    }
    p.components().any(|c| match c {
        Component::Normal(d) => {
            let d = d.to_string_lossy();
            TREES.contains(&d.as_ref())
                || d.ends_with(".dist-info")
                || d.ends_with(".egg-info")
                || (d.starts_with("python3") || d.starts_with("python2"))
                    && p.to_string_lossy().contains(&format!("/lib/{d}/"))
        }
        _ => false,
    })
}

/// Whether `p` is one of the home's shell or git settings.
fn settings(p: &Path) -> bool {
    let s = p.to_string_lossy();
    let name = p
        .file_name()
        .map(|n| n.to_string_lossy())
        .unwrap_or_default();
    SETTINGS.contains(&name.as_ref())
        || [
            "/.config/git/config",
            "/.config/git/ignore",
            "/.config/git/attributes",
        ]
        .iter()
        .any(|t| s.ends_with(t))
}

/// Whether the regular file `p` the source opened is recorded whatever
/// it holds.
pub fn data(p: &Path) -> bool {
    let Ok(md) = std::fs::metadata(p) else {
        return false;
    };
    if !md.is_file() || system(p) || code(p) || settings(p) {
        return false;
    }
    // Under /etc only a private file (not world-readable).
    !p.starts_with("/etc") || md.permissions().mode() & 0o004 == 0
}

/// Whether a file that cannot be searched (too big, past the budget,
/// unreadable) counts as holding the value: fail closed unless it is a
/// system file or a program or library.
pub fn unchecked_holds(p: &Path) -> bool {
    !system(p) && !code(p)
}
