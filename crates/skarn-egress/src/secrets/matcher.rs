//! Which bound secret a request carries and whether it may go where the
//! request goes.

use zeroize::Zeroizing;

use super::SecretSpec;
use crate::error::PatternError;
use crate::pattern::Pattern;
use crate::rules::Target;

/// A URL path glob: `*` matches any run of characters (`/` included),
/// everything else itself.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PathGlob(String);

impl PathGlob {
    /// A glob; it must start with `/`.
    pub fn parse(s: &str) -> Result<PathGlob, String> {
        if !s.starts_with('/') {
            return Err(format!("path {s:?} must start with '/'"));
        }
        Ok(PathGlob(s.to_string()))
    }

    /// Whether `path` matches.
    pub fn matches(&self, path: &str) -> bool {
        glob(self.0.as_bytes(), path.as_bytes())
    }
}

fn glob(p: &[u8], s: &[u8]) -> bool {
    // Iterative with one back-track point: linear in practice, no recursion.
    let (mut pi, mut si) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while si < s.len() {
        if pi < p.len() && p[pi] == b'*' {
            star = Some((pi, si));
            pi += 1;
        } else if pi < p.len() && p[pi] == s[si] {
            pi += 1;
            si += 1;
        } else if let Some((sp, ss)) = star {
            pi = sp + 1;
            si = ss + 1;
            star = Some((sp, ss + 1));
        } else {
            return false;
        }
    }
    p[pi..].iter().all(|c| *c == b'*')
}

/// A path a server may read differently from the glob: dot segments,
/// encoded dots or slashes, backslashes, matrix parameters, fragments,
/// double or non-standard encodings. Refused where paths are bound. An
/// allow-list (finding F2 of atk27: a deny-list of encodings is never
/// complete): after one percent-decoding the path may hold only
/// unreserved and sub-delimiter characters (not `;`), `:`, `@` and `/`,
/// no `%` and no control or non-ASCII byte; no `.`/`..` segment and no
/// empty segment, before or after decoding.
fn ambiguous_path(path: &str) -> bool {
    let l = path.to_ascii_lowercase();
    if l.contains("%2f") || l.contains("%5c") {
        return true;
    }
    let Some(decoded) = decode_once(path.as_bytes()) else {
        return true;
    };
    let allowed = |c: u8| {
        c.is_ascii_alphanumeric()
            || matches!(
                c,
                b'-' | b'.'
                    | b'_'
                    | b'~'
                    | b'!'
                    | b'$'
                    | b'&'
                    | b'\''
                    | b'('
                    | b')'
                    | b'*'
                    | b'+'
                    | b','
                    | b'='
                    | b':'
                    | b'@'
                    | b'/'
            )
    };
    if !decoded.iter().all(|c| allowed(*c)) {
        return true;
    }
    let bad_segments = |p: &[u8]| {
        p.windows(2).any(|w| w == b"//")
            || p.split(|c| *c == b'/')
                .any(|seg| seg == b"." || seg == b"..")
    };
    bad_segments(path.as_bytes()) || bad_segments(&decoded)
}

/// `p` with each `%XX` decoded once; `None` for a `%` not followed by two
/// hex digits.
fn decode_once(p: &[u8]) -> Option<Vec<u8>> {
    let mut out = Vec::with_capacity(p.len());
    let mut i = 0;
    while i < p.len() {
        if p[i] == b'%' {
            let h = std::str::from_utf8(p.get(i + 1..i + 3)?).ok()?;
            out.push(u8::from_str_radix(h, 16).ok()?);
            i += 3;
        } else {
            out.push(p[i]);
            i += 1;
        }
    }
    Some(out)
}

struct Compiled {
    name: String,
    placeholder: String,
    value: Zeroizing<String>,
    hosts: Vec<Pattern>,
    methods: Vec<String>,
    paths: Vec<PathGlob>,
    header: Option<String>,
}

/// The bound secrets of one run.
#[derive(Default)]
pub struct Bindings {
    list: Vec<Compiled>,
}

/// A placeholder found in a request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Found(pub usize);

impl Bindings {
    /// Compile `specs`.
    pub fn new(specs: &[SecretSpec]) -> Result<Bindings, PatternError> {
        let mut list = Vec::new();
        for s in specs {
            let hosts = s
                .hosts
                .iter()
                .map(|h| Pattern::parse(h))
                .collect::<Result<Vec<_>, _>>()?;
            let paths = s
                .paths
                .iter()
                .map(|p| PathGlob::parse(p).map_err(|w| PatternError::new(p, w)))
                .collect::<Result<Vec<_>, _>>()?;
            if s.placeholder.len() != s.value.len() || s.placeholder.is_empty() {
                return Err(PatternError::new(
                    &s.name,
                    "the placeholder must be as long as the value",
                ));
            }
            list.push(Compiled {
                name: s.name.clone(),
                placeholder: s.placeholder.clone(),
                value: s.value.clone(),
                hosts,
                methods: s.methods.clone(),
                paths,
                header: s.header.clone(),
            });
        }
        Ok(Bindings { list })
    }

