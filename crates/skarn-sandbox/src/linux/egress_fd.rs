//! Passing descriptors over a unix socket (`SCM_RIGHTS`).

use std::io;
use std::os::fd::RawFd;

use crate::linux::sys;

const MAX_FDS: usize = 4;

fn cmsg_space() -> usize {
    // SAFETY: CMSG_SPACE is a pure size computation.
    unsafe { libc::CMSG_SPACE((MAX_FDS * size_of::<RawFd>()) as u32) as usize }
}

/// Send `fds` (at most 4) with a one-byte payload.
pub(crate) fn send_fds(sock: RawFd, fds: &[RawFd]) -> io::Result<()> {
    if fds.len() > MAX_FDS {
        return Err(io::Error::other("too many descriptors"));
    }
    let mut payload = [b'F'];
    let mut iov = libc::iovec {
        iov_base: payload.as_mut_ptr().cast(),
        iov_len: 1,
    };
    let mut ctl = vec![0u8; cmsg_space()];
    // SAFETY: msghdr is plain data; every pointer set below points into
    // live local buffers of the stated lengths, and the control buffer is
    // large enough for one SCM_RIGHTS message of up to MAX_FDS descriptors.
    unsafe {
        let mut msg: libc::msghdr = std::mem::zeroed();
        msg.msg_iov = &mut iov;
        msg.msg_iovlen = 1;
        msg.msg_control = ctl.as_mut_ptr().cast();
        msg.msg_controllen = libc::CMSG_SPACE(std::mem::size_of_val(fds) as u32) as usize;
        let c = libc::CMSG_FIRSTHDR(&msg);
        (*c).cmsg_level = libc::SOL_SOCKET;
        (*c).cmsg_type = libc::SCM_RIGHTS;
        (*c).cmsg_len = libc::CMSG_LEN(std::mem::size_of_val(fds) as u32) as usize;
        let data = libc::CMSG_DATA(c).cast::<RawFd>();
        for (i, fd) in fds.iter().enumerate() {
            std::ptr::write_unaligned(data.add(i), *fd);
        }
        sys::check(libc::sendmsg(sock, &msg, libc::MSG_NOSIGNAL) as libc::c_int).map(|_| ())
    }
}

/// Receive exactly `n` descriptors (close-on-exec); an error on EOF or
/// when a different number arrives.
pub(crate) fn recv_fds(sock: RawFd, n: usize) -> io::Result<Vec<RawFd>> {
    let mut payload = [0u8; 1];
    let mut iov = libc::iovec {
        iov_base: payload.as_mut_ptr().cast(),
        iov_len: 1,
    };
    let mut ctl = vec![0u8; cmsg_space()];
    let mut out = Vec::new();
    // SAFETY: as in send_fds; the kernel writes at most msg_controllen
    // bytes of control data, and we read only descriptors it reported.
    unsafe {
        let mut msg: libc::msghdr = std::mem::zeroed();
        msg.msg_iov = &mut iov;
        msg.msg_iovlen = 1;
        msg.msg_control = ctl.as_mut_ptr().cast();
        msg.msg_controllen = ctl.len();
        let r = loop {
            let r = libc::recvmsg(sock, &mut msg, libc::MSG_CMSG_CLOEXEC);
            if r >= 0 || io::Error::last_os_error().raw_os_error() != Some(libc::EINTR) {
                break r;
            }
        };
        if r <= 0 {
            return Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                "no descriptors",
            ));
        }
        let mut c = libc::CMSG_FIRSTHDR(&msg);
        while !c.is_null() {
            if (*c).cmsg_level == libc::SOL_SOCKET && (*c).cmsg_type == libc::SCM_RIGHTS {
                let data = libc::CMSG_DATA(c).cast::<RawFd>();
                let len = ((*c).cmsg_len - libc::CMSG_LEN(0) as usize) / size_of::<RawFd>();
                for i in 0..len {
                    out.push(std::ptr::read_unaligned(data.add(i)));
                }
            }
            c = libc::CMSG_NXTHDR(&msg, c);
        }
    }
    if out.len() != n {
        for fd in &out {
            // SAFETY: closing descriptors we received.
            unsafe { libc::close(*fd) };
        }
        return Err(io::Error::other("unexpected number of descriptors"));
    }
    Ok(out)
}
