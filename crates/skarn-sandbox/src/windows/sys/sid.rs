//! The container SID (from the profile) and SIDs given as strings
//! (capabilities, the journal).

use windows_sys::Win32::Foundation::{ERROR_ALREADY_EXISTS, LocalFree};
use windows_sys::Win32::Security::Authorization::{ConvertSidToStringSidW, ConvertStringSidToSidW};
use windows_sys::Win32::Security::Isolation::{
    CreateAppContainerProfile, DeriveAppContainerSidFromAppContainerName,
};
use windows_sys::Win32::Security::{FreeSid, PSID};

use super::wide::{from_wide_ptr, wide};
use super::{code_error, last_error};
use crate::windows::WindowsError;
use crate::windows::profile_name::ContainerProfile;

/// A SID owned by this process, freed the way it was allocated.
pub(crate) enum Sid {
    /// From `CreateAppContainerProfile` / `Derive...`: `FreeSid`.
    Container(PSID),
    /// From `ConvertStringSidToSidW`: `LocalFree`.
    Local(PSID),
}

impl Sid {
    /// The raw pointer (valid while `self` lives).
    pub fn as_ptr(&self) -> PSID {
        match self {
            Sid::Container(p) | Sid::Local(p) => *p,
        }
    }

    /// The `S-1-...` form.
    pub fn to_string_form(&self) -> Result<String, WindowsError> {
        let mut s: *mut u16 = std::ptr::null_mut();
        // SAFETY: a valid SID; `s` receives a LocalAlloc'd string freed below.
        let ok = unsafe { ConvertSidToStringSidW(self.as_ptr(), &mut s) };
        if ok == 0 {
            return Err(last_error("ConvertSidToStringSidW"));
        }
        // SAFETY: `s` is the NUL-terminated string just returned, freed once.
        let out = unsafe { from_wide_ptr(s) };
        // SAFETY: allocated by ConvertSidToStringSidW with LocalAlloc.
        unsafe { LocalFree(s.cast()) };
        Ok(out)
    }

    /// Parse the `S-1-...` form.
    pub fn parse(s: &str) -> Result<Sid, WindowsError> {
        let w = wide(s);
        let mut p: PSID = std::ptr::null_mut();
        // SAFETY: `w` is NUL-terminated; `p` receives a LocalAlloc'd SID.
        let ok = unsafe { ConvertStringSidToSidW(w.as_ptr(), &mut p) };
        if ok == 0 {
            return Err(last_error(format!("ConvertStringSidToSidW({s})")));
        }
        Ok(Sid::Local(p))
    }
}

impl Drop for Sid {
    fn drop(&mut self) {
        // SAFETY: each pointer was allocated by the call named in its variant
        // and is freed exactly once, here.
        unsafe {
            match self {
                Sid::Container(p) => {
                    FreeSid(*p);
                }
                Sid::Local(p) => {
                    LocalFree(p.cast());
                }
            }
        }
    }
}

/// `HRESULT_FROM_WIN32(ERROR_ALREADY_EXISTS)`.
const HR_ALREADY_EXISTS: i32 = (0x8007_0000u32 | ERROR_ALREADY_EXISTS) as i32;

/// Create the workspace's profile (first run) or open it, and return its SID.
pub(crate) fn container_sid(p: &ContainerProfile) -> Result<Sid, WindowsError> {
    let (name, display, desc) = (wide(&p.name), wide(&p.display_name), wide(&p.description));
    let mut sid: PSID = std::ptr::null_mut();
    // SAFETY: NUL-terminated strings; no capabilities (null, 0); `sid`
    // receives a SID freed with FreeSid.
    let hr = unsafe {
        CreateAppContainerProfile(
            name.as_ptr(),
            display.as_ptr(),
            desc.as_ptr(),
            std::ptr::null(),
            0,
            &mut sid,
        )
    };
    if hr >= 0 {
        return Ok(Sid::Container(sid));
    }
    if hr != HR_ALREADY_EXISTS {
        return Err(code_error(
            format!("CreateAppContainerProfile({})", p.name),
            hr as u32,
        ));
    }
    // SAFETY: as above.
    let hr = unsafe { DeriveAppContainerSidFromAppContainerName(name.as_ptr(), &mut sid) };
    if hr < 0 {
        return Err(code_error(
            format!("DeriveAppContainerSidFromAppContainerName({})", p.name),
            hr as u32,
        ));
    }
    Ok(Sid::Container(sid))
}
