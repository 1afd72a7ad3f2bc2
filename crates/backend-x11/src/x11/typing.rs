//! The keyboard deskhand types with: its own connection, the XKB keymap
//! and group as they are now (re-read whenever the server says the keymap
//! changed), XTEST key events, and the remapping of spare keycodes for
//! characters no key produces.
//!
//! A character on a key is typed with that key and its level's modifiers.
//! Characters on no key are put on spare keycodes in batches (one keymap
//! change per batch; up to four characters per keycode, reached with
//! Shift and the level-three key):
//! a character is sent only after the server has applied the change that
//! produces it, and a keycode gets a new meaning only once the app had
//! time to read the events that used its old one (the least recently used
//! keycodes are taken, at most half of them per batch, and none within
//! [`SETTLE`] (longer after a larger batch) of its last press while
//! another is free). Remapped keycodes are given back once typing has
//! been idle for [`RESTORE_AFTER`], when the keyboard is
//! dropped, and, from the file they are listed in, at the next start.

use std::collections::HashMap;
use std::ops::ControlFlow;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use deskhand_backend::BackendError;
use x11rb::connection::{Connection, RequestConnection};
use x11rb::protocol::Event;
use x11rb::protocol::xkb::{self, ConnectionExt as _};
use x11rb::protocol::xproto::{self, ConnectionExt as _};
use x11rb::protocol::xtest::ConnectionExt as _;
use x11rb::rust_connection::RustConnection;

use super::X11ResultExt;
use deskhand_backend_linux::keymap::{self, KeySyms, Keymap, State, Stroke};
use deskhand_backend_linux::remap_file;

/// How long a remapped keycode keeps its meaning after its last press
/// before it may get another, at the least: the app must have read the
/// events by then.
pub const SETTLE: Duration = Duration::from_millis(100);
/// What each character typed since the last keymap change adds to
/// [`SETTLE`]: an app reads a batch of keys in one go and looks their
/// symbols up as it handles them, so a larger batch needs longer.
const SETTLE_PER_CHAR: Duration = Duration::from_millis(2);
/// The most a keymap change ever waits for the app.
const SETTLE_MAX: Duration = Duration::from_millis(400);
/// How long typing must be idle before remapped keycodes are given back.
pub const RESTORE_AFTER: Duration = Duration::from_millis(500);

/// Characters sent in one write (and between two looks for keymap
/// changes): each write wakes the X server; a handful costs it no more
/// than one.
const FLUSH_EVERY: usize = 8;

const CORE_KBD: u16 = 0x100;
const KEY_PRESS: u8 = 2;
const KEY_RELEASE: u8 = 3;

/// A spare keycode deskhand has remapped.
#[derive(Debug, Clone)]
struct Owned {
    keycode: u8,
    /// What it had before (restored afterwards).
    original: KeySyms,
    /// What deskhand put there.
    set: KeySyms,
    /// When it was last pressed.
    used: Option<Instant>,
}

/// Why a character cannot be typed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Untypable {
    /// No keysym exists for it (a control character).
    NoKeysym,
    /// No key produces it and no keycode is free to remap.
    NoSpareKeycode,
}

/// The keyboard on its own connection.
pub struct Keyboard {
    conn: RustConnection,
    min_keycode: u8,
    max_keycode: u8,
    map: Keymap,
    state: State,
    index: keymap::Index,
    /// The server said the keymap changed since it was read.
    stale: bool,
    owned: Vec<Owned>,
    file: Option<PathBuf>,
    last_used: Option<Instant>,
    /// When deskhand last changed the keymap.
    last_change: Option<Instant>,
    /// Characters typed since then.
    typed_since_change: u32,
}

