//! skarn-gateway: the MCP gateway with the Code Mode surface.
//!
//! (Skeleton: lands with issue 4.)
