//! Does a home configuration file name the workspace? (host side, before
//! planning; ADR 0160).
//!
//! Host programs run what their configuration names: a shell its rc
//! files' sources, programs and `PATH`, vim its `runtimepath`, ssh its
//! `Match exec`, git its pager and hooks, cargo its `rustc-wrapper`, npm
//! its `node-options`, python the directories of a user-site `.pth`.
//! Parsing each format exactly was tried (ADR 0135, 0140) and keeps
//! missing forms. This check does not parse: it reads the files where
//! code-running configuration lives
//! ([`crate::protect::home_mention_places::PLACES`], the user site's `.pth` and
//! `*customize.py`, the user's crontab when readable, and the home files
//! these name), normalises each line (quote characters dropped; `~`,
//! `$HOME`, `${HOME}`, `${HOME:-...}`, `$XDG_CONFIG_HOME` expanded;
//! relative words resolved from the file's directory and from the home)
//! and looks for any path at or inside a writable grant. A grant found is
//! read-only for the run (`plan/trusted.rs` `demote`) unless the user
//! trusts it (`--trust-home-config-workspace`). Reading is bounded
//! ([`MAX_FILES`], [`MAX_BYTES`], [`MAX_FILE_BYTES`], [`MAX_ENTRIES`]);
//! past a bound every grant counts as mentioned, and the report says so.

use std::collections::HashSet;
use std::path::{Component, Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::policy::grants::CanonicalCache;
use crate::protect::home_mention_places::{LINKS_ONLY, PLACES, SKIP_DIRS, is_state_name};

/// Files read at most.
pub const MAX_FILES: usize = 3000;
/// Bytes read at most, all files together.
pub const MAX_BYTES: u64 = 32 << 20;
/// Bytes of one file; a larger one counts as over the budget.
pub const MAX_FILE_BYTES: u64 = 2 << 20;
/// Directory entries looked at, all walks together.
pub const MAX_ENTRIES: usize = 40_000;
/// Levels of "a home file names another home file" followed; a deeper
/// chain counts as over the budget (attack atk22c F7).
const MAX_FOLLOW: usize = 8;
/// Paths resolved through links (each costs syscalls).
const MAX_RESOLVE: usize = 50_000;

/// One mention: `file` line `line` names `named`, at or inside `grant`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Mention {
    /// The writable grant mentioned (as the policy names it).
    pub grant: PathBuf,
    /// The home file (as reached from the home).
    pub file: PathBuf,
    /// Line number (1-based); 0 when the file itself lies in the grant.
    pub line: usize,
    /// The path named, as normalised.
    pub named: String,
}

/// What [`scan`] found.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Mentions {
    /// At most one per grant (the first found), in grant order.
    pub found: Vec<Mention>,
    /// A bound hit: every grant counts as mentioned (why).
    pub over_budget: Option<String>,
    /// Files read.
    pub files: usize,
    /// Bytes read.
    pub bytes: u64,
}

impl Mentions {
    /// Nothing found and no bound hit.
    pub fn is_empty(&self) -> bool {
        self.found.is_empty() && self.over_budget.is_none()
    }
}

/// One grant's names: as the policy gives it, canonical, and through the
/// home's other name.
struct Target {
    grant: PathBuf,
    forms: Vec<String>,
    canon: PathBuf,
}

/// Look through the home `home` for the writable `grants`.
pub fn scan(home: &Path, grants: &[PathBuf]) -> Mentions {
    let home_real = std::fs::canonicalize(home).unwrap_or_else(|_| home.to_path_buf());
    let targets: Vec<Target> = grants
        .iter()
        // A grant that holds the home is mentioned by every home path:
        // such a workspace is protected like a home (ADR 0135) instead.
        .filter(|g| !home.starts_with(g) && !home_real.starts_with(g))
        .map(|g| {
            let canon = std::fs::canonicalize(g).unwrap_or_else(|_| g.clone());
            let mut forms = vec![lossy(g), lossy(&canon)];
            for (a, b) in [(&home_real, home), (&home.to_path_buf(), &home_real)] {
                if let Ok(rel) = canon.strip_prefix(a) {
                    forms.push(lossy(&b.join(rel)));
                }
            }
            forms.sort();
            forms.dedup();
            Target {
                grant: g.clone(),
                forms,
                canon,
            }
        })
        .collect();
    let mut s = Scanner {
        home: home.to_path_buf(),
        home_text: lossy(home),
        targets,
        out: Mentions::default(),
        seen: HashSet::new(),
        cache: CanonicalCache::following_dangling_links(),
        entries: 0,
        resolved: 0,
        todo: Vec::new(),
    };
    if s.targets.is_empty() || !home.is_absolute() {
        return s.out;
    }
    for p in PLACES {
        let at = home.join(p.path);
        if p.dir {
            s.walk(&at, 0, false);
        } else {
            s.todo.push((at, 0));
        }
    }
    for f in user_site_files(home) {
        s.todo.push((f, 0));
    }
    for f in crontab_files() {
        s.todo.push((f, 0));
    }
    s.todo.reverse();
    while let Some((f, depth)) = s.todo.pop() {
        if s.out.over_budget.is_some() {
            break;
        }
        s.file(&f, depth);
    }
    s.out
}

