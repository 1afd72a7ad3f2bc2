//! Windows: deskhand's windows (consent, Settings, Activity) are web pages
//! in Microsoft Edge WebView2. Where its runtime is missing the app says
//! so in a plain Windows message box and stops, instead of opening blank
//! windows the person could not answer.

/// What the person reads when WebView2 is missing.
pub const MISSING: &str = "deskhand needs the Microsoft Edge WebView2 Runtime to show its \
windows (consent, Settings, Activity), and it is not installed for this account.\n\n\
Install it from https://go.microsoft.com/fwlink/p/?LinkId=2124703 (Microsoft's \
\"Evergreen Bootstrapper\"), then start deskhand again.\n\n\
The command line, deskhand.exe in deskhand's folder, works without it.";

/// The installed WebView2's version, or why there is none.
#[cfg(windows)]
pub fn check() -> Result<String, String> {
    tauri::webview_version().map_err(|e| e.to_string())
}

/// Says [`MISSING`] in a message box (no web page needed) and waits for OK.
#[cfg(windows)]
pub fn say_missing(why: &str) {
    use windows::Win32::UI::WindowsAndMessaging::{MB_ICONERROR, MB_OK, MessageBoxW};
    use windows::core::HSTRING;
    tracing::error!(error = why, "the WebView2 Runtime is missing");
    eprintln!("deskhand: {MISSING}");
    // SAFETY: both strings are valid NUL-terminated UTF-16 for the call's
    // duration; no owner window.
    unsafe {
        MessageBoxW(
            None,
            &HSTRING::from(MISSING),
            &HSTRING::from("deskhand: WebView2 is missing"),
            MB_OK | MB_ICONERROR,
        );
    }
}
