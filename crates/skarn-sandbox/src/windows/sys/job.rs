//! The job object holding the command's process tree.

use windows_sys::Win32::Foundation::{CloseHandle, HANDLE};
use windows_sys::Win32::System::JobObjects::{
    AssignProcessToJobObject, CreateJobObjectW, JOB_OBJECT_LIMIT_ACTIVE_PROCESS,
    JOB_OBJECT_LIMIT_DIE_ON_UNHANDLED_EXCEPTION, JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE,
    JOB_OBJECT_LIMIT_PROCESS_MEMORY, JOB_OBJECT_UILIMIT_DESKTOP,
    JOB_OBJECT_UILIMIT_DISPLAYSETTINGS, JOB_OBJECT_UILIMIT_EXITWINDOWS,
    JOB_OBJECT_UILIMIT_GLOBALATOMS, JOB_OBJECT_UILIMIT_HANDLES, JOB_OBJECT_UILIMIT_READCLIPBOARD,
    JOB_OBJECT_UILIMIT_SYSTEMPARAMETERS, JOB_OBJECT_UILIMIT_WRITECLIPBOARD,
    JOBOBJECT_BASIC_UI_RESTRICTIONS, JOBOBJECT_EXTENDED_LIMIT_INFORMATION,
    JobObjectBasicUIRestrictions, JobObjectExtendedLimitInformation, SetInformationJobObject,
    TerminateJobObject,
};

use super::last_error;
use crate::windows::WindowsError;
use crate::windows::plan::JobLimits;

/// An owned job handle; closing it kills every process in the job.
pub struct Job(HANDLE);

impl Job {
    /// Create the job with the plan's limits.
    pub fn create(l: &JobLimits) -> Result<Job, WindowsError> {
        // SAFETY: no name, default security.
        let h = unsafe { CreateJobObjectW(std::ptr::null(), std::ptr::null()) };
        if h.is_null() {
            return Err(last_error("CreateJobObjectW"));
        }
        let job = Job(h);
        let mut info = JOBOBJECT_EXTENDED_LIMIT_INFORMATION::default();
        let b = &mut info.BasicLimitInformation;
        if l.kill_on_job_close {
            b.LimitFlags |= JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE;
        }
        if l.die_on_unhandled_exception {
            b.LimitFlags |= JOB_OBJECT_LIMIT_DIE_ON_UNHANDLED_EXCEPTION;
        }
        if let Some(n) = l.active_processes {
            b.LimitFlags |= JOB_OBJECT_LIMIT_ACTIVE_PROCESS;
            b.ActiveProcessLimit = u32::try_from(n).unwrap_or(u32::MAX);
        }
        if let Some(mb) = l.process_memory_mb {
            b.LimitFlags |= JOB_OBJECT_LIMIT_PROCESS_MEMORY;
            info.ProcessMemoryLimit =
                usize::try_from(mb.saturating_mul(1 << 20)).unwrap_or(usize::MAX);
        }
        // Breakaway flags are never set: no process leaves the job.
        // SAFETY: valid job handle; `info` has the size given.
        let ok = unsafe {
            SetInformationJobObject(
                job.0,
                JobObjectExtendedLimitInformation,
                (&info as *const JOBOBJECT_EXTENDED_LIMIT_INFORMATION).cast(),
                std::mem::size_of::<JOBOBJECT_EXTENDED_LIMIT_INFORMATION>() as u32,
            )
        };
        if ok == 0 {
            return Err(last_error("SetInformationJobObject(limits)"));
        }
        let ui = JOBOBJECT_BASIC_UI_RESTRICTIONS {
            UIRestrictionsClass: JOB_OBJECT_UILIMIT_DESKTOP
                | JOB_OBJECT_UILIMIT_DISPLAYSETTINGS
                | JOB_OBJECT_UILIMIT_EXITWINDOWS
                | JOB_OBJECT_UILIMIT_GLOBALATOMS
                | JOB_OBJECT_UILIMIT_HANDLES
                | JOB_OBJECT_UILIMIT_READCLIPBOARD
                | JOB_OBJECT_UILIMIT_SYSTEMPARAMETERS
                | JOB_OBJECT_UILIMIT_WRITECLIPBOARD,
        };
        // SAFETY: as above.
        let ok = unsafe {
            SetInformationJobObject(
                job.0,
                JobObjectBasicUIRestrictions,
                (&ui as *const JOBOBJECT_BASIC_UI_RESTRICTIONS).cast(),
                std::mem::size_of::<JOBOBJECT_BASIC_UI_RESTRICTIONS>() as u32,
            )
        };
        if ok == 0 {
            return Err(last_error("SetInformationJobObject(UI restrictions)"));
        }
        Ok(job)
    }

    /// Put a (suspended) process in the job.
    pub fn assign(&self, process: HANDLE) -> Result<(), WindowsError> {
        // SAFETY: valid job and process handles.
        if unsafe { AssignProcessToJobObject(self.0, process) } == 0 {
            return Err(last_error("AssignProcessToJobObject"));
        }
        Ok(())
    }

    /// Kill every process in the job.
    pub fn terminate(&self, code: u32) {
        // SAFETY: valid job handle.
        unsafe { TerminateJobObject(self.0, code) };
    }

    /// The raw handle (for the console handler).
    pub fn raw(&self) -> HANDLE {
        self.0
    }
}

impl Drop for Job {
    fn drop(&mut self) {
        // SAFETY: owned handle, closed once (kills the job's processes).
        unsafe { CloseHandle(self.0) };
    }
}