fn lossy(p: &Path) -> String {
    p.to_string_lossy().into_owned()
}

/// The user site's `.pth` files and `*customize.py` (every Python
/// version under `~/.local/lib`).
fn user_site_files(home: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let Ok(rd) = std::fs::read_dir(home.join(".local/lib")) else {
        return out;
    };
    for py in rd.flatten().take(64) {
        let site = py.path().join("site-packages");
        let Ok(rd) = std::fs::read_dir(&site) else {
            continue;
        };
        for e in rd.flatten().take(10_000) {
            let n = e.file_name().to_string_lossy().into_owned();
            if n.ends_with(".pth") || n == "usercustomize.py" || n == "sitecustomize.py" {
                out.push(e.path());
            }
        }
    }
    out
}

/// The caller's crontab in the spool, when readable (root's, usually).
fn crontab_files() -> Vec<PathBuf> {
    let Some(name) = user_name() else {
        return Vec::new();
    };
    ["/var/spool/cron/crontabs", "/var/spool/cron"]
        .iter()
        .map(|d| Path::new(d).join(&name))
        .collect()
}

/// The caller's user name from the password database.
fn user_name() -> Option<String> {
    let mut buf = vec![0 as libc::c_char; 4096];
    // SAFETY: zeroed passwd is a valid out-parameter.
    let mut pw: libc::passwd = unsafe { std::mem::zeroed() };
    let mut out: *mut libc::passwd = std::ptr::null_mut();
    // SAFETY: getuid has no preconditions; every pointer is valid for the
    // call and buf outlives its use.
    let rc = unsafe {
        libc::getpwuid_r(
            libc::getuid(),
            &mut pw,
            buf.as_mut_ptr(),
            buf.len(),
            &mut out,
        )
    };
    if rc != 0 || out.is_null() || pw.pw_name.is_null() {
        return None;
    }
    // SAFETY: pw_name points into buf, NUL-terminated by getpwuid_r.
    let n = unsafe { std::ffi::CStr::from_ptr(pw.pw_name) };
    let n = n.to_str().ok()?;
    (!n.is_empty() && !n.contains('/')).then(|| n.to_owned())
}

struct Scanner {
    home: PathBuf,
    home_text: String,
    targets: Vec<Target>,
    out: Mentions,
    seen: HashSet<PathBuf>,
    cache: CanonicalCache,
    entries: usize,
    resolved: usize,
    todo: Vec<(PathBuf, usize)>,
}

impl Scanner {
    fn over(&mut self, why: String) {
        self.out.over_budget.get_or_insert(why);
    }

    fn all_found(&self) -> bool {
        self.targets
            .iter()
            .all(|t| self.out.found.iter().any(|m| m.grant == t.grant))
    }

    fn found(&mut self, t: usize, file: &Path, line: usize, named: String) {
        let grant = self.targets[t].grant.clone();
        if !self.out.found.iter().any(|m| m.grant == grant) {
            self.out.found.push(Mention {
                grant,
                file: file.to_path_buf(),
                line,
                named,
            });
        }
    }

