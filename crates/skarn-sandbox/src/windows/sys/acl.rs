//! Adding the plan's ACEs for the container SID, and removing every
//! explicit ACE of that SID again (the revert, also used to repair a run
//! that was killed).

use windows_sys::Win32::Foundation::{
    CloseHandle, ERROR_FILE_NOT_FOUND, ERROR_PATH_NOT_FOUND, ERROR_SUCCESS, INVALID_HANDLE_VALUE,
    LocalFree,
};
use windows_sys::Win32::Security::Authorization::{
    DENY_ACCESS, EXPLICIT_ACCESS_W, GRANT_ACCESS, GetNamedSecurityInfoW, NO_MULTIPLE_TRUSTEE,
    SE_FILE_OBJECT, SetEntriesInAclW, SetNamedSecurityInfoW, SetSecurityInfo, TRUSTEE_IS_SID,
    TRUSTEE_IS_UNKNOWN, TRUSTEE_W,
};
use windows_sys::Win32::Security::{
    ACCESS_ALLOWED_ACE, ACE_HEADER, ACL, ACL_SIZE_INFORMATION, AclSizeInformation,
    CONTAINER_INHERIT_ACE, DACL_SECURITY_INFORMATION, DeleteAce, EqualSid, GetAce,
    GetAclInformation, GetSecurityDescriptorControl, INHERIT_ONLY_ACE, INHERITED_ACE,
    NO_INHERITANCE, OBJECT_INHERIT_ACE, OBJECT_SECURITY_INFORMATION,
    PROTECTED_DACL_SECURITY_INFORMATION, PSECURITY_DESCRIPTOR, PSID, SE_DACL_PROTECTED,
    UNPROTECTED_DACL_SECURITY_INFORMATION,
};
use windows_sys::Win32::Storage::FileSystem::{
    CreateFileW, DELETE, FILE_ALL_ACCESS, FILE_APPEND_DATA, FILE_DELETE_CHILD,
    FILE_FLAG_BACKUP_SEMANTICS, FILE_GENERIC_EXECUTE, FILE_GENERIC_READ, FILE_GENERIC_WRITE,
    FILE_SHARE_DELETE, FILE_SHARE_READ, FILE_SHARE_WRITE, FILE_WRITE_ATTRIBUTES, FILE_WRITE_DATA,
    FILE_WRITE_EA, OPEN_EXISTING, WRITE_DAC, WRITE_OWNER,
};

use super::code_error;
use super::wide::wide;
use crate::windows::WindowsError;
use crate::windows::acl_plan::{AceType, AclChange, Inheritance, Rights};

/// `MAXIMUM_ALLOWED`: a handle opened with it makes `SetSecurityInfo`
/// skip the propagation to children (documented behaviour).
const MAXIMUM_ALLOWED: u32 = 0x0200_0000;

const ACCESS_ALLOWED_ACE_TYPE: u8 = 0;
const ACCESS_DENIED_ACE_TYPE: u8 = 1;

/// The access mask of a [`Rights`].
pub fn mask(r: Rights) -> u32 {
    match r {
        Rights::Read => FILE_GENERIC_READ,
        Rights::ReadExecute => FILE_GENERIC_READ | FILE_GENERIC_EXECUTE,
        Rights::ReadWriteExecute => FILE_GENERIC_READ | FILE_GENERIC_WRITE | FILE_GENERIC_EXECUTE,
        Rights::Modify => FILE_GENERIC_READ | FILE_GENERIC_WRITE | FILE_GENERIC_EXECUTE | DELETE,
        Rights::Write => {
            FILE_WRITE_DATA
                | FILE_APPEND_DATA
                | FILE_WRITE_EA
                | FILE_WRITE_ATTRIBUTES
                | DELETE
                | FILE_DELETE_CHILD
                | WRITE_DAC
                | WRITE_OWNER
        }
        Rights::Delete => DELETE,
        Rights::All => FILE_ALL_ACCESS,
    }
}

fn inheritance(i: Inheritance) -> u32 {
    match i {
        Inheritance::ThisOnly => NO_INHERITANCE,
        Inheritance::ThisAndChildren => CONTAINER_INHERIT_ACE | OBJECT_INHERIT_ACE,
        Inheritance::ChildrenOnly => CONTAINER_INHERIT_ACE | OBJECT_INHERIT_ACE | INHERIT_ONLY_ACE,
    }
}

/// A path's security descriptor (its DACL points into it), freed on drop.
struct Descriptor {
    sd: PSECURITY_DESCRIPTOR,
    dacl: *mut ACL,
}

impl Drop for Descriptor {
    fn drop(&mut self) {
        // SAFETY: allocated by GetNamedSecurityInfoW (LocalAlloc), freed once.
        unsafe { LocalFree(self.sd) };
    }
}

