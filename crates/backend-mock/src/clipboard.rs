//! The mock clipboard: text, a concealed flag, a change count, and a paste
//! that happens when Ctrl+V is pressed on the mock keyboard.

use deskhand_backend::{BackendError, Clipboard, ClipboardContent, ClipboardRead};

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
    /// deskhand wrote what is there now.
    pub owned: bool,
}

impl MockClipboard {
    /// deskhand writes `text`; returns the new change count.
    fn write(&mut self, text: &str) -> u64 {
        self.text = Some(text.to_owned());
        self.concealed = false;
        self.change_count += 1;
        self.owned = true;
        self.change_count
    }
}

impl MockDesktop {
    /// Another app copies `text` (marked secret when `concealed`).
    pub fn copy_foreign(&self, text: &str, concealed: bool) {
        let mut s = self.state();
        s.clipboard.text = Some(text.to_owned());
        s.clipboard.concealed = concealed;
        s.clipboard.change_count += 1;
        s.clipboard.owned = false;
    }
}

impl Clipboard for MockDesktop {
    fn read_text(&self, max_bytes: u64, foreign: bool) -> Result<ClipboardRead, BackendError> {
        let s = self.state();
        let cb = &s.clipboard;
        let content = match &cb.text {
            Some(_) if !cb.owned && !foreign => ClipboardContent::Foreign,
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
        Ok(self.state().clipboard.write(text))
    }

    fn write_if_unchanged(&self, change_count: u64, text: &str) -> Result<bool, BackendError> {
        let mut s = self.state();
        if s.clipboard.change_count != change_count {
            return Ok(false);
        }
        s.clipboard.write(text);
        Ok(true)
    }

    fn fetches(&self) -> u64 {
        self.state().clipboard.fetches
    }
}
