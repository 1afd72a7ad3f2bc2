//! The hand-back watcher: XInput 2 raw events on the root window (they
//! arrive whatever grabs are active, tens of microseconds after the input,
//! with the device that made them), the pointer read at once when a device
//! other than XTEST moves it and at least every 20 ms while a takeover is
//! on (warps make no raw event; deskhand's own XTEST moves are checked by
//! the desktop thread), and the kill-switch hotkey.
//!
//! Which devices are XTEST's is read from the server (the `XTEST Device`
//! property of every master's XTEST slaves) and read again whenever the
//! device hierarchy changes (a master added, a device attached): a click
//! through the XTEST pointer of a master another client added is as
//! synthetic as `xdotool`'s. What X11 cannot tell apart is an XTEST event
//! a client sends through a real device (`XTestFakeDeviceButtonEvent`):
//! the server makes it the device's own event (SECURITY.md).

use std::cell::{Cell, RefCell};
use std::os::fd::{AsFd, AsRawFd};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use deskhand_backend::{BackendError, InputWatcher, Point, WatchedInput};
use x11rb::connection::{Connection, RequestConnection};
use x11rb::protocol::Event;
use x11rb::protocol::xinput::{self, ConnectionExt as _, Device, XIEventMask};
use x11rb::protocol::xproto::{ConnectionExt as _, GrabMode, ModMask, Window};
use x11rb::rust_connection::RustConnection;

use super::X11ResultExt;
use super::devices::{self, Devices, Source};
use deskhand_backend::kill_switch::{Chord, ChordKey, KillSwitchHotkey, modifier};

/// Pointer poll while armed (the contract: a check at least every 20 ms).
const POLL_ARMED_MS: i32 = 20;
/// How often an idle watcher looks whether it was armed.
const POLL_IDLE_MS: i32 = 100;

/// The kill-switch chord as grabbed: its modifiers and the keycodes of
/// its key.
#[derive(Debug)]
struct Grab {
    modifiers: ModMask,
    keycodes: Vec<u8>,
}

/// The lock modifiers a grab is repeated with, so that Caps Lock and Num
/// Lock do not disable the kill switch.
const LOCKS: [u16; 4] = [0, 1 << 1, 1 << 4, (1 << 1) | (1 << 4)];

fn modifiers_of(chord: &Chord) -> ModMask {
    [
        (modifier::CTRL, ModMask::CONTROL),
        (modifier::ALT, ModMask::M1),
        (modifier::SHIFT, ModMask::SHIFT),
        (modifier::SUPER, ModMask::M4),
    ]
    .into_iter()
    .filter(|(bit, _)| chord.modifiers & bit != 0)
    .fold(ModMask::from(0u16), |mask, (_, m)| mask | m)
}

/// The X keysym of a chord's key.
fn keysym_of(key: ChordKey) -> u32 {
    match key {
        ChordKey::Escape => 0xff1b,
        ChordKey::Pause => 0xff13,
        // XK_F1 = 0xffbe.
        ChordKey::F(n) => 0xffbd + u32::from(n),
        // Latin-1 letters and digits are their own keysyms.
        ChordKey::Char(c) => u32::from(c),
    }
}

/// The watcher, before it starts.
pub(crate) struct X11Watcher {
    conn: RustConnection,
    root: Window,
    devices: RefCell<Devices>,
    /// The hierarchy changed since the devices were read.
    stale: Cell<bool>,
    hotkey: KillSwitchHotkey,
    grabbed: RefCell<Option<Grab>>,
}

impl X11Watcher {
    /// Connects and checks for XInput 2.1 (raw events to every client).
    pub(crate) fn new(display: &str, hotkey: KillSwitchHotkey) -> Result<Self, BackendError> {
        let (conn, screen) = RustConnection::connect(Some(display))
            .map_err(|e| BackendError::DisplayUnavailable(e.to_string()))?;
        let root = conn.setup().roots[screen].root;
        if conn
            .extension_information(xinput::X11_EXTENSION_NAME)
            .backend()?
            .is_none()
        {
            return Err(BackendError::Unsupported("no XInputExtension".into()));
        }
        let (major, minor) = devices::announce_xi2(&conn)?;
        if (major, minor) < (2, 1) {
            return Err(BackendError::Unsupported(format!(
                "XInput {major}.{minor} (2.1 needed)"
            )));
        }
        let devices = devices::read(&conn)?;
        Ok(Self {
            conn,
            root,
            devices: RefCell::new(devices),
            stale: Cell::new(false),
            hotkey,
            grabbed: RefCell::new(None),
        })
    }

    /// The keycodes that make `keysym` on this keyboard.
    fn keycodes_of(&self, keysym: u32) -> Result<Vec<u8>, BackendError> {
        let setup = self.conn.setup();
        let (min, max) = (setup.min_keycode, setup.max_keycode);
        let map = self
            .conn
            .get_keyboard_mapping(min, max - min + 1)
            .backend()?
            .reply()
            .backend()?;
        let per = usize::from(map.keysyms_per_keycode.max(1));
        Ok(map
            .keysyms
            .chunks(per)
            .enumerate()
            .filter(|(_, syms)| syms.contains(&keysym))
            .map(|(i, _)| min + i as u8)
            .collect())
    }