/// Read the DACL of `path`; `None` when the path does not exist.
fn read_dacl(path: &[u16], shown: &str) -> Result<Option<Descriptor>, WindowsError> {
    let mut dacl: *mut ACL = std::ptr::null_mut();
    let mut sd: PSECURITY_DESCRIPTOR = std::ptr::null_mut();
    // SAFETY: NUL-terminated path; out-pointers valid; the descriptor is
    // freed by `Descriptor`.
    let rc = unsafe {
        GetNamedSecurityInfoW(
            path.as_ptr(),
            SE_FILE_OBJECT,
            DACL_SECURITY_INFORMATION,
            std::ptr::null_mut(),
            std::ptr::null_mut(),
            &mut dacl,
            std::ptr::null_mut(),
            &mut sd,
        )
    };
    match rc {
        ERROR_SUCCESS => Ok(Some(Descriptor { sd, dacl })),
        ERROR_FILE_NOT_FOUND | ERROR_PATH_NOT_FOUND => Ok(None),
        e => Err(code_error(format!("GetNamedSecurityInfoW({shown})"), e)),
    }
}

/// The flag keeping the DACL's protection (inheritance from the parent) as it is.
fn protection(d: &Descriptor) -> OBJECT_SECURITY_INFORMATION {
    let mut control = 0u16;
    let mut rev = 0u32;
    // SAFETY: `d.sd` is a valid descriptor.
    let ok = unsafe { GetSecurityDescriptorControl(d.sd, &mut control, &mut rev) };
    if ok != 0 && control & SE_DACL_PROTECTED != 0 {
        PROTECTED_DACL_SECURITY_INFORMATION
    } else {
        UNPROTECTED_DACL_SECURITY_INFORMATION
    }
}

/// Write the DACL of this object only, without walking its subtree: for
/// changes that no child inherits (ACEs without inheritance flags).
fn write_dacl_here_only(
    path: &[u16],
    shown: &str,
    dacl: *const ACL,
    prot: OBJECT_SECURITY_INFORMATION,
) -> Result<(), WindowsError> {
    // SAFETY: NUL-terminated path; the handle is closed below.
    let h = unsafe {
        CreateFileW(
            path.as_ptr(),
            MAXIMUM_ALLOWED,
            FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE,
            std::ptr::null(),
            OPEN_EXISTING,
            FILE_FLAG_BACKUP_SEMANTICS,
            std::ptr::null_mut(),
        )
    };
    if h == INVALID_HANDLE_VALUE {
        return Err(super::last_error(format!("CreateFileW({shown})")));
    }
    // SAFETY: a valid handle; `dacl` is a valid ACL.
    let rc = unsafe {
        SetSecurityInfo(
            h,
            SE_FILE_OBJECT,
            DACL_SECURITY_INFORMATION | prot,
            std::ptr::null_mut(),
            std::ptr::null_mut(),
            dacl,
            std::ptr::null(),
        )
    };
    // SAFETY: opened above, closed once.
    unsafe { CloseHandle(h) };
    if rc != ERROR_SUCCESS {
        return Err(code_error(format!("SetSecurityInfo({shown})"), rc));
    }
    Ok(())
}

fn write_dacl(
    path: &[u16],
    shown: &str,
    dacl: *const ACL,
    prot: OBJECT_SECURITY_INFORMATION,
) -> Result<(), WindowsError> {
    // SAFETY: NUL-terminated path; `dacl` is a valid ACL (or null).
    let rc = unsafe {
        SetNamedSecurityInfoW(
            path.as_ptr(),
            SE_FILE_OBJECT,
            DACL_SECURITY_INFORMATION | prot,
            std::ptr::null_mut(),
            std::ptr::null_mut(),
            dacl,
            std::ptr::null(),
        )
    };
    if rc != ERROR_SUCCESS {
        return Err(code_error(format!("SetNamedSecurityInfoW({shown})"), rc));
    }
    Ok(())
}

/// An ACL allocated by `SetEntriesInAclW`, freed on drop.
struct LocalAcl(*mut ACL);

impl Drop for LocalAcl {
    fn drop(&mut self) {
        // SAFETY: allocated by SetEntriesInAclW (LocalAlloc), freed once.
        unsafe { LocalFree(self.0.cast()) };
    }
}

fn explicit(c: &AclChange, sid: PSID) -> EXPLICIT_ACCESS_W {
    EXPLICIT_ACCESS_W {
        grfAccessPermissions: mask(c.rights),
        grfAccessMode: match c.ace {
            AceType::Allow => GRANT_ACCESS,
            AceType::Deny => DENY_ACCESS,
        },
        grfInheritance: inheritance(c.inheritance),
        Trustee: TRUSTEE_W {
            pMultipleTrustee: std::ptr::null_mut(),
            MultipleTrusteeOperation: NO_MULTIPLE_TRUSTEE,
            TrusteeForm: TRUSTEE_IS_SID,
            TrusteeType: TRUSTEE_IS_UNKNOWN,
            ptstrName: sid.cast(),
        },
    }
}

