//! Where the Go toolchain keeps its module and build caches, found as `go`
//! finds them: its environment variables first, then the settings file
//! `go env -w` writes (`$GOENV`, else `$XDG_CONFIG_HOME/go/env`, else
//! `~/.config/go/env`), then go's defaults (`GOPATH` = `~/go`,
//! `GOMODCACHE` = `$GOPATH/pkg/mod`, `GOCACHE` = the user cache directory's
//! `go-build`). Read without running `go`: a host `go` started in a
//! workspace could read its `go.mod` and switch toolchains.

use std::path::{Path, PathBuf};

/// Most bytes of the settings file read (go's own file is a few lines).
const MAX_ENV_FILE: u64 = 64 * 1024;

/// The Go directories a preset grants.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct GoDirs {
    /// `$GOPATH/bin` (where `go install` puts programs).
    pub bin: PathBuf,
    /// The module cache (`GOMODCACHE`).
    pub mod_cache: PathBuf,
    /// The build cache (`GOCACHE`).
    pub build_cache: PathBuf,
    /// `GOROOT`, when the caller or the settings file names one.
    pub root: Option<PathBuf>,
}

/// Go's directories for a user whose home is `home`, with the caller's
/// environment read through `var`.
pub(crate) fn go_dirs(home: &Path, var: &dyn Fn(&str) -> Option<String>) -> GoDirs {
    let file = settings_file(home, var)
        .map(|p| read_settings(&p))
        .unwrap_or_default();
    // An environment variable wins over the file; an empty value or a
    // relative path is ignored, as go ignores it.
    let get = |k: &str| -> Option<PathBuf> {
        let v = var(k)
            .filter(|v| !v.is_empty())
            .or_else(|| file.iter().find(|(n, _)| n == k).map(|(_, v)| v.clone()))?;
        Some(PathBuf::from(v)).filter(|p| p.is_absolute())
    };
    let gopath = var("GOPATH")
        .filter(|v| !v.is_empty())
        .or_else(|| {
            file.iter()
                .find(|(n, _)| n == "GOPATH")
                .map(|(_, v)| v.clone())
        })
        .and_then(|v| {
            // The first entry of the list is where go writes.
            v.split(':')
                .next()
                .map(PathBuf::from)
                .filter(|p| p.is_absolute())
        })
        .unwrap_or_else(|| home.join("go"));
    let cache_home = var("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .filter(|p| p.is_absolute())
        .unwrap_or_else(|| home.join(".cache"));
    GoDirs {
        bin: get("GOBIN").unwrap_or_else(|| gopath.join("bin")),
        mod_cache: get("GOMODCACHE").unwrap_or_else(|| gopath.join("pkg/mod")),
        build_cache: get("GOCACHE")
            .filter(|p| p != Path::new("off"))
            .unwrap_or_else(|| cache_home.join("go-build")),
        root: get("GOROOT"),
    }
}

impl GoDirs {
    /// These directories with each that the caller's variables or the
    /// settings file moved away from go's defaults under `home` kept only
    /// when it is what it claims ([`super::toolchain_env`]); else the
    /// default.
    pub(crate) fn vetted(self, home: &Path) -> GoDirs {
        use super::toolchain_env::{Shape, vetted};
        let def = GoDirs {
            bin: home.join("go/bin"),
            mod_cache: home.join("go/pkg/mod"),
            build_cache: home.join(".cache/go-build"),
            root: None,
        };
        let pick = |v: PathBuf, d: PathBuf, s: Shape| {
            if v == d {
                v
            } else {
                vetted(&v, s, home).unwrap_or(d)
            }
        };
        GoDirs {
            bin: pick(self.bin, def.bin, Shape::Bin),
            mod_cache: pick(self.mod_cache, def.mod_cache, Shape::GoModCache),
            build_cache: pick(self.build_cache, def.build_cache, Shape::GoBuildCache),
            root: self.root.and_then(|r| vetted(&r, Shape::GoRoot, home)),
        }
    }
}

/// The settings file go reads, or `None` when `GOENV=off`.
pub(crate) fn settings_file(home: &Path, var: &dyn Fn(&str) -> Option<String>) -> Option<PathBuf> {
    match var("GOENV") {
        Some(v) if v == "off" => None,
        Some(v) if Path::new(&v).is_absolute() => Some(PathBuf::from(v)),
        _ => Some(
            var("XDG_CONFIG_HOME")
                .map(PathBuf::from)
                .filter(|p| p.is_absolute())
                .unwrap_or_else(|| home.join(".config"))
                .join("go/env"),
        ),
    }
}

/// `KEY=VALUE` lines of go's settings file (go writes them unquoted; other
/// lines are skipped, as go skips them).
fn read_settings(path: &Path) -> Vec<(String, String)> {
    use std::io::Read;
    let Ok(f) = std::fs::File::open(path) else {
        return Vec::new();
    };
    let mut text = String::new();
    if f.take(MAX_ENV_FILE).read_to_string(&mut text).is_err() {
        return Vec::new();
    }
    parse_settings(&text)
}

fn parse_settings(text: &str) -> Vec<(String, String)> {
    text.lines()
        .filter_map(|l| {
            let (k, v) = l.split_once('=')?;
            let k = k.trim();
            (!k.is_empty() && k.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_'))
                .then(|| (k.to_string(), v.to_string()))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(pairs: &'static [(&'static str, &'static str)]) -> impl Fn(&str) -> Option<String> {
        move |k| {
            pairs
                .iter()
                .find(|(n, _)| *n == k)
                .map(|(_, v)| v.to_string())
        }
    }

    #[test]
    fn defaults_follow_go() {
        let d = go_dirs(Path::new("/h"), &env(&[("GOENV", "off")]));
        assert_eq!(d.bin, Path::new("/h/go/bin"));
        assert_eq!(d.mod_cache, Path::new("/h/go/pkg/mod"));
        assert_eq!(d.build_cache, Path::new("/h/.cache/go-build"));
        assert_eq!(d.root, None);
    }

    #[test]
    fn variables_and_the_first_gopath_entry() {
        let d = go_dirs(
            Path::new("/h"),
            &env(&[
                ("GOENV", "off"),
                ("GOPATH", "/g1:/g2"),
                ("GOCACHE", "relative/ignored"),
                ("XDG_CACHE_HOME", "/xc"),
            ]),
        );
        assert_eq!(d.mod_cache, Path::new("/g1/pkg/mod"));
        assert_eq!(d.bin, Path::new("/g1/bin"));
        assert_eq!(d.build_cache, Path::new("/xc/go-build"));
    }

    #[test]
    fn the_settings_file_under_the_variables() {
        let t = std::env::temp_dir().join(format!("skarn-go-env-{}", std::process::id()));
        std::fs::create_dir_all(t.join(".config/go")).unwrap();
        std::fs::write(
            t.join(".config/go/env"),
            "GOMODCACHE=/m\nGOCACHE=/c\n# comment\nnonsense\nGOPATH=/p\n",
        )
        .unwrap();
        let home = t.clone();
        let d = go_dirs(&home, &env(&[("GOCACHE", "/from-env")]));
        assert_eq!(d.mod_cache, Path::new("/m"));
        assert_eq!(d.build_cache, Path::new("/from-env"));
        assert_eq!(d.bin, Path::new("/p/bin"));
        std::fs::remove_dir_all(&t).unwrap();
    }
}
