//! Which files a traced source read are hidden from every run whatever
//! they hold (atk27q F2, F3, F8): a value the source derives (decrypts,
//! decodes) from files it read lies in none of them, and a file too big
//! to be searched cannot be said not to hold it. The rule is by where a
//! file comes from, not by what it holds: every regular file the source
//! opened is recorded unless it is
//! - a file of the system's trees (`/usr` but `/usr/local`, `/lib*`,
//!   `/bin`, `/sbin`, `/etc/ld.so*`, `/proc`, `/sys`, `/dev`), or a
//!   world-readable file under `/etc` (the system's settings);
//! - a program or library: an execute bit, an ELF head, a code or package
//!   file by name (`.py`, `.pyc`, `.js`, `.jar`, `package.json`, ...), or
//!   any file inside an installation tree (`site-packages`,
//!   `node_modules`, `lib/pythonX.Y`, `*.dist-info`, ...);
//! - a shell's or git's own settings in the home (`.gitconfig`,
//!   `.bashrc`, ...), which runs need.
//!
//! Those are still searched for the value (`source_reads::holding`).

use std::io::Read;
use std::os::unix::fs::PermissionsExt;
use std::path::{Component, Path};

/// Whether `p` is a file of the system's package trees.
pub fn system(p: &Path) -> bool {
    let s = p.to_string_lossy();
    if s.starts_with("/usr/local/") {
        return false;
    }
    let top = s.split('/').nth(1).unwrap_or("");
    [
        "usr", "bin", "sbin", "proc", "sys", "dev", "lib", "lib32", "lib64", "libx32",
    ]
    .contains(&top)
        || s.starts_with("/etc/ld.so")
}

/// Extensions of programs, modules and libraries.
const CODE_EXT: &[&str] = &[
    "py", "pyc", "pyo", "pyi", "pth", "so", "js", "mjs", "cjs", "ts", "node", "jar", "class", "rb",
    "pm", "pl", "lua", "wasm", "dll", "dylib", "a",
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
    "LICENSE",
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

/// Whether `p` is a program, library or module (or inside their trees).
pub fn code(p: &Path) -> bool {
    let name = p
        .file_name()
        .map(|n| n.to_string_lossy())
        .unwrap_or_default();
    if CODE_NAMES.contains(&name.as_ref())
        || p.extension()
            .is_some_and(|e| CODE_EXT.contains(&e.to_string_lossy().as_ref()))
    {
        return true;
    }
    let in_tree = p.components().any(|c| match c {
        Component::Normal(d) => {
            let d = d.to_string_lossy();
            TREES.contains(&d.as_ref())
                || d.ends_with(".dist-info")
                || d.ends_with(".egg-info")
                || (d.starts_with("python3") || d.starts_with("python2"))
                    && p.to_string_lossy().contains(&format!("/lib/{d}/"))
        }
        _ => false,
    });
    if in_tree {
        return true;
    }
    let Ok(mut f) = std::fs::File::open(p) else {
        return false;
    };
    if f.metadata()
        .is_ok_and(|m| m.permissions().mode() & 0o111 != 0)
    {
        return true;
    }
    let mut head = [0u8; 4];
    f.read_exact(&mut head).is_ok() && &head == b"\x7fELF"
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