impl Keyboard {
    /// Connects to `display`, checks for XTEST and XKB, restores what a
    /// previous run left remapped (listed in `file`), and reads the keymap.
    pub fn open(display: &str, file: Option<PathBuf>) -> Result<Self, BackendError> {
        let (conn, _) = RustConnection::connect(Some(display))
            .map_err(|e| BackendError::DisplayUnavailable(e.to_string()))?;
        let has = |name| conn.extension_information(name).ok().flatten().is_some();
        if !has(x11rb::protocol::xtest::X11_EXTENSION_NAME) {
            return Err(BackendError::Unsupported(
                "the X server has no XTEST extension: no input can be sent".into(),
            ));
        }
        let xkb_ok = conn
            .xkb_use_extension(1, 0)
            .backend()?
            .reply()
            .map(|r| r.supported)
            .unwrap_or(false);
        if !xkb_ok {
            return Err(BackendError::Unsupported(
                "the X server has no XKEYBOARD extension: the keymap cannot be read".into(),
            ));
        }
        let all_parts = xkb::MapPart::from(0xffu16);
        conn.xkb_select_events(
            CORE_KBD,
            xkb::EventType::from(0u16),
            xkb::EventType::NEW_KEYBOARD_NOTIFY | xkb::EventType::MAP_NOTIFY,
            all_parts,
            all_parts,
            &xkb::SelectEventsAux::default(),
        )
        .backend()?;
        let setup = conn.setup();
        let (min_keycode, max_keycode) = (setup.min_keycode, setup.max_keycode);
        let mut keyboard = Self {
            conn,
            min_keycode,
            max_keycode,
            map: Keymap {
                min_keycode,
                types: Vec::new(),
                keys: Vec::new(),
                modifiers: Default::default(),
            },
            state: State::default(),
            index: keymap::Index::default(),
            stale: true,
            owned: Vec::new(),
            file,
            last_used: None,
            last_change: None,
            typed_since_change: 0,
        };
        keyboard.reload()?;
        // Keys a killed run left down are released (by keycode) before
        // the keycodes it remapped get their own keysyms back.
        match keyboard.release_xtest_held(true) {
            Ok((keys, buttons)) if !keys.is_empty() || !buttons.is_empty() => {
                tracing::info!(?keys, ?buttons, "released what the XTEST devices held");
            }
            Ok(_) => {}
            Err(e) => tracing::warn!(error = %e, "could not read what the XTEST devices hold"),
        }
        keyboard.restore_left_over()?;
        Ok(keyboard)
    }

    /// Releases what the XTEST keyboard (and, `with_buttons`, pointer)
    /// of this connection's master holds; returns the keycodes and
    /// buttons released.
    pub fn release_xtest_held(
        &self,
        with_buttons: bool,
    ) -> Result<(Vec<u8>, Vec<u8>), BackendError> {
        super::devices::release_xtest_held(&self.conn, with_buttons)
    }

    /// How many keycodes are free to remap.
    pub fn spare_keycodes(&self) -> usize {
        self.index.spare().len() + self.owned.len()
    }

    /// Reads the keymap, the modifier map and the state, then drops the
    /// change notices that came before the answers (they are read in).
    fn reload(&mut self) -> Result<(), BackendError> {
        use xkb::MapPart as P;
        let n = self.max_keycode - self.min_keycode + 1;
        let full = P::KEY_TYPES | P::KEY_SYMS | P::MODIFIER_MAP;
        let none = P::from(0u16);
        let map = self.conn.xkb_get_map(
            CORE_KBD,
            full,
            none,
            0,
            0,
            self.min_keycode,
            n,
            0,
            0,
            0,
            0,
            0u16.into(),
            0,
            0,
            self.min_keycode,
            n,
            0,
            0,
        );
        let map = map.backend()?;
        let seen_at = map.sequence_number() as u16;
        let state = self.conn.xkb_get_state(CORE_KBD).backend()?;
        let map = map.reply().backend()?;
        let state = state.reply().backend()?;
        self.map = keymap_from(&map);
        self.state = State {
            group: u8::from(state.group),
            locked_mods: u16::from(state.locked_mods) as u8,
        };
        // Notices of changes made before the map was read are in it; one
        // made after (the same sequence number or later) is not.
        self.stale = false;
        while let Ok(Some(e)) = self.conn.poll_for_event() {
            let before = e
                .wire_sequence_number()
                .is_some_and(|s| (seen_at.wrapping_sub(s) as i16) > 0);
            self.stale |= changes_keymap(&e) && !before;
        }
        // A keycode whose symbols are no longer deskhand's was replaced
        // (a new layout): nothing of deskhand's is left to restore there.
        let before = self.owned.len();
        let map = &self.map;
        self.owned
            .retain(|o| map.key(o.keycode).is_some_and(|k| *k == o.set));
        if self.owned.len() != before {
            self.save();
        }
        self.index = self.map.index(self.state);
        Ok(())
    }

