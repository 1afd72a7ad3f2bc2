//! Moving data through the selection: waiting for events while still
//! serving others, converting the owner's data (INCR included, bounded),
//! and answering other apps' requests for what deskhand owns.

use std::os::fd::{AsFd, AsRawFd};
use std::sync::atomic::Ordering;
use std::time::Instant;

use deskhand_backend::BackendError;
use x11rb::connection::Connection;
use x11rb::protocol::Event;
use x11rb::protocol::xproto::{
    AtomEnum, ConnectionExt as _, EventMask, PropMode, SelectionRequestEvent,
};
use x11rb::wrapper::ConnectionExt as _;
use x11rb::{CURRENT_TIME, NONE};

use super::{ANSWER_TIMEOUT, Converted, Owner, notify_refused, past};
use crate::x11::X11ResultExt;

impl Owner {
    /// Waits (up to [`ANSWER_TIMEOUT`]) for an event `wanted` accepts,
    /// handling every other event meanwhile, so that deskhand keeps serving
    /// its own clipboard while it waits on another app.
    pub(super) fn wait_for(
        &mut self,
        wanted: impl Fn(&Event) -> bool,
    ) -> Result<Option<Event>, BackendError> {
        let deadline = Instant::now() + ANSWER_TIMEOUT;
        loop {
            // Flush before draining: x11rb may queue events while flushing.
            self.conn.flush().backend()?;
            while let Some(event) = self.conn.poll_for_event().backend()? {
                if wanted(&event) {
                    return Ok(Some(event));
                }
                self.handle(event)?;
            }
            if past(deadline) {
                return Ok(None);
            }
            let left = deadline.saturating_duration_since(Instant::now());
            let mut fd = libc::pollfd {
                fd: self.conn.stream().as_fd().as_raw_fd(),
                events: libc::POLLIN,
                revents: 0,
            };
            let ms = i32::try_from(left.as_millis()).unwrap_or(i32::MAX).max(1);
            // SAFETY: one valid pollfd.
            unsafe { libc::poll(&mut fd, 1, ms) };
        }
    }

    /// Asks the owner for `target` and reads the answer, refusing more than
    /// `max_bytes` and incremental (INCR) transfers.
    pub(super) fn convert(
        &mut self,
        target: u32,
        max_bytes: u64,
    ) -> Result<Converted, BackendError> {
        let a = self.atoms;
        let (window, prop) = (self.requestor, a.DESKHAND_SELECTION);
        // A timestamp of our own tells this answer from a late one to an
        // earlier request.
        let time = self.server_time()?;
        self.conn.delete_property(window, prop).backend()?;
        self.conn
            .convert_selection(window, a.CLIPBOARD, target, prop, time)
            .backend()?;
        let answer = self.wait_for(|e| {
            matches!(e, Event::SelectionNotify(n)
                if n.requestor == window && n.selection == a.CLIPBOARD
                    && n.target == target && n.time == time)
        })?;
        let Some(Event::SelectionNotify(n)) = answer else {
            return Ok(Converted::Refused);
        };
        if n.property == NONE {
            return Ok(Converted::Refused);
        }
        let units = u32::try_from(max_bytes / 4 + 1).unwrap_or(u32::MAX);
        let reply = self
            .conn
            .get_property(false, window, prop, AtomEnum::ANY, 0, units)
            .backend()?
            .reply()
            .backend()?;
        if reply.type_ == a.INCR {
            // Refused (driver contract §5.2). Deleting the property would
            // start the transfer, so the requestor window goes instead: the
            // owner's next write fails and it gives up.
            let bytes = reply.value32().and_then(|mut v| v.next()).map(u64::from);
            self.replace_requestor()?;
            return Ok(Converted::TooLarge(bytes));
        }
        self.conn.delete_property(window, prop).backend()?;
        if reply.bytes_after > 0 || reply.value.len() as u64 > max_bytes {
            let total = reply.value.len() as u64 + u64::from(reply.bytes_after);
            return Ok(Converted::TooLarge(Some(total)));
        }
        Ok(Converted::Data(reply.type_, reply.value))
    }

    fn replace_requestor(&mut self) -> Result<(), BackendError> {
        self.conn.destroy_window(self.requestor).backend()?;
        self.requestor = super::input_only_window(&self.conn, self.root, EventMask::NO_EVENT)?;
        Ok(())
    }

    /// Answers another app's request for what deskhand owns.
    pub(super) fn serve(&mut self, req: SelectionRequestEvent) -> Result<(), BackendError> {
        let a = self.atoms;
        let string = a.STRING_ATOM();
        // Obsolete clients name no property: use the target (ICCCM).
        let property = if req.property == NONE {
            req.target
        } else {
            req.property
        };
        let current = req.time == CURRENT_TIME || req.time >= self.owned_since;
        let conn = &self.conn;
        let served = match &self.text {
            Some(text) if req.selection == a.CLIPBOARD && current => {
                if req.target == a.TARGETS {
                    let targets = [
                        a.TARGETS,
                        a.TIMESTAMP,
                        a.UTF8_STRING,
                        a.TEXT_PLAIN_UTF8,
                        a.TEXT,
                        string,
                    ];
                    conn.change_property32(
                        PropMode::REPLACE,
                        req.requestor,
                        property,
                        AtomEnum::ATOM,
                        &targets,
                    )
                    .backend()?;
                    true
                } else if req.target == a.TIMESTAMP {
                    conn.change_property32(
                        PropMode::REPLACE,
                        req.requestor,
                        property,
                        AtomEnum::INTEGER,
                        &[self.owned_since],
                    )
                    .backend()?;
                    true
                } else {
                    let bytes = if [a.UTF8_STRING, a.TEXT_PLAIN_UTF8, a.TEXT].contains(&req.target)
                    {
                        Some(text.as_bytes().to_vec())
                    } else if req.target == string {
                        latin1(text)
                    } else {
                        None
                    };
                    match bytes {
                        Some(bytes) => {
                            // TEXT is answered as UTF8_STRING.
                            let kind = if req.target == a.TEXT {
                                a.UTF8_STRING
                            } else {
                                req.target
                            };
                            conn.change_property8(
                                PropMode::REPLACE,
                                req.requestor,
                                property,
                                kind,
                                &bytes,
                            )
                            .backend()?;
                            self.fetches.fetch_add(1, Ordering::SeqCst);
                            true
                        }
                        None => false,
                    }
                }
            }
            _ => false,
        };
        let mut notify = notify_refused(&req);
        if served {
            notify.property = property;
        }
        self.conn
            .send_event(false, req.requestor, EventMask::NO_EVENT, notify)
            .backend()?;
        self.conn.flush().backend()
    }
}

/// `text` as ISO Latin-1 (the STRING target), when every character fits.
fn latin1(text: &str) -> Option<Vec<u8>> {
    text.chars()
        .map(|c| u8::try_from(u32::from(c)).ok())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::latin1;

    #[test]
    fn string_target_is_latin1_or_nothing() {
        assert_eq!(latin1("café"), Some(vec![b'c', b'a', b'f', 0xe9]));
        assert_eq!(latin1("日本"), None);
    }
}
