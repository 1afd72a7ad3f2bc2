//! The program a process runs, from `proc_pidpath` (libproc), for telling
//! whether a connection file's pid is still a deskhand process.

/// The executable's full path of process `pid`, when it can be read.
pub(crate) fn image_of(pid: u32) -> Option<String> {
    let pid = libc::c_int::try_from(pid).ok()?;
    let mut buf = vec![0u8; libc::PROC_PIDPATHINFO_MAXSIZE as usize];
    // SAFETY: the buffer and its size are passed together; the kernel
    // writes at most that many bytes.
    let len = unsafe { libc::proc_pidpath(pid, buf.as_mut_ptr().cast(), buf.len() as u32) };
    let len = usize::try_from(len).ok().filter(|n| *n > 0)?;
    buf.truncate(len);
    String::from_utf8(buf).ok()
}
