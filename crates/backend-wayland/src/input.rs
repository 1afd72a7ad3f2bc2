//! Input through the RemoteDesktop portal: the pointer in the session's
//! stream (desktop pixels less the stream's position), buttons by evdev
//! code, keys and every character by keysym (mutter finds or makes a key
//! for each). Each event marks deskhand's last input for the hand-back
//! watcher.

use std::sync::Arc;
use std::time::Duration;

use deskhand_backend::keys::Key;
use deskhand_backend::{BackendError, Button, Input, Point, ScrollDirection, typed_chars};
use deskhand_backend_linux::keymap::{keysym_for, named_keysym};

use crate::portal::{Grant, Portals, RemoteSession};
use crate::rt::Rt;
use crate::watcher::LastInput;

const CALL: Duration = Duration::from_secs(2);

/// The evdev code of a button.
pub(crate) fn button_code(b: Button) -> i32 {
    match b {
        Button::Left => 0x110,
        Button::Right => 0x111,
        Button::Middle => 0x112,
        Button::Back => 0x113,
        Button::Forward => 0x114,
    }
}

/// The keysym a key is sent as.
pub(crate) fn key_keysym(key: Key) -> Option<u32> {
    match key {
        Key::Char(c) => keysym_for(c),
        key => named_keysym(key),
    }
}

/// Why there is no input session, for the error an act gets.
pub(crate) fn no_input(grant: &Grant) -> BackendError {
    match grant {
        Grant::Pending => BackendError::Unsupported(
            "input waits for the person's answer in the desktop's Remote Desktop dialog".into(),
        ),
        Grant::Denied => BackendError::Unsupported(
            "the person denied remote interaction in the desktop's dialog (portal_remote_desktop_denied); restart deskhand to be asked again".into(),
        ),
        Grant::Unavailable(why) | Grant::Failed(why) => {
            BackendError::Unsupported(format!("no RemoteDesktop portal session: {why}"))
        }
        Grant::Granted => BackendError::Failed("the RemoteDesktop session is gone".into()),
    }
}

pub(crate) struct PortalInput {
    pub(crate) rt: Arc<Rt>,
    pub(crate) portals: Arc<Portals>,
    pub(crate) last: Arc<LastInput>,
}

impl PortalInput {
    fn session(&self) -> Result<Arc<RemoteSession>, BackendError> {
        self.portals
            .input()
            .ok_or_else(|| no_input(&self.portals.remote_grant()))
    }

    /// Sends what `send` sends on the session, then marks the time.
    fn send<F, Fut>(&self, what: &str, send: F) -> Result<(), BackendError>
    where
        F: FnOnce(Arc<RemoteSession>) -> Fut,
        Fut: std::future::Future<Output = Result<(), BackendError>> + Send + 'static,
    {
        let session = self.session()?;
        self.last.mark();
        let result = self.rt.run(CALL, what, send(session));
        self.last.mark();
        result
    }

    fn keysym_tap(&self, sym: u32) -> Result<(), BackendError> {
        self.send("a key", move |s| async move {
            s.keysym(sym, true).await?;
            s.keysym(sym, false).await
        })
    }
}

impl Input for PortalInput {
    fn move_pointer(&mut self, to: Point) -> Result<(), BackendError> {
        self.send("a pointer move", move |s| async move {
            let (x0, y0) = s.stream.position;
            s.motion(f64::from(to.x - x0), f64::from(to.y - y0)).await
        })
    }

    fn button(&mut self, button: Button, press: bool) -> Result<(), BackendError> {
        let code = button_code(button);
        self.send(
            "a button",
            move |s| async move { s.button(code, press).await },
        )
    }

    fn key(&mut self, key: Key, press: bool) -> Result<(), BackendError> {
        let sym = key_keysym(key)
            .ok_or_else(|| BackendError::InvalidTarget(format!("no keysym for {key:?}")))?;
        self.send("a key", move |s| async move { s.keysym(sym, press).await })
    }

    fn text(&mut self, text: &str) -> Result<(), BackendError> {
        self.type_text(text, &mut |_, _| std::ops::ControlFlow::Continue(()))
    }

    fn type_text(
        &mut self,
        text: &str,
        gate: &mut dyn FnMut(usize, usize) -> std::ops::ControlFlow<()>,
    ) -> Result<(), BackendError> {
        let chars = typed_chars(text);
        let mut syms = Vec::with_capacity(chars.len());
        for &(index, character) in &chars {
            let sym = keysym_for(character).ok_or(BackendError::Untypable {
                index,
                character,
                reason: "no key sends it",
            })?;
            syms.push((index, sym));
        }
        for (index, sym) in syms {
            if gate(index, 1).is_break() {
                return Ok(());
            }
            self.keysym_tap(sym)?;
        }
        Ok(())
    }

    fn scroll(&mut self, direction: ScrollDirection, steps: u32) -> Result<(), BackendError> {
        let n = i32::try_from(steps).unwrap_or(i32::MAX);
        let (vertical, steps) = match direction {
            ScrollDirection::Up => (true, -n),
            ScrollDirection::Down => (true, n),
            ScrollDirection::Left => (false, -n),
            ScrollDirection::Right => (false, n),
        };
        self.send("the wheel", move |s| async move {
            s.axis(vertical, steps).await
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_and_characters_go_as_keysyms_and_buttons_as_evdev_codes() {
        assert_eq!(key_keysym(Key::Return), Some(0xff0d));
        assert_eq!(key_keysym(Key::Char('a')), Some(0x61));
        assert_eq!(key_keysym(Key::Char('日')), Some(0x100_65e5));
        assert_eq!(key_keysym(Key::Char('\u{7}')), None);
        assert_eq!(button_code(Button::Left), 0x110);
        assert_eq!(button_code(Button::Right), 0x111);
    }
}
