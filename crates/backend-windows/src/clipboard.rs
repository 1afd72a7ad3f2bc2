//! Which clipboard formats mark a copy as secret on Windows: what
//! password managers set so that clipboard history and monitors leave the
//! copy alone. deskhand reads no such copy.

/// Registered formats that mark a copy: their presence alone, except
/// `CanIncludeInClipboardHistory`, which conceals when its value is 0.
pub const CONCEALING_FORMATS: &[&str] = &[
    "ExcludeClipboardContentFromMonitorProcessing",
    "Clipboard Viewer Ignore",
    "CanIncludeInClipboardHistory",
];

/// Whether a present format `name` with the 32-bit value `value` (when
/// it holds one) conceals the copy.
pub fn conceals(name: &str, value: Option<u32>) -> bool {
    match name {
        "CanIncludeInClipboardHistory" => value == Some(0),
        _ => true,
    }
}

/// The first marker among `formats` (registered ids and names) that
/// conceals the copy: `present` says whether a format is on the
/// clipboard, `value` reads its 32-bit value.
pub fn concealed_by(
    formats: &[(u32, &'static str)],
    present: impl Fn(u32) -> bool,
    value: impl Fn(u32) -> Option<u32>,
) -> Option<&'static str> {
    formats
        .iter()
        .find(|(id, name)| present(*id) && conceals(name, value(*id)))
        .map(|(_, name)| *name)
}

#[cfg(test)]
mod tests {
    use super::*;

    const IDS: &[(u32, &str)] = &[
        (0xC001, "ExcludeClipboardContentFromMonitorProcessing"),
        (0xC002, "Clipboard Viewer Ignore"),
        (0xC003, "CanIncludeInClipboardHistory"),
    ];

    #[test]
    fn a_password_managers_marks_conceal_the_copy() {
        assert_eq!(
            concealed_by(IDS, |id| id == 0xC001, |_| None),
            Some("ExcludeClipboardContentFromMonitorProcessing")
        );
        assert_eq!(
            concealed_by(IDS, |id| id == 0xC003, |_| Some(0)),
            Some("CanIncludeInClipboardHistory")
        );
    }

    #[test]
    fn history_allowed_or_no_mark_is_not_concealed() {
        assert_eq!(concealed_by(IDS, |id| id == 0xC003, |_| Some(1)), None);
        assert_eq!(concealed_by(IDS, |id| id == 0xC003, |_| None), None);
        assert_eq!(concealed_by(IDS, |_| false, |_| Some(0)), None);
    }
}
