//! Input: keys, text, buttons and the wheel as XTEST events on the
//! keyboard's own long-lived connection ([`Keyboard`]), which follows the
//! keymap and group as they are now; pointer motion as a `WarpPointer` on
//! the backend's shared connection.
//!
//! Pointer motion is a warp, as `xdotool mousemove` does it: applications
//! get the same motion, enter and leave events as from a device (no raw
//! event: the hand-back watcher is not woken by deskhand's own moves). A
//! warp can also be made conditional: the server moves the pointer only
//! if it is still inside a rectangle, which makes the hand-back check and
//! the move one step. The `QueryPointer` after it is answered once the
//! warp is done and says where the pointer is. Button and key events wait
//! for the server as motion does (a round trip on their connection), so a
//! drag's press, moves and release arrive in order; a text waits once, at
//! its end.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::JoinHandle;

use deskhand_backend::{
    BackendError, Button, Input, Key, Point, Rect, ScrollDirection, typed_chars,
};
use x11rb::NONE;
use x11rb::protocol::xproto::ConnectionExt as _;

use super::typing::{Keyboard, Untypable};
use super::{Shared, X11ResultExt};
use deskhand_backend_linux::keymap::{self, Stroke};

/// The keyboard and the thread that gives remapped keycodes back once
/// typing is idle.
struct Restorer {
    keyboard: Mutex<Keyboard>,
    wake: Condvar,
    stop: AtomicBool,
}

impl Restorer {
    fn lock(&self) -> MutexGuard<'_, Keyboard> {
        self.keyboard.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn run(self: Arc<Self>) {
        let mut kb = self.lock();
        while !self.stop.load(Ordering::SeqCst) {
            kb = match kb.restore_due() {
                None => self.wake.wait(kb).unwrap_or_else(|e| e.into_inner()),
                Some(wait) if wait.is_zero() => {
                    if let Err(e) = kb.restore() {
                        tracing::warn!(error = %e, "could not restore remapped keycodes");
                        // Not again and again: the next text schedules it anew.
                        self.wake.wait(kb).unwrap_or_else(|e| e.into_inner())
                    } else {
                        kb
                    }
                }
                Some(wait) => {
                    self.wake
                        .wait_timeout(kb, wait)
                        .unwrap_or_else(|e| e.into_inner())
                        .0
                }
            };
        }
    }
}

pub struct X11Input {
    restorer: Arc<Restorer>,
    thread: Option<JoinHandle<()>>,
    shared: Arc<Shared>,
    /// The stroke each held key was pressed with, to release the same.
    held: HashMap<Key, Stroke>,
}

impl X11Input {
    /// Opens the keyboard on `display`; `remap_file` lists what is
    /// remapped, for the next start after a crash.
    pub fn new(
        display: &str,
        shared: Arc<Shared>,
        remap_file: Option<PathBuf>,
    ) -> Result<Self, BackendError> {
        let keyboard = Keyboard::open(display, remap_file)?;
        let restorer = Arc::new(Restorer {
            keyboard: Mutex::new(keyboard),
            wake: Condvar::new(),
            stop: AtomicBool::new(false),
        });
        let r = restorer.clone();
        let thread = std::thread::Builder::new()
            .name("deskhand-keymap".into())
            .spawn(move || r.run())
            .map_err(|e| BackendError::Failed(e.to_string()))?;
        Ok(Self {
            restorer,
            thread: Some(thread),
            shared,
            held: HashMap::new(),
        })
    }

    /// How many keycodes are free for characters no key produces.
    pub fn spare_keycodes(&self) -> usize {
        self.restorer.lock().spare_keycodes()
    }
}

impl Drop for X11Input {
    fn drop(&mut self) {
        self.restorer.stop.store(true, Ordering::SeqCst);
        self.restorer.wake.notify_all();
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
        // The keyboard restores what is remapped as it is dropped.
    }
}

impl X11Input {
    /// How to press `key` with the keyboard as it is now.
    fn stroke(kb: &mut Keyboard, key: Key) -> Result<Stroke, BackendError> {
        match key {
            Key::Char(c) => {
                kb.refresh(true)?;
                let typed = kb.check(&[(0, c)]);
                if let Err((_, _, why)) = typed {
                    return Err(untypable(0, c, why));
                }
                match kb.char_stroke(c) {
                    Some(s) => Ok(s),
                    None => {
                        let sym =
                            keymap::keysym_for(c).ok_or(untypable(0, c, Untypable::NoKeysym))?;
                        kb.stroke_for_sym(sym)
                    }
                }
            }
            key => {
                let sym = keymap::named_keysym(key)
                    .ok_or_else(|| BackendError::Failed(format!("{key:?}")))?;
                kb.stroke_for_sym(sym)
            }
        }
    }

