use skarn_codemode::bridge::NoServers;
use skarn_codemode::{Limits, abandoned_threads, execute};
use std::sync::Arc;
use std::time::{Duration, Instant};
fn main() {
    let limits = Limits {
        deadline: Duration::from_millis(1000),
        ..Limits::default()
    };
    for code in std::io::stdin().lines().map_while(Result::ok) {
        if code.trim().is_empty() {
            continue;
        }
        let t = Instant::now();
        let out = execute(&code, Arc::new(NoServers), &limits);
        let r = match &out.result {
            Ok(v) => format!("ok {}", v.to_string().chars().take(60).collect::<String>()),
            Err(e) => format!(
                "err {:?} {}",
                e.kind,
                e.message.chars().take(100).collect::<String>()
            ),
        };
        println!(
            "{:>6}ms ab={} | {} | {}",
            t.elapsed().as_millis(),
            abandoned_threads(),
            code,
            r
        );
    }
}