    /// Reads the group and locked modifiers again, and the keymap when the
    /// server said it changed.
    pub fn refresh(&mut self, with_state: bool) -> Result<(), BackendError> {
        self.note_events()?;
        if self.stale {
            return self.reload();
        }
        if with_state {
            let s = self.conn.xkb_get_state(CORE_KBD).backend()?;
            let s = s.reply().backend()?;
            let state = State {
                group: u8::from(s.group),
                locked_mods: u16::from(s.locked_mods) as u8,
            };
            while let Ok(Some(e)) = self.conn.poll_for_event() {
                self.stale |= changes_keymap(&e);
            }
            if self.stale {
                return self.reload();
            }
            if state != self.state {
                self.state = state;
                self.index = self.map.index(state);
            }
        }
        Ok(())
    }

    /// Looks at the events that came in; a keymap change marks it stale.
    fn note_events(&mut self) -> Result<(), BackendError> {
        loop {
            match self.conn.poll_for_event() {
                Ok(Some(e)) => self.stale |= changes_keymap(&e),
                Ok(None) => return Ok(()),
                Err(e) => return Err(BackendError::DisplayUnavailable(e.to_string())),
            }
        }
    }

    /// How to produce the keysym `sym` now, remapping a spare keycode for
    /// it when no key has it.
    pub fn stroke_for_sym(&mut self, sym: u32) -> Result<Stroke, BackendError> {
        self.refresh(true)?;
        if let Some(s) = self.index.sym(sym) {
            return Ok(s.clone());
        }
        if self.spare_keycodes() == 0 {
            return Err(BackendError::Failed(format!(
                "keysym {sym:#x} is on no key and no keycode is free to remap"
            )));
        }
        self.remap(&[sym], &[])?;
        self.index
            .sym(sym)
            .cloned()
            .ok_or_else(|| BackendError::Failed(format!("keysym {sym:#x} could not be mapped")))
    }

    /// Whether every character of `chars` can be typed, else the first
    /// that cannot and why. Nothing is sent.
    pub fn check(&mut self, chars: &[(usize, char)]) -> Result<(), (usize, char, Untypable)> {
        let spare = self.spare_keycodes() > 0;
        for &(i, c) in chars {
            if keymap::keysym_for(c).is_none() {
                return Err((i, c, Untypable::NoKeysym));
            }
            if !spare && self.index.char(c).is_none() {
                return Err((i, c, Untypable::NoSpareKeycode));
            }
        }
        Ok(())
    }

    /// Types `chars` (index into the text, character). Before each one,
    /// `gate(index, presses)` may stop it. The caller checked them first.
    pub fn type_chars(
        &mut self,
        chars: &[(usize, char)],
        gate: &mut dyn FnMut(usize, usize) -> ControlFlow<()>,
    ) -> Result<(), BackendError> {
        let mut sent = false;
        let result = (|| {
            for (pos, &(i, c)) in chars.iter().enumerate() {
                if pos % FLUSH_EVERY == 0 {
                    self.conn.flush().backend()?;
                    self.refresh(false)?;
                }
                let stroke = match self.index.char(c) {
                    Some(s) => s.clone(),
                    None => {
                        self.remap_batch(&chars[pos..])?;
                        self.index.char(c).cloned().ok_or_else(|| {
                            BackendError::Failed(format!(
                                "character {i} ({c:?}) could not be mapped"
                            ))
                        })?
                    }
                };
                if gate(i, stroke.presses()).is_break() {
                    return Ok(());
                }
                self.send_stroke(&stroke)?;
                sent = true;
            }
            Ok(())
        })();
        if sent {
            // The events are processed before anything after them (a
            // pointer move on another connection) is sent.
            self.sync()?;
        }
        result
    }

    /// Presses and releases `stroke`, one after the other in the output
    /// buffer (written together: nothing stays down).
    fn send_stroke(&mut self, stroke: &Stroke) -> Result<(), BackendError> {
        for &m in &stroke.mods {
            self.fake(KEY_PRESS, m)?;
        }
        self.fake(KEY_PRESS, stroke.keycode)?;
        self.fake(KEY_RELEASE, stroke.keycode)?;
        for &m in stroke.mods.iter().rev() {
            self.fake(KEY_RELEASE, m)?;
        }
        self.used(stroke.keycode);
        self.typed_since_change = self.typed_since_change.saturating_add(1);
        Ok(())
    }