    /// The directory `dir`, `level` deep; `links_only` below a plugin or
    /// package directory.
    fn walk(&mut self, dir: &Path, level: usize, links_only: bool) {
        if level == 0 {
            // The directory itself may be a link into a grant.
            self.place_is_inside(dir);
        }
        let Ok(rd) = std::fs::read_dir(dir) else {
            return;
        };
        for e in rd.flatten() {
            self.entries += 1;
            if self.entries > MAX_ENTRIES {
                self.over(format!(
                    "more than {MAX_ENTRIES} entries under the home's configuration \
                     directories (at {})",
                    dir.display()
                ));
                return;
            }
            let Ok(ft) = e.file_type() else { continue };
            let path = e.path();
            let name = e.file_name().to_string_lossy().into_owned();
            if ft.is_symlink() && self.place_is_inside(&path) {
                continue;
            }
            let is_dir = if ft.is_symlink() {
                path.is_dir()
            } else {
                ft.is_dir()
            };
            if is_dir {
                if SKIP_DIRS.contains(&name.as_str()) {
                    continue;
                }
                let below_links = links_only || LINKS_ONLY.contains(&name.as_str());
                if below_links && level >= 3 || level >= 8 {
                    continue;
                }
                // A linked directory is entered once (its target may
                // also be listed).
                if ft.is_symlink()
                    && let Some(real) = self.cache.resolve(&path)
                    && !self.seen.insert(real)
                {
                    continue;
                }
                self.walk(&path, level + 1, below_links);
            } else if !links_only && !is_state_name(&name) {
                self.todo.push((path, 0));
            }
        }
    }

    /// Whether the real place of `p` lies in a grant (recorded).
    fn place_is_inside(&mut self, p: &Path) -> bool {
        if std::fs::symlink_metadata(p).is_err() {
            return false;
        }
        let Some(real) = self.cache.resolve(p) else {
            return false;
        };
        let mut hit = false;
        for t in 0..self.targets.len() {
            if real.starts_with(&self.targets[t].canon) {
                self.found(t, p, 0, lossy(&real));
                hit = true;
            }
        }
        hit
    }

    /// Read one file (and queue the home files it names).
    fn file(&mut self, f: &Path, depth: usize) {
        let Some(real) = self.cache.resolve(f) else {
            return;
        };
        if self.seen.contains(&real) {
            return;
        }
        self.seen.insert(real.clone());
        let Ok(meta) = std::fs::metadata(f) else {
            return;
        };
        if !meta.is_file() {
            return;
        }
        // A home configuration file that lies in a grant: the grant's
        // files are what the host runs.
        self.place_is_inside(f);
        if self.all_found() {
            return;
        }
        if self.out.files >= MAX_FILES {
            return self.over(format!(
                "more than {MAX_FILES} configuration files in the home"
            ));
        }
        if meta.len() > MAX_FILE_BYTES {
            return self.over(format!(
                "{} is larger than {} MiB",
                f.display(),
                MAX_FILE_BYTES >> 20
            ));
        }
        if self.out.bytes + meta.len() > MAX_BYTES {
            return self.over(format!(
                "the home's configuration files hold more than {} MiB",
                MAX_BYTES >> 20
            ));
        }
        let Ok(bytes) = read_file(f) else { return };
        self.out.files += 1;
        self.out.bytes += bytes.len() as u64;
        // A program, not text: its strings are not configuration.
        if bytes.iter().take(8192).any(|b| *b == 0) {
            return;
        }
        let text = String::from_utf8_lossy(&bytes);
        let dirs: Vec<PathBuf> = [f.parent(), real.parent(), Some(self.home.as_path())]
            .into_iter()
            .flatten()
            .map(Path::to_path_buf)
            .collect();
        for (i, line) in text.lines().enumerate() {
            let t = line.trim_start();
            if t.starts_with('#') && !t.starts_with("#include") {
                continue;
            }
            let norm = normalise(line, &self.home_text);
            self.line(f, i + 1, &norm, &dirs, depth);
        }
    }

    fn line(&mut self, f: &Path, n: usize, norm: &str, dirs: &[PathBuf], depth: usize) {
        for t in 0..self.targets.len() {
            if let Some(named) = self.targets[t]
                .forms
                .iter()
                .find_map(|form| find_path(norm, form))
            {
                self.found(t, f, n, named);
            }
        }
        // The home's own name may hold separators (a space): kept whole.
        let marked = norm.replace(&self.home_text, "\u{1}");
        for word in marked.split(|c: char| c.is_whitespace() || SEPARATORS.contains(&c)) {
            let word = word.replace('\u{1}', &self.home_text);
            let word = word.trim_end_matches(['/', '.']);
            if word.is_empty() || word.len() > 4096 {
                continue;
            }
            let candidates: Vec<PathBuf> = if word.starts_with('/') {
                vec![PathBuf::from(word)]
            } else if word.contains('/') || word.starts_with('.') && word.len() > 2 {
                dirs.iter().map(|d| lexical(&d.join(word))).collect()
            } else {
                continue;
            };
            for p in candidates {
                self.word(f, n, &p, depth);
            }
        }
    }

