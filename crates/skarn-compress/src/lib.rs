//! skarn-compress: token-lean command output that never loses a diagnostic.
//!
//! (Skeleton: lands with issue 6.)
