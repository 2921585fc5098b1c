//! Git-hook managers' configuration kept in `package.json` (or lint-staged's
//! `package.yaml` / `package.yml`): the keys `"lint-staged"`, `"husky"`
//! (husky 4 reads its hooks there at every hook), yorkie's `"gitHooks"`,
//! `"nano-staged"`, `"simple-git-hooks"`, `"pre-commit"`, `ghooks`, ...
//! Host git's hooks run the commands they name on the user's next commit
//! (atk22h, atk22k F8, F9). The file itself cannot be read-only (npm
//! writes it), so a run may change it but not those keys: the layer
//! refuses such a file (copy-on-write), and the direct mode puts the
//! host's file back after the run and sets the run's aside. The
//! configuration files of their own names are persistence entries.
//! `pnpm-workspace.yaml` is judged the same way by its settings that make
//! pnpm run or load code ([`crate::protect::pnpm_file::code_settings`],
//! atk22k F18).

use std::path::{Path, PathBuf};

/// Bytes of one `package.json` read at most (past it: judged unsafe).
const MAX_BYTES: u64 = 4 << 20;

/// The `"lint-staged"` value of the `package.json` text `bytes`: `Ok(None)`
/// without one; `Err` when the text cannot be read as JSON at all, or is
/// longer than [`MAX_BYTES`] (judged unsafe: lint-staged's reader, V8's
/// `JSON.parse`, has no depth limit and decodes escapes such as
/// `"lint\u002dstaged"`, so a text serde_json refuses may still hold the
/// key; atk22k F11).
fn key(bytes: &[u8], kind: Kind) -> Result<Option<serde_json::Value>, ()> {
    if bytes.len() as u64 > MAX_BYTES {
        return Err(());
    }
    if kind == Kind::PnpmWorkspace {
        return crate::protect::pnpm_file::code_settings(bytes).map(|v| v.map(Into::into));
    }
    if kind == Kind::Yaml {
        // A YAML key is spelled in the text, or made through an escape of
        // a double-quoted scalar: without both, none of the keys is there
        // (no second YAML reader to differ from lint-staged's).
        let named = HOOK_KEYS
            .iter()
            .chain(["ghooks"].iter())
            .any(|k| memchr::memmem::find(bytes, k.as_bytes()).is_some());
        return if named || bytes.contains(&b'\\') {
            Err(())
        } else {
            Ok(None)
        };
    }
    let v = serde_json::from_slice::<serde_json::Value>(bytes).map_err(|_| ())?;
    let mut m = serde_json::Map::new();
    for k in HOOK_KEYS {
        if let Some(x) = v.get(*k) {
            m.insert((*k).to_string(), x.clone());
        }
    }
    if let Some(x) = v.get("config").and_then(|c| c.get("ghooks")) {
        m.insert("config.ghooks".into(), x.clone());
    }
    Ok((!m.is_empty()).then_some(serde_json::Value::Object(m)))
}

/// The `package.json` keys git-hook managers read their commands from.
pub const HOOK_KEYS: &[&str] = &[
    "lint-staged",
    "husky",
    "gitHooks",
    "nano-staged",
    "simple-git-hooks",
    "pre-commit",
    "precommit",
    "pre-push",
    "prepush",
    "git-hooks",
    "commitlint",
];

/// The file names whose keys are judged: lint-staged reads
/// `package.yaml` / `package.yml` in every directory as it reads
/// `package.json`; pnpm reads `pnpm-workspace.yaml`.
pub fn is_config_name(name: &str) -> bool {
    NAMES.contains(&name)
}

const NAMES: [&str; 4] = [
    "package.json",
    "package.yaml",
    "package.yml",
    "pnpm-workspace.yaml",
];

/// How a judged file is read.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Json,
    Yaml,
    PnpmWorkspace,
}

fn kind(p: &Path) -> Kind {
    if p.file_name().is_some_and(|n| n == "pnpm-workspace.yaml") {
        Kind::PnpmWorkspace
    } else if p.extension().is_some_and(|e| e == "yaml" || e == "yml") {
        Kind::Yaml
    } else {
        Kind::Json
    }
}