    /// How long the app gets to read the keys typed since the last keymap
    /// change before a keycode they used changes meaning.
    fn settle(&self) -> Duration {
        (SETTLE + SETTLE_PER_CHAR * self.typed_since_change).min(SETTLE_MAX)
    }

    fn used(&mut self, keycode: u8) {
        let now = Instant::now();
        self.last_used = Some(now);
        if let Some(o) = self.owned.iter_mut().find(|o| o.keycode == keycode) {
            o.used = Some(now);
        }
    }

    /// Sends one XTEST key event (buffered).
    pub fn fake(&self, kind: u8, detail: u8) -> Result<(), BackendError> {
        self.conn
            .xtest_fake_input(kind, detail, 0, x11rb::NONE, 0, 0, 0)
            .backend()?;
        Ok(())
    }

    /// Presses (or releases) a key and waits until the server has done it.
    pub fn key_event(&mut self, press: bool, keycode: u8) -> Result<(), BackendError> {
        self.fake(if press { KEY_PRESS } else { KEY_RELEASE }, keycode)?;
        if press {
            self.used(keycode);
        }
        self.sync()
    }

    /// Sends one XTEST button event (buffered).
    pub fn fake_button(&self, press: bool, button: u8) -> Result<(), BackendError> {
        let kind = if press {
            xproto::BUTTON_PRESS_EVENT
        } else {
            xproto::BUTTON_RELEASE_EVENT
        };
        self.conn
            .xtest_fake_input(kind, button, 0, x11rb::NONE, 0, 0, 0)
            .backend()?;
        Ok(())
    }

    /// Sends one XTEST button event and waits until the server has done it.
    pub fn button_event(&self, press: bool, button: u8) -> Result<(), BackendError> {
        self.fake_button(press, button)?;
        self.sync()
    }

    /// How to type `c` with a key that has it, if one does.
    pub fn char_stroke(&self, c: char) -> Option<Stroke> {
        self.index.char(c).cloned()
    }

    /// A round trip: everything sent before is processed.
    pub fn sync(&self) -> Result<(), BackendError> {
        let cookie = self.conn.get_input_focus().backend()?;
        super::spin_for_reply(&self.conn);
        cookie.reply().backend()?;
        Ok(())
    }

    /// Puts the next characters of `rest` that no key produces on spare
    /// keycodes, in one keymap change.
    fn remap_batch(&mut self, rest: &[(usize, char)]) -> Result<(), BackendError> {
        let per_key = self.levels_per_key();
        let keys = (self.spare_keycodes() / 2).max(1);
        let mut syms: Vec<u32> = Vec::new();
        // deskhand's keycodes that the characters ahead still need.
        let mut keep = Vec::new();
        for &(_, c) in rest {
            if syms.len() == keys * per_key {
                break;
            }
            if let Some(s) = self.index.char(c) {
                keep.push(s.keycode);
                continue;
            }
            if let Some(sym) = keymap::keysym_for(c)
                && !syms.contains(&sym)
            {
                syms.push(sym);
            }
        }
        self.remap(&syms, &keep)
    }

    fn levels_per_key(&self) -> usize {
        self.map.remap_types().len().max(1)
    }

