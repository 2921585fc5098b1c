//! Native loops of the engine that never poll the interrupt by themselves
//! (iterator helpers and other consumers of built-in iterators, string
//! search, long regexps): each ends at the deadline or with an up-front
//! RangeError, and the built-ins keep their results.
//!
//! Judged from outside: each run goes through `execute_on_current_thread`
//! on a thread of our own (nothing gives up on it early), and a run that
//! has not ended long after its deadline is a failure (the thread was stuck
//! in native code, as it was before the guard).

use std::time::Duration;

use crate::common::{error, limits_ms};
use serde_json::json;
use skarn_codemode::bridge::NoServers;
use skarn_codemode::{
    ErrorKind, ExecOutcome, Limits, execute_on_current_thread, isolate_thread_stack,
};

/// How long past its (2 s) deadline a run may take before it counts as
/// stuck: far above any machine's scheduling delay, far below the hours a
/// native loop of 2^52 steps takes.
const STUCK_AFTER: Duration = Duration::from_secs(120);

fn run_or_stuck(code: &'static str, limits: &Limits) -> ExecOutcome {
    let limits = limits.clone();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::Builder::new()
        .stack_size(isolate_thread_stack(code, &limits))
        .spawn(move || {
            let _ = tx.send(execute_on_current_thread(code, &NoServers, &limits));
        })
        .expect("spawn a thread");
    rx.recv_timeout(STUCK_AFTER)
        .unwrap_or_else(|_| panic!("stuck in native code past the deadline: {code}"))
}

/// Only the deadline can end these (the work is 2^32 steps or more).
const ENDLESS: &[&str] = &[
    "return [].values.call({length: 2 ** 53 - 1}).drop(2 ** 52).next()",
    "return [].keys.call({length: 2 ** 53 - 1}).drop(2 ** 52).next()",
    "const a = []; a.length = 2 ** 32 - 1; return a.values().drop(2 ** 32).next()",
    "const a = []; a.length = 2 ** 32 - 1; return a.entries().drop(2 ** 32).next()",
    "return new Set().union({size: 2 ** 53, has() { return false }, keys() { return [].values.call({length: 2 ** 53 - 1}) }}).size",
    "const a = []; a.length = 2 ** 32 - 1; return new Set().union({size: 2 ** 53, has() { return false }, keys() { return a.keys() }}).size",
    "return new Set([].values.call({length: 2 ** 53 - 1})).size",
    "return [].values.call({length: 2 ** 53 - 1}).map((x) => x).drop(2 ** 52).next()",
    // Quadratic string search (2^23 × 2^22 comparisons).
    "return ('a'.repeat(2 ** 23)).indexOf('a'.repeat(2 ** 22) + 'b')",
    "return ('a'.repeat(2 ** 23)).includes('a'.repeat(2 ** 22) + 'b')",
    "return ('a'.repeat(2 ** 23)).lastIndexOf('a'.repeat(2 ** 22) + 'b')",
    "return ('a'.repeat(2 ** 23)).split('a'.repeat(2 ** 22) + 'b').length",
    "return ('a'.repeat(2 ** 23)).replace('a'.repeat(2 ** 22) + 'b', '').length",
    "return ('a'.repeat(2 ** 23)).replaceAll('a'.repeat(2 ** 22) + 'b', '').length",
    "return ('a'.repeat(2 ** 23)).indexOf({toString() { return 'a'.repeat(2 ** 22) + 'b' }})",
];

/// Regexps too long to be interrupted: a RangeError up front.
const LONG_REGEXPS: &[&str] = &[
    "return new RegExp('a'.repeat(2 ** 20) + 'b').test('a'.repeat(2 ** 22))",
    "return 'a'.repeat(2 ** 22).search('a'.repeat(2 ** 20) + 'b')",
    "return 'a'.repeat(2 ** 22).match('a'.repeat(2 ** 20) + 'b')",
    "return 'a'.repeat(2 ** 22).replace(new RegExp('a'.repeat(2 ** 20) + 'b', 'g'), '')",
];

