//! The compressor's profiles on arbitrary command output: the first line
//! is the command line (which picks the profile), the rest the output.
#![no_main]

use libfuzzer_sys::fuzz_target;
use skarn_compress::Compressor;
use std::sync::OnceLock;

static C: OnceLock<Compressor> = OnceLock::new();

// Compiling the built-in rules' patterns once, outside the timed runs.
fuzz_target!(init: { C.get_or_init(Compressor::builtin); }, |data: &[u8]| {
    let c = C.get_or_init(Compressor::builtin);
    let (cmd, raw) = match data.iter().position(|b| *b == b'\n') {
        Some(i) => (&data[..i], &data[i + 1..]),
        None => (&b"cargo test"[..], data),
    };
    let cmd = String::from_utf8_lossy(cmd);
    let exit = raw.first().map(|b| i32::from(*b) - 1);
    let out = c.compress(raw, &cmd, exit);
    assert!(out.kept_lines <= out.raw_lines.max(1) + 8, "{} > {}", out.kept_lines, out.raw_lines);
});
