//! What deskhand's Windows session and integrity level mean for its
//! input, in the doctor's words: session 0 (services) has no desktop to
//! drive, and User Interface Privilege Isolation drops synthetic input to
//! apps of a higher integrity level than the sender's.

/// The secure desktop's name: a UAC prompt's, the lock screen's.
const SECURE_DESKTOP: &str = "Winlogon";

/// Whether synthetic input deskhand sends reaches the person's apps, by
/// the name of the desktop its thread is on (`thread`) and of the one that
/// has the input now (`input`; `None` when it cannot be opened, as the
/// secure desktop refuses), and why. Any desktop of the person's counts,
/// not only `Default` (one made with `CreateDesktop`, a virtual desktop
/// manager's): input is refused only on the secure desktop or when the
/// input desktop is another one than deskhand's (Windows would drop it).
pub fn desktop_words(thread: Option<&str>, input: Option<&str>) -> (bool, String) {
    match (thread, input) {
        (_, None) => (
            false,
            "the input desktop cannot be opened: the secure desktop (a UAC prompt, the lock screen) may have the input, and Windows takes no synthetic input there".into(),
        ),
        (_, Some(i)) if i.eq_ignore_ascii_case(SECURE_DESKTOP) => (
            false,
            format!(
                "{i}: the secure desktop (a UAC prompt, the lock screen) has the input; Windows takes no synthetic input there"
            ),
        ),
        (Some(t), Some(i)) if !t.eq_ignore_ascii_case(i) => (
            false,
            format!(
                "{i} has the input, but deskhand runs on {t}: Windows drops its input to the apps on {i}"
            ),
        ),
        (_, Some(i)) => (
            true,
            format!("{i}: deskhand's own desktop has the input; its input reaches the person's apps"),
        ),
    }
}

/// Integrity levels (the mandatory label's last sub-authority).
const MEDIUM: u32 = 0x2000;
const HIGH: u32 = 0x3000;

/// Whether deskhand's session can drive a desktop, and why.
pub fn session_words(session: Option<u32>) -> (bool, String) {
    match session {
        Some(0) => (
            false,
            "session 0 (services): it has no desktop to drive; run deskhand in the person's own session".into(),
        ),
        Some(n) => (true, format!("session {n}, interactive")),
        None => (false, "the session could not be read".into()),
    }
}

/// Whether deskhand's integrity `level` lets its input reach the
/// person's apps, and what it means.
pub fn integrity_words(level: Option<u32>) -> (bool, String) {
    match level {
        None => (false, "the integrity level could not be read".into()),
        Some(l) if l < MEDIUM => (
            false,
            format!("low integrity (0x{l:x}): Windows drops deskhand's input to the person's apps"),
        ),
        Some(l) if l < HIGH => (
            true,
            format!(
                "medium integrity (0x{l:x}): input reaches the person's apps; an app run as administrator refuses it (UIPI), and deskhand says so before sending"
            ),
        ),
        Some(l) => (
            true,
            format!(
                "high integrity (0x{l:x}, elevated): input reaches apps run as administrator too; run deskhand as the person unless that is meant"
            ),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn session_zero_has_no_desktop() {
        assert!(!session_words(Some(0)).0);
        assert_eq!(
            session_words(Some(2)),
            (true, "session 2, interactive".into())
        );
        assert!(!session_words(None).0);
    }

    #[test]
    fn any_desktop_of_deskhands_takes_input_but_the_secure_one_and_anothers_do_not() {
        assert!(desktop_words(Some("Default"), Some("Default")).0);
        // A desktop the person made (CreateDesktop), deskhand running on it.
        let (ok, words) = desktop_words(Some("Work"), Some("work"));
        assert!(ok, "{words}");
        // A UAC prompt or the lock screen: by name, or not even openable.
        let (ok, words) = desktop_words(Some("Default"), Some("Winlogon"));
        assert!(!ok && words.contains("secure desktop"), "{words}");
        assert!(!desktop_words(Some("Default"), None).0);
        // The input is on another desktop than deskhand's.
        let (ok, words) = desktop_words(Some("Default"), Some("Work"));
        assert!(!ok && words.contains("deskhand runs on Default"), "{words}");
        // deskhand's own desktop unread: only the secure one is refused.
        assert!(desktop_words(None, Some("Work")).0);
    }

    #[test]
    fn low_integrity_cannot_drive_and_elevation_is_named() {
        assert!(!integrity_words(Some(0x1000)).0);
        let (ok, words) = integrity_words(Some(0x2000));
        assert!(ok && words.contains("UIPI"), "{words}");
        let (ok, words) = integrity_words(Some(0x3000));
        assert!(ok && words.contains("elevated"), "{words}");
        assert!(!integrity_words(None).0);
    }
}