    /// Puts `syms` on spare keycodes (the least recently used first) in
    /// one keymap change, waiting out [`SETTLE`] for a keycode pressed
    /// lately.
    fn remap(&mut self, syms: &[u32], keep: &[u8]) -> Result<(), BackendError> {
        // What is typed so far goes out before any waiting.
        self.conn.flush().backend()?;
        let types = self.map.remap_types();
        let per_key = types.len();
        if per_key == 0 {
            return Err(BackendError::Failed(
                "the keymap has no one-level key type to remap with".into(),
            ));
        }
        // Keycodes free to take now (never used, or not since SETTLE):
        // never-used first, then deskhand's own, oldest first. Only when
        // none is free are the oldest waited for.
        let mut pool: Vec<(Option<Instant>, u8)> =
            self.index.spare().iter().map(|&k| (None, k)).collect();
        let mut owned: Vec<(Option<Instant>, u8)> = self
            .owned
            .iter()
            .filter(|o| !keep.contains(&o.keycode))
            .map(|o| (o.used, o.keycode))
            .collect();
        owned.sort();
        pool.extend(owned);
        let settle = self.settle();
        let settled = |used: &Option<Instant>| used.is_none_or(|t| t.elapsed() >= settle);
        if pool.iter().any(|(used, _)| settled(used)) {
            pool.retain(|(used, _)| settled(used));
        }
        let mut changes = Vec::new();
        let started = Instant::now();
        // Nor two changes within SETTLE: an app that is still reading the
        // keys the first one changed can miss the notice of the second.
        if let Some(wait) = self
            .last_change
            .and_then(|t| settle.checked_sub(t.elapsed()))
        {
            std::thread::sleep(wait);
        }
        for (chunk, (used, keycode)) in syms.chunks(per_key).zip(pool) {
            if let Some(at) = used
                && let Some(wait) = settle.checked_sub(at.elapsed())
            {
                std::thread::sleep(wait);
            }
            // A type's levels all have a place: three symbols take four.
            let width = if chunk.len() > 2 { 4 } else { chunk.len() };
            let mut syms = chunk.to_vec();
            syms.resize(width, 0);
            let set = KeySyms {
                types: [types[chunk.len() - 1]; 4],
                group_info: 1,
                width: u8::try_from(width).unwrap_or(1),
                syms,
            };
            changes.push((keycode, set));
        }
        for (keycode, set) in &changes {
            match self.owned.iter_mut().find(|o| o.keycode == *keycode) {
                Some(o) => {
                    o.set = set.clone();
                    o.used = None;
                }
                None => {
                    let original = self
                        .map
                        .key(*keycode)
                        .cloned()
                        .unwrap_or_else(KeySyms::empty);
                    self.owned.push(Owned {
                        keycode: *keycode,
                        original,
                        set: set.clone(),
                        used: None,
                    });
                }
            }
        }
        // Listed before the change: a crash after it leaves a record.
        self.save();
        let waited = started.elapsed();
        let result = self.set_keys(&changes);
        tracing::debug!(
            keys = changes.len(),
            symbols = syms.len(),
            waited_us = waited.as_micros() as u64,
            changed_us = (started.elapsed() - waited).as_micros() as u64,
            "remapped spare keycodes"
        );
        result
    }

    /// Changes the symbols of the keycodes in `changes` in one request
    /// (the keys between them are sent as they are), then reads the
    /// keymap back: once the answer is in, the change is applied and every
    /// client was told before any key event sent after it.
    ///
    /// Every change spans all the spare keycodes, whichever of them it
    /// changes: an app (Xlib) re-reads just the keys a change notice names,
    /// and forgets the notices that arrive while it waits for that answer,
    /// so each answer must cover every keycode deskhand may have changed.
    fn set_keys(&mut self, changes: &[(u8, KeySyms)]) -> Result<(), BackendError> {
        if changes.is_empty() {
            return Ok(());
        }
        let span = changes
            .iter()
            .map(|c| c.0)
            .chain(self.index.spare().iter().copied())
            .chain(self.owned.iter().map(|o| o.keycode));
        let (lo, hi) = span.fold((u8::MAX, 0), |(lo, hi), k| (lo.min(k), hi.max(k)));
        let wanted: HashMap<u8, &KeySyms> = changes.iter().map(|(k, s)| (*k, s)).collect();
        let mut maps = Vec::new();
        for keycode in lo..=hi {
            let k = match wanted.get(&keycode) {
                Some(s) => (*s).clone(),
                None => self
                    .map
                    .key(keycode)
                    .cloned()
                    .unwrap_or_else(KeySyms::empty),
            };
            maps.push(xkb::KeySymMap {
                kt_index: k.types,
                group_info: k.group_info,
                width: k.width,
                syms: k.syms,
            });
        }
        let total: usize = maps.iter().map(|m| m.syms.len()).sum();
        let values = xkb::SetMapAux {
            syms: Some(maps),
            ..Default::default()
        };
        self.conn
            .xkb_set_map(
                CORE_KBD,
                xkb::SetMapFlags::from(0u16),
                self.min_keycode,
                self.max_keycode,
                0,
                0,
                lo,
                hi - lo + 1,
                u16::try_from(total).unwrap_or(u16::MAX),
                0,
                0,
                0,
                0,
                0,
                0,
                0,
                0,
                0,
                0,
                0,
                0,
                0,
                0,
                0,
                0u16.into(),
                &values,
            )
            .backend()?;
        self.last_change = Some(Instant::now());
        self.typed_since_change = 0;
        self.reload()
    }

