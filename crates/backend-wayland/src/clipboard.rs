//! The clipboard through the portal's Clipboard interface, which comes
//! with the RemoteDesktop session where the desktop offers it (newer
//! portals; not GNOME 43). deskhand learns who owns the clipboard and its
//! MIME types from `SelectionOwnerChanged`, reads another app's text with
//! `SelectionRead` (never a copy marked secret), and serves what it wrote
//! on each `SelectionTransfer`, counting the fetches.

use std::io::{Read, Write};
use std::os::fd::OwnedFd;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use deskhand_backend::{BackendError, ClipboardContent, ClipboardRead};
use deskhand_backend_linux::CONCEALED_MIME;
use futures_util::StreamExt;

use crate::portal::{Portals, RemoteSession};
use crate::rt::Rt;

/// The text types deskhand offers, and takes from others in this order.
const TEXT_TYPES: &[&str] = &[
    "text/plain;charset=utf-8",
    "UTF8_STRING",
    "text/plain",
    "STRING",
    "TEXT",
];

/// How long a read or write may wait on the desktop or the owner.
const WAIT: Duration = Duration::from_secs(5);

/// What deskhand knows of the clipboard, from the portal's signals and
/// its own writes.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub(crate) struct ClipState {
    /// Grows with every change of owner or contents.
    pub(crate) change_count: u64,
    /// The text deskhand put there, while deskhand owns the clipboard.
    pub(crate) ours: Option<String>,
    /// The owner's MIME types, when another app owns it (None: not said).
    pub(crate) types: Option<Vec<String>>,
    /// How many times an app fetched deskhand's text.
    pub(crate) fetches: u64,
}

impl ClipState {
    /// The portal said the owner changed.
    pub(crate) fn owner_changed(&mut self, session_is_owner: bool, types: &[String]) {
        self.change_count += 1;
        if !session_is_owner {
            self.ours = None;
            self.types = Some(types.to_vec());
        }
    }

    /// deskhand put `text` there.
    pub(crate) fn wrote(&mut self, text: &str) -> u64 {
        self.change_count += 1;
        self.ours = Some(text.to_owned());
        self.types = None;
        self.change_count
    }

    /// What a read finds without a transfer, or the text type to
    /// transfer from the owner.
    pub(crate) fn judge(&self, foreign: bool) -> Judged {
        if let Some(text) = &self.ours {
            return Judged::Found(ClipboardContent::Text(text.clone()));
        }
        if !foreign {
            return Judged::Found(ClipboardContent::Foreign);
        }
        let Some(types) = &self.types else {
            return Judged::Found(ClipboardContent::Unverifiable);
        };
        if types.iter().any(|t| t == CONCEALED_MIME) {
            return Judged::Found(ClipboardContent::Concealed {
                marker: CONCEALED_MIME,
            });
        }
        match TEXT_TYPES
            .iter()
            .find(|t| types.iter().any(|have| have == *t))
        {
            Some(mime) => Judged::Transfer(mime),
            None => Judged::Found(ClipboardContent::NoText),
        }
    }
}

/// What a read does.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Judged {
    /// Answered from what is known: no transfer.
    Found(ClipboardContent),
    /// Transfer this text type from the owner.
    Transfer(&'static str),
}

/// The backend's clipboard: the portal's, once input is granted with it.
pub(crate) struct PortalClipboard {
    pub(crate) rt: Arc<Rt>,
    pub(crate) portals: Arc<Portals>,
}

impl PortalClipboard {
    fn session(&self) -> Result<Arc<RemoteSession>, BackendError> {
        let rs = self.portals.input().ok_or_else(|| {
            BackendError::Unsupported(
                "the clipboard comes with the RemoteDesktop portal's session, not granted".into(),
            )
        })?;
        if rs.clipboard.is_none() {
            return Err(BackendError::Unsupported(
                "this desktop's RemoteDesktop portal offers no clipboard (no Clipboard portal, or the person turned it off)".into(),
            ));
        }
        Ok(rs)
    }