/// The text of `p`, one byte past [`MAX_BYTES`] at most (so an over-long
/// file is told apart).
fn read(p: &Path) -> Option<Vec<u8>> {
    use std::io::Read;
    let f = std::fs::File::open(p).ok()?;
    let mut b = Vec::new();
    f.take(MAX_BYTES + 1).read_to_end(&mut b).ok()?;
    Some(b)
}

/// Whether `new` (a `package.json`, `package.yaml` or `package.yml` a run
/// wrote) sets a git-hook manager's configuration otherwise than `old`
/// (the host's; missing: none).
pub fn changes_hook_config(new: &Path, old: &Path) -> bool {
    let Some(n) = read(new) else { return false };
    let o = read(old).unwrap_or_default();
    if n == o && (n.len() as u64) <= MAX_BYTES {
        return false;
    }
    let k = kind(new);
    match (key(&n, k), key(&o, k)) {
        (Err(()), _) => true,
        (Ok(a), Ok(b)) => a != b,
        (Ok(a), Err(())) => a.is_some(),
    }
}

/// What the direct mode saves before a run: each `package.json` (and
/// `package.yaml`, `package.yml`, `pnpm-workspace.yaml`) at the top of
/// `roots` with its text.
#[derive(Debug, Default, Clone, serde::Serialize, serde::Deserialize)]
pub struct Saved {
    files: Vec<(PathBuf, Option<Vec<u8>>)>,
}

/// Save the `package.json`, `package.yaml`, `package.yml`,
/// `pnpm-workspace.yaml` at the top of
/// each of `roots`.
pub fn before(roots: &[PathBuf]) -> Saved {
    Saved {
        files: roots
            .iter()
            .take(64)
            .flat_map(|r| NAMES.map(|n| r.join(n)))
            .map(|p| {
                let text = std::fs::symlink_metadata(&p)
                    .is_ok_and(|m| m.is_file())
                    .then(|| read(&p))
                    .flatten();
                (p, text)
            })
            .collect(),
    }
}

/// After a direct run: a `package.json` whose lint-staged configuration
/// changed is set aside and the host's text put back (made without one:
/// set aside); one line each.
pub fn after(saved: &Saved) -> Vec<String> {
    let mut out = Vec::new();
    for (p, old) in &saved.files {
        let Ok(md) = std::fs::symlink_metadata(p) else {
            continue;
        };
        // Anything but a file in its place (a link lint-staged follows and
        // reads whole as its configuration, atk22k F12) is a change.
        let changed = if md.is_file() {
            let Some(new) = read(p) else { continue };
            if old.as_deref() == Some(new.as_slice()) && new.len() as u64 <= MAX_BYTES {
                continue;
            }
            let k = kind(p);
            match (key(&new, k), old.as_deref().map(|o| key(o, k))) {
                (Err(()), _) => true,
                (Ok(a), Some(Ok(b))) => a != b,
                (Ok(a), Some(Err(()))) | (Ok(a), None) => a.is_some(),
            }
        } else {
            true
        };
        if !changed {
            continue;
        }
        let aside = crate::protect::set_aside::set_aside(p, "skarn-set-aside");
        let back = match old {
            Some(text) if text.len() as u64 > MAX_BYTES => {
                "; the host's file, longer than skarn reads, could not be put back".to_string()
            }
            Some(text) => match put_back(p, text) {
                Ok(()) => "; the host's file was put back".to_string(),
                Err(e) => format!("; the host's file could not be put back ({e})"),
            },
            None => String::new(),
        };
        out.push(format!(
            "{} was written during the run with another git-hook or pnpm hook configuration \
             (lint-staged, husky, a pnpmfile, ...: host git hooks run the commands it names on \
             the next commit, pnpm the code at the next install): {}{back}",
            p.display(),
            aside.describe("the run's other changes to it are there")
        ));
    }
    out
}

