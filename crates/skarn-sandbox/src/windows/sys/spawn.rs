//! Starting the command in the AppContainer: suspended, with only its
//! three stdio pipe ends inherited, the container SID and capabilities in
//! its token; the caller assigns it to the job before resuming it.

use std::fs::File;
use std::os::windows::io::{FromRawHandle, OwnedHandle};

use windows_sys::Win32::Foundation::{HANDLE, HANDLE_FLAG_INHERIT, SetHandleInformation};
use windows_sys::Win32::Security::{SECURITY_CAPABILITIES, SID_AND_ATTRIBUTES};
use windows_sys::Win32::System::Pipes::CreatePipe;
use windows_sys::Win32::System::Threading::{
    CREATE_NO_WINDOW, CREATE_SUSPENDED, CREATE_UNICODE_ENVIRONMENT, CreateProcessW,
    DeleteProcThreadAttributeList, EXTENDED_STARTUPINFO_PRESENT, InitializeProcThreadAttributeList,
    LPPROC_THREAD_ATTRIBUTE_LIST, PROC_THREAD_ATTRIBUTE_HANDLE_LIST,
    PROC_THREAD_ATTRIBUTE_SECURITY_CAPABILITIES, PROCESS_INFORMATION, STARTF_USESTDHANDLES,
    STARTUPINFOEXW, UpdateProcThreadAttribute,
};

use super::last_error;
use super::sid::Sid;
use super::wide::{env_block, wide};
use crate::windows::WindowsError;
use crate::windows::plan::ProcessSpec;

/// `SE_GROUP_ENABLED`.
const SE_GROUP_ENABLED: u32 = 4;

/// A started (still suspended) process and skarn's ends of its pipes.
pub struct Child {
    /// Process handle.
    pub process: OwnedHandle,
    /// Main thread handle (resumed by the caller).
    pub thread: OwnedHandle,
    /// Write end of the child's stdin.
    pub stdin: File,
    /// Read end of the child's stdout.
    pub stdout: File,
    /// Read end of the child's stderr.
    pub stderr: File,
}

/// One anonymous pipe: (read, write) as owned handles.
fn pipe() -> Result<(OwnedHandle, OwnedHandle), WindowsError> {
    let (mut r, mut w): (HANDLE, HANDLE) = (std::ptr::null_mut(), std::ptr::null_mut());
    // SAFETY: out-pointers valid; default (non-inheritable) security.
    if unsafe { CreatePipe(&mut r, &mut w, std::ptr::null(), 0) } == 0 {
        return Err(last_error("CreatePipe"));
    }
    // SAFETY: both handles were just created and are owned here.
    Ok(unsafe {
        (
            OwnedHandle::from_raw_handle(r),
            OwnedHandle::from_raw_handle(w),
        )
    })
}

fn inheritable(h: &OwnedHandle) -> Result<(), WindowsError> {
    use std::os::windows::io::AsRawHandle;
    // SAFETY: a valid handle owned by this process.
    if unsafe { SetHandleInformation(h.as_raw_handle(), HANDLE_FLAG_INHERIT, HANDLE_FLAG_INHERIT) }
        == 0
    {
        return Err(last_error("SetHandleInformation"));
    }
    Ok(())
}

/// An initialized attribute list, deleted on drop. Backed by u64s for alignment.
struct AttrList(Vec<u64>);

impl AttrList {
    fn new(count: u32) -> Result<AttrList, WindowsError> {
        let mut size = 0usize;
        // SAFETY: size query (null list) as documented; fails with
        // ERROR_INSUFFICIENT_BUFFER and sets `size`.
        unsafe { InitializeProcThreadAttributeList(std::ptr::null_mut(), count, 0, &mut size) };
        let mut buf = vec![0u64; size.div_ceil(8)];
        // SAFETY: `buf` holds at least `size` bytes, 8-aligned.
        if unsafe {
            InitializeProcThreadAttributeList(buf.as_mut_ptr().cast(), count, 0, &mut size)
        } == 0
        {
            return Err(last_error("InitializeProcThreadAttributeList"));
        }
        Ok(AttrList(buf))
    }

    fn ptr(&mut self) -> LPPROC_THREAD_ATTRIBUTE_LIST {
        self.0.as_mut_ptr().cast()
    }

