//! Relative `PATH` entries set by a shell start-up file (atk22d F9):
//! `export PATH="./node_modules/.bin:$PATH"`, `PATH=bin:$PATH`, an empty
//! entry (`::`, a leading or trailing `:`), zsh's `path=(./.venv/bin
//! $path)`, fish's `fish_add_path ./bin` and `set PATH bin $PATH`. bash
//! resolves such an entry against whatever directory the user is in, so
//! in a project it names a directory of the project; the scan reads them
//! as written (the caller's own `PATH`, which skarn sees, is checked
//! elsewhere).

/// Most entries kept from all files.
pub const MAX_ENTRIES: usize = 64;

fn unquote(w: &str) -> &str {
    w.trim_matches(['"', '\''])
}

/// Whether a `PATH` element is relative: not absolute, not led by a
/// variable or `~`; the empty element is the current directory.
fn relative(e: &str) -> Option<String> {
    let e = unquote(e.trim());
    if e.starts_with(['/', '$', '~', '`']) {
        return None;
    }
    let e = e.trim_end_matches('/');
    Some(if e.is_empty() { ".".into() } else { e.into() })
}

/// `value` split at the `:` that separate `PATH` elements (not those
/// inside `${...}` or `$(...)`).
fn split_path(value: &str) -> Vec<&str> {
    let (mut out, mut depth, mut start) = (Vec::new(), 0usize, 0usize);
    let b = value.as_bytes();
    for (i, c) in value.char_indices() {
        match c {
            '{' | '(' if i > 0 && b[i - 1] == b'$' => depth += 1,
            '}' | ')' if depth > 0 => depth -= 1,
            ':' if depth == 0 => {
                out.push(&value[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    out.push(&value[start..]);
    out
}

/// The relative entries a start-up line (comments already stripped) puts
/// on `PATH`.
pub fn entries(line: &str) -> Vec<String> {
    let mut out = Vec::new();
    for stmt in line.split([';', '&', '|']) {
        let words: Vec<&str> = stmt.split_whitespace().collect();
        let Some(&first) = words.first() else {
            continue;
        };
        match first {
            // fish
            "fish_add_path" => out.extend(
                words[1..]
                    .iter()
                    .filter(|w| !w.starts_with('-'))
                    .filter_map(|w| relative(w)),
            ),
            "set" => {
                let rest: Vec<&str> = words[1..]
                    .iter()
                    .copied()
                    .skip_while(|w| w.starts_with('-'))
                    .collect();
                if let Some((&name, vals)) = rest.split_first()
                    && (name == "PATH" || name == "fish_user_paths")
                {
                    out.extend(vals.iter().filter_map(|w| relative(w)));
                }
            }
            _ => {
                for w in &words {
                    let w = w.trim_start_matches(['(', '{']);
                    // zsh's array: `path=(a b $path)` on one line.
                    if let Some(v) = w.strip_prefix("path=(") {
                        let inner = stmt[stmt.find("path=(").unwrap_or(0) + 6..]
                            .split(')')
                            .next()
                            .unwrap_or(v);
                        out.extend(inner.split_whitespace().filter_map(relative));
                        break;
                    }
                    let w = w.trim_start_matches(['"', '\'']);
                    if let Some(v) = w.strip_prefix("PATH=").or_else(|| w.strip_prefix("PATH+=")) {
                        // The whole value up to the end of the word (quotes
                        // may hold spaces: take the statement's rest).
                        let at = stmt.find(w).unwrap_or(0) + (w.len() - v.len());
                        let value = stmt[at..].trim();
                        let value = match value.chars().next() {
                            Some(q @ ('"' | '\'')) => value[1..].split(q).next().unwrap_or(""),
                            _ => value.split_whitespace().next().unwrap_or(""),
                        };
                        out.extend(split_path(value).into_iter().filter_map(relative));
                    }
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::entries;

    #[test]
    fn relative_entries_of_every_shell_form() {
        let e = |l: &str| entries(l);
        assert_eq!(
            e("export PATH=\"./node_modules/.bin:$PATH\""),
            ["./node_modules/.bin"]
        );
        assert_eq!(e("PATH=.:$PATH"), ["."]);
        assert_eq!(e("PATH=$PATH:bin"), ["bin"]);
        assert_eq!(e("export PATH=\"vendor/bin:$PATH\""), ["vendor/bin"]);
        assert_eq!(e("PATH=/usr/bin::/bin"), ["."]);
        assert_eq!(e("PATH=:$PATH"), ["."]);
        assert_eq!(e("path=(./.venv/bin $path)"), ["./.venv/bin"]);
        assert_eq!(
            e("fish_add_path --path ./node_modules/.bin"),
            ["./node_modules/.bin"]
        );
        assert_eq!(e("set -gx PATH bin $PATH"), ["bin"]);
        assert_eq!(
            e("set -U fish_user_paths ./tools $fish_user_paths"),
            ["./tools"]
        );
        assert!(e("export PATH=\"$HOME/bin:$PATH\"").is_empty());
        assert!(e("PATH=/usr/local/bin:$PATH").is_empty());
        assert!(e("export PATH=~/bin:$PATH").is_empty());
        assert!(e("echo PATH is set").is_empty());
        assert!(e("MANPATH=man:$MANPATH").is_empty());
        assert!(e("export PATH=$PATH:$GOPATH/bin:${CARGO_HOME:-$HOME/.cargo}/bin").is_empty());
        assert!(e("PATH=\"$(brew --prefix)/bin:$PATH\"").is_empty());
    }
}
