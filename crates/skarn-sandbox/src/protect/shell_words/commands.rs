//! A shell text split into commands and their tokens, without expanding
//! anything ([`commands`]).

/// One token of a command ([`commands`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Token {
    /// A word, quotes removed (no expansion; `$(...)`, backquotes and
    /// `<(...)` kept whole, as `$(...)`).
    Word(String),
    /// `<` or `<>`: the next word is a file read.
    In,
    /// `>`, `>>`, `<<`, `<<<`, `<&`, `>&`: the next word is no file read.
    Other,
}

/// Largest number of tokens [`commands`] returns (past it: cut short).
const MAX_TOKENS: usize = 65_536;

/// The commands of a shell text as token lists: split at newlines, `;`,
/// `&`, `|`, `(`, `)` outside quotes, comments dropped, quotes removed,
/// command substitutions kept whole inside their word. No expansion. An
/// approximation that errs towards more commands (a here-document's
/// lines are read as commands too).
pub fn commands(text: &str) -> Vec<Vec<Token>> {
    let mut cmds: Vec<Vec<Token>> = Vec::new();
    let mut cur: Vec<Token> = Vec::new();
    let mut w = String::new();
    let mut in_word = false;
    let mut count = 0usize;
    let mut chars = text.chars().peekable();
    fn end(w: &mut String, in_word: &mut bool, cur: &mut Vec<Token>) {
        if *in_word {
            cur.push(Token::Word(std::mem::take(w)));
            *in_word = false;
        }
    }
    // `$(...)` / `<(...)` with nested parentheses and quotes, into `w`.
    fn subst(chars: &mut std::iter::Peekable<std::str::Chars<'_>>, w: &mut String) {
        w.push_str("$(");
        let mut depth = 1u32;
        let mut quote: Option<char> = None;
        for d in chars.by_ref() {
            match (quote, d) {
                (Some(q), d) if d == q => quote = None,
                (None, '\'' | '"') => quote = Some(d),
                (None, '(') => depth += 1,
                (None, ')') => {
                    depth -= 1;
                    if depth == 0 {
                        break;
                    }
                }
                _ => {}
            }
            w.push(d);
        }
        w.push(')');
    }
    while let Some(c) = chars.next() {
        count += 1;
        if count > MAX_TOKENS * 16 || cmds.len() + cur.len() > MAX_TOKENS {
            break;
        }
        match c {
            '\'' => {
                in_word = true;
                for d in chars.by_ref() {
                    if d == '\'' {
                        break;
                    }
                    w.push(d);
                }
            }
            '"' => {
                in_word = true;
                while let Some(d) = chars.next() {
                    match d {
                        '"' => break,
                        '\\' => {
                            if let Some(e) = chars.next() {
                                w.push(e);
                            }
                        }
                        '$' if chars.peek() == Some(&'(') => {
                            chars.next();
                            subst(&mut chars, &mut w);
                        }
                        _ => w.push(d),
                    }
                }
            }
            '\\' => {
                if let Some(e) = chars.next()
                    && e != '\n'
                {
                    in_word = true;
                    w.push(e);
                }
            }
            '$' if chars.peek() == Some(&'(') => {
                chars.next();
                in_word = true;
                subst(&mut chars, &mut w);
            }
            '$' if chars.peek() == Some(&'\'') => {
                // ANSI-C quoting: `$'x\x2esh'`.
                chars.next();
                in_word = true;
                crate::protect::shell_ansi::ansi_c(&mut chars, &mut w);
            }
            '`' => {
                in_word = true;
                w.push_str("$(");
                for d in chars.by_ref() {
                    if d == '`' {
                        break;
                    }
                    w.push(d);
                }
                w.push(')');
            }
            '<' | '>' if chars.peek() == Some(&'(') => {
                chars.next();
                end(&mut w, &mut in_word, &mut cur);
                in_word = true;
                subst(&mut chars, &mut w);
            }
            '<' | '>' => {
                end(&mut w, &mut in_word, &mut cur);
                let mut op = String::from(c);
                while let Some(&d) = chars.peek() {
                    if matches!(d, '<' | '>' | '&' | '|') && op.len() < 3 {
                        op.push(d);
                        chars.next();
                    } else {
                        break;
                    }
                }
                cur.push(if op == "<" || op == "<>" {
                    Token::In
                } else {
                    Token::Other
                });
            }
            '#' if !in_word => {
                for d in chars.by_ref() {
                    if d == '\n' {
                        break;
                    }
                }
                cmds.push(std::mem::take(&mut cur));
            }
            // An extglob group (`@(a|b)`, `+(x)`, `!(y)`): part of the word.
            '(' if in_word && w.ends_with(['@', '+', '!', '?', '*']) => {
                w.push('(');
                let mut depth = 1u32;
                for d in chars.by_ref() {
                    w.push(d);
                    match d {
                        '(' => depth += 1,
                        ')' => {
                            depth -= 1;
                            if depth == 0 {
                                break;
                            }
                        }
                        _ => {}
                    }
                }
            }
            '\n' | ';' | '&' | '|' | '(' | ')' => {
                end(&mut w, &mut in_word, &mut cur);
                cmds.push(std::mem::take(&mut cur));
            }
            c if c.is_whitespace() => end(&mut w, &mut in_word, &mut cur),
            c => {
                in_word = true;
                w.push(c);
            }
        }
    }
    end(&mut w, &mut in_word, &mut cur);
    cmds.push(cur);
    cmds.retain(|c| !c.is_empty());
    cmds
}
