//! Profiles as data: the TOML schema of the rules file, the embedded default
//! rules, merging a user file over them, and compiling every pattern once.
//!
//! A rules file holds `[[profile]]` tables. Each profile names the command
//! lines it handles (`commands`), the lines that must always survive
//! (`keep`), structural noise (`drop`), multi-line regions (`[[profile.section]]`)
//! and what to do with every other line (`other`). A profile may `inherit`
//! the rules of fragment profiles (profiles without `commands`).

use std::collections::HashSet;
use std::path::Path;

use regex::{Regex, RegexSet};
use serde::Deserialize;

use crate::error::RulesError;

/// The rules compiled into the binary.
pub const DEFAULT_RULES: &str = include_str!("../rules/default.toml");

/// One rules file as written on disk.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RulesFile {
    /// Lines dropped in every profile (progress bars, spinners), unless a
    /// profile's `keep` matches them first.
    #[serde(default)]
    pub global_drop: Vec<String>,
    /// Profiles, tried in order; the first whose `commands` match wins.
    #[serde(default, rename = "profile")]
    pub profiles: Vec<ProfileSpec>,
}

/// How a user profile combines with a built-in one of the same name.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum MergeMode {
    /// The user profile replaces the built-in one entirely.
    #[default]
    Replace,
    /// The user's patterns are added in front of the built-in ones.
    Extend,
}

/// What happens to a line that no `keep`, `drop` or section claims.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum OtherMode {
    /// Kept, but long runs are capped (`run_head`/`run_tail`) and runs of
    /// lines that differ only in numbers are squeezed.
    #[default]
    Keep,
    /// Dropped.
    Drop,
    /// Treated as entries of a listing: head and tail kept, the rest
    /// summarised by group (see `listing`).
    Listing,
}

/// How omitted listing entries are summarised.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ListingGroup {
    /// Counted by parent directory (paths, one per line: `find`).
    #[default]
    Dir,
    /// Counted by entry type (`ls -l` lines).
    Ls,
    /// Counted by file (`grep -n`/`rg` lines `path:...`).
    File,
    /// Only counted.
    None,
}

/// One profile as written in a rules file.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProfileSpec {
    pub name: String,
    #[serde(default)]
    pub description: String,
    /// Only meaningful in a user file: replace or extend a built-in profile.
    #[serde(default)]
    pub mode: MergeMode,
    /// Regexes matched against a normalised command segment
    /// (`program args...`, program reduced to its base name).
    #[serde(default)]
    pub commands: Vec<String>,
    /// Fragment profiles whose keep/drop/sections are appended to this one.
    #[serde(default)]
    pub inherit: Vec<String>,
    /// Lines that always survive verbatim (diagnostics, summaries).
    #[serde(default)]
    pub keep: Vec<String>,
    /// Lines that are structural noise.
    #[serde(default)]
    pub drop: Vec<String>,
    #[serde(default)]
    pub other: Option<OtherMode>,
    /// `other = "keep"`: lines kept from the start of each run of other lines.
    #[serde(default)]
    pub run_head: Option<usize>,
    /// `other = "keep"`: lines kept from the end of each run of other lines.
    #[serde(default)]
    pub run_tail: Option<usize>,
    /// `other = "listing"`: entries kept from the start.
    #[serde(default)]
    pub listing_head: Option<usize>,
    /// `other = "listing"`: entries kept from the end.
    #[serde(default)]
    pub listing_tail: Option<usize>,
    #[serde(default)]
    pub listing_group: Option<ListingGroup>,
    #[serde(default, rename = "section")]
    pub sections: Vec<SectionSpec>,
}

