//! An environment file read as the two programs that run what it says
//! (atk22k F1c, F16): a shell that sources it (`set -a; . ./.env`, an
//! entrypoint, a `Makefile` recipe) runs every line that is not an
//! assignment, and `make`, whose `include .env` / `-include .env` reads
//! it as makefile text, runs `NAME != cmd`, rules' recipes and the
//! functions of any `$` at parse time. [`crate::protect::dotenv`] judges
//! what the assignments set; this module judges the lines that are not
//! plain assignments to either reader. Deny by default: a line is data
//! only when each reader takes it as a plain assignment, a comment or a
//! blank.

/// The first line of `text` that a shell sourcing it runs as a command
/// (1-based line, what and why): each command (words split at unquoted
/// blanks, ended at an unquoted newline) must be `NAME=value` words only,
/// or `export` followed by such words or names. An unquoted `;`, `&`,
/// `|`, `(`, `)`, `<` or `>` is shell syntax wherever it is. Only `\n`
/// ends a line to a shell: a `\r` or any other character is part of a
/// word (so `A=1\rtouch x` runs `x`).
pub(crate) fn shell_command(text: &str) -> Option<(usize, String)> {
    let mut line = 1usize;
    let mut start = 1usize;
    let mut words: Vec<String> = Vec::new();
    let mut word: Option<String> = None;
    let mut quote: Option<char> = None;
    let mut it = text.chars().peekable();
    while let Some(c) = it.next() {
        if c == '\n' {
            line += 1;
        }
        if let Some(q) = quote {
            let w = word.get_or_insert_with(String::new);
            w.push(c);
            if c == q {
                quote = None;
            } else if q == '"'
                && c == '\\'
                && let Some(n) = it.next()
            {
                if n == '\n' {
                    line += 1;
                }
                w.push(n);
            }
            continue;
        }
        match c {
            '\\' => {
                // A continuation joins the lines; any other escape keeps
                // the next character in the word.
                match it.next() {
                    Some('\n') => line += 1,
                    Some(n) => word.get_or_insert_with(String::new).extend(['\\', n]),
                    None => {}
                }
            }
            '\'' | '"' => {
                quote = Some(c);
                word.get_or_insert_with(String::new).push(c);
            }
            '#' if word.is_none() => {
                // A comment, to the end of the line.
                while it.peek().is_some_and(|&n| n != '\n') {
                    it.next();
                }
            }
            ' ' | '\t' => words.extend(word.take()),
            '\n' => {
                words.extend(word.take());
                if let Some(why) = judge_command(&words) {
                    return Some((start, why));
                }
                words.clear();
                start = line;
            }
            ';' | '&' | '|' | '(' | ')' | '<' | '>' => {
                return Some((
                    line,
                    format!("`{c}` (shell syntax a shell that sources the file runs)"),
                ));
            }
            _ => {
                if words.is_empty() && word.is_none() {
                    start = line;
                }
                word.get_or_insert_with(String::new).push(c);
            }
        }
    }
    words.extend(word.take());
    judge_command(&words).map(|why| (start, why))
}