    fn state(&self) -> std::sync::MutexGuard<'_, ClipState> {
        lock(&self.portals.clip)
    }

    /// Takes ownership with deskhand's text types; `text` is served on
    /// each transfer.
    fn set(&self, rs: Arc<RemoteSession>) -> Result<(), BackendError> {
        self.rt.run(WAIT, "the clipboard", async move {
            let Some(cb) = &rs.clipboard else {
                return Err(BackendError::Unsupported("no clipboard".into()));
            };
            let options = ashpd::desktop::clipboard::SetSelectionOptions::default()
                .set_mime_types(TEXT_TYPES);
            cb.set_selection(&rs.session, options)
                .await
                .map_err(|e| BackendError::Failed(format!("SetSelection: {e}")))
        })
    }
}

impl deskhand_backend::Clipboard for PortalClipboard {
    fn read_text(&self, max_bytes: u64, foreign: bool) -> Result<ClipboardRead, BackendError> {
        let rs = self.session()?;
        let (judged, change_count) = {
            let s = self.state();
            (s.judge(foreign), s.change_count)
        };
        let mime = match judged {
            Judged::Found(content) => {
                return Ok(ClipboardRead {
                    content,
                    change_count,
                });
            }
            Judged::Transfer(mime) => mime,
        };
        let content = self.rt.run(WAIT, "the clipboard", async move {
            let Some(cb) = &rs.clipboard else {
                return Err(BackendError::Unsupported("no clipboard".into()));
            };
            let fd = cb
                .selection_read(&rs.session, mime)
                .await
                .map_err(|e| BackendError::Failed(format!("SelectionRead: {e}")))?;
            tokio::task::spawn_blocking(move || read_fd(fd.into(), max_bytes))
                .await
                .map_err(|e| BackendError::Failed(e.to_string()))?
        })?;
        Ok(ClipboardRead {
            content,
            change_count,
        })
    }

    fn write_text(&self, text: &str) -> Result<u64, BackendError> {
        let rs = self.session()?;
        self.set(rs)?;
        Ok(self.state().wrote(text))
    }

    fn write_if_unchanged(&self, change_count: u64, text: &str) -> Result<bool, BackendError> {
        let rs = self.session()?;
        if self.state().change_count != change_count {
            return Ok(false);
        }
        self.set(rs)?;
        let mut s = self.state();
        // Another owner came between the check and the write: the portal
        // has deskhand's selection now, so deskhand's text is what is there.
        s.wrote(text);
        Ok(true)
    }

    fn fetches(&self) -> u64 {
        self.state().fetches
    }
}

/// Reads at most `max_bytes` of text from the owner's pipe.
fn read_fd(fd: OwnedFd, max_bytes: u64) -> Result<ClipboardContent, BackendError> {
    let mut bytes = Vec::new();
    std::fs::File::from(fd)
        .take(max_bytes.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(|e| BackendError::Failed(format!("reading the clipboard: {e}")))?;
    if bytes.len() as u64 > max_bytes {
        return Ok(ClipboardContent::TooLarge { bytes: None });
    }
    Ok(ClipboardContent::Text(
        String::from_utf8_lossy(&bytes).into_owned(),
    ))
}

/// Follows the portal's clipboard signals for this session: who owns it,
/// and each app's fetch of deskhand's text.
pub(crate) async fn follow(rs: Arc<RemoteSession>, state: Arc<Mutex<ClipState>>) {
    let Some(cb) = &rs.clipboard else {
        return;
    };
    let (owners, transfers) = match futures_util::try_join!(
        cb.receive_selection_owner_changed::<ashpd::desktop::remote_desktop::RemoteDesktop>(),
        cb.receive_selection_transfer::<ashpd::desktop::remote_desktop::RemoteDesktop>()
    ) {
        Ok(streams) => streams,
        Err(e) => {
            tracing::warn!(error = %e, "the clipboard portal's signals cannot be followed");
            return;
        }
    };
    let events = futures_util::stream::select(
        owners.map(|(_, change)| Event::Owner(change)),
        transfers.map(|(_, _mime, serial)| Event::Transfer(serial)),
    );
    futures_util::pin_mut!(events);
    while let Some(event) = events.next().await {
        match event {
            Event::Owner(change) => lock(&state).owner_changed(
                change.session_is_owner().unwrap_or(false),
                change.mime_types(),
            ),
            Event::Transfer(serial) => {
                let text = lock(&state).ours.clone();
                if serve(cb, &rs, serial, text).await {
                    lock(&state).fetches += 1;
                }
            }
        }
    }
}

/// A clipboard signal of the session.
enum Event {
    Owner(ashpd::desktop::clipboard::SelectionOwnerChanged),
    Transfer(u32),
}

fn lock(state: &Mutex<ClipState>) -> std::sync::MutexGuard<'_, ClipState> {
    state.lock().unwrap_or_else(|e| e.into_inner())
}

