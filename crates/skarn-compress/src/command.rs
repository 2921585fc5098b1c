//! Command-line normalisation for profile selection.
//!
//! A command line such as `cd app && RUST_LOG=1 /usr/bin/cargo +nightly test
//! 2>&1 | tee log` is split into segments (`&&`, `||`, `;`, `|`, newlines),
//! each reduced to `program args...` with the program's directory removed,
//! environment assignments, redirections and wrappers (`sudo`, `env`,
//! `time`, `npx`, `uv run`, ...) stripped. Segments that only move or copy
//! output (`cd`, `tee`, `head`, ...) are ignored when others remain.
//!
//! This is a tokenizer for choosing a profile, not a shell parser: quotes
//! are honoured, everything else is taken literally.

/// Programs that do not shape the output format of a pipeline.
const TRANSPARENT: &[&str] = &[
    "cd", "pushd", "popd", "tee", "head", "tail", "cat", "less", "more", "true", "set", "export",
    "source", ".", "wc", "sort", "uniq",
];

/// Single-word wrappers that run the rest of the line as the command.
const WRAPPERS: &[&str] = &[
    "sudo", "env", "time", "nice", "nohup", "command", "exec", "npx", "bunx", "stdbuf", "chrt",
    "ionice", "unbuffer",
];

/// Two-word wrappers (`uv run pytest`).
const WRAPPERS2: &[(&str, &str)] = &[
    ("uv", "run"),
    ("poetry", "run"),
    ("pipenv", "run"),
    ("pnpm", "exec"),
    ("pnpm", "dlx"),
    ("yarn", "dlx"),
    ("yarn", "exec"),
    ("bundle", "exec"),
    ("npm", "exec"),
];

/// Shells whose `-c SCRIPT` is looked into.
const SHELLS: &[&str] = &["sh", "bash", "zsh", "dash", "ksh"];

/// Split a command line into normalised segments, in order.
pub(crate) fn segments(line: &str) -> Vec<String> {
    segments_at(line, 0)
}

fn segments_at(line: &str, depth: usize) -> Vec<String> {
    let mut segs: Vec<Vec<String>> = vec![Vec::new()];
    let mut cur = String::new();
    let mut in_word = false;
    let mut chars = line.chars().peekable();
    let mut quote: Option<char> = None;
    let flush = |cur: &mut String, in_word: &mut bool, segs: &mut Vec<Vec<String>>| {
        if *in_word {
            segs.last_mut()
                .expect("segments never empty")
                .push(std::mem::take(cur));
            *in_word = false;
        }
    };
    while let Some(c) = chars.next() {
        if let Some(q) = quote {
            if c == q {
                quote = None;
            } else if c == '\\' && q == '"' {
                if let Some(n) = chars.next() {
                    cur.push(n);
                }
            } else {
                cur.push(c);
            }
            continue;
        }
        match c {
            '\'' | '"' => {
                quote = Some(c);
                in_word = true;
            }
            '\\' => {
                if let Some(n) = chars.next() {
                    cur.push(n);
                    in_word = true;
                }
            }
            ' ' | '\t' => flush(&mut cur, &mut in_word, &mut segs),
            ';' | '\n' | '|' | '&' => {
                // `2>&1` and `&>file` are redirections, not separators.
                if c == '&' && (cur.ends_with('>') || chars.peek() == Some(&'>')) {
                    cur.push(c);
                    in_word = true;
                    continue;
                }
                flush(&mut cur, &mut in_word, &mut segs);
                if (c == '|' || c == '&') && chars.peek() == Some(&c) {
                    chars.next();
                }
                if chars.peek() == Some(&'&') {
                    chars.next(); // `|&`
                }
                segs.push(Vec::new());
            }
            _ => {
                cur.push(c);
                in_word = true;
            }
        }
    }
    flush(&mut cur, &mut in_word, &mut segs);

    let mut normalised: Vec<(String, String)> = Vec::new();
    for seg in segs {
        match normalise(seg) {
            Some(Norm::Command(prog, s)) => normalised.push((prog, s)),
            Some(Norm::Script(script)) if depth < 4 => {
                for s in segments_at(&script, depth + 1) {
                    let prog = s.split(' ').next().unwrap_or_default().to_string();
                    normalised.push((prog, s));
                }
            }
            _ => {}
        }
    }
    let meaningful: Vec<String> = normalised
        .iter()
        .filter(|(prog, _)| !TRANSPARENT.contains(&prog.as_str()))
        .map(|(_, s)| s.clone())
        .collect();
    if meaningful.is_empty() {
        normalised.into_iter().map(|(_, s)| s).collect()
    } else {
        meaningful
    }
}

