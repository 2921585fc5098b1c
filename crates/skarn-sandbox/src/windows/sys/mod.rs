//! The Windows launcher (compiled on Windows only): the calls that carry
//! out a [`super::WindowsPlan`].

mod acl;
mod ctrl;
mod job;
pub mod probe;
pub mod run;
mod sid;
mod spawn;
mod wide;

use super::WindowsError;

/// The last Windows error, attributed to `call`.
fn last_error(call: impl Into<String>) -> WindowsError {
    WindowsError::Os {
        call: call.into(),
        source: std::io::Error::last_os_error(),
    }
}

/// A Windows error code returned directly, attributed to `call`.
fn code_error(call: impl Into<String>, code: u32) -> WindowsError {
    WindowsError::Os {
        call: call.into(),
        source: std::io::Error::from_raw_os_error(code as i32),
    }
}
