//! Input through the RemoteDesktop portal's session (its `Notify*` calls,
//! or libei where the portal connects it to the compositor's EIS server):
//! the pointer in desktop pixels, buttons by evdev code, keys by keysym. Text goes as GNOME's own on-screen keyboard sends
//! it: committed to the focused field through the input method (the shell
//! extension), line breaks and tabs as keys; where no field takes
//! input-method text, as keysyms, which mutter types only when the
//! keyboard's layout has a key for them (printable ASCII).
//! Each device event is paced for the hand-back watcher
//! ([`LastInput::pace`]): sent once the one before was seen to arrive.

use std::sync::Arc;
use std::time::Duration;

use deskhand_backend::keys::Key;
use deskhand_backend::{BackendError, Button, Input, Point, ScrollDirection, typed_chars};
use deskhand_backend_linux::keymap::{keysym_for, named_keysym};

use crate::portal::{Grant, Portals, RemoteSession};
use crate::rt::Rt;
use crate::shell::ShellExt;
use crate::watcher::LastInput;

const CALL: Duration = Duration::from_secs(2);
/// After a key, before text committed through the input method: the key
/// reaches mutter through the portal's process, the commit straight from
/// the shell, and must not overtake it.
const KEY_SETTLES: Duration = Duration::from_millis(30);

/// The most bytes committed through the input method at once: mutter
/// sends a commit to the app as one Wayland event, and an event over its
/// 4096-byte buffer disconnects the app (its unsaved work lost).
pub(crate) const COMMIT_BYTES: usize = 1024;

/// Whether `c` belongs with the character before it (`prev`): a combining
/// mark, a variation selector, or either side of a zero-width joiner, so a
/// piece never ends inside what a person sees as one character.
fn joins(prev: char, c: char) -> bool {
    let joiner = '\u{200d}';
    prev == joiner
        || c == joiner
        || matches!(c, '\u{0300}'..='\u{036f}' | '\u{1ab0}'..='\u{1aff}' | '\u{20d0}'..='\u{20ff}')
        || matches!(c, '\u{fe00}'..='\u{fe0f}' | '\u{e0100}'..='\u{e01ef}' | '\u{1f3fb}'..='\u{1f3ff}')
}

/// One step of typing a text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Piece {
    /// A key tap for character `index`.
    Key { index: usize, sym: u32 },
    /// Characters from `index` committed through the input method.
    Commit { index: usize, text: String },
}

/// The part of a run of text from character `index` that `gate` lets
/// through, asked character by character, and whether it stopped.
fn gated_run<'t>(
    text: &'t str,
    index: usize,
    gate: &mut dyn FnMut(usize, usize) -> std::ops::ControlFlow<()>,
) -> (&'t str, bool) {
    for (n, (at, _)) in text.char_indices().enumerate() {
        if gate(index + n, 1).is_break() {
            return (&text[..at], true);
        }
    }
    (text, false)
}

/// Whether every layout has a key for `c` (what mutter types from a
/// keysym the portal sends).
fn on_the_keys(c: char) -> bool {
    c.is_ascii_graphic() || matches!(c, ' ' | '\n' | '\r' | '\t')
}

/// How `text` is typed: through the input method where a field takes it
/// (`commit`), else by keys, which send the characters `keys` says the
/// layout has; a character nothing can send fails it before anything is
/// sent.
pub(crate) fn plan(
    text: &str,
    commit: bool,
    keys: &dyn Fn(char) -> bool,
) -> Result<Vec<Piece>, BackendError> {
    let mut pieces: Vec<Piece> = Vec::new();
    for (index, c) in typed_chars(text) {
        let untypable = |reason| BackendError::Untypable {
            index,
            character: c,
            reason,
        };
        if !commit && !keys(c) {
            return Err(untypable(
                "the keyboard's layout has no key for it, and the window takes no input-method text",
            ));
        }
        if !commit || matches!(c, '\n' | '\r' | '\t') {
            let sym = keysym_for(c).ok_or(untypable("no key sends it"))?;
            pieces.push(Piece::Key { index, sym });
        } else if c.is_control() {
            return Err(untypable("no key sends it"));
        } else if let Some(Piece::Commit { text, .. }) =
            pieces.last_mut().filter(|p| fits(p, c) || joins_last(p, c))
        {
            text.push(c);
        } else {
            pieces.push(Piece::Commit {
                index,
                text: c.to_string(),
            });
        }
    }
    Ok(pieces)
}