/// Writes deskhand's text into an app's transfer; whether it was served.
async fn serve(
    cb: &ashpd::desktop::clipboard::Clipboard,
    rs: &RemoteSession,
    serial: u32,
    text: Option<String>,
) -> bool {
    let written = match (text, cb.selection_write(&rs.session, serial).await) {
        (Some(text), Ok(fd)) => tokio::task::spawn_blocking(move || {
            std::fs::File::from(OwnedFd::from(fd))
                .write_all(text.as_bytes())
                .is_ok()
        })
        .await
        .unwrap_or(false),
        _ => false,
    };
    let _ = cb.selection_write_done(&rs.session, serial, written).await;
    written
}

#[cfg(test)]
mod tests {
    use super::*;

    fn types(t: &[&str]) -> Vec<String> {
        t.iter().map(|s| (*s).to_owned()).collect()
    }

    #[test]
    fn deskhands_own_text_is_read_back_and_anothers_only_when_asked_for() {
        let mut s = ClipState::default();
        assert_eq!(s.judge(true), Judged::Found(ClipboardContent::Unverifiable));
        assert_eq!(s.wrote("hello"), 1);
        assert_eq!(
            s.judge(false),
            Judged::Found(ClipboardContent::Text("hello".into()))
        );
        s.owner_changed(true, &[]);
        assert_eq!(
            s.ours.as_deref(),
            Some("hello"),
            "the portal echoing deskhand's own"
        );
        s.owner_changed(false, &types(&["text/plain", "text/html"]));
        assert_eq!(s.change_count, 3);
        assert_eq!(s.judge(false), Judged::Found(ClipboardContent::Foreign));
        assert_eq!(s.judge(true), Judged::Transfer("text/plain"));
    }

    #[test]
    fn a_secret_copy_is_never_transferred_and_utf8_is_preferred() {
        let mut s = ClipState::default();
        s.owner_changed(false, &types(&["text/plain", "x-kde-passwordManagerHint"]));
        assert_eq!(
            s.judge(true),
            Judged::Found(ClipboardContent::Concealed {
                marker: "x-kde-passwordManagerHint"
            })
        );
        s.owner_changed(false, &types(&["STRING", "text/plain;charset=utf-8"]));
        assert_eq!(s.judge(true), Judged::Transfer("text/plain;charset=utf-8"));
        s.owner_changed(false, &types(&["image/png"]));
        assert_eq!(s.judge(true), Judged::Found(ClipboardContent::NoText));
    }

    #[test]
    fn a_read_stops_past_the_limit() {
        let (r, w) = std::io::pipe().expect("a pipe");
        std::fs::File::from(OwnedFd::from(w))
            .write_all(b"12345")
            .expect("written");
        assert_eq!(
            read_fd(OwnedFd::from(r), 4).expect("read"),
            ClipboardContent::TooLarge { bytes: None }
        );
        let (r, w) = std::io::pipe().expect("a pipe");
        std::fs::File::from(OwnedFd::from(w))
            .write_all("Wörld".as_bytes())
            .expect("written");
        assert_eq!(
            read_fd(OwnedFd::from(r), 64).expect("read"),
            ClipboardContent::Text("Wörld".into())
        );
    }
}
