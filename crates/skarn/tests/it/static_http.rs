//! A tiny static HTTP server for the egress tests: serves files under a
//! directory (a directory's `index.html` for a path ending in `/`),
//! counts every request it receives, so a test can show from outside that
//! a denied request never arrived.
#![allow(dead_code)]

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

pub struct Server {
    pub port: u16,
    hits: Arc<AtomicUsize>,
}

impl Server {
    /// Serve `root` (or a fixed body when `None`) on 127.0.0.1.
    pub fn start(root: Option<PathBuf>) -> Server {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = l.local_addr().unwrap().port();
        let hits = Arc::new(AtomicUsize::new(0));
        let h = hits.clone();
        std::thread::spawn(move || {
            for s in l.incoming().flatten() {
                let (h, root) = (h.clone(), root.clone());
                std::thread::spawn(move || serve(s, &h, root));
            }
        });
        Server { port, hits }
    }

    pub fn hits(&self) -> usize {
        self.hits.load(Ordering::SeqCst)
    }
}

fn serve(mut s: TcpStream, hits: &AtomicUsize, root: Option<PathBuf>) {
    let _ = s.set_read_timeout(Some(Duration::from_secs(10)));
    let mut buf = Vec::new();
    let mut tmp = [0u8; 4096];
    while !buf.windows(4).any(|w| w == b"\r\n\r\n") {
        match s.read(&mut tmp) {
            Ok(0) | Err(_) => return,
            Ok(n) => buf.extend_from_slice(&tmp[..n]),
        }
    }
    hits.fetch_add(1, Ordering::SeqCst);
    let head = String::from_utf8_lossy(&buf).into_owned();
    let path = head.split_whitespace().nth(1).unwrap_or("/").to_string();
    let html = path.ends_with('/') || path.ends_with(".html");
    let body: Option<Vec<u8>> = match &root {
        None => Some(b"hello-egress".to_vec()),
        Some(r) => {
            let rel = path
                .split('?')
                .next()
                .unwrap_or("/")
                .trim_start_matches('/');
            if rel.split('/').any(|c| c == "..") {
                None
            } else {
                let mut p = r.join(rel);
                if p.is_dir() {
                    p = p.join("index.html");
                }
                std::fs::read(p).ok()
            }
        }
    };
    let resp = match body {
        Some(b) => {
            let mut r = format!(
                "HTTP/1.1 200 OK\r\nContent-Type: {}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                if html { "text/html" } else { "application/octet-stream" },
                b.len()
            )
            .into_bytes();
            r.extend_from_slice(&b);
            r
        }
        None => {
            b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n".to_vec()
        }
    };
    let _ = s.write_all(&resp);
}
