//! Wine: whether deskhand runs under it, and where its files are on the
//! Unix side. Wine keeps no ACLs: its server maps the DACL a program sets
//! to Unix mode bits (`sd_to_mode` in Wine's `server/file.c`) and every
//! open is checked against those bits alone. An allowed entry for a SID
//! of the process's own token (the user deskhand runs as) becomes user
//! *and group* bits, so Windows' owner-only DACL comes out 0770; an entry
//! naming the descriptor's owner, when that owner is not in the token,
//! becomes user bits only. [`crate::acl`] sets such a descriptor under
//! Wine (measured under Wine 8: files 0600, folders 0700, still read and
//! written by deskhand).

/// The Wine version deskhand runs under (ntdll's `wine_get_version`),
/// `None` on Windows (and on every other OS).
pub fn version() -> Option<&'static str> {
    #[cfg(windows)]
    {
        static VERSION: std::sync::OnceLock<Option<String>> = std::sync::OnceLock::new();
        VERSION.get_or_init(imp::version).as_deref()
    }
    #[cfg(not(windows))]
    {
        None
    }
}

/// Whether deskhand runs under Wine.
pub fn running() -> bool {
    version().is_some()
}

#[cfg(windows)]
pub use imp::{dos_path, unix_path};

/// The person's registry file on the Unix side (`user.reg` in the Wine
/// prefix, found from where drive C: is); `None` outside Wine.
#[cfg(windows)]
pub fn registry_file() -> Option<std::path::PathBuf> {
    if !running() {
        return None;
    }
    // `…/prefix/dosdevices/c:/`, a Unix path: taken apart as text (a
    // Windows `Path` would join with `\\`).
    let c = unix_path(std::path::Path::new("C:\\"))?;
    let c = c.to_str()?;
    let prefix = c
        .strip_suffix('/')
        .unwrap_or(c)
        .strip_suffix("/dosdevices/c:")?;
    Some(format!("{prefix}/user.reg").into())
}

#[cfg(windows)]
mod imp {
    use std::ffi::{CStr, CString, OsString, c_char, c_void};
    use std::os::windows::ffi::{OsStrExt as _, OsStringExt as _};
    use std::path::{Path, PathBuf};

    use windows::Win32::System::LibraryLoader::{GetModuleHandleW, GetProcAddress};
    use windows::Win32::System::Memory::{GetProcessHeap, HEAP_FLAGS, HeapFree};
    use windows::core::{PCSTR, w};

    /// An export of `module` (a wide module name), if it has one.
    fn export(
        module: windows::core::PCWSTR,
        name: &CStr,
    ) -> Option<unsafe extern "system" fn() -> isize> {
        // SAFETY: a module every process has loaded; a NUL-terminated name.
        unsafe {
            let module = GetModuleHandleW(module).ok()?;
            GetProcAddress(module, PCSTR(name.as_ptr().cast()))
        }
    }

    /// Frees what Wine allocated on the process heap for its answer.
    fn free(ptr: *const c_void) {
        // SAFETY: Wine allocates these answers with HeapAlloc on the
        // process heap; each is freed once.
        unsafe {
            if let Ok(heap) = GetProcessHeap() {
                let _ = HeapFree(heap, HEAP_FLAGS(0), Some(ptr));
            }
        }
    }

    pub(super) fn version() -> Option<String> {
        let f = export(w!("ntdll.dll"), c"wine_get_version")?;
        // SAFETY: `const char *wine_get_version(void)`, a static string.
        unsafe {
            let f: unsafe extern "system" fn() -> *const c_char = std::mem::transmute(f);
            let v = f();
            (!v.is_null()).then(|| CStr::from_ptr(v).to_string_lossy().into_owned())
        }
    }

    /// Where `path` (a Windows path) is on the Unix side (kernel32's
    /// `wine_get_unix_file_name`); `None` outside Wine.
    pub fn unix_path(path: &Path) -> Option<PathBuf> {
        let f = export(w!("kernel32.dll"), c"wine_get_unix_file_name")?;
        let wide: Vec<u16> = path.as_os_str().encode_wide().chain([0]).collect();
        // SAFETY: `char *wine_get_unix_file_name(LPCWSTR)`: a NUL-terminated
        // wide path in; a heap string out (or NULL), freed here.
        unsafe {
            let f: unsafe extern "system" fn(*const u16) -> *mut c_char = std::mem::transmute(f);
            let out = f(wide.as_ptr());
            if out.is_null() {
                return None;
            }
            let text = CStr::from_ptr(out).to_string_lossy().into_owned();
            free(out.cast());
            Some(PathBuf::from(text))
        }
    }

    /// The Windows path of the Unix path `unix` (kernel32's
    /// `wine_get_dos_file_name`); `None` outside Wine.
    pub fn dos_path(unix: &Path) -> Option<PathBuf> {
        let f = export(w!("kernel32.dll"), c"wine_get_dos_file_name")?;
        let unix = CString::new(unix.to_str()?).ok()?;
        // SAFETY: `WCHAR *wine_get_dos_file_name(LPCSTR)`: a NUL-terminated
        // path in; a heap wide string out (or NULL), freed here.
        unsafe {
            let f: unsafe extern "system" fn(*const c_char) -> *mut u16 = std::mem::transmute(f);
            let out = f(unix.as_ptr());
            if out.is_null() {
                return None;
            }
            let len = (0..).take_while(|&i| *out.add(i) != 0).count();
            let text = OsString::from_wide(std::slice::from_raw_parts(out, len));
            free(out.cast());
            Some(PathBuf::from(text))
        }
    }
}
