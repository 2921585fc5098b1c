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

/// Largest error report (message plus details, counted as JSON string
/// contents) a run returns, whatever the output cap says: see
/// [`Limits::error_bytes`](crate::Limits::error_bytes).
pub const MAX_ERROR_BYTES: usize = 64 << 10;

/// Smallest error cap applied, however small the output cap is (room for
/// the engine's own messages and the truncation markers).
pub const MIN_ERROR_BYTES: usize = 1 << 10;

/// Most stack frames an error report lists (QuickJS records at most 64).
pub const MAX_ERROR_FRAMES: usize = 64;