    /// One path word: a pattern, a path inside a grant (through links),
    /// or a home file to read next.
    fn word(&mut self, f: &Path, n: usize, p: &Path, depth: usize) {
        let text = lossy(p);
        if text.contains(['*', '?', '[', '$']) {
            for t in 0..self.targets.len() {
                if pattern_reaches(p, &self.targets[t].canon) {
                    self.found(t, f, n, text.clone());
                }
            }
            return;
        }
        if self.resolved >= MAX_RESOLVE {
            return;
        }
        self.resolved += 1;
        let Some(real) = self.cache.resolve(p) else {
            return;
        };
        for t in 0..self.targets.len() {
            if real.starts_with(&self.targets[t].canon) || p.starts_with(&self.targets[t].canon) {
                self.found(t, f, n, text.clone());
            }
        }
        // A home file this one names (a sourced file, a program, an
        // include): read too.
        let name = p.file_name().map(|x| x.to_string_lossy().into_owned());
        if (p.starts_with(&self.home) || real.starts_with(&self.home))
            && name.is_some_and(|n| !is_state_name(&n))
            && !self.seen.contains(&real)
            && real.is_file()
        {
            if depth + 1 < MAX_FOLLOW {
                self.todo.push((p.to_path_buf(), depth + 1));
            } else {
                // A chain deeper than the reader follows: what the last
                // file names is unknown, so the check fails closed (attack
                // atk22c F7), as for any other budget.
                self.over(format!(
                    "{} is named through more than {MAX_FOLLOW} files sourced one from another",
                    p.display()
                ));
            }
        }
    }
}

/// Characters that end a path word in the formats read.
const SEPARATORS: &[char] = &[
    '=', ';', ',', '(', ')', '[', ']', '{', '}', '<', '>', '|', '&', '!', '`', ':', '"', '\'',
];

fn read_file(f: &Path) -> std::io::Result<Vec<u8>> {
    use std::io::Read;
    let mut open = std::fs::OpenOptions::new();
    open.read(true);
    {
        use std::os::unix::fs::OpenOptionsExt;
        // A FIFO planted under a configuration name must not block.
        open.custom_flags(libc::O_NONBLOCK);
    }
    let file = open.open(f)?;
    let mut buf = Vec::new();
    file.take(MAX_FILE_BYTES).read_to_end(&mut buf)?;
    Ok(buf)
}

/// `p` with `.` and `..` removed lexically.
fn lexical(p: &Path) -> PathBuf {
    let mut out = PathBuf::from("/");
    for c in p.components() {
        match c {
            Component::Normal(n) => out.push(n),
            Component::ParentDir => {
                out.pop();
            }
            _ => {}
        }
    }
    out
}

/// Whether the pattern `p` (glob characters or unknown `$VAR`s in some
/// components) can name `target` or a path inside it.
fn pattern_reaches(p: &Path, target: &Path) -> bool {
    let pc: Vec<String> = p
        .components()
        .map(|c| lossy(c.as_os_str().as_ref()))
        .collect();
    let tc: Vec<String> = target
        .components()
        .map(|c| lossy(c.as_os_str().as_ref()))
        .collect();
    if pc.iter().any(|c| c.contains('$')) {
        // A variable may stand for several components: the literal
        // part before it must lead to (or into) the target.
        let lit = pc
            .iter()
            .take_while(|c| !c.contains(['$', '*', '?', '[']))
            .count();
        let n = lit.min(tc.len());
        return lit > 1 && pc[..n] == tc[..n];
    }
    if pc.len() < tc.len() {
        return false;
    }
    pc.iter().zip(&tc).all(|(a, b)| {
        a == b
            || a.contains('[')
            // Many stars: matched as anything (bounded work, safe side).
            || a.matches('*').count() > 8
            || a.contains(['*', '?']) && wild(a.as_bytes(), b.as_bytes())
    })
}

/// Shell wildcard match of one component (`*`, `?`).
fn wild(p: &[u8], s: &[u8]) -> bool {
    match p.split_first() {
        None => s.is_empty(),
        Some((b'*', rest)) => (0..=s.len()).any(|i| wild(rest, &s[i..])),
        Some((b'?', rest)) => !s.is_empty() && wild(rest, &s[1..]),
        Some((c, rest)) => s.first() == Some(c) && wild(rest, &s[1..]),
    }
}