fn is_assignment(w: &str) -> bool {
    match w.split_once('=') {
        Some((name, _)) => {
            !name.is_empty()
                && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
                && !name.starts_with(|c: char| c.is_ascii_digit())
        }
        None => false,
    }
}

fn is_redirection(w: &str) -> bool {
    let w = w.trim_start_matches(|c: char| c.is_ascii_digit());
    w.starts_with('>') || w.starts_with('<') || w.starts_with("&>")
}

fn basename(p: &str) -> &str {
    p.rsplit('/').next().unwrap_or(p)
}

enum Norm {
    Command(String, String),
    /// `sh -c SCRIPT`: the script is split in turn.
    Script(String),
}

fn normalise(words: Vec<String>) -> Option<Norm> {
    let mut w: Vec<String> = Vec::new();
    let mut skip_next = false;
    for word in words {
        if skip_next {
            skip_next = false;
            continue;
        }
        if is_redirection(&word) {
            // `> file` with a space: the next word is the target.
            let bare = word.trim_start_matches(|c: char| c.is_ascii_digit());
            if matches!(bare, ">" | ">>" | "<" | "&>" | "&>>") {
                skip_next = true;
            }
            continue;
        }
        w.push(word);
    }
    let mut i = 0;
    loop {
        while i < w.len() && is_assignment(&w[i]) {
            i += 1;
        }
        if i >= w.len() {
            return None;
        }
        let prog = basename(&w[i]).to_string();
        if WRAPPERS.contains(&prog.as_str()) {
            i += 1;
            // Skip the wrapper's own options (`sudo -E`, `timeout 10`, `env -i`).
            while i < w.len() && (w[i].starts_with('-') || is_assignment(&w[i])) {
                i += 1;
            }
            continue;
        }
        if prog == "timeout" {
            i += 1;
            while i < w.len() && w[i].starts_with('-') {
                i += 1;
            }
            i += 1; // the duration
            continue;
        }
        if let Some(next) = w.get(i + 1)
            && WRAPPERS2.contains(&(prog.as_str(), next.as_str()))
        {
            i += 2;
            continue;
        }
        if SHELLS.contains(&prog.as_str())
            && let Some(flag) = w.get(i + 1)
            && flag.starts_with('-')
            && !flag.starts_with("--")
            && flag.contains('c')
            && let Some(script) = w.get(i + 2)
        {
            return Some(Norm::Script(script.clone()));
        }
        let mut out = prog.clone();
        for a in &w[i + 1..] {
            out.push(' ');
            out.push_str(a);
        }
        return Some(Norm::Command(prog, out));
    }
}

#[cfg(test)]
mod tests {
    use super::segments;

    #[test]
    fn strips_paths_env_wrappers_and_redirections() {
        assert_eq!(
            segments("RUST_BACKTRACE=1 /usr/bin/cargo +nightly test -p x 2>&1 | tee log"),
            vec!["cargo +nightly test -p x"]
        );
        assert_eq!(segments("cd app && npx tsc --noEmit"), vec!["tsc --noEmit"]);
        assert_eq!(
            segments("sudo -E env A=1 time ./venv/bin/python -m pytest -q"),
            vec!["python -m pytest -q"]
        );
        assert_eq!(segments("uv run pytest"), vec!["pytest"]);
        assert_eq!(segments("timeout 30 go test ./..."), vec!["go test ./..."]);
        assert_eq!(segments("cat log.txt"), vec!["cat log.txt"]);
        assert_eq!(
            segments("make 2> err.txt; git diff 'a b'"),
            vec!["make", "git diff a b"]
        );
        assert_eq!(
            segments("bash -lc 'cd x && cargo test 2>&1'"),
            vec!["cargo test"]
        );
        assert!(segments("").is_empty());
        assert!(segments("A=1").is_empty());
    }
}
