//! Input Windows would drop without a word: User Interface Privilege
//! Isolation drops synthetic input to a process of a higher integrity
//! level (an elevated app), and the secure desktop (a UAC prompt, the lock
//! screen) or another desktop than deskhand's takes none. Both are checked before input is sent; the answer
//! is kept for as long as the foreground window stays the same.

use deskhand_backend::BackendError;
use windows::Win32::Foundation::{CloseHandle, HANDLE, HWND};
use windows::Win32::Security::{
    GetSidSubAuthority, GetSidSubAuthorityCount, GetTokenInformation, TOKEN_MANDATORY_LABEL,
    TOKEN_QUERY, TokenIntegrityLevel,
};
use windows::Win32::System::Threading::{
    GetCurrentProcess, OpenProcess, OpenProcessToken, PROCESS_QUERY_LIMITED_INFORMATION,
};
use windows::Win32::UI::WindowsAndMessaging::{GetForegroundWindow, GetWindowThreadProcessId};

/// The integrity level (the mandatory label's last sub-authority, e.g.
/// 0x2000 medium, 0x3000 high) of `process`'s token.
fn level_of(process: HANDLE) -> Option<u32> {
    // SAFETY: the token is closed before returning; the buffer is large
    // enough for a label and its SID, and read only as the call filled it.
    unsafe {
        let mut token = HANDLE::default();
        OpenProcessToken(process, TOKEN_QUERY, &mut token).ok()?;
        let mut buf = [0u64; 16];
        let mut len = 0u32;
        let read = GetTokenInformation(
            token,
            TokenIntegrityLevel,
            Some(buf.as_mut_ptr().cast()),
            std::mem::size_of_val(&buf) as u32,
            &mut len,
        );
        let _ = CloseHandle(token);
        read.ok()?;
        let label = &*(buf.as_ptr().cast::<TOKEN_MANDATORY_LABEL>());
        let sid = label.Label.Sid;
        let count = *GetSidSubAuthorityCount(sid);
        if count == 0 {
            return None;
        }
        Some(*GetSidSubAuthority(sid, u32::from(count) - 1))
    }
}

/// deskhand's own integrity level.
pub(crate) fn own_level() -> Option<u32> {
    // SAFETY: the current process's pseudo-handle needs no closing.
    level_of(unsafe { GetCurrentProcess() })
}

/// The integrity level of the process that owns `window`.
fn level_of_window(window: HWND) -> Option<u32> {
    let mut pid = 0u32;
    // SAFETY: plain calls; the process handle is closed before returning.
    unsafe {
        GetWindowThreadProcessId(window, Some(&mut pid));
        let process = OpenProcess(PROCESS_QUERY_LIMITED_INFORMATION, false, pid).ok()?;
        let level = level_of(process);
        let _ = CloseHandle(process);
        level
    }
}

/// deskhand's level and the verdict for the last foreground window seen.
#[derive(Default)]
pub(crate) struct Uipi {
    ours: Option<u32>,
    last: Option<(isize, bool)>,
}

impl Uipi {
    /// Fails when the foreground window runs at a higher integrity level
    /// than deskhand: Windows would drop the input without a word.
    pub(crate) fn check(&mut self) -> Result<(), BackendError> {
        // SAFETY: plain calls.
        let (foreground, ours) = unsafe { (GetForegroundWindow(), GetCurrentProcess()) };
        let key = foreground.0 as isize;
        // No foreground window: the secure desktop may be up; look again
        // every time.
        if key == 0 {
            desktop_check()?;
        }
        let blocked = match self.last {
            Some((seen, blocked)) if seen == key && key != 0 => blocked,
            _ => {
                desktop_check()?;
                let ours = *self.ours.get_or_insert_with(|| level_of(ours).unwrap_or(0));
                let blocked = level_of_window(foreground).is_some_and(|theirs| theirs > ours);
                self.last = Some((key, blocked));
                blocked
            }
        };
        if blocked {
            return Err(BackendError::InvalidTarget(
                "the focused window belongs to a program running as administrator (a higher integrity level than deskhand's): Windows drops deskhand's input to it; run deskhand elevated, or focus another window".into(),
            ));
        }
        Ok(())
    }
}

/// Fails when the input desktop is the secure one or another than this
/// thread's: Windows would drop the input.
fn desktop_check() -> Result<(), BackendError> {
    match super::doctor::desktop_takes_input() {
        (true, _) => Ok(()),
        (false, why) => Err(BackendError::Unsupported(why)),
    }
}