/// A multi-line region: it starts at a line matching `start` and runs until
/// a line matching `until` (not part of it), a line matching `end` (part of
/// it), a `keep` line of the profile, another section's start, or the end.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SectionSpec {
    pub start: String,
    #[serde(default)]
    pub until: Vec<String>,
    #[serde(default)]
    pub end: Vec<String>,
    /// Body lines always kept (never capped).
    #[serde(default)]
    pub keep: Vec<String>,
    /// Body lines kept subject to `max` (e.g. changed lines of a diff).
    #[serde(default)]
    pub show: Vec<String>,
    /// Body lines always dropped (unless `keep` matches).
    #[serde(default)]
    pub drop: Vec<String>,
    /// Other body lines: "keep" or "drop".
    #[serde(default)]
    pub body: Option<BodyMode>,
    /// Lines of plain context kept around each `show` line.
    #[serde(default)]
    pub context: usize,
    /// Only the first `head` units of candidate lines are kept.
    #[serde(default)]
    pub head: Option<usize>,
    /// Only the last `tail` units of candidate lines are kept.
    #[serde(default)]
    pub tail: Option<usize>,
    /// A unit starts at a line matching this (default: every line).
    #[serde(default)]
    pub unit: Option<String>,
    /// At most this many candidate (non-`keep`) lines per section.
    #[serde(default)]
    pub max: Option<usize>,
    /// At most this many candidate lines per unit (`unit`), e.g. changed
    /// lines per hunk of a diff.
    #[serde(default)]
    pub unit_max: Option<usize>,
    /// Sections with the same start line are merged: the start line is
    /// printed once, followed by the kept lines of every occurrence.
    #[serde(default)]
    pub group: bool,
    /// With `group`: how the body of a later occurrence is treated (e.g.
    /// "drop": the first occurrence of an error shows its code frame, the
    /// same message again only its `keep` lines, such as locations).
    #[serde(default)]
    pub repeat_body: Option<BodyMode>,
    /// Deferred section: a line matching this closes it and discards the
    /// body (the log of a passing test).
    #[serde(default)]
    pub passed: Option<String>,
    /// Deferred section: a line matching this closes it and keeps the body.
    #[serde(default)]
    pub failed: Option<String>,
    /// Print "… N lines omitted" where candidate lines were cut.
    #[serde(default = "yes")]
    pub marker: bool,
    /// Other sections' start lines do not close this one (they become
    /// body lines): for regions such as pytest's PASSES block.
    #[serde(default)]
    pub absorb: bool,
}

fn yes() -> bool {
    true
}

/// Fate of body lines of a section that no pattern claims.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum BodyMode {
    #[default]
    Keep,
    Drop,
}

impl RulesFile {
    /// Parse a rules file; `origin` names it in errors.
    pub fn parse(text: &str, origin: &str) -> Result<Self, RulesError> {
        toml::from_str(text).map_err(|e| RulesError::Parse {
            origin: origin.to_string(),
            message: one_line(&e.to_string()),
        })
    }

    /// Read and parse a rules file from disk.
    pub fn load(path: &Path) -> Result<Self, RulesError> {
        let text = std::fs::read_to_string(path).map_err(|e| RulesError::Read {
            path: path.to_path_buf(),
            source: e,
        })?;
        Self::parse(&text, &path.display().to_string())
    }

    /// Lay `user` over `self`: same-named profiles are replaced or extended,
    /// new profiles are tried before the built-in ones.
    pub fn merge(mut self, user: RulesFile) -> Self {
        let mut extra = Vec::new();
        for up in user.profiles {
            match self.profiles.iter_mut().find(|p| p.name == up.name) {
                Some(existing) if up.mode == MergeMode::Extend => extend(existing, up),
                Some(existing) => *existing = up,
                None => extra.push(up),
            }
        }
        extra.append(&mut self.profiles);
        self.profiles = extra;
        let mut gd = user.global_drop;
        gd.append(&mut self.global_drop);
        self.global_drop = gd;
        self
    }
}