/// Whether `w` is a shell variable name.
fn shell_name(w: &str) -> bool {
    let mut cs = w.chars();
    cs.next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && cs.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// Whether the word `w` (quotes as written) is a shell assignment.
fn assignment_word(w: &str) -> bool {
    w.split_once('=').is_some_and(|(n, _)| shell_name(n))
}

/// Why the command of `words` is not assignments only.
fn judge_command(words: &[String]) -> Option<String> {
    // A line end of a file written on Windows is no command.
    let words: Vec<&String> = words
        .iter()
        .filter(|w| !w.chars().all(|c| c == '\r'))
        .collect();
    let (rest, export) = match words.first() {
        Some(w) if w.as_str() == "export" => (&words[1..], true),
        _ => (&words[..], false),
    };
    let bad = rest
        .iter()
        .find(|w| !(assignment_word(w) || export && shell_name(w.trim_end_matches('\r'))))?;
    Some(format!(
        "a command `{}` (not an assignment: a shell that sources the file runs it)",
        bad.chars().take(40).collect::<String>()
    ))
}

/// Make's directives: each reads another file as makefile text, loads
/// code, or defines what a later expansion runs.
const MAKE_DIRECTIVES: &[&str] = &[
    "include", "-include", "sinclude", "load", "-load", "define", "undefine", "vpath", "ifeq",
    "ifneq", "ifdef", "ifndef", "else", "endif", "endef",
];

/// The first line of `text` that `make` (reading it through `include`)
/// runs something by, or that is not a plain variable assignment to it
/// (1-based line, what and why): any `$` but a plain `$(NAME)` /
/// `${NAME}` reference (a function, `$(shell ...)`, runs at parse time
/// or at use), a `!=` assignment (its value is run by the shell), a rule
/// (its recipe runs when the target is made; it may become the default
/// goal), a directive. Read as make reads: lines end at `\n` only, a
/// backslash before it joins the next, `#` starts a comment anywhere
/// unless escaped. A line make cannot read (a base64 line of a quoted
/// key) stops make before it runs anything after, so it is left.
pub(crate) fn make_line(text: &str) -> Option<(usize, String)> {
    let mut joined = String::new();
    let mut start = 1usize;
    for (i, raw) in text.split('\n').enumerate() {
        if joined.is_empty() {
            start = i + 1;
        }
        let raw = raw.strip_suffix('\r').unwrap_or(raw);
        let trailing = raw.chars().rev().take_while(|&c| c == '\\').count();
        if trailing % 2 == 1 {
            joined.push_str(&raw[..raw.len() - 1]);
            joined.push(' ');
            continue;
        }
        joined.push_str(raw);
        let l = std::mem::take(&mut joined);
        if let Some(why) = judge_make(&l) {
            return Some((start, why));
        }
    }
    (!joined.is_empty())
        .then(|| judge_make(&joined))
        .flatten()
        .map(|why| (start, why))
}

/// Why one logical makefile line `l` is not a plain assignment.
fn judge_make(l: &str) -> Option<String> {
    // The comment: an unescaped `#` anywhere.
    let b = l.as_bytes();
    let cut = (0..b.len())
        .find(|&i| b[i] == b'#' && (i == 0 || b[i - 1] != b'\\'))
        .unwrap_or(b.len());
    let mut l = l[..cut].trim_matches([' ', '\t']);
    if l.is_empty() {
        return None;
    }
    if let Some(why) = make_dollar(l) {
        return Some(why);
    }
    loop {
        let first = l.split([' ', '\t']).next().unwrap_or("");
        if MAKE_DIRECTIVES.contains(&first) {
            return Some(format!(
                "make's `{first}` directive (make reads the file through include)"
            ));
        }
        match ["export", "unexport", "override", "private"]
            .iter()
            .find(|m| first == **m)
        {
            Some(m) => l = l[m.len()..].trim_start_matches([' ', '\t']),
            None => break,
        }
    }
    let eq = l.find('=');
    let colon = l.find(':');
    match (colon, eq) {
        (Some(c), e) if e.is_none_or(|e| c < e) => {
            // `:=`, `::=`, `:::=` assign; any other `:` is a rule.
            let ops = l[c..].trim_start_matches(':');
            if ops.starts_with('=') && l[c..].len() - ops.len() <= 3 {
                None
            } else {
                Some("a make rule (make runs its recipe, and it may be the default goal)".into())
            }
        }
        (_, Some(e)) if l[..e].ends_with('!') => Some(
            "a make `!=` assignment (make runs its value with the shell when it reads the file)"
                .into(),
        ),
        _ => None,
    }
}

/// Why `l` has a `$` make expands to more than a variable's value.
fn make_dollar(l: &str) -> Option<String> {
    let b = l.as_bytes();
    let mut i = 0;
    while i < b.len() {
        if b[i] != b'$' {
            i += 1;
            continue;
        }
        let plain = match b.get(i + 1) {
            Some(b'$') => Some(i + 2),
            Some(&o @ (b'(' | b'{')) => {
                let close = if o == b'(' { b')' } else { b'}' };
                let n = b[i + 2..]
                    .iter()
                    .take_while(|c| c.is_ascii_alphanumeric() || **c == b'_')
                    .count();
                (n > 0 && b.get(i + 2 + n) == Some(&close)).then_some(i + 3 + n)
            }
            Some(c) if c.is_ascii_alphanumeric() || *c == b'_' => Some(i + 2),
            _ => None,
        };
        match plain {
            Some(next) => i = next,
            None => {
                return Some(
                    "a make function or computed reference (`$(shell ...)` and the like: make \
                     runs it when it reads or uses the line)"
                        .into(),
                );
            }
        }
    }
    None
}

#[cfg(test)]
#[path = "dotenv_lines_tests.rs"]
mod tests;
