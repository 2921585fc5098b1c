//! What a compromised worker (or parent) can send: any bytes on the line
//! protocol. Decoding never panics, never blows the stack, and the line
//! reader keeps to its cap.
#![no_main]

use libfuzzer_sys::fuzz_target;
use skarn_worker::protocol::{FromWorker, HostCall, LineReader, ReadError, ToWorker, decode};
use std::io::{Seek, Write};

fuzz_target!(|data: &[u8]| {
    for line in data.split(|b| *b == b'\n') {
        let _ = decode::<FromWorker>(line);
        let _ = decode::<ToWorker>(line);
        let _ = decode::<HostCall>(line);
        let _ = decode::<serde_json::Value>(line);
    }
    let Ok(mut f) = tempfile::tempfile() else {
        return;
    };
    if f.write_all(data).is_err() || f.rewind().is_err() {
        return;
    }
    let cap = 64;
    let mut r = LineReader::new(f, cap);
    loop {
        match r.read_line(None) {
            Ok(line) => assert!(line.len() <= cap + 64 * 1024),
            Err(ReadError::Oversized { .. } | ReadError::Eof) => break,
            Err(e) => panic!("{e}"),
        }
    }
});
