//! Hard bounds the engine applies whatever the [`Limits`](crate::Limits)
//! say.

/// Smallest memory limit applied, whatever `Limits::memory_bytes` says.
pub const MIN_MEMORY_BYTES: usize = 1 << 20;

/// Smallest native stack limit applied, whatever `Limits::stack_bytes` says.
pub const MIN_STACK_BYTES: usize = 64 << 10;

/// Largest native stack limit applied (the isolate thread must really have it).
pub const MAX_STACK_BYTES: usize = 16 << 20;

/// Largest tool-call argument object accepted from a script (JSON bytes).
pub const MAX_ARGS_BYTES: usize = 8 << 20;