    /// Whether there is nothing bound.
    pub fn is_empty(&self) -> bool {
        self.list.is_empty()
    }

    /// The name of secret `f`.
    pub fn name(&self, f: Found) -> &str {
        &self.list[f.0].name
    }

    /// Whether some secret is bound to `t:port` (its connections are
    /// then terminated by the proxy).
    pub fn binds(&self, t: &Target, port: u16) -> bool {
        self.list.iter().any(|c| host_matches(&c.hosts, t, port))
    }

    /// The exact host names secrets are bound to on `port` (patterns of
    /// subdomains and address ranges left out): what an address-only
    /// tunnel request is compared with once they are resolved.
    pub fn exact_names(&self, port: u16) -> Vec<String> {
        let mut v: Vec<String> = self
            .list
            .iter()
            .flat_map(|c| c.hosts.iter())
            .filter(|p| p.ports.allows(port))
            .filter_map(|p| match &p.host {
                crate::pattern::HostMatch::Exact(n) => Some(n.clone()),
                _ => None,
            })
            .collect();
        v.sort();
        v.dedup();
        v
    }

    /// The secrets whose placeholder occurs in `bytes`.
    pub fn find(&self, bytes: &[u8]) -> Vec<Found> {
        (0..self.list.len())
            .filter(|i| contains(bytes, self.list[*i].placeholder.as_bytes()))
            .map(Found)
            .collect()
    }

    /// Whether secret `f` may go to `t:port` with `method` to `path` in
    /// header `header`; the reason when not.
    pub fn may_send(
        &self,
        f: Found,
        t: &Target,
        port: u16,
        method: &str,
        path: &str,
        header: &str,
    ) -> Result<(), String> {
        let c = &self.list[f.0];
        if !host_matches(&c.hosts, t, port) {
            return Err(format!("not bound to {t}:{port}"));
        }
        if !c.methods.is_empty() && !c.methods.iter().any(|m| m == method) {
            return Err(format!("method {method} is not bound"));
        }
        if !c.paths.is_empty() {
            let p = path.split('?').next().unwrap_or("");
            if ambiguous_path(p) {
                return Err(
                    "the path is not plain (dot segments, encodings or characters a server may read differently)".into(),
                );
            }
            if !c.paths.iter().any(|g| g.matches(p)) {
                return Err("the path is not bound".into());
            }
        }
        if let Some(h) = &c.header
            && !h.eq_ignore_ascii_case(header)
        {
            return Err(format!("only header {h} may carry it"));
        }
        Ok(())
    }

    /// Whether secret `f` is bound to methods or paths (requests that
    /// carry it may then not name another method or path in a header
    /// or query parameter some frameworks honour).
    pub fn binds_route(&self, f: Found) -> bool {
        let c = &self.list[f.0];
        !c.methods.is_empty() || !c.paths.is_empty()
    }

    /// `text` with every placeholder of `found` replaced by its value.
    pub fn substitute(&self, text: &[u8], found: &[Found]) -> Zeroizing<Vec<u8>> {
        let mut out = Zeroizing::new(text.to_vec());
        for f in found {
            let c = &self.list[f.0];
            replace_same_len(&mut out, c.placeholder.as_bytes(), c.value.as_bytes());
        }
        out
    }

    /// (value, placeholder) pairs, for scrubbing responses.
    pub fn echo_pairs(&self) -> Vec<(Zeroizing<Vec<u8>>, Vec<u8>)> {
        self.list
            .iter()
            .map(|c| {
                (
                    Zeroizing::new(c.value.as_bytes().to_vec()),
                    c.placeholder.as_bytes().to_vec(),
                )
            })
            .collect()
    }
}

fn host_matches(hosts: &[Pattern], t: &Target, port: u16) -> bool {
    hosts.iter().any(|p| {
        p.ports.allows(port)
            && match t {
                Target::Name(n) => p.names(n),
                Target::Ip(ip) => p.contains(*ip),
            }
    })
}

