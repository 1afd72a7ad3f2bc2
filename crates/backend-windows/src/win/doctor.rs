//! What the Windows backend tells the doctor: deskhand's session (not
//! session 0) and integrity level (UIPI), capture method, the input
//! desktop (the secure desktop of a UAC prompt or the lock screen, or a
//! desktop other than deskhand's, takes no synthetic input from it), the
//! overlay, and the accessibility path (UI Automation, else MSAA and why).

use deskhand_backend::BackendFindings;
use deskhand_backend::overlay_process::find_overlay;
use deskhand_protocol::doctor::{
    Availability, BackendEntry, CapabilityEntry, CapabilityName as C, ConsentKind as K, Probe,
    ReasonCode, Verdict,
};
use windows::Win32::System::RemoteDesktop::ProcessIdToSessionId;
use windows::Win32::System::StationsAndDesktops::{
    CloseDesktop, DESKTOP_CONTROL_FLAGS, DESKTOP_READOBJECTS, GetThreadDesktop,
    GetUserObjectInformationW, OpenInputDesktop, UOI_NAME,
};
use windows::Win32::System::Threading::{GetCurrentProcessId, GetCurrentThreadId};

use crate::elevation::{desktop_words, integrity_words, session_words};

/// The name of desktop `desk`.
fn name_of(desk: windows::Win32::System::StationsAndDesktops::HDESK) -> Option<String> {
    let mut buf = [0u16; 128];
    let mut needed = 0u32;
    // SAFETY: the buffer and its size are passed together.
    unsafe {
        GetUserObjectInformationW(
            windows::Win32::Foundation::HANDLE(desk.0),
            UOI_NAME,
            Some(buf.as_mut_ptr().cast()),
            (buf.len() * 2) as u32,
            Some(&mut needed),
        )
    }
    .ok()?;
    let len = buf.iter().position(|&c| c == 0).unwrap_or(buf.len());
    Some(String::from_utf16_lossy(&buf[..len]))
}

/// The name of the desktop that receives input now (`Default` for the
/// person's usual one, `Winlogon` for the secure desktop); `None` when it
/// cannot be opened (the secure desktop refuses that too).
pub(crate) fn input_desktop() -> Option<String> {
    // SAFETY: the desktop handle is closed before returning.
    unsafe {
        let desk = OpenInputDesktop(DESKTOP_CONTROL_FLAGS(0), false, DESKTOP_READOBJECTS).ok()?;
        let name = name_of(desk);
        let _ = CloseDesktop(desk);
        name
    }
}

/// The name of the desktop the calling thread is on (the one its input
/// goes to).
pub(crate) fn thread_desktop() -> Option<String> {
    // SAFETY: plain calls; the handle of a thread's desktop is not closed.
    let desk = unsafe { GetThreadDesktop(GetCurrentThreadId()) }.ok()?;
    name_of(desk)
}

/// Whether input this thread sends reaches the person's apps, and why
/// (see [`crate::elevation::desktop_words`]).
pub(crate) fn desktop_takes_input() -> (bool, String) {
    desktop_words(thread_desktop().as_deref(), input_desktop().as_deref())
}

/// The Windows session deskhand runs in.
fn own_session() -> Option<u32> {
    let mut session = 0u32;
    // SAFETY: an out-parameter for this process's own session.
    unsafe { ProcessIdToSessionId(GetCurrentProcessId(), &mut session) }
        .ok()
        .map(|()| session)
}

/// The Windows backend's findings.
pub fn windows_findings() -> BackendFindings {
    let available = Verdict::AVAILABLE;
    let (a11y, a11y_probe) = match super::a11y::check() {
        Ok(path) => (available, Probe::new("accessibility", true, path)),
        Err(why) => (
            Verdict::because(Availability::Unavailable, ReasonCode::NoPlatformApi),
            Probe::new("accessibility", false, why),
        ),
    };
    let no_api = Verdict::because(Availability::Unsupported, ReasonCode::NoPlatformApi);
    let indicator = if find_overlay().is_some() {
        available
    } else {
        Verdict::because(Availability::Unavailable, ReasonCode::IndicatorNotFound)
    };
    let (desktop_ok, desktop) = desktop_takes_input();
    let (session_ok, session) = session_words(own_session());
    let (level_ok, level) = integrity_words(super::integrity::own_level());
    let mut probes = vec![
        Probe::new("session", session_ok, session),
        Probe::new("integrity level", level_ok, level),
        Probe::new(
            "capture",
            true,
            format!("method {}", super::capture::WinCapture::open().method()),
        ),
        Probe::new("input desktop", desktop_ok, desktop),
        Probe::new(
            "capture exclusion",
            true,
            "the red frame asks to be left out of captures (WDA_EXCLUDEFROMCAPTURE, Windows 10 2004 and later); where Windows refuses that (older versions, Wine) it may appear in screenshots",
        ),
    ];
    probes.push(a11y_probe);
    BackendFindings {
        session_type: None,
        backends: vec![BackendEntry::new("windows", true, available)],
        capabilities: vec![
            CapabilityEntry::new(C::CaptureWindow, available, K::Session),
            CapabilityEntry::new(C::InputTakeover, available, K::Takeover),
            CapabilityEntry::new(C::TakeoverIndicator, indicator, K::Takeover),
            CapabilityEntry::new(C::TakeoverHandback, available, K::Takeover),
            CapabilityEntry::new(C::ReadTree, a11y, K::Session),
            CapabilityEntry::new(C::ActSemantic, a11y, K::Takeover),
            CapabilityEntry::new(C::ClipboardRead, available, K::Separate),
            CapabilityEntry::new(C::ClipboardWrite, available, K::Session),
            CapabilityEntry::new(C::ListNotifications, no_api, K::Session),
            CapabilityEntry::new(C::DismissNotification, no_api, K::Session),
            CapabilityEntry::new(C::InvokeNotificationAction, no_api, K::Session),
        ],
        permissions: Vec::new(),
        probes,
    }
}
