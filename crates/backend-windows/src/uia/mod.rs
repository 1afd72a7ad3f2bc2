//! Accessibility through UI Automation, the OS-free part: how an element's
//! control type, properties and patterns become deskhand's row ([`map`]),
//! how a window's tree is walked within limits and a path followed back
//! to its element ([`tree`]), and what an act checks before it calls a
//! pattern ([`acts`]). Each works over a [`tree::Source`]; Windows' is the
//! COM client in `win/uia/`, the tests' a recorded tree.
//!
//! Not run on Windows yet: Wine has no UI Automation, so only this logic
//! is tested (on recorded trees) and the COM client type-checked.

pub mod acts;
pub mod map;
pub mod tree;

#[cfg(test)]
mod recorded;

use std::time::Duration;

use deskhand_backend::BackendError;
use thiserror::Error;

/// What went wrong reading or acting through UI Automation.
#[derive(Debug, Error)]
pub enum UiaError {
    /// UI Automation cannot be used on this system.
    #[error("UI Automation is unavailable: {0}")]
    Unavailable(String),
    /// The read took longer than its bound.
    #[error("the accessibility read took longer than {} ms", .0.as_millis())]
    Timeout(Duration),
    /// A UI Automation call failed.
    #[error("{what} failed: {message}")]
    Call {
        /// The call.
        what: &'static str,
        /// What Windows said.
        message: String,
    },
    /// The window or element asked for is not there (or changed).
    #[error("{0}")]
    NotFound(String),
    /// The element cannot do what was asked.
    #[error("{0}")]
    Unable(String),
}

/// A failed COM call's code and text, for people: `0x80040154
/// REGDB_E_CLASSNOTREG (class not registered)`. The code always shows;
/// Windows' own text follows when it has one (Wine often has none), else
/// the name of a code deskhand knows.
pub fn hresult_words(code: u32, message: &str) -> String {
    let known = match code {
        0x8004_0154 => Some("REGDB_E_CLASSNOTREG (class not registered)"),
        0x8000_4001 => Some("E_NOTIMPL (not implemented)"),
        0x8000_4002 => Some("E_NOINTERFACE (no such interface)"),
        0x8007_0005 => Some("E_ACCESSDENIED (access denied)"),
        0x8000_4005 => Some("E_FAIL (unspecified failure)"),
        0x8007_0057 => Some("E_INVALIDARG (invalid argument)"),
        _ => None,
    };
    let message = message.trim();
    match (known, message.is_empty()) {
        (Some(name), true) => format!("{code:#010x} {name}"),
        (Some(name), false) => format!("{code:#010x} {name}: {message}"),
        (None, true) => format!("{code:#010x}"),
        (None, false) => format!("{code:#010x}: {message}"),
    }
}

impl From<UiaError> for BackendError {
    /// Unavailable is `Unsupported`, a missing or changed element `Stale`,
    /// an element unable to do it `InvalidTarget`, the rest `Failed`.
    fn from(e: UiaError) -> Self {
        match e {
            UiaError::Unavailable(_) => BackendError::Unsupported(e.to_string()),
            UiaError::NotFound(_) => BackendError::Stale(e.to_string()),
            UiaError::Unable(_) => BackendError::InvalidTarget(e.to_string()),
            UiaError::Timeout(_) | UiaError::Call { .. } => BackendError::Failed(e.to_string()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::hresult_words;

    #[test]
    fn a_code_always_shows_with_its_name_or_windows_text() {
        assert_eq!(
            hresult_words(0x8004_0154, ""),
            "0x80040154 REGDB_E_CLASSNOTREG (class not registered)"
        );
        assert_eq!(
            hresult_words(0x8004_0154, "Class not registered\r\n"),
            "0x80040154 REGDB_E_CLASSNOTREG (class not registered): Class not registered"
        );
        assert_eq!(hresult_words(0x8000_ffff, " "), "0x8000ffff");
        assert_eq!(hresult_words(0x8000_ffff, "boom"), "0x8000ffff: boom");
    }
}
