//! A trusted line read as the shell reads it (attack atk24u F1): its
//! commands (`;`, `&&`, `||`, `&`, new lines), each command's pipeline
//! stages (`|`), each stage's words with quotes removed, and the files
//! its standard input is redirected from (`sh < .ci.sh`). Output
//! redirections and here-strings are dropped (no file is read to run).
//! This is no shell: `$(...)` and backquotes stay inside their word (the
//! judge refuses a program or script they name).

/// One stage of a pipeline.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Stage {
    /// Its words, quotes removed.
    pub words: Vec<String>,
    /// The files its standard input is redirected from (`< x`).
    pub stdin: Vec<String>,
}

/// What the next word is.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Next {
    Word,
    Stdin,
    Dropped,
}

/// The pipelines of `line`, each a list of stages.
pub fn pipelines(line: &str) -> Vec<Vec<Stage>> {
    let mut p = Parser::default();
    let c: Vec<char> = line.chars().take(1 << 20).collect();
    let mut i = 0;
    while i < c.len() {
        let ch = c[i];
        match ch {
            '\'' => {
                p.started = true;
                i += 1;
                while i < c.len() && c[i] != '\'' {
                    p.word.push(c[i]);
                    i += 1;
                }
            }
            '"' => {
                p.started = true;
                i += 1;
                while i < c.len() && c[i] != '"' {
                    if c[i] == '\\' && i + 1 < c.len() && matches!(c[i + 1], '"' | '\\' | '$' | '`')
                    {
                        i += 1;
                    }
                    p.word.push(c[i]);
                    i += 1;
                }
            }
            '\\' if c.get(i + 1) == Some(&'\n') => i += 1,
            '\\' => {
                p.started = true;
                if let Some(n) = c.get(i + 1) {
                    p.word.push(*n);
                    i += 1;
                }
            }
            '$' if c.get(i + 1) == Some(&'(') => {
                // `$(...)` kept whole in its word.
                p.started = true;
                let mut depth = 0usize;
                while i < c.len() {
                    p.word.push(c[i]);
                    match c[i] {
                        '(' => depth += 1,
                        ')' => {
                            depth -= 1;
                            if depth == 0 {
                                break;
                            }
                        }
                        _ => {}
                    }
                    i += 1;
                }
            }
            '`' => {
                p.started = true;
                p.word.push('`');
                i += 1;
                while i < c.len() && c[i] != '`' {
                    p.word.push(c[i]);
                    i += 1;
                }
                p.word.push('`');
            }
            '#' if !p.started => {
                while i < c.len() && c[i] != '\n' {
                    i += 1;
                }
                continue;
            }
            ' ' | '\t' => p.end_word(),
            '\n' | ';' | '&' => {
                p.end_word();
                // `>&2`, `2>&1` are redirections (taken below).
                p.end_pipeline();
                if ch == '&' && c.get(i + 1) == Some(&'&') {
                    i += 1;
                }
            }
            '|' => {
                p.end_word();
                if c.get(i + 1) == Some(&'|') {
                    p.end_pipeline();
                    i += 1;
                } else {
                    p.end_stage();
                    if c.get(i + 1) == Some(&'&') {
                        i += 1;
                    }
                }
            }
            '(' | ')' => p.end_word(),
            '{' | '}' if !p.started => p.end_word(),
            '<' | '>' => {
                // A descriptor number before it is no word (`2>`).
                if p.word.chars().all(|d| d.is_ascii_digit()) {
                    p.word.clear();
                    p.started = false;
                }
                p.end_word();
                let mut next = if ch == '<' {
                    Next::Stdin
                } else {
                    Next::Dropped
                };
                while matches!(c.get(i + 1), Some('<' | '>' | '&' | '|' | '-')) {
                    // `<<` here-document, `<<<` here-string, `<>`, `>>`,
                    // `>&`, `>|`: their operand is no script file.
                    next = Next::Dropped;
                    i += 1;
                }
                p.next = Some(next);
            }
            _ => {
                p.started = true;
                p.word.push(ch);
            }
        }
        i += 1;
    }
    p.end_pipeline();
    p.out
}

