//! What `skarn run` says on stderr, shaped for whoever reads it.

/// `skarn: LINE` on stderr; a model reads it when the hook or the
/// gateway started this run, and then gets the fact without the advice to
/// widen ([`skarn_sandbox::report::advice`]).
pub fn say(line: &str) {
    eprintln!("skarn: {}", for_reader(line));
}

/// `text` as whoever started this process may read it (see [`say`]).
pub fn for_reader(text: &str) -> String {
    let caller = skarn_sandbox::report::denials::Caller::detect(|k| std::env::var(k).ok());
    skarn_sandbox::report::advice::for_caller(text, caller)
}
