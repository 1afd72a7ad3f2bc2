//! What deskhand's Windows session and integrity level mean for its
//! input, in the doctor's words: session 0 (services) has no desktop to
//! drive, and User Interface Privilege Isolation drops synthetic input to
//! apps of a higher integrity level than the sender's.

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
    fn low_integrity_cannot_drive_and_elevation_is_named() {
        assert!(!integrity_words(Some(0x1000)).0);
        let (ok, words) = integrity_words(Some(0x2000));
        assert!(ok && words.contains("UIPI"), "{words}");
        let (ok, words) = integrity_words(Some(0x3000));
        assert!(ok && words.contains("elevated"), "{words}");
        assert!(!integrity_words(None).0);
    }
}
