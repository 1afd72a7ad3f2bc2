//! The clipboard: the general `NSPasteboard`, with its `changeCount` as
//! the change count. What deskhand wrote is known by the change count its
//! write left; another app's copy is read only when asked for, and never
//! when its types carry a concealing marker ([`crate::pasteboard`]).
//!
//! Fetch counting is missing: seeing another app take the text needs the
//! text offered lazily through an `NSPasteboardItemDataProvider`, whose
//! requests AppKit serves on the main thread's run loop, which the daemon
//! does not run. So [`Clipboard::fetches`] stays 0, and the engine never
//! restores the old clipboard after a paste (it waits for a fetch, which
//! never comes, and leaves the pasted text in place).

use std::sync::Mutex;

use deskhand_backend::{BackendError, Clipboard, ClipboardContent, ClipboardRead};
use objc2::rc::Retained;
use objc2_app_kit::{NSPasteboard, NSPasteboardTypeString};
use objc2_foundation::NSString;

use crate::pasteboard::{Access, access, is_ours, text_of};

/// The clipboard, with the change count deskhand's last write left.
#[derive(Default)]
pub(crate) struct MacClipboard {
    written: Mutex<Option<isize>>,
}

fn general() -> Retained<NSPasteboard> {
    NSPasteboard::generalPasteboard()
}

fn count(n: isize) -> u64 {
    u64::try_from(n).unwrap_or(0)
}

impl MacClipboard {
    fn written(&self) -> Option<isize> {
        *self.written.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Replaces the pasteboard's contents with `text`; the change count
    /// after it.
    fn put(&self, board: &NSPasteboard, text: &str) -> Result<isize, BackendError> {
        board.clearContents();
        // SAFETY: a constant of AppKit.
        let kind = unsafe { NSPasteboardTypeString };
        if !board.setString_forType(&NSString::from_str(text), kind) {
            return Err(BackendError::Failed("NSPasteboard refused the text".into()));
        }
        let after = board.changeCount();
        *self.written.lock().unwrap_or_else(|e| e.into_inner()) = Some(after);
        Ok(after)
    }
}

/// The pasteboard's types, as strings.
fn types_of(board: &NSPasteboard) -> Vec<String> {
    board
        .types()
        .map(|types| types.iter().map(|t| t.to_string()).collect())
        .unwrap_or_default()
}

/// The pasteboard's plain text, refused over `max_bytes` (its size is
/// read before it is turned into a string).
fn text(board: &NSPasteboard, max_bytes: u64) -> ClipboardContent {
    // SAFETY: a constant of AppKit.
    let kind = unsafe { NSPasteboardTypeString };
    let data = board.dataForType(kind);
    match &data {
        Some(d) if d.length() as u64 > max_bytes => ClipboardContent::TooLarge {
            bytes: Some(d.length() as u64),
        },
        Some(d) => text_of(Some(&d.to_vec()), max_bytes),
        None => text_of(None, max_bytes),
    }
}

impl Clipboard for MacClipboard {
    fn read_text(&self, max_bytes: u64, foreign: bool) -> Result<ClipboardRead, BackendError> {
        let board = general();
        let change_count = board.changeCount();
        let ours = is_ours(change_count, self.written());
        let content = match access(ours, foreign, &types_of(&board)) {
            Access::Foreign => ClipboardContent::Foreign,
            Access::Concealed(marker) => ClipboardContent::Concealed { marker },
            Access::Take => text(&board, max_bytes),
        };
        Ok(ClipboardRead {
            content,
            change_count: count(change_count),
        })
    }

    fn write_text(&self, text: &str) -> Result<u64, BackendError> {
        self.put(&general(), text).map(count)
    }

    /// Checked, then written: macOS has no lock on the pasteboard across
    /// processes, so a copy made in the instant between the two is
    /// replaced.
    fn write_if_unchanged(&self, change_count: u64, text: &str) -> Result<bool, BackendError> {
        let board = general();
        if count(board.changeCount()) != change_count {
            return Ok(false);
        }
        self.put(&board, text)?;
        Ok(true)
    }

    /// Always 0: fetch counting is missing on macOS (see the module's
    /// notes); never a made-up number.
    fn fetches(&self) -> u64 {
        0
    }
}