    /// Warps the pointer to `to` (only while it is inside `source`, a
    /// rectangle of the root, when given) and returns where it is once
    /// the server has done it.
    fn warp(&self, source: Option<(i16, i16, u16, u16)>, to: Point) -> Result<Point, BackendError> {
        let (Ok(x), Ok(y)) = (i16::try_from(to.x), i16::try_from(to.y)) else {
            return Err(BackendError::Failed(format!(
                "({}, {}) is outside the X11 coordinate range",
                to.x, to.y
            )));
        };
        let root = self.shared.root;
        let (src_window, (sx, sy, sw, sh)) = match source {
            Some(rect) => (root, rect),
            None => (NONE, (0, 0, 0, 0)),
        };
        let conn = &self.shared.conn;
        conn.warp_pointer(src_window, root, sx, sy, sw, sh, x, y)
            .backend()?;
        let at = conn.query_pointer(root).backend()?;
        self.shared.spin_for_reply();
        let at = at.reply().backend()?;
        Ok(Point::new(i32::from(at.root_x), i32::from(at.root_y)))
    }
}

fn untypable(index: usize, character: char, why: Untypable) -> BackendError {
    BackendError::Untypable {
        index,
        character,
        reason: match why {
            Untypable::NoKeysym => "no key can send a control character",
            Untypable::NoSpareKeycode => {
                "no key produces it and no keycode is free to remap (another program uses them all)"
            }
        },
    }
}

impl Input for X11Input {
    fn types_any_character(&self) -> bool {
        self.spare_keycodes() > 0
    }

    fn move_pointer(&mut self, to: Point) -> Result<(), BackendError> {
        self.warp(None, to).map(|_| ())
    }

    fn move_pointer_if_within(
        &mut self,
        within: Rect,
        to: Point,
    ) -> Option<Result<Point, BackendError>> {
        // X counts the far edge in and reads a width of 0 as "to the
        // window's edge": a 1-pixel rectangle cannot be said.
        let source = (
            i16::try_from(within.x).ok()?,
            i16::try_from(within.y).ok()?,
            u16::try_from(within.width.saturating_sub(1))
                .ok()
                .filter(|w| *w > 0)?,
            u16::try_from(within.height.saturating_sub(1))
                .ok()
                .filter(|h| *h > 0)?,
        );
        Some(self.warp(Some(source), to))
    }

    fn button(&mut self, button: Button, press: bool) -> Result<(), BackendError> {
        let detail = match button {
            Button::Left => 1,
            Button::Middle => 2,
            Button::Right => 3,
            Button::Back => 8,
            Button::Forward => 9,
        };
        self.restorer.lock().button_event(press, detail)
    }

    fn key(&mut self, key: Key, press: bool) -> Result<(), BackendError> {
        let mut kb = self.restorer.lock();
        if press {
            let stroke = Self::stroke(&mut kb, key)?;
            for &m in &stroke.mods {
                kb.key_event(true, m)?;
            }
            kb.key_event(true, stroke.keycode)?;
            self.held.insert(key, stroke);
            return Ok(());
        }
        let stroke = match self.held.remove(&key) {
            Some(s) => s,
            None => Self::stroke(&mut kb, key)?,
        };
        kb.key_event(false, stroke.keycode)?;
        for &m in stroke.mods.iter().rev() {
            kb.key_event(false, m)?;
        }
        self.restorer.wake.notify_all();
        Ok(())
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
        let mut kb = self.restorer.lock();
        kb.refresh(true)?;
        kb.check(&chars)
            .map_err(|(i, c, why)| untypable(i, c, why))?;
        let result = kb.type_chars(&chars, gate);
        drop(kb);
        self.restorer.wake.notify_all();
        result
    }

    fn scroll(&mut self, direction: ScrollDirection, steps: u32) -> Result<(), BackendError> {
        let button = match direction {
            ScrollDirection::Up => 4,
            ScrollDirection::Down => 5,
            ScrollDirection::Left => 6,
            ScrollDirection::Right => 7,
        };
        let kb = self.restorer.lock();
        for _ in 0..steps {
            kb.fake_button(true, button)?;
            kb.fake_button(false, button)?;
        }
        kb.sync()
    }

    fn release_typing(&mut self) -> Result<(), BackendError> {
        let (keys, _) = self.restorer.lock().release_xtest_held(false)?;
        if !keys.is_empty() {
            tracing::info!(?keys, "released the keys a type left down");
        }
        Ok(())
    }

    fn restore_keyboard(&mut self) -> Result<(), BackendError> {
        self.restorer.lock().restore()
    }
}
