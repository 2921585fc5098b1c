//! One container grant of the Windows plan (a leaf: the plan makes them,
//! the protection step reads them).

/// A container grant (path, rights label, source, writable).
pub(in crate::windows) struct Root {
    pub(in crate::windows) path: String,
    pub(in crate::windows) access: &'static str,
    pub(in crate::windows) source: String,
    pub(in crate::windows) writable: bool,
}
