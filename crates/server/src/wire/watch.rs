//! A request is answered while the socket is still read: a client that
//! goes away mid-request (closed, killed, network gone) ends its session's
//! takeover at once, so that the act under way stops at its next step and
//! everything it holds is released, instead of running to its end.

use std::collections::VecDeque;

use tokio_tungstenite::tungstenite::Message;

use super::{Connection, Reply};

/// Most messages read ahead while a request is answered; past it the
/// socket is left unread until the request is done.
const MAX_READ_AHEAD: usize = 64;

/// Messages read while a request was answered, in order.
#[derive(Default)]
pub(super) struct ReadAhead(VecDeque<Message>);

impl ReadAhead {
    pub(super) fn pop(&mut self) -> Option<Message> {
        self.0.pop_front()
    }
}

impl Connection {
    /// Answers `text`; `None` when the client went away meanwhile (its
    /// takeover was ended as soon as that was seen).
    pub(super) async fn handle_watching(&mut self, text: &str) -> Option<(Option<String>, Reply)> {
        let engine = self.handler.state.engine.clone();
        let session = self.handler.session.clone();
        let handling = self.handler.handle(text);
        tokio::pin!(handling);
        let mut gone = false;
        loop {
            let reading = !gone && self.read_ahead.0.len() < MAX_READ_AHEAD;
            tokio::select! {
                answered = &mut handling => return (!gone).then_some(answered),
                next = self.socket.recv(), if reading => match next {
                    Some(Ok(Message::Close(_))) | Some(Err(_)) | None => {
                        gone = true;
                        tracing::info!(session = %session.id, "the client went away mid-request: stopping its act");
                        engine.abandon_session(&session).await;
                    }
                    Some(Ok(message)) => self.read_ahead.0.push_back(message),
                },
            }
        }
    }
}