/// Write `text` at `p` (made anew: never through a link).
pub(crate) fn put_back(p: &Path, text: &[u8]) -> std::io::Result<()> {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o644)
        .custom_flags(libc::O_NOFOLLOW)
        .open(p)?;
    f.write_all(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_lint_staged_key_is_compared_not_the_rest() {
        let t = skarn_test_support::TempDir::new("package-json");
        let old = t.file(
            "old.json",
            "{\"name\":\"p\",\"lint-staged\":{\"*.js\":\"eslint\"}}",
        );
        let same = t.file(
            "same.json",
            "{\n  \"name\": \"p\",\n  \"dependencies\": {\"x\": \"1\"},\n  \"lint-staged\": {\"*.js\": \"eslint\"}\n}",
        );
        let other = t.file(
            "other.json",
            "{\"name\":\"p\",\"lint-staged\":{\"*\":\"touch x\"}}",
        );
        let broken = t.file("broken.json", "{\"lint-staged\": {\"*\": \"x\"");
        // Past serde_json's depth, with the key spelled through an escape
        // (atk22k F11): still a change.
        let deep = format!(
            "{{\"name\":\"p\",\"x\":{}{},\"lint\\u002dstaged\":{{\"*.js\":\"touch x\"}}}}",
            "[".repeat(200),
            "]".repeat(200)
        );
        let deep = t.file("deep.json", &deep);
        assert!(changes_hook_config(&deep, &old));
        assert!(changes_hook_config(&deep, &t.join("missing.json")));
        assert!(!changes_hook_config(&old, &old));
        // Every hook manager's key, and lint-staged's YAML file (atk22k F8, F9).
        let husky = t.file(
            "husky.json",
            "{\"name\":\"p\",\"lint-staged\":{\"*.js\":\"eslint\"},\"husky\":{\"hooks\":{\"pre-commit\":\"x\"}}}",
        );
        assert!(changes_hook_config(&husky, &old));
        let ghooks = t.file(
            "ghooks.json",
            "{\"name\":\"p\",\"lint-staged\":{\"*.js\":\"eslint\"},\"config\":{\"ghooks\":{\"pre-commit\":\"x\"}}}",
        );
        assert!(changes_hook_config(&ghooks, &old));
        let y_old = t.file("a/package.yaml", "name: p\nversion: 1.0\n");
        let y_same = t.file("b/package.yaml", "name: p\nversion: 2.0\n");
        let y_key = t.file("c/package.yaml", "lint-staged:\n  \"*.js\": x\n");
        let y_esc = t.file("d/package.yaml", "\"lint\\x2dstaged\":\n  \"*.js\": x\n");
        assert!(!changes_hook_config(&y_same, &y_old));
        assert!(changes_hook_config(&y_key, &y_old));
        assert!(changes_hook_config(&y_esc, &y_old));
        assert!(!changes_hook_config(&same, &old));
        assert!(changes_hook_config(&other, &old));
        assert!(changes_hook_config(&broken, &old));
        assert!(changes_hook_config(&other, &t.join("missing.json")));
        // pnpm's settings of pnpm-workspace.yaml (atk22k F18).
        let p_old = t.file("p1/pnpm-workspace.yaml", "packages:\n  - a\n");
        let p_cat = t.file(
            "p2/pnpm-workspace.yaml",
            "packages:\n  - a\ncatalog:\n  x: 1\n",
        );
        let p_file = t.file(
            "p3/pnpm-workspace.yaml",
            "packages:\n  - a\npnpmfile: p.cjs\n",
        );
        assert!(!changes_hook_config(&p_cat, &p_old));
        assert!(changes_hook_config(&p_file, &p_old));
        assert!(changes_hook_config(
            &p_file,
            &t.join("p4/pnpm-workspace.yaml")
        ));
        assert!(!changes_hook_config(
            &p_cat,
            &t.join("p4/pnpm-workspace.yaml")
        ));
    }
}