    /// # Safety
    /// `value` must stay valid until the process is created.
    unsafe fn set<T>(
        &mut self,
        attr: u32,
        value: *const T,
        size: usize,
    ) -> Result<(), WindowsError> {
        // SAFETY: initialized list; the caller keeps `value` alive.
        let ok = unsafe {
            UpdateProcThreadAttribute(
                self.ptr(),
                0,
                attr as usize,
                value.cast(),
                size,
                std::ptr::null_mut(),
                std::ptr::null(),
            )
        };
        if ok == 0 {
            return Err(last_error("UpdateProcThreadAttribute"));
        }
        Ok(())
    }
}

impl Drop for AttrList {
    fn drop(&mut self) {
        // SAFETY: initialized by `new`, deleted once.
        unsafe { DeleteProcThreadAttributeList(self.ptr()) };
    }
}

/// Create the process suspended in the container.
pub fn spawn(spec: &ProcessSpec, container: &Sid, caps: &[Sid]) -> Result<Child, WindowsError> {
    use std::os::windows::io::AsRawHandle;
    let (in_r, in_w) = pipe()?;
    let (out_r, out_w) = pipe()?;
    let (err_r, err_w) = pipe()?;
    for h in [&in_r, &out_w, &err_w] {
        inheritable(h)?;
    }
    let handles: [HANDLE; 3] = [
        in_r.as_raw_handle(),
        out_w.as_raw_handle(),
        err_w.as_raw_handle(),
    ];
    let mut cap_attrs: Vec<SID_AND_ATTRIBUTES> = caps
        .iter()
        .map(|c| SID_AND_ATTRIBUTES {
            Sid: c.as_ptr(),
            Attributes: SE_GROUP_ENABLED,
        })
        .collect();
    let sc = SECURITY_CAPABILITIES {
        AppContainerSid: container.as_ptr(),
        Capabilities: if cap_attrs.is_empty() {
            std::ptr::null_mut()
        } else {
            cap_attrs.as_mut_ptr()
        },
        CapabilityCount: cap_attrs.len() as u32,
        Reserved: 0,
    };
    let mut attrs = AttrList::new(2)?;
    // SAFETY: `sc`, `cap_attrs` and `handles` live until CreateProcessW returns.
    unsafe {
        attrs.set(
            PROC_THREAD_ATTRIBUTE_SECURITY_CAPABILITIES,
            &sc,
            std::mem::size_of::<SECURITY_CAPABILITIES>(),
        )?;
        attrs.set(
            PROC_THREAD_ATTRIBUTE_HANDLE_LIST,
            handles.as_ptr(),
            std::mem::size_of_val(&handles),
        )?;
    }
    let mut si = STARTUPINFOEXW::default();
    si.StartupInfo.cb = std::mem::size_of::<STARTUPINFOEXW>() as u32;
    si.StartupInfo.dwFlags = STARTF_USESTDHANDLES;
    si.StartupInfo.hStdInput = handles[0];
    si.StartupInfo.hStdOutput = handles[1];
    si.StartupInfo.hStdError = handles[2];
    si.lpAttributeList = attrs.ptr();
    let mut cmdline = wide(&spec.command_line);
    let cwd = wide(&spec.cwd);
    let env = env_block(&spec.env);
    let mut pi = PROCESS_INFORMATION::default();
    // SAFETY: every pointer is valid for the call; the command line buffer
    // is mutable as CreateProcessW requires; handles listed are inheritable.
    let ok = unsafe {
        CreateProcessW(
            std::ptr::null(),
            cmdline.as_mut_ptr(),
            std::ptr::null(),
            std::ptr::null(),
            1,
            EXTENDED_STARTUPINFO_PRESENT
                | CREATE_SUSPENDED
                | CREATE_UNICODE_ENVIRONMENT
                | CREATE_NO_WINDOW,
            env.as_ptr().cast(),
            cwd.as_ptr(),
            &si.StartupInfo,
            &mut pi,
        )
    };
    if ok == 0 {
        return Err(last_error(format!("CreateProcessW({})", spec.argv[0])));
    }
    // The child's ends are closed here (it holds its own copies).
    drop((in_r, out_w, err_w));
    // SAFETY: handles returned by CreateProcessW, owned from here on.
    let (process, thread) = unsafe {
        (
            OwnedHandle::from_raw_handle(pi.hProcess),
            OwnedHandle::from_raw_handle(pi.hThread),
        )
    };
    Ok(Child {
        process,
        thread,
        stdin: File::from(in_w),
        stdout: File::from(out_r),
        stderr: File::from(err_r),
    })
}
