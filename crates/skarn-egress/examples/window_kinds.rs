//! How long each way of keeping a value's windows takes to build and to
//! search (f27v, atk27u F2, F4): the DFA, the contiguous NFA and the
//! hash tables, for values of several lengths, over 16 MiB of random
//! base64 text (the value's own class: nothing is skipped). Not a test.

fn main() {
    let mut x = 0x9e37_79b9_7f4a_7c15u64;
    let mut rnd = move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    const B64: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut text = |n: usize| -> Vec<u8> { (0..n).map(|_| B64[(rnd() % 62) as usize]).collect() };
    let body = text(16 << 20);
    let sizes: Vec<usize> = std::env::args()
        .skip(1)
        .filter_map(|a| a.parse().ok())
        .collect();
    let sizes = if sizes.is_empty() {
        vec![32, 100, 300, 600, 900, 1300, 4096, 16384]
    } else {
        sizes
    };
    println!("value bytes, kind, build ms, search MB/s");
    for n in sizes {
        let value = String::from_utf8(text(n)).unwrap_or_default();
        for (kind, build, search) in skarn_egress::bench_kind_seconds(&value, &body) {
            let mbs = body.len() as f64 / 1e6 / search.max(1e-9);
            println!("{n}, {kind}, {:.1}, {mbs:.1}", build * 1e3);
        }
    }
}
