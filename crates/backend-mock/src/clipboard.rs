//! The mock clipboard: text, a concealed flag, a change count, and a paste
//! that happens when Ctrl+V is pressed on the mock keyboard.

use deskhand_engine::{BackendError, Clipboard, ClipboardContent, ClipboardRead};

use crate::MockDesktop;

/// What the mock clipboard holds.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct MockClipboard {
    /// The text, if any.
    pub text: Option<String>,
    /// Marked secret by its owner (a password manager).
    pub concealed: bool,
    /// Grows on every change.
    pub change_count: u64,
    /// How often an app fetched the text (each Ctrl+V).
    pub fetches: u64,
}

impl MockDesktop {
    /// Another app copies `text` (marked secret when `concealed`).
    pub fn copy_foreign(&self, text: &str, concealed: bool) {
        let mut s = self.state();
        s.clipboard.text = Some(text.to_owned());
        s.clipboard.concealed = concealed;
        s.clipboard.change_count += 1;
    }
}

impl Clipboard for MockDesktop {
    fn read_text(&self, max_bytes: u64) -> Result<ClipboardRead, BackendError> {
        let s = self.state();
        let cb = &s.clipboard;
        let content = match &cb.text {
            _ if cb.concealed => ClipboardContent::Concealed {
                marker: "x-kde-passwordManagerHint",
            },
            Some(t) if t.len() as u64 > max_bytes => ClipboardContent::TooLarge {
                bytes: Some(t.len() as u64),
            },
            Some(t) => ClipboardContent::Text(t.clone()),
            None => ClipboardContent::NoText,
        };
        Ok(ClipboardRead {
            content,
            change_count: cb.change_count,
        })
    }

    fn write_text(&self, text: &str) -> Result<u64, BackendError> {
        let mut s = self.state();
        s.clipboard.text = Some(text.to_owned());
        s.clipboard.concealed = false;
        s.clipboard.change_count += 1;
        Ok(s.clipboard.change_count)
    }

    fn change_count(&self) -> Result<u64, BackendError> {
        Ok(self.state().clipboard.change_count)
    }

    fn fetches(&self) -> u64 {
        self.state().clipboard.fetches
    }
}
