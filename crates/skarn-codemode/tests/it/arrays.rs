//! The array guard: generic Array built-ins over huge array-likes end (a
//! RangeError or TypeError up front, or the deadline), and no isolate thread is left
//! running afterwards, checked from outside the engine through /proc.
//!
//! No outcome here depends on the machine's speed: what must end by itself
//! gets a deadline far above its work, and what only the deadline can end
//! runs where nothing gives up on it early (see `run_to_its_end`).

use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::common::{error, limits_ms, value};
use serde_json::json;
use skarn_codemode::bridge::NoServers;
use skarn_codemode::{
    ErrorKind, ExecOutcome, Limits, abandoned_threads, execute, execute_on_current_thread,
    isolate_thread_stack,
};

/// Threads of this process named like the isolate thread.
fn isolate_threads() -> usize {
    std::fs::read_dir("/proc/self/task")
        .map(|d| {
            d.filter_map(Result::ok)
                .filter(|t| {
                    std::fs::read_to_string(t.path().join("comm"))
                        .map(|c| c.trim() == "skarn-codemode")
                        .unwrap_or(false)
                })
                .count()
        })
        .unwrap_or(0)
}

/// Waits (generously) until no isolate thread is left.
fn no_isolate_thread_left() -> bool {
    let until = Instant::now() + Duration::from_secs(30);
    while Instant::now() < until {
        if isolate_threads() == 0 && abandoned_threads() == 0 {
            return true;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    false
}

/// Deadline for scripts that must end by themselves: far above the work
/// (the slowest takes about a second on an idle machine), so only the
/// guard, never the machine's load, decides how they end.
const UNHURRIED_MS: u64 = 300_000;

/// Walks over more elements than the memory limit could hold: each ends
/// with a RangeError, up front or once a copy grows past the bound, whatever
/// the deadline.
const OVER_THE_BOUND: &[&str] = &[
    r#"return [].join.call({length: 2 ** 53 - 1}, "")"#,
    r#"return [].reverse.call({length: 2 ** 53 - 1})"#,
    r#"return [].copyWithin.call({length: 2 ** 53 - 1}, 0, 1)"#,
    r#"return [].splice.call({length: 2 ** 53 - 1}, 0, 1)"#,
    r#"return [].sort.call({length: 2 ** 53 - 1})"#,
    r#"return [].toLocaleString.call({length: 2 ** 53 - 1})"#,
    r#"return [].fill.call({length: 2 ** 53 - 1}, 1)"#,
    r#"return [].unshift.call({length: 2 ** 53 - 2}, 1)"#,
    r#"return [].slice.call({length: 2 ** 32 - 1}, 0)"#,
    r#"return [].toReversed.call({length: 2 ** 32 - 1})"#,
    r#"const a = []; a.length = 2 ** 32 - 1; return a.join("")"#,
    r#"const a = []; a.length = 2 ** 32 - 1; return a.reverse().length"#,
    r#"const a = []; a.length = 2 ** 32 - 1; return String(a).length"#,
    // A getter run while concat copies one array lengthens the next one.
    r#"const a = [1]; const later = [2]; Object.defineProperty(a, 0, {get() { later.length = 2 ** 32 - 1; return 1 }}); return [].concat(a, later).length"#,
    r#"const a = [1]; const l = [2]; Object.defineProperty(a, 0, {get() { l.length = 3e6; return 1 }}); return [].concat(a, l, l, l).length"#,
];

/// A getter run while concat copies swaps the species for one that hands
/// back an array it keeps: a TypeError.
const SPECIES_SWAP: &str = r#"const kept = []; const a = [1]; const b = [2]; Object.defineProperty(a, 0, {get() { const k = "con" + ["str", "uctor"].join(""); b[k] = {[Symbol.species]: function () { return kept }}; return 1 }}); Object.defineProperty(Object.getPrototypeOf([]), 0, {get() { kept.length = 2 ** 32 - 1 }, configurable: true}); return [].concat(a, b, [,]).length"#;

/// The length grows between the guard's read and the built-in's: the guard
/// froze the length it checked, so the built-in sees 10 and returns.
const GROWING_LENGTH: &str = r#"let n = 0; const o = {get length() { return n++ ? 2 ** 32 - 1 : 10 }}; return [].reverse.call(o)"#;

/// Walks within no bound the guard can check up front: they run as
/// interruptible script loops, so only the deadline ends them (the work is
/// far more than any machine does before it).
const ENDLESS: &[&str] = &[
    r#"return [].flat.call({length: 2 ** 53 - 1})"#,
    r#"return [].lastIndexOf.call({length: 2 ** 53 - 1}, 1)"#,
    r#"return [].includes.call({length: 2 ** 53 - 1}, 1)"#,
    r#"return [].indexOf.call({length: 2 ** 53 - 1}, 1)"#,
    r#"return [].concat({length: 2 ** 53 - 2, [Symbol.isConcatSpreadable]: true})"#,
    // Nested holes: each inner array is within the bound, their product is not.
    r#"const big = []; big.length = 4e6; const arr = []; for (let i = 0; i < 1000; i++) arr.push(big); return arr.flat().length"#,
    r#"const big = []; big.length = 4e6; const arr = []; for (let i = 0; i < 1000; i++) arr.push(big); return [].concat(...arr).length"#,
];

/// A proxy whose length is just within the bound: the walk passes through
/// its traps (interruptible) and either finishes (an empty string) or is
/// ended by the deadline, depending only on the machine's speed.
const LONG_PROXY_WALK: &str = r#"const p = new Proxy([], {get(t, k) { return k === "length" ? 4e6 : undefined }}); return [].join.call(p, "")"#;

/// Run `code` on a thread of our own through `execute_on_current_thread`:
/// no caller gives up on it after a grace period, so however loaded the
/// machine, the run ends exactly as the engine ends it.
fn run_to_its_end(code: &'static str, limits: &Limits) -> ExecOutcome {
    let limits = limits.clone();
    std::thread::Builder::new()
        .stack_size(isolate_thread_stack(code, &limits))
        .spawn(move || execute_on_current_thread(code, &NoServers, &limits))
        .expect("spawn a thread")
        .join()
        .expect("the run does not panic")
}

#[test]
fn generic_array_loops_on_huge_array_likes_end() {
    let limits = limits_ms(UNHURRIED_MS);
    for code in OVER_THE_BOUND {
        let out = execute(code, Arc::new(NoServers), &limits);
        let e = error(&out, ErrorKind::Runtime, code);
        assert!(e.message.starts_with("RangeError"), "{code}: {e}");
    }
    let out = execute(SPECIES_SWAP, Arc::new(NoServers), &limits);
    let e = error(&out, ErrorKind::Runtime, SPECIES_SWAP);
    assert!(e.message.starts_with("TypeError"), "{e}");
    let out = execute(GROWING_LENGTH, Arc::new(NoServers), &limits);
    // JSON reads the length again, past the frozen first read.
    assert_eq!(
        out.result,
        Ok(json!({"length": 4294967295u64})),
        "{GROWING_LENGTH}"
    );
    // Every isolate thread `execute` started has stopped.
    assert!(
        no_isolate_thread_left(),
        "{} isolate threads still running, {} abandoned",
        isolate_threads(),
        abandoned_threads()
    );

    let limits = limits_ms(2_000);
    for code in ENDLESS {
        let out = run_to_its_end(code, &limits);
        error(&out, ErrorKind::Deadline, code);
    }
    let out = run_to_its_end(LONG_PROXY_WALK, &limits);
    match &out.result {
        Ok(v) => assert_eq!(v, &json!(""), "{LONG_PROXY_WALK}"),
        Err(e) => assert_eq!(e.kind, ErrorKind::Deadline, "{LONG_PROXY_WALK}: {e}"),
    }
}

#[test]
fn the_refusal_is_catchable_and_names_the_bound() {
    let v = value(
        r#"try { [].join.call({length: 2 ** 53 - 1}) } catch (e) { return [e.name, e.message] }"#,
    );
    assert_eq!(v[0], json!("RangeError"));
    assert!(v[1].as_str().unwrap().contains("memory limit"), "{v}");
    // A smaller memory limit gives a smaller bound.
    let small = skarn_codemode::Limits {
        memory_bytes: 2 << 20,
        ..limits_ms(UNHURRIED_MS)
    };
    let out = execute(
        "const a = []; a.length = 200000; return a.join('').length",
        Arc::new(NoServers),
        &small,
    );
    error(&out, ErrorKind::Runtime, "join over the small bound");
}

#[test]
fn guarded_built_ins_keep_their_behaviour() {
    let cases: &[(&str, serde_json::Value)] = &[
        ("return [3, 1, 10, 2].sort()", json!([1, 10, 2, 3])),
        ("return [3, 1, 2].sort((a, b) => b - a)", json!([3, 2, 1])),
        ("return [1, [2, [3, [4]]]].flat()", json!([1, 2, [3, [4]]])),
        (
            "return [1, [2, [3, [4]]]].flat(Infinity)",
            json!([1, 2, 3, 4]),
        ),
        (
            "return [1, 2].flatMap((x) => [x, x * 10])",
            json!([1, 10, 2, 20]),
        ),
        ("return [1, , 3].flat().length", json!(2)),
        (
            "return [1].concat(2, [3, [4]], {a: 1})",
            json!([1, 2, 3, [4], {"a": 1}]),
        ),
        (
            "const c = [1, , 3].concat([, 5]); return [c.length, 1 in c, 3 in c]",
            json!([5, false, false]),
        ),
        (
            "return [].concat({length: 2, 0: 'a', 1: 'b', [Symbol.isConcatSpreadable]: true})",
            json!(["a", "b"]),
        ),
        (
            "return [].join.call({length: 3, 0: 'a', 2: 'c'}, '-')",
            json!("a--c"),
        ),
        (
            "const o = {length: 2, 0: 1, 1: 2}; return [[].reverse.call(o) === o, o[0]]",
            json!([true, 2]),
        ),
        ("return [1, 2, 3].reverse().join()", json!("3,2,1")),
        ("return [1, 2, 3, 4].splice(1, 2)", json!([2, 3])),
        (
            "return [1, 2, 3].toSorted((a, b) => b - a)",
            json!([3, 2, 1]),
        ),
        ("return [1, 2, 3].with(0, 9)", json!([9, 2, 3])),
        (
            "return [[].join.length, [].sort.name, [].concat.length, [].flat.length, [].flatMap.length]",
            json!([1, "sort", 1, 0, 1]),
        ),
        (
            "return Object.keys(Object.getOwnPropertyDescriptors(Object.getPrototypeOf([]))).includes('join')",
            json!(true),
        ),
        (
            "return Object.getOwnPropertyDescriptor(Object.getPrototypeOf([]), 'join').enumerable",
            json!(false),
        ),
        (
            "class A extends Array {}; const a = A.from([1, [2]]); return [a.flat() instanceof A, a.concat([3]) instanceof A]",
            json!([true, true]),
        ),
        ("return String([1, [2, 3]])", json!("1,2,3")),
        (
            "const a = []; for (let i = 0; i < 100000; i++) a.push(100000 - i); a.sort(); return [a[0], a[99999]]",
            json!([1, 99999]),
        ),
    ];
    // The last case sorts 100 000 numbers through the script comparator:
    // about a second and a half on an idle machine, so it gets all the time
    // it needs.
    let limits = limits_ms(UNHURRIED_MS);
    for (code, want) in cases {
        let out = execute(code, Arc::new(NoServers), &limits);
        assert_eq!(
            out.result.as_ref().ok(),
            Some(want),
            "{code}: {:?}",
            out.result
        );
    }
}