/// Whether `needle` occurs in `hay`.
pub(crate) fn contains(hay: &[u8], needle: &[u8]) -> bool {
    !needle.is_empty()
        && hay.len() >= needle.len()
        && hay
            .iter()
            .enumerate()
            .take(hay.len() - needle.len() + 1)
            .any(|(i, b)| *b == needle[0] && hay[i..].starts_with(needle))
}

/// Replace every `from` in `buf` by `to` (same length), in place.
pub(crate) fn replace_same_len(buf: &mut [u8], from: &[u8], to: &[u8]) {
    debug_assert_eq!(from.len(), to.len());
    if from.is_empty() || from.len() != to.len() || buf.len() < from.len() {
        return;
    }
    let (first, n) = (from[0], from.len());
    let mut i = 0;
    while i + n <= buf.len() {
        // Skip to the next candidate by its first byte (a tight loop the
        // compiler vectorises), then compare the rest.
        match buf[i..=buf.len() - n].iter().position(|b| *b == first) {
            None => return,
            Some(k) => i += k,
        }
        if &buf[i..i + n] == from {
            buf[i..i + n].copy_from_slice(to);
            i += n;
        } else {
            i += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(hosts: &[&str], methods: &[&str], paths: &[&str]) -> SecretSpec {
        SecretSpec {
            name: "gh".into(),
            env: "GH".into(),
            placeholder: "PPPPPPPPPP".into(),
            value: Zeroizing::new("real-value".into()),
            hosts: hosts.iter().map(|s| s.to_string()).collect(),
            methods: methods.iter().map(|s| s.to_string()).collect(),
            paths: paths.iter().map(|s| s.to_string()).collect(),
            header: None,
        }
    }

    #[test]
    fn globs() {
        let g = PathGlob::parse("/repos/me/*").unwrap();
        assert!(g.matches("/repos/me/x"));
        assert!(g.matches("/repos/me/x/y"));
        assert!(!g.matches("/repos/other/x"));
        assert!(PathGlob::parse("/a*b*c").unwrap().matches("/aXbYc"));
        assert!(!PathGlob::parse("/a*b*c").unwrap().matches("/aXbY"));
        assert!(PathGlob::parse("x").is_err());
    }

    #[test]
    fn host_method_and_path_must_all_match() {
        let b = Bindings::new(&[spec(&["api.test:8443"], &["GET"], &["/repos/me/*"])]).unwrap();
        let t = Target::parse("api.test").unwrap();
        let other = Target::parse("evil.test").unwrap();
        let f = Found(0);
        assert!(
            b.may_send(f, &t, 8443, "GET", "/repos/me/x?y", "auth")
                .is_ok()
        );
        for p in [
            "/repos/me/x.y/z-1_2~3",
            "/repos/me/@scope+x:y",
            "/repos/me/%41",
        ] {
            assert!(b.may_send(f, &t, 8443, "GET", p, "auth").is_ok(), "{p}");
        }
        assert!(
            b.may_send(f, &t, 443, "GET", "/repos/me/x", "auth")
                .is_err()
        );
        assert!(
            b.may_send(f, &other, 8443, "GET", "/repos/me/x", "auth")
                .is_err()
        );
        assert!(
            b.may_send(f, &t, 8443, "POST", "/repos/me/x", "auth")
                .is_err()
        );
        assert!(
            b.may_send(f, &t, 8443, "GET", "/repos/you/x", "auth")
                .is_err()
        );
        for p in [
            "/repos/me/../you",
            "/repos/me/%2e%2e/you",
            "/repos/me/x%2fy",
            "/repos/me//x",
            // Finding F2 (atk27) and its addendum.
            "/repos/me/..;/you",
            "/repos/me/x#/../../you",
            "/repos/me/%252e%252e/you",
            "/repos/me/%u002e%u002e/you",
            "/repos/me/%c0%ae%c0%ae/you",
            "/repos/me/..%3B/you",
            "/repos/me/..%00/you",
            "/repos/me/%2%65%2%65/you",
            "/repos/me/x/..%09/you",
            "/repos/me/x\\..\\you",
            "/repos/me/x%",
        ] {
            assert!(b.may_send(f, &t, 8443, "GET", p, "auth").is_err(), "{p}");
        }
    }

    #[test]
    fn substitution_and_lengths() {
        let b = Bindings::new(&[spec(&["api.test"], &[], &[])]).unwrap();
        let hv = b"Bearer PPPPPPPPPP";
        let found = b.find(hv);
        assert_eq!(found, vec![Found(0)]);
        assert_eq!(&b.substitute(hv, &found)[..], b"Bearer real-value");
        let mut bad = spec(&["api.test"], &[], &[]);
        bad.placeholder = "short".into();
        assert!(Bindings::new(&[bad]).is_err());
    }
}