#[test]
fn native_loops_end_at_the_deadline() {
    let limits = limits_ms(2_000);
    for code in ENDLESS {
        let out = run_or_stuck(code, &limits);
        // Ended by the deadline; a loop that also fills a collection may
        // reach the memory limit first on a fast host. Either way it ended
        // (run_or_stuck fails a run that does not).
        match &out.result {
            Err(e) if matches!(e.kind, ErrorKind::Deadline | ErrorKind::Memory) => {}
            other => panic!("{code:?}: expected the deadline or the memory limit, got {other:?}"),
        }
    }
    for code in LONG_REGEXPS {
        let out = run_or_stuck(code, &limits);
        let e = error(&out, ErrorKind::Runtime, code);
        assert!(e.message.starts_with("RangeError"), "{code}: {e}");
    }
}

#[test]
fn guarded_string_and_iterator_built_ins_keep_their_results() {
    // Over the pair budget, so the windowed search runs; the expected
    // values come from Rust's own search over the same string.
    let s = format!("{}c{}", "ab".repeat(1_000_000), "ab".repeat(10));
    let t = "bab";
    let code = r#"
        const s = 'ab'.repeat(1000000) + 'c' + 'ab'.repeat(10);
        const t = 'bab';
        return [
            s.indexOf(t), s.indexOf(t, 6), s.lastIndexOf(t), s.lastIndexOf(t, 1000),
            s.includes('bca'), s.includes(t, 1999999), s.indexOf('abcab'),
            s.split(t).length, s.split(t, 3), s.replaceAll(t, 'X').length,
            s.replace(t, '[$&|$$|$1]').slice(0, 16), s.replace('abcab', (m, p) => `<${m}@${p}>`).slice(1999996, 2000016),
            s.replaceAll('cab', "$'").length, 'x'.indexOf(''), s.lastIndexOf(''),
            [...'abc'.split('')].join('-'), Array.from(new Set([3, 1, 3])), [...new Map([[1, 2]]).keys()],
            [1, 2, 3, 4].values().drop(2).toArray(), 'a1b2'.match(/\d/g), 'a-b'.replace(/-/, '+'),
        ];
    "#;
    let out = execute_on_current_thread(code, &NoServers, &limits_ms(300_000));
    let v = out.result.expect("runs");
    let rfind_upto = |upto: usize| s[..upto + t.len()].rfind(t).unwrap();
    let split3: Vec<&str> = s.split(t).take(3).collect();
    let cab = s.find("cab").unwrap();
    let replaced = {
        let p = s.find("abcab").unwrap();
        let r = format!("{}<abcab@{p}>{}", &s[..p], &s[p + 5..]);
        r[1999996..2000016].to_owned()
    };
    let want = json!([
        s.find(t).unwrap(),
        s[6..].find(t).unwrap() + 6,
        s.rfind(t).unwrap(),
        rfind_upto(1000),
        true,
        s[1999999..].contains(t),
        s.find("abcab").unwrap(),
        s.split(t).count(),
        split3,
        s.replace(t, "X").len(),
        format!("a[bab|$|$1]{}", &s[4..])[..16].to_owned(),
        replaced,
        s.len() - 3 + (s.len() - cab - 3),
        0,
        s.len(),
        "a-b-c",
        [3, 1],
        [1],
        [3, 4],
        ["1", "2"],
        "a+b",
    ]);
    assert_eq!(v, want);
}

/// The guard's string methods convert their arguments without copying:
/// half a million searches in a 1 MB string stay cheap (a copy per call
/// would be half a terabyte of work).
#[test]
fn repeated_searches_in_a_long_string_do_not_copy_it() {
    let code = "const s = 'ab'.repeat(5e5); let n = 0, i = -1; \
                while ((i = s.indexOf('b', i + 1)) >= 0) n++; return n";
    let out = execute_on_current_thread(code, &NoServers, &limits_ms(300_000));
    assert_eq!(out.result.ok(), Some(json!(500000)));
}
