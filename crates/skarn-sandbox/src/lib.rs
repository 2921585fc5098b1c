//! skarn-sandbox: kernel-enforced confinement for one command.
//!
//! (Skeleton: the Linux backend lands with issue 2.)