    /// Whether remapped keycodes are due to be given back.
    pub fn restore_due(&self) -> Option<Duration> {
        if self.owned.is_empty() {
            return None;
        }
        let idle = self.last_used.map_or(RESTORE_AFTER, |t| t.elapsed());
        Some(RESTORE_AFTER.saturating_sub(idle))
    }

    /// Gives every remapped keycode its original symbols back (after the
    /// app had [`SETTLE`] to read the last events that used them).
    pub fn restore(&mut self) -> Result<(), BackendError> {
        if self.owned.is_empty() {
            return Ok(());
        }
        if let Some(at) = self.last_used
            && let Some(wait) = self.settle().checked_sub(at.elapsed())
        {
            std::thread::sleep(wait);
        }
        self.refresh(false)?;
        let changes: Vec<(u8, KeySyms)> = self
            .owned
            .iter()
            .map(|o| (o.keycode, o.original.clone()))
            .collect();
        let result = self.set_keys(&changes);
        if result.is_ok() {
            tracing::debug!(keys = changes.len(), "remapped keycodes restored");
            self.owned.clear();
            self.save();
        }
        result
    }

    /// Restores what the file says a previous run left remapped, where the
    /// keycode still has what that run put there.
    fn restore_left_over(&mut self) -> Result<(), BackendError> {
        let Some(path) = &self.file else {
            return Ok(());
        };
        let left = remap_file::read(path);
        let changes: Vec<(u8, KeySyms)> = left
            .into_iter()
            .filter(|e| self.map.key(e.keycode) == Some(&e.set))
            .map(|e| (e.keycode, e.original))
            .collect();
        if !changes.is_empty() {
            tracing::info!(
                keycodes = ?changes.iter().map(|c| c.0).collect::<Vec<_>>(),
                "restoring keycodes a previous run left remapped"
            );
            self.set_keys(&changes)?;
        }
        self.save();
        Ok(())
    }

    fn save(&self) {
        let Some(path) = &self.file else { return };
        let entries: Vec<remap_file::Entry> = self
            .owned
            .iter()
            .map(|o| remap_file::Entry {
                keycode: o.keycode,
                original: o.original.clone(),
                set: o.set.clone(),
            })
            .collect();
        remap_file::write(path, &entries);
    }
}

impl Drop for Keyboard {
    fn drop(&mut self) {
        if let Err(e) = self.restore() {
            tracing::warn!(error = %e, "could not restore remapped keycodes");
        }
    }
}

fn changes_keymap(e: &Event) -> bool {
    matches!(
        e,
        Event::MappingNotify(_) | Event::XkbMapNotify(_) | Event::XkbNewKeyboardNotify(_)
    )
}

/// The keymap model of a GetMap answer.
fn keymap_from(reply: &xkb::GetMapReply) -> Keymap {
    let types = reply
        .map
        .types_rtrn
        .iter()
        .flatten()
        .map(|t| keymap::KeyType {
            mask: u16::from(t.mods_mask) as u8,
            levels: t.num_levels,
            entries: t
                .map
                .iter()
                .filter(|e| e.active)
                .map(|e| (u16::from(e.mods_mask) as u8, e.level))
                .collect(),
        })
        .collect();
    let keys = reply
        .map
        .syms_rtrn
        .iter()
        .flatten()
        .map(|k| KeySyms {
            types: k.kt_index,
            group_info: k.group_info,
            width: k.width,
            syms: k.syms.clone(),
        })
        .collect();
    let mut modifiers: [Vec<u8>; 8] = Default::default();
    for m in reply.map.modmap_rtrn.iter().flatten() {
        let mods = u16::from(m.mods);
        for (bit, codes) in modifiers.iter_mut().enumerate() {
            if mods & (1 << bit) != 0 {
                codes.push(m.keycode);
            }
        }
    }
    Keymap {
        min_keycode: reply.first_key_sym,
        types,
        keys,
        modifiers,
    }
}