    /// Grabs `chord` on the root window, with and without Caps Lock and
    /// Num Lock; on failure nothing of it stays grabbed.
    fn grab(&self, chord: &Chord) -> Result<Grab, BackendError> {
        let keycodes = self.keycodes_of(keysym_of(chord.key))?;
        if keycodes.is_empty() {
            return Err(BackendError::Unsupported(
                "the kill-switch key is not on this keyboard".into(),
            ));
        }
        let grab = Grab {
            modifiers: modifiers_of(chord),
            keycodes,
        };
        for (i, &keycode) in grab.keycodes.iter().enumerate() {
            for lock in LOCKS {
                // Checked: a client already holding the chord answers
                // BadAccess, and the kill switch would silently be missing.
                let held = self
                    .conn
                    .grab_key(
                        false,
                        self.root,
                        grab.modifiers | ModMask::from(lock),
                        keycode,
                        GrabMode::ASYNC,
                        GrabMode::ASYNC,
                    )
                    .backend()?
                    .check();
                if let Err(e) = held {
                    // What the kill switch in force grabs stays grabbed.
                    let current = self.grabbed.borrow();
                    self.ungrab(&grab.keycodes[..=i], grab.modifiers, current.as_ref());
                    return Err(BackendError::Failed(format!(
                        "another client holds the chord: {e}"
                    )));
                }
            }
        }
        Ok(grab)
    }

    /// Lets `keycodes` with `modifiers` go, but what `keep` grabs.
    fn ungrab(&self, keycodes: &[u8], modifiers: ModMask, keep: Option<&Grab>) {
        for &keycode in keycodes {
            if keep.is_some_and(|k| k.modifiers == modifiers && k.keycodes.contains(&keycode)) {
                continue;
            }
            for lock in LOCKS {
                let _ = self
                    .conn
                    .ungrab_key(keycode, self.root, modifiers | ModMask::from(lock));
            }
        }
    }

    /// Grabs a chord the host asked for and then lets the old one go; if
    /// the new one cannot be grabbed the old one stays.
    fn follow_hotkey(&self) {
        let Some((n, chord)) = self.hotkey.asked() else {
            return;
        };
        match self.grab(&chord) {
            Ok(new) if self.hotkey.answer(n, Ok(())) => {
                if let Some(old) = self.grabbed.borrow_mut().take() {
                    self.ungrab(&old.keycodes, old.modifiers, Some(&new));
                }
                *self.grabbed.borrow_mut() = Some(new);
                let _ = self.conn.flush();
                tracing::info!(chord = ?chord, "the kill-switch hotkey changed");
            }
            Ok(new) => {
                // Withdrawn meanwhile: the old chord stays the kill switch.
                let current = self.grabbed.borrow();
                self.ungrab(&new.keycodes, new.modifiers, current.as_ref());
                let _ = self.conn.flush();
            }
            Err(e) => {
                tracing::warn!(error = %e, "the new kill-switch hotkey could not be grabbed: the old one stays");
                let _ = self.hotkey.answer(n, Err(e.to_string()));
            }
        }
    }

    fn is_kill_switch(&self, keycode: u8, state: u16) -> bool {
        let relevant = u16::from(ModMask::CONTROL | ModMask::M1 | ModMask::SHIFT | ModMask::M4);
        self.grabbed.borrow().as_ref().is_some_and(|g| {
            g.keycodes.contains(&keycode) && state & relevant == u16::from(g.modifiers)
        })
    }

    /// Whether an event from `source` is synthetic: the devices are read
    /// again first when the hierarchy changed or `source` is new; a device
    /// the server does not list even then counts as synthetic.
    fn synthetic(&self, source: u16) -> Result<bool, BackendError> {
        if self.stale.get() || self.devices.borrow().judge(source).is_none() {
            let fresh = devices::read(&self.conn)?;
            tracing::debug!(xtest = ?fresh.xtest, "input devices read again");
            *self.devices.borrow_mut() = fresh;
            self.stale.set(false);
        }
        Ok(self.devices.borrow().judge(source) != Some(Source::Device))
    }

    /// Hands every queued event to `sink`; says whether a pointer device
    /// other than XTEST moved (the person's hand, not deskhand's moves).
    fn drain(&self, sink: &(dyn Fn(WatchedInput) + Send + Sync)) -> Result<bool, BackendError> {
        let mut moved = false;
        while let Some(event) = self.conn.poll_for_event().backend()? {
            let synthetic = |source: u16| self.synthetic(source);
            match event {
                // A master or device added, removed, attached: read again
                // before the next event is judged.
                Event::XinputHierarchy(_) => self.stale.set(true),
                // Auto-repeat of a held key is not a new press.
                Event::XinputRawKeyPress(e)
                    if e.flags.contains(xinput::KeyEventFlags::KEY_REPEAT) => {}
                Event::XinputRawKeyPress(e) => sink(WatchedInput::KeyPress {
                    synthetic: synthetic(e.sourceid)?,
                }),
                Event::XinputRawButtonPress(e) => {
                    let synthetic = synthetic(e.sourceid)?;
                    // Buttons 4 to 7 are the wheel's notches.
                    sink(if (4..=7).contains(&e.detail) {
                        WatchedInput::WheelTurn { synthetic }
                    } else {
                        WatchedInput::ButtonPress { synthetic }
                    })
                }
                Event::XinputRawMotion(e) => {
                    let synthetic = synthetic(e.sourceid)?;
                    moved |= !synthetic;
                    sink(WatchedInput::Motion { synthetic });
                }
                Event::KeyPress(e) if self.is_kill_switch(e.detail, u16::from(e.state)) => {
                    sink(WatchedInput::KillSwitch);
                }
                _ => {}
            }
        }
        Ok(moved)
    }