fn extend(base: &mut ProfileSpec, add: ProfileSpec) {
    fn front(base: &mut Vec<String>, mut add: Vec<String>) {
        add.append(base);
        *base = add;
    }
    front(&mut base.commands, add.commands);
    front(&mut base.keep, add.keep);
    front(&mut base.drop, add.drop);
    base.inherit.extend(add.inherit);
    let mut secs = add.sections;
    secs.append(&mut base.sections);
    base.sections = secs;
    base.other = add.other.or(base.other);
    base.run_head = add.run_head.or(base.run_head);
    base.run_tail = add.run_tail.or(base.run_tail);
    base.listing_head = add.listing_head.or(base.listing_head);
    base.listing_tail = add.listing_tail.or(base.listing_tail);
    base.listing_group = add.listing_group.or(base.listing_group);
}

/// A profile with every pattern compiled, inherited rules folded in.
#[derive(Debug)]
pub struct Profile {
    pub name: String,
    pub commands: Vec<Regex>,
    pub keep: RegexSet,
    pub drop: RegexSet,
    pub starts: RegexSet,
    pub sections: Vec<Section>,
    pub other: OtherMode,
    pub run_head: usize,
    pub run_tail: usize,
    pub listing_head: usize,
    pub listing_tail: usize,
    pub listing_group: ListingGroup,
}

/// A compiled section.
#[derive(Debug)]
pub struct Section {
    pub until: RegexSet,
    pub end: RegexSet,
    pub keep: RegexSet,
    pub show: RegexSet,
    pub drop: RegexSet,
    pub body: BodyMode,
    pub context: usize,
    pub head: Option<usize>,
    pub tail: Option<usize>,
    pub unit: Option<Regex>,
    pub max: Option<usize>,
    pub unit_max: Option<usize>,
    pub group: bool,
    pub repeat_body: Option<BodyMode>,
    pub passed: Option<Regex>,
    pub failed: Option<Regex>,
    pub marker: bool,
    pub absorb: bool,
}

/// Every profile compiled, in the order they are tried.
#[derive(Debug)]
pub struct Rules {
    pub profiles: Vec<Profile>,
    /// Index of the profile named "generic" (the fallback).
    pub generic: usize,
}

fn set(origin: &str, pats: &[String]) -> Result<RegexSet, RulesError> {
    RegexSet::new(pats).map_err(|e| RulesError::Pattern {
        profile: origin.to_string(),
        message: one_line(&e.to_string()),
    })
}

/// Library errors from `regex` and `toml` span several lines; users get one.
fn one_line(s: &str) -> String {
    s.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect::<Vec<_>>()
        .join(" ")
}

fn one(origin: &str, pat: &str) -> Result<Regex, RulesError> {
    Regex::new(pat).map_err(|e| RulesError::Pattern {
        profile: origin.to_string(),
        message: one_line(&e.to_string()),
    })
}

impl Rules {
    /// The embedded rules only.
    pub fn builtin() -> Result<Self, RulesError> {
        Self::compile(RulesFile::parse(DEFAULT_RULES, "built-in rules")?)
    }

    /// Compile a (merged) rules file.
    pub fn compile(file: RulesFile) -> Result<Self, RulesError> {
        let mut seen = HashSet::new();
        for p in &file.profiles {
            if !seen.insert(p.name.as_str()) {
                return Err(RulesError::Invalid(format!(
                    "profile {:?} is defined twice",
                    p.name
                )));
            }
        }
        let mut profiles = Vec::new();
        for spec in &file.profiles {
            if spec.commands.is_empty() && spec.name != "generic" {
                continue; // fragment: only used through `inherit`
            }
            profiles.push(compile_profile(spec, &file)?);
        }
        let generic = profiles
            .iter()
            .position(|p| p.name == "generic")
            .ok_or_else(|| RulesError::Invalid("no profile named \"generic\"".into()))?;
        Ok(Self { profiles, generic })
    }