/// Add `changes` (all for one path) for `sid`, then write the DACL once.
/// Entries are merged one at a time, allows before denies: a later
/// `GRANT_ACCESS` could otherwise take rights out of an earlier deny.
pub fn add(path: &str, changes: &[&AclChange], sid: PSID) -> Result<(), WindowsError> {
    let w = wide(path);
    let Some(d) = read_dacl(&w, path)? else {
        return Err(code_error(
            format!("GetNamedSecurityInfoW({path})"),
            ERROR_FILE_NOT_FOUND,
        ));
    };
    let ordered = changes
        .iter()
        .filter(|c| c.ace == AceType::Allow)
        .chain(changes.iter().filter(|c| c.ace == AceType::Deny));
    let mut current: Option<LocalAcl> = None;
    for c in ordered {
        let e = explicit(c, sid);
        let old = current.as_ref().map_or(d.dacl as *const ACL, |a| a.0);
        let mut new_acl: *mut ACL = std::ptr::null_mut();
        // SAFETY: `e` and the old ACL are valid for the call; `new_acl`
        // receives a LocalAlloc'd ACL owned by `LocalAcl`.
        let rc = unsafe { SetEntriesInAclW(1, &e, old, &mut new_acl) };
        if rc != ERROR_SUCCESS {
            return Err(code_error(format!("SetEntriesInAclW({path})"), rc));
        }
        current = Some(LocalAcl(new_acl));
    }
    let inherited = changes
        .iter()
        .any(|c| c.inheritance != Inheritance::ThisOnly);
    match current {
        Some(a) if inherited => write_dacl(&w, path, a.0, protection(&d)),
        Some(a) => write_dacl_here_only(&w, path, a.0, protection(&d)),
        None => Ok(()),
    }
}

/// Remove every explicit allow/deny ACE naming `sid` from `path`'s DACL.
/// A missing path is fine (nothing to revert). Returns whether it changed.
pub(crate) fn remove_sid(path: &str, sid: PSID) -> Result<bool, WindowsError> {
    let w = wide(path);
    let Some(d) = read_dacl(&w, path)? else {
        return Ok(false);
    };
    if d.dacl.is_null() {
        return Ok(false);
    }
    let mut info = ACL_SIZE_INFORMATION::default();
    // SAFETY: valid ACL; `info` is the right size for AclSizeInformation.
    let ok = unsafe {
        GetAclInformation(
            d.dacl,
            (&mut info as *mut ACL_SIZE_INFORMATION).cast(),
            std::mem::size_of::<ACL_SIZE_INFORMATION>() as u32,
            AclSizeInformation,
        )
    };
    if ok == 0 {
        return Err(super::last_error(format!("GetAclInformation({path})")));
    }
    let mut changed = false;
    let mut inheritable = false;
    for i in (0..info.AceCount).rev() {
        let mut ace: *mut core::ffi::c_void = std::ptr::null_mut();
        // SAFETY: `i` < AceCount of a valid ACL.
        if unsafe { GetAce(d.dacl, i, &mut ace) } == 0 {
            continue;
        }
        // SAFETY: every ACE starts with an ACE_HEADER; allowed and denied
        // ACEs share ACCESS_ALLOWED_ACE's layout (header, mask, SID).
        let (ours, flags) = unsafe {
            let h = &*(ace as *const ACE_HEADER);
            let kind_ok =
                h.AceType == ACCESS_ALLOWED_ACE_TYPE || h.AceType == ACCESS_DENIED_ACE_TYPE;
            let explicit = u32::from(h.AceFlags) & INHERITED_ACE == 0;
            let ours = kind_ok && explicit && {
                let a = ace as *const ACCESS_ALLOWED_ACE;
                let ace_sid = std::ptr::addr_of!((*a).SidStart) as PSID;
                EqualSid(ace_sid, sid) != 0
            };
            (ours, u32::from(h.AceFlags))
        };
        if ours {
            inheritable |= flags & (OBJECT_INHERIT_ACE | CONTAINER_INHERIT_ACE) != 0;
            // SAFETY: valid index of a valid, writable ACL (ours to edit).
            if unsafe { DeleteAce(d.dacl, i) } == 0 {
                return Err(super::last_error(format!("DeleteAce({path})")));
            }
            changed = true;
        }
    }
    if changed && inheritable {
        write_dacl(&w, path, d.dacl, protection(&d))?;
    } else if changed {
        write_dacl_here_only(&w, path, d.dacl, protection(&d))?;
    }
    Ok(changed)
}