/// The line with quote characters dropped and the home's spellings
/// expanded to `home`.
pub fn normalise(line: &str, home: &str) -> String {
    let mut s: String = line.chars().filter(|c| *c != '"' && *c != '\'').collect();
    // `${HOME:-...}`, `${HOME-...}`: the home, whatever the default.
    while let Some(i) = s.find("${HOME:").or_else(|| s.find("${HOME-")) {
        match s[i..].find('}') {
            Some(j) => s.replace_range(i..i + j + 1, home),
            None => break,
        }
    }
    for (from, to) in [
        ("${HOME}", home.to_string()),
        ("$env:HOME", home.to_string()),
        ("(getenv HOME)", home.to_string()),
        ("${XDG_CONFIG_HOME}", format!("{home}/.config")),
        ("$XDG_CONFIG_HOME", format!("{home}/.config")),
        ("${XDG_DATA_HOME}", format!("{home}/.local/share")),
        ("$XDG_DATA_HOME", format!("{home}/.local/share")),
        ("${CARGO_HOME}", format!("{home}/.cargo")),
        ("$CARGO_HOME", format!("{home}/.cargo")),
    ] {
        s = s.replace(from, &to);
    }
    s = replace_var(&s, "$HOME", home);
    // ssh's `%d` and systemd's `%h` are the home.
    s = s
        .replace("%d/", &format!("{home}/"))
        .replace("%h/", &format!("{home}/"));
    // `~` at the start of a word.
    let mut out = String::with_capacity(s.len());
    let mut prev: Option<char> = None;
    let chars: Vec<char> = s.chars().collect();
    for (i, &c) in chars.iter().enumerate() {
        let word_start =
            prev.is_none_or(|p| !(p.is_alphanumeric() || matches!(p, '_' | '.' | '/' | '~')));
        let next = chars.get(i + 1).copied();
        if c == '~' && word_start && next.is_none_or(|n| n == '/' || !is_name_char(n)) {
            out.push_str(home);
        } else {
            out.push(c);
        }
        prev = Some(c);
    }
    collapse_concat(&out, home)
}

fn is_name_char(c: char) -> bool {
    c.is_alphanumeric() || matches!(c, '_' | '.' | '-' | '+' | '@' | '%')
}

/// `$HOME` not followed by a name character (`$HOMEBREW_PREFIX` is
/// another variable).
fn replace_var(s: &str, var: &str, to: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(i) = rest.find(var) {
        out.push_str(&rest[..i]);
        let after = &rest[i + var.len()..];
        if after.starts_with(|c: char| c.is_alphanumeric() || c == '_') {
            out.push_str(var);
        } else {
            out.push_str(to);
        }
        rest = after;
    }
    out.push_str(rest);
    out
}

/// `home .. /x`, `home) . /x`, `home, /x` (string concatenation in vim,
/// lua, emacs lisp, python): written as `home/x`.
fn collapse_concat(s: &str, home: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(i) = rest.find(home) {
        let end = i + home.len();
        out.push_str(&rest[..end]);
        let after = &rest[end..];
        let skipped = after.trim_start_matches([' ', '\t', ')', '.', ',', '+']);
        if skipped.starts_with('/') && skipped.len() < after.len() {
            rest = skipped;
        } else {
            rest = after;
        }
    }
    out.push_str(rest);
    out
}

/// The path `form` (or one inside it) where it appears in `line` as a
/// whole path (not part of a longer name), as written there.
fn find_path(line: &str, form: &str) -> Option<String> {
    let mut from = 0;
    while let Some(i) = line[from..].find(form) {
        let at = from + i;
        let end = at + form.len();
        let before = line[..at].chars().next_back();
        let after = line[end..].chars().next();
        let starts = before.is_none_or(|c| !(c.is_alphanumeric() || matches!(c, '_' | '.')));
        let ends = after.is_none_or(|c| c == '/' || !is_name_char(c));
        if starts && ends {
            let tail: String = line[end..]
                .chars()
                .take_while(|c| !c.is_whitespace() && !SEPARATORS.contains(c))
                .collect();
            return Some(format!("{form}{tail}"));
        }
        from = end;
    }
    None
}

#[cfg(test)]
#[path = "home_mentions_tests.rs"]
mod tests;