/// Whether `c` fits in the commit `piece` (under [`COMMIT_BYTES`]).
fn fits(piece: &Piece, c: char) -> bool {
    matches!(piece, Piece::Commit { text, .. } if text.len() + c.len_utf8() <= COMMIT_BYTES)
}

/// Whether `c` joins the last character of the commit `piece`.
fn joins_last(piece: &Piece, c: char) -> bool {
    matches!(piece, Piece::Commit { text, .. } if text.chars().last().is_some_and(|p| joins(p, c)))
}

/// The evdev code of a button.
pub(crate) fn button_code(b: Button) -> u32 {
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
        Grant::Pending => BackendError::Pending(
            "input waits for the person's answer in the desktop's Remote Desktop dialog (portal_pending): retry once they allowed it".into(),
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
    pub(crate) shell: ShellExt,
    pub(crate) last: Arc<LastInput>,
    /// Where deskhand last moved the pointer.
    pub(crate) moved_to: Option<Point>,
}

impl PortalInput {
    fn session(&self) -> Result<Arc<RemoteSession>, BackendError> {
        self.portals
            .input()
            .ok_or_else(|| no_input(&self.portals.remote_grant()))
    }

    /// Sends the one device event `send` sends on the session, paced: the
    /// hand-back's watcher has seen the one before arrive.
    fn send<F, Fut>(&self, what: &str, send: F) -> Result<(), BackendError>
    where
        F: FnOnce(Arc<RemoteSession>) -> Fut,
        Fut: std::future::Future<Output = Result<(), BackendError>> + Send + 'static,
    {
        let session = self.session()?;
        self.last.pace();
        self.rt.run(CALL, what, send(session))
    }

    /// Commits `text` through the input method; whether a field took it.
    fn commit(&self, text: &str) -> Result<bool, BackendError> {
        let (shell, text) = (self.shell.clone(), text.to_owned());
        let took = self
            .rt
            .run(CALL, "text", async move { shell.commit_text(&text).await });
        self.last.mark();
        took
    }

    /// Whether the pointer is at `p` now, as the shell says.
    fn pointer_at(&self, p: Point) -> bool {
        let shell = self.shell.clone();
        self.rt
            .run(CALL, "the pointer", async move { shell.pointer().await })
            .is_ok_and(|(x, y, _)| Point::new(x, y) == p)
    }

    /// Whether the focused field takes input-method text; no (keys only)
    /// when the extension cannot say.
    fn takes_text(&self) -> bool {
        self.commit("").unwrap_or_else(|e| {
            tracing::warn!(error = %e, "the shell extension cannot type text: keys only");
            false
        })
    }

    fn keysym_tap(&self, sym: u32) -> Result<(), BackendError> {
        self.send("a key", move |s| async move { s.keysym(sym, true).await })?;
        self.send("a key", move |s| async move { s.keysym(sym, false).await })
    }
}

impl Input for PortalInput {
    fn ready(&mut self) -> Result<(), BackendError> {
        self.session().map(|_| ())
    }

    fn move_pointer(&mut self, to: Point) -> Result<(), BackendError> {
        // A move to where the pointer is makes no event, so none would
        // arrive for the next one to wait for: not sent.
        if self.moved_to == Some(to) && self.pointer_at(to) {
            return Ok(());
        }
        self.send("a pointer move", move |s| async move {
            s.motion(f64::from(to.x), f64::from(to.y)).await
        })?;
        self.moved_to = Some(to);
        Ok(())
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
        let session = self.session()?;
        let keys = |c: char| match session.eis.connected() {
            Some(eis) => keysym_for(c).is_some_and(|sym| eis.has_key(sym)),
            None => on_the_keys(c),
        };
        let pieces = plan(text, self.takes_text(), &keys)?;
        let committed = pieces.iter().any(|p| matches!(p, Piece::Commit { .. }));
        let mut after_key = false;
        for piece in pieces {
            match piece {
                Piece::Key { index, sym } => {
                    if gate(index, 1).is_break() {
                        return Ok(());
                    }
                    self.keysym_tap(sym)?;
                    after_key = true;
                }
                Piece::Commit { index, text } => {
                    // The gate is asked for every character; the run is
                    // committed up to the first it stops.
                    let (run, stopped) = gated_run(&text, index, gate);
                    if !run.is_empty() {
                        if after_key {
                            std::thread::sleep(KEY_SETTLES);
                        }
                        if !self.commit(run)? {
                            return Err(BackendError::Failed(
                                "the text field lost input-method focus while typing".into(),
                            ));
                        }
                    }
                    if stopped {
                        return Ok(());
                    }
                    after_key = false;
                }
            }
        }
        // The app that took the last piece is still there to take text
        // (an app that went away mid-way did not get it all).
        if committed && !self.takes_text() {
            return Err(BackendError::Failed(
                "the text field lost input-method focus while the text was typed: it may not have arrived".into(),
            ));
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

    #[test]
    fn a_run_of_text_stops_at_the_character_the_gate_stops() {
        let mut asked = Vec::new();
        let mut gate = |i: usize, _| {
            asked.push(i);
            if i == 7 {
                std::ops::ControlFlow::Break(())
            } else {
                std::ops::ControlFlow::Continue(())
            }
        };
        assert_eq!(gated_run("日本語", 5, &mut gate), ("日本", true));
        assert_eq!(asked, vec![5, 6, 7]);
        assert_eq!(
            gated_run("ab", 0, &mut |_, _| std::ops::ControlFlow::Continue(())),
            ("ab", false)
        );
    }

    #[test]
    fn text_goes_through_the_input_method_between_line_breaks_else_as_keys() {
        let pieces = plan("Wörld\r\n日本", true, &on_the_keys).expect("typable");
        assert_eq!(
            pieces,
            vec![
                Piece::Commit {
                    index: 0,
                    text: "Wörld".into()
                },
                Piece::Key {
                    index: 6,
                    sym: 0xff0d
                },
                Piece::Commit {
                    index: 7,
                    text: "日本".into()
                },
            ]
        );
        let keys = plan("a b\n", false, &on_the_keys).expect("on the keys");
        assert_eq!(keys.len(), 4);
        assert_eq!(
            keys[3],
            Piece::Key {
                index: 3,
                sym: 0xff0d
            }
        );
        let refused = plan("ok ö", false, &on_the_keys).expect_err("no key for it");
        assert!(matches!(refused, BackendError::Untypable { index: 3, .. }));
        // A German keyboard (libei's keymap) has a key for ö.
        let german = |c: char| on_the_keys(c) || c == 'ö';
        assert_eq!(plan("ok ö", false, &german).expect("on the keys").len(), 4);
        let refused = plan("ok\u{7}", true, &on_the_keys).expect_err("a bell");
        assert!(matches!(refused, BackendError::Untypable { index: 2, .. }));
    }

    #[test]
    fn a_long_line_is_committed_in_pieces_the_compositor_takes_never_inside_a_character() {
        let line: String = "é".repeat(COMMIT_BYTES) + "e\u{301}x";
        let pieces = plan(&line, true, &on_the_keys).expect("typable");
        let texts: Vec<&str> = pieces
            .iter()
            .map(|p| match p {
                Piece::Commit { text, .. } => text.as_str(),
                Piece::Key { .. } => panic!("no key in one line"),
            })
            .collect();
        assert_eq!(texts.concat(), line, "nothing lost or doubled");
        assert!(
            texts.iter().all(|t| t.len() <= COMMIT_BYTES + 4),
            "{:?}",
            texts.iter().map(|t| t.len()).collect::<Vec<_>>()
        );
        assert_eq!(texts.len(), 3);
        // The piece boundary falls before the 'e' its accent joins, and the
        // indexes count characters.
        assert_eq!(texts[2], "e\u{301}x");
        let Piece::Commit { index, .. } = &pieces[2] else {
            unreachable!()
        };
        assert_eq!(*index, COMMIT_BYTES);
        let emoji = "👩\u{200d}💻";
        let near = "a".repeat(COMMIT_BYTES - 4) + emoji;
        let pieces = plan(&near, true, &on_the_keys).expect("typable");
        assert!(
            matches!(&pieces[0], Piece::Commit { text, .. } if text.ends_with(emoji)),
            "the joined emoji stays whole"
        );
    }
}