/// `line` with the variables the client sets to the project's directory
/// (and `$HOME`) replaced by their value, so the files they lead to are
/// read like any other.
pub fn project_vars(line: &str, dir: &std::path::Path) -> String {
    let mut out = line.to_string();
    let home = std::env::var("HOME").ok().filter(|h| h.starts_with('/'));
    let dir = dir.to_string_lossy();
    for (v, val) in [
        ("CLAUDE_PROJECT_DIR", Some(dir.as_ref())),
        ("GEMINI_PROJECT_DIR", Some(dir.as_ref())),
        ("CURSOR_PROJECT_DIR", Some(dir.as_ref())),
        ("HOME", home.as_deref()),
    ] {
        let Some(val) = val else { continue };
        out = out.replace(&format!("${{{v}}}"), val);
        // `$VAR` not followed by more of a name.
        let pat = format!("${v}");
        let mut s = String::new();
        let mut rest = out.as_str();
        while let Some(i) = rest.find(&pat) {
            let after = &rest[i + pat.len()..];
            s.push_str(&rest[..i]);
            if after.starts_with(|c: char| c.is_ascii_alphanumeric() || c == '_') {
                s.push_str(&pat);
            } else {
                s.push_str(val);
            }
            rest = after;
        }
        s.push_str(rest);
        out = s;
    }
    out
}

/// Where the program of `words` starts, after assignments and wrappers
/// (`exec`, `env -i`, `nice -n 5`, `time -p`, make's `@`/`-`/`+`); an
/// error when a wrapper's option hides it (`env -S`, `env -C`).
pub fn program_start(words: &[String]) -> Result<usize, String> {
    let mut i = 0;
    while i < words.len()
        && (words[i].contains('=') && !words[i].starts_with('-')
            || matches!(
                words[i].as_str(),
                "exec"
                    | "command"
                    | "time"
                    | "nice"
                    | "nohup"
                    | "env"
                    | "timeout"
                    | "stdbuf"
                    | "setsid"
                    | "@"
                    | "-"
                    | "+"
            ))
    {
        i += 1;
        let w = words[i - 1].as_str();
        let wrapper = matches!(
            w,
            "env" | "nice" | "time" | "exec" | "timeout" | "stdbuf" | "setsid"
        );
        while wrapper && i < words.len() && words[i].starts_with('-') {
            let value = matches!(words[i].as_str(), "-u" | "-n" | "-a" | "-s" | "-k");
            if matches!(
                words[i].as_str(),
                "-C" | "-S" | "--chdir" | "--split-string"
            ) || words[i].starts_with("--chdir=")
                || words[i].starts_with("--split-string=")
            {
                return Err(format!(
                    "skarn cannot tell which file `{}` runs (`{} {}`)",
                    words.join(" "),
                    words[i - 1],
                    words[i]
                ));
            }
            i += 1 + usize::from(value);
        }
        // `timeout`'s duration.
        if w == "timeout" && i < words.len() {
            i += 1;
        }
    }
    Ok(i.min(words.len()))
}

#[derive(Default)]
struct Parser {
    word: String,
    started: bool,
    next: Option<Next>,
    stage: Stage,
    pipeline: Vec<Stage>,
    out: Vec<Vec<Stage>>,
}

impl Parser {
    fn end_word(&mut self) {
        if !self.started {
            return;
        }
        let w = std::mem::take(&mut self.word);
        self.started = false;
        match self.next.take().unwrap_or(Next::Word) {
            Next::Word => self.stage.words.push(w),
            Next::Stdin => self.stage.stdin.push(w),
            Next::Dropped => {}
        }
    }

    fn end_stage(&mut self) {
        self.end_word();
        let s = std::mem::take(&mut self.stage);
        if !s.words.is_empty() || !s.stdin.is_empty() {
            self.pipeline.push(s);
        }
    }

    fn end_pipeline(&mut self) {
        self.end_stage();
        if !self.pipeline.is_empty() {
            self.out.push(std::mem::take(&mut self.pipeline));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(line: &str) -> Vec<Vec<(Vec<String>, Vec<String>)>> {
        pipelines(line)
            .into_iter()
            .map(|p| p.into_iter().map(|s| (s.words, s.stdin)).collect())
            .collect()
    }

    #[test]
    fn commands_stages_and_redirections() {
        let s = |v: &[&str]| v.iter().map(|x| x.to_string()).collect::<Vec<_>>();
        assert_eq!(
            words("sh < .c3.sh 2>&1 >out"),
            [[(s(&["sh"]), s(&[".c3.sh"]))]]
        );
        assert_eq!(
            words("cat .c5.sh | sh && echo 'a b'"),
            vec![
                vec![(s(&["cat", ".c5.sh"]), s(&[])), (s(&["sh"]), s(&[]))],
                vec![(s(&["echo", "a b"]), s(&[]))]
            ]
        );
        assert_eq!(
            words("bash -c \"sh .x\" <<<text; (cd a) # c"),
            vec![
                vec![(s(&["bash", "-c", "sh .x"]), s(&[]))],
                vec![(s(&["cd", "a"]), s(&[]))]
            ]
        );
        assert_eq!(words("echo $(cat x) `y z`")[0][0].0.len(), 3);
    }
}
