//! The ACL changes of one run, as data: which access control entries for
//! the container SID are added to which paths, and which placeholders are
//! created. Everything added is an explicit ACE naming the container SID,
//! so reverting is "remove every explicit ACE of that SID from these
//! paths" (idempotent, also after a crash) plus removing the placeholders.

use serde::{Deserialize, Serialize};

/// Allow or deny.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AceType {
    /// An access-allowed ACE.
    Allow,
    /// An access-denied ACE (placed before the allowed ones).
    Deny,
}

/// The rights of one ACE (the masks are in the Windows launcher).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Rights {
    /// Read data, attributes and permissions; list a directory.
    Read,
    /// `Read` plus execute / traverse.
    ReadExecute,
    /// Read, write, create children, execute; not DELETE (so the path
    /// itself cannot be removed or renamed away).
    ReadWriteExecute,
    /// "Modify": read, write, execute and DELETE; never delete-child,
    /// change permissions or take ownership.
    Modify,
    /// (deny) Write data, append, create children, write attributes and
    /// extended attributes, DELETE, delete-child, change permissions or
    /// owner.
    Write,
    /// (deny) DELETE only: the path cannot be removed or renamed.
    Delete,
    /// (deny) Everything.
    All,
}

/// Where an ACE applies.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Inheritance {
    /// This file or directory only.
    ThisOnly,
    /// This directory, its subdirectories and files.
    ThisAndChildren,
    /// Subdirectories and files only (inherit-only).
    ChildrenOnly,
}

/// One ACE added for the container SID.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AclChange {
    /// Path (Windows spelling).
    pub path: String,
    /// Allow or deny.
    pub ace: AceType,
    /// Rights.
    pub rights: Rights,
    /// Inheritance.
    pub inheritance: Inheritance,
    /// Why (provenance).
    pub why: String,
}

/// An empty directory created before the run at a missing persistence
/// path, every access denied to the container, removed after the run
/// (when still empty): the command cannot create that name.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Placeholder {
    /// Path (Windows spelling).
    pub path: String,
    /// Why the name is reserved.
    pub why: String,
}

/// Kind of an existing path.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PathKind {
    /// A regular file (or anything that is not a directory).
    File,
    /// A directory.
    Dir,
}

impl PathKind {
    /// Inheritance of a deny ACE covering the whole path.
    pub fn whole(self) -> Inheritance {
        match self {
            PathKind::File => Inheritance::ThisOnly,
            PathKind::Dir => Inheritance::ThisAndChildren,
        }
    }
}

/// Accumulates changes without duplicates.
#[derive(Debug, Default)]
pub(crate) struct AclBuilder {
    /// Changes in order.
    pub changes: Vec<AclChange>,
    /// Placeholders in order.
    pub placeholders: Vec<Placeholder>,
    /// Missing paths removed after the run if the command created them.
    pub remove_after: Vec<Placeholder>,
}

impl AclBuilder {
    /// Add one ACE unless the same (path, type, rights, inheritance) is there.
    pub fn add(&mut self, path: &str, ace: AceType, rights: Rights, inh: Inheritance, why: &str) {
        let dup = self.changes.iter().any(|c| {
            super::winpath::same(&c.path, path)
                && c.ace == ace
                && c.rights == rights
                && c.inheritance == inh
        });
        if !dup {
            self.changes.push(AclChange {
                path: path.to_string(),
                ace,
                rights,
                inheritance: inh,
                why: why.to_string(),
            });
        }
    }

    /// Writable root: the root itself read/write/execute without DELETE,
    /// everything under it Modify.
    pub fn writable_root(&mut self, path: &str, why: &str) {
        self.add(
            path,
            AceType::Allow,
            Rights::ReadWriteExecute,
            Inheritance::ThisOnly,
            why,
        );
        self.add(
            path,
            AceType::Allow,
            Rights::Modify,
            Inheritance::ChildrenOnly,
            why,
        );
    }

    /// Every path the run changes (ACEs or placeholders), deduplicated, in order.
    pub fn touched_paths(&self) -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        for p in self
            .changes
            .iter()
            .map(|c| &c.path)
            .chain(self.placeholders.iter().map(|p| &p.path))
        {
            if !out.iter().any(|o| super::winpath::same(o, p)) {
                out.push(p.clone());
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writable_root_cannot_delete_itself() {
        let mut b = AclBuilder::default();
        b.writable_root("C:\\w", "workspace");
        b.writable_root("c:\\W\\", "again");
        assert_eq!(b.changes.len(), 2);
        assert_eq!(b.changes[0].rights, Rights::ReadWriteExecute);
        assert_eq!(b.changes[0].inheritance, Inheritance::ThisOnly);
        assert_eq!(b.changes[1].inheritance, Inheritance::ChildrenOnly);
        assert_eq!(b.touched_paths(), ["C:\\w"]);
    }
}