    /// The profile to use for a command line.
    pub fn select(&self, command_line: &str) -> &Profile {
        let segs = crate::command::segments(command_line);
        // The last meaningful segment decides: its output ends the stream.
        for seg in segs.iter().rev() {
            for p in &self.profiles {
                if p.commands.iter().any(|r| r.is_match(seg)) {
                    return p;
                }
            }
        }
        &self.profiles[self.generic]
    }

    /// A profile by name.
    pub fn by_name(&self, name: &str) -> Option<&Profile> {
        self.profiles.iter().find(|p| p.name == name)
    }
}

fn collect_inherited<'a>(
    spec: &'a ProfileSpec,
    file: &'a RulesFile,
    out: &mut Vec<&'a ProfileSpec>,
    depth: usize,
) -> Result<(), RulesError> {
    if depth > 8 {
        return Err(RulesError::Invalid(format!(
            "profile {:?}: inherit chain too deep (a cycle?)",
            spec.name
        )));
    }
    out.push(spec);
    for name in &spec.inherit {
        let parent = file
            .profiles
            .iter()
            .find(|p| &p.name == name)
            .ok_or_else(|| {
                RulesError::Invalid(format!(
                    "profile {:?} inherits unknown profile {name:?}",
                    spec.name
                ))
            })?;
        if !out.iter().any(|p| p.name == parent.name) {
            collect_inherited(parent, file, out, depth + 1)?;
        }
    }
    Ok(())
}

fn compile_profile(spec: &ProfileSpec, file: &RulesFile) -> Result<Profile, RulesError> {
    let mut chain = Vec::new();
    collect_inherited(spec, file, &mut chain, 0)?;
    let origin = spec.name.as_str();
    let mut keep = Vec::new();
    let mut drop = Vec::new();
    let mut secs: Vec<&SectionSpec> = Vec::new();
    for p in &chain {
        keep.extend(p.keep.iter().cloned());
        drop.extend(p.drop.iter().cloned());
        secs.extend(p.sections.iter());
    }
    drop.extend(file.global_drop.iter().cloned());
    let commands = spec
        .commands
        .iter()
        .map(|c| one(origin, c))
        .collect::<Result<Vec<_>, _>>()?;
    let starts: Vec<String> = secs.iter().map(|s| s.start.clone()).collect();
    let mut sections = Vec::new();
    for s in secs {
        sections.push(Section {
            until: set(origin, &s.until)?,
            end: set(origin, &s.end)?,
            keep: set(origin, &s.keep)?,
            show: set(origin, &s.show)?,
            drop: {
                let mut d = s.drop.clone();
                d.extend(file.global_drop.iter().cloned());
                set(origin, &d)?
            },
            body: s.body.unwrap_or_default(),
            context: s.context,
            head: s.head,
            tail: s.tail,
            unit: s.unit.as_deref().map(|u| one(origin, u)).transpose()?,
            max: s.max,
            unit_max: s.unit_max,
            group: s.group,
            repeat_body: s.repeat_body,
            passed: s.passed.as_deref().map(|u| one(origin, u)).transpose()?,
            failed: s.failed.as_deref().map(|u| one(origin, u)).transpose()?,
            marker: s.marker,
            absorb: s.absorb,
        });
    }
    let first = |f: fn(&ProfileSpec) -> Option<usize>| chain.iter().find_map(|p| f(p));
    Ok(Profile {
        name: spec.name.clone(),
        commands,
        keep: set(origin, &keep)?,
        drop: set(origin, &drop)?,
        starts: set(origin, &starts)?,
        sections,
        other: chain.iter().find_map(|p| p.other).unwrap_or_default(),
        run_head: first(|p| p.run_head).unwrap_or(30),
        run_tail: first(|p| p.run_tail).unwrap_or(10),
        listing_head: first(|p| p.listing_head).unwrap_or(30),
        listing_tail: first(|p| p.listing_tail).unwrap_or(5),
        listing_group: chain
            .iter()
            .find_map(|p| p.listing_group)
            .unwrap_or_default(),
    })
}
