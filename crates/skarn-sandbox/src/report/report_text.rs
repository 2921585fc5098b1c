//! The human rendering of a [`RestrictionReport`] (`skarn run --report`,
//! on stderr): one header line, then what the user's layers set (each
//! with a short "from"), the defaults grouped, limits, settings, the
//! confinement layers and notes. Compact: a developer reads it in a
//! terminal; `--json` carries everything in full.

use std::fmt::Write;

use crate::report::report_provenance::short_source;
use crate::report::{Backend, GrantReport, Origin, RestrictionReport};

/// Keys of the provenance shown on their own lines (net, limits, grants)
/// or not at all (the workspace is a grant line).
fn shown_elsewhere(key: &str) -> bool {
    const KEYS: [&str; 6] = [
        "workspace",
        "net",
        "timeout",
        "memory",
        "max_procs",
        "max_file_size",
    ];
    const GRANT_LISTS: [&str; 5] = ["read.", "write.", "exec.", "deny_read.", "overlay."];
    KEYS.contains(&key) || GRANT_LISTS.iter().any(|p| key.starts_with(p))
}

/// Set by a layer of the user's (a flag, a config file, a preset).
fn from_a_layer(source: &str) -> bool {
    matches!(
        Origin::of(source),
        Origin::Flag | Origin::Preset | Origin::UserConfig | Origin::WorkspaceConfig
    )
}

/// The parenthesised origin of a grant or limit: `(from --read)` for a
/// layer's, the source itself otherwise (nothing for a bare default).
fn origin_suffix(source: &str) -> String {
    if from_a_layer(source) {
        format!("  (from {})", short_source(source))
    } else if source == crate::policy::provenance::DEFAULT {
        String::new()
    } else {
        match source
            .strip_prefix("default (")
            .and_then(|s| s.strip_suffix(')'))
        {
            Some(why) => format!("  (default: {why})"),
            None => format!("  ({source})"),
        }
    }
}

impl RestrictionReport {
    /// Human-readable multi-line rendering (for `--report`).
    pub fn render_text(&self) -> String {
        let mut s = String::new();
        let _ = writeln!(
            s,
            "skarn: sandbox report: backend={} status={:?} landlock_abi={}",
            match self.backend {
                Backend::Linux => "linux",
                Backend::Seatbelt => "seatbelt",
                Backend::AppContainer => "appcontainer",
                Backend::None => "none",
            },
            self.status,
            self.landlock_abi,
        );
        self.net_line(&mut s);
        self.grant_lines(&mut s);
        for l in &self.limits {
            let _ = writeln!(
                s,
                "  limit {:<14} {:<12} via {}{}",
                l.name,
                l.value,
                l.mechanism,
                origin_suffix(&l.source)
            );
        }
        self.setting_lines(&mut s);
        for e in &self.layers {
            let _ = writeln!(
                s,
                "  layer {:<14} {:<12} {}",
                e.layer.name(),
                e.status.word(),
                e.detail
            );
        }
        if !self.removed_env.is_empty() {
            let _ = writeln!(s, "  env removed: {}", self.removed_env.join(", "));
        }
        if let Some(e) = &self.egress {
            for a in &e.allowed {
                let _ = writeln!(
                    s,
                    "  net allowed {}: {} connection(s), {} bytes out, {} bytes in",
                    a.host, a.connections, a.bytes_out, a.bytes_in
                );
            }
            for d in &e.denied {
                let _ = writeln!(
                    s,
                    "  net denied  {}: {} time(s) ({})",
                    d.host, d.count, d.reason
                );
            }
            if e.byte_limit_hit {
                let _ = writeln!(
                    s,
                    "  net byte limit reached: connections were cut or refused"
                );
            }
        }
        if let Some(w) = &self.workspace_changes {
            let f = crate::protect::terminal_filter::printable;
            for a in &w.applied {
                let _ = writeln!(s, "  workspace {}", f(a));
            }
            for r in &w.refused {
                let _ = writeln!(s, "  workspace refused {}: {}", f(&r.path), f(&r.why));
            }
        }
        for n in &self.notes {
            let _ = writeln!(
                s,
                "  note: {}",
                crate::protect::terminal_filter::printable(n)
            );
        }
        s
    }

    /// `net: loopback (from ./skarn.toml:2:7)`; without provenance, the
    /// report's own `net` text.
    fn net_line(&self, s: &mut String) {
        match self.provenance.get("net") {
            Some(p) => {
                let value = p.value.as_deref().unwrap_or(&self.net);
                let from = if from_a_layer(&p.source) {
                    format!(" (from {})", p.short())
                } else {
                    String::new()
                };
                let _ = writeln!(s, "  net: {value}{from}");
            }
            None => {
                let _ = writeln!(s, "  net: {}", self.net);
            }
        }
    }

    /// Grants set by the user's layers first, then the rest; grants with
    /// the same access and source share a line. The default secret paths
    /// are one count.
    fn grant_lines(&self, s: &mut String) {
        let default_secret =
            |g: &&GrantReport| g.access == "deny" && g.source == "default (secret)";
        let mut groups: Vec<(&str, &str, Vec<&str>)> = Vec::new();
        for g in self.grants.iter().filter(|g| !default_secret(g)) {
            match groups
                .iter_mut()
                .find(|(a, src, _)| *a == g.access && *src == g.source)
            {
                Some((_, _, paths)) => paths.push(&g.path),
                None => groups.push((&g.access, &g.source, vec![&g.path])),
            }
        }
        // Stable: the user's layers first, each part in report order.
        groups.sort_by_key(|(_, src, _)| !from_a_layer(src));
        for (access, source, paths) in groups {
            let _ = writeln!(
                s,
                "  grant {access:<26} {}{}",
                paths.join(" "),
                origin_suffix(source)
            );
        }
        let secrets: Vec<&str> = self
            .grants
            .iter()
            .filter(default_secret)
            .map(|g| g.path.as_str())
            .collect();
        if !secrets.is_empty() {
            let _ = writeln!(
                s,
                "  deny  {} default secret paths (never readable): {}",
                secrets.len(),
                secrets.join(" ")
            );
        }
    }

    /// `set` lines: settings a layer of the user's changed that no other
    /// line shows (`private_home=false`, `allow_env MY_TOKEN`), list
    /// entries from one source on one line.
    fn setting_lines(&self, s: &mut String) {
        let mut lines: Vec<(String, &str, Vec<&str>)> = Vec::new();
        for (key, p) in &self.provenance {
            if shown_elsewhere(key) || !from_a_layer(&p.source) {
                continue;
            }
            match (key.split_once('.'), &p.value) {
                (Some((list, entry)), _) => {
                    match lines
                        .iter_mut()
                        .find(|(l, src, e)| l == list && *src == p.source && !e.is_empty())
                    {
                        Some((_, _, entries)) => entries.push(entry),
                        None => lines.push((list.to_string(), &p.source, vec![entry])),
                    }
                }
                (None, Some(v)) => lines.push((format!("{key}={v}"), &p.source, Vec::new())),
                (None, None) => lines.push((key.clone(), &p.source, Vec::new())),
            }
        }
        for (what, source, entries) in lines {
            let list = if entries.is_empty() {
                String::new()
            } else {
                format!(" {}", entries.join(" "))
            };
            let _ = writeln!(s, "  set   {what}{list}  (from {})", short_source(source));
        }
    }
}

#[cfg(test)]
#[path = "report_text_tests.rs"]
mod tests;