    fn run(self, sink: Arc<dyn Fn(WatchedInput) + Send + Sync>, armed: Arc<AtomicBool>) {
        if let Err(e) = self.watch(&*sink, &armed) {
            tracing::error!(error = %e, "the hand-back watcher stopped");
        }
        self.hotkey.unwatch();
        sink(WatchedInput::WatcherLost);
    }

    fn watch(
        &self,
        sink: &(dyn Fn(WatchedInput) + Send + Sync),
        armed: &AtomicBool,
    ) -> Result<(), BackendError> {
        let period = Duration::from_millis(POLL_ARMED_MS as u64);
        let mut checked: Option<Instant> = None;
        // The person's motion seen while the last read was awaited.
        let mut moved_meanwhile = false;
        loop {
            self.follow_hotkey();
            self.conn.flush().backend()?;
            let moved = self.drain(sink)? | std::mem::take(&mut moved_meanwhile);
            let is_armed = armed.load(Ordering::SeqCst);
            // The pointer is read when the person's hand moved, and at
            // least every period. XTEST motion alone (deskhand's moves,
            // which the desktop thread checks itself) asks for no extra
            // round trip: it would compete with deskhand's own.
            if is_armed && (moved || checked.is_none_or(|t| t.elapsed() >= period)) {
                let p = self
                    .conn
                    .query_pointer(self.root)
                    .backend()?
                    .reply()
                    .backend()?;
                checked = Some(Instant::now());
                sink(WatchedInput::Pointer(Point::new(
                    i32::from(p.root_x),
                    i32::from(p.root_y),
                )));
                // Events read while waiting for that reply are queued
                // inside x11rb, not on the socket: handle them now.
                moved_meanwhile = self.drain(sink)?;
            }
            if !is_armed {
                checked = None;
            }
            let mut fd = libc::pollfd {
                fd: self.conn.stream().as_fd().as_raw_fd(),
                events: libc::POLLIN,
                revents: 0,
            };
            let timeout = match checked {
                _ if moved_meanwhile => 0,
                Some(t) if is_armed => {
                    let left = period.saturating_sub(t.elapsed()).as_millis();
                    i32::try_from(left).unwrap_or(POLL_ARMED_MS).max(1)
                }
                _ if is_armed => POLL_ARMED_MS,
                _ => POLL_IDLE_MS,
            };
            // SAFETY: one valid pollfd.
            unsafe { libc::poll(&mut fd, 1, timeout) };
        }
    }
}

impl InputWatcher for X11Watcher {
    fn start(
        self: Box<Self>,
        sink: Arc<dyn Fn(WatchedInput) + Send + Sync>,
        armed: Arc<AtomicBool>,
    ) -> Result<(), BackendError> {
        let mask =
            XIEventMask::RAW_KEY_PRESS | XIEventMask::RAW_BUTTON_PRESS | XIEventMask::RAW_MOTION;
        // Hierarchy changes come only to a selection for every device.
        self.conn
            .xinput_xi_select_events(
                self.root,
                &[
                    xinput::EventMask {
                        deviceid: Device::ALL_MASTER.into(),
                        mask: vec![mask],
                    },
                    xinput::EventMask {
                        deviceid: Device::ALL.into(),
                        mask: vec![XIEventMask::HIERARCHY],
                    },
                ],
            )
            .backend()?;
        // Devices added before the selection took effect are read again.
        self.stale.set(true);
        match self.grab(&self.hotkey.watch()) {
            Ok(grab) => *self.grabbed.borrow_mut() = Some(grab),
            Err(e) => tracing::warn!(error = %e, "the kill-switch hotkey could not be grabbed"),
        }
        self.conn.flush().backend()?;
        tracing::info!(xtest = ?self.devices.borrow().xtest, "hand-back watcher started");
        std::thread::Builder::new()
            .name("deskhand-handback".into())
            .spawn(move || self.run(sink, armed))
            .map_err(|e| BackendError::Failed(e.to_string()))?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chord_keys_are_the_x_keysyms() {
        let sym = |text: &str| keysym_of(Chord::parse(text).expect("a chord").key);
        assert_eq!(sym("ctrl+alt+Escape"), 0xff1b);
        assert_eq!(sym("super+F12"), 0xffc9);
        assert_eq!(sym("ctrl+alt+Pause"), 0xff13);
        assert_eq!(sym("ctrl+shift+K"), u32::from('k'));
    }
}
