//! Input through libei, where the RemoteDesktop portal offers
//! `ConnectToEIS` (version 2: GNOME 46, KDE Plasma 6.1): the portal hands
//! deskhand a socket to the compositor's EIS server, whose devices take
//! absolute pointer positions in the desktop's (logical) coordinates,
//! evdev buttons, wheel steps and evdev keys (looked up in the keyboard's
//! own keymap, in its current group and locks). A session connected to
//! EIS has its `Notify*` calls refused by the portal, so all of its input
//! goes this way. Keys and buttons deskhand holds are counted, so that a
//! modifier two strokes share is released once, and all are let go when
//! the connection is dropped.

mod keys;
mod link;

use std::collections::HashMap;
use std::os::fd::OwnedFd;
use std::os::unix::net::UnixStream;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};

use deskhand_backend::BackendError;
use reis::ei;
use reis::event::{Connection, Device, DeviceCapability, Region};

use keys::Stroke;
use link::{Devices, lock};

/// One wheel step in `ei_scroll.scroll_discrete` units.
const WHEEL_STEP: i32 = 120;

/// Microseconds of the monotonic clock, as libei stamps frames.
fn now_us() -> u64 {
    let t = rustix::time::clock_gettime(rustix::time::ClockId::Monotonic);
    (t.tv_sec as u64) * 1_000_000 + (t.tv_nsec as u64) / 1_000
}

/// Whether desktop point (`x`, `y`) lies in one of the regions (a device
/// without regions takes any point).
fn inside(regions: &[Region], x: f64, y: f64) -> bool {
    regions.is_empty()
        || regions.iter().any(|r| {
            let (rx, ry) = (f64::from(r.x), f64::from(r.y));
            x >= rx && y >= ry && x < rx + f64::from(r.width) && y < ry + f64::from(r.height)
        })
}

fn failed(what: impl std::fmt::Display) -> BackendError {
    BackendError::Failed(what.to_string())
}

/// A connection to the compositor's EIS server, as a sender.
pub(crate) struct Eis {
    connection: Connection,
    devices: Arc<Mutex<Devices>>,
    sequence: AtomicU32,
    /// Keys held, by evdev code, with how many strokes hold each.
    keys_held: Mutex<HashMap<u32, u32>>,
    /// Buttons held, by evdev code.
    buttons_held: Mutex<Vec<u32>>,
    /// Ends the connection (and its thread) when dropped.
    end: UnixStream,
}

impl Eis {
    /// Speaks libei on `socket` (the portal's `ConnectToEIS`) and waits,
    /// bounded, until the server has resumed a device for every kind of
    /// event deskhand sends; then follows the server's events on a thread
    /// of its own.
    pub(crate) async fn connect(socket: OwnedFd) -> Result<Self, String> {
        let (stream, end) = link::split(socket)?;
        let (tx, rx) = tokio::sync::oneshot::channel();
        link::start(stream, tx)?;
        let (connection, devices) = rx
            .await
            .map_err(|_| "the libei thread ended".to_owned())??;
        Ok(Self {
            connection,
            devices,
            sequence: AtomicU32::new(1),
            keys_held: Mutex::new(HashMap::new()),
            buttons_held: Mutex::new(Vec::new()),
            end,
        })
    }

    /// Sends on a resumed device with `capability` that `fits`, else the
    /// error `misfit` gives: `send` in one frame.
    fn emit(
        &self,
        capability: DeviceCapability,
        fits: impl Fn(&Device) -> bool,
        misfit: impl FnOnce() -> BackendError,
        send: impl FnOnce(&Device) -> Option<()>,
    ) -> Result<(), BackendError> {
        let mut devices = lock(&self.devices);
        if let Some(gone) = &devices.gone {
            return Err(failed(gone));
        }
        let with = |h: &&mut link::Held| h.device.has_capability(capability);
        if !devices.held.iter_mut().any(|h| with(&h)) {
            return Err(failed(format!(
                "the desktop gave deskhand no libei device for {capability:?}"
            )));
        }
        if !devices.held.iter_mut().any(|h| with(&h) && h.resumed) {
            return Err(failed("the desktop paused deskhand's libei input device"));
        }
        let held = devices
            .held
            .iter_mut()
            .find(|h| h.resumed && h.device.has_capability(capability) && fits(&h.device))
            .ok_or_else(misfit)?;
        let serial = self.connection.serial();
        if !held.emulating {
            let sequence = self.sequence.fetch_add(1, Ordering::Relaxed);
            held.device.device().start_emulating(serial, sequence);
            held.emulating = true;
        }
        send(&held.device)
            .ok_or_else(|| failed("the libei device lacks an interface it offered"))?;
        held.device.device().frame(serial, now_us());
        self.connection
            .flush()
            .map_err(|e| failed(format!("sending to the EIS server: {e}")))
    }

    /// The pointer to desktop point (`x`, `y`), on the device whose
    /// region holds it.
    pub(crate) fn motion(&self, x: f64, y: f64) -> Result<(), BackendError> {
        let off = || {
            BackendError::InvalidTarget(format!(
                "({x}, {y}) is outside every region of the desktop's libei pointer"
            ))
        };
        self.emit(
            DeviceCapability::PointerAbsolute,
            |d| inside(d.regions(), x, y),
            off,
            |d| {
                d.interface::<ei::PointerAbsolute>()?
                    .motion_absolute(x as f32, y as f32);
                Some(())
            },
        )
    }

    /// A button by its evdev code.
    pub(crate) fn button(&self, code: u32, down: bool) -> Result<(), BackendError> {
        self.send_button(code, down)?;
        if let Ok(mut held) = self.buttons_held.lock() {
            held.retain(|c| *c != code);
            if down {
                held.push(code);
            }
        }
        Ok(())
    }

    fn send_button(&self, code: u32, down: bool) -> Result<(), BackendError> {
        use ei::button::ButtonState;
        let state = if down {
            ButtonState::Press
        } else {
            ButtonState::Released
        };
        self.emit(
            DeviceCapability::Button,
            |_| true,
            || failed("no button device"),
            |d| {
                d.interface::<ei::Button>()?.button(code, state);
                Some(())
            },
        )
    }

    /// `steps` wheel steps (positive: down or right).
    pub(crate) fn scroll(&self, vertical: bool, steps: i32) -> Result<(), BackendError> {
        let amount = steps.saturating_mul(WHEEL_STEP);
        let (x, y) = if vertical { (0, amount) } else { (amount, 0) };
        self.emit(
            DeviceCapability::Scroll,
            |_| true,
            || failed("no wheel device"),
            |d| {
                d.interface::<ei::Scroll>()?.scroll_discrete(x, y);
                Some(())
            },
        )
    }

    /// The keys of `keysym` in the keyboard's layout as it stands.
    fn stroke(&self, keysym: u32) -> Result<Stroke, BackendError> {
        let (keys, locks) = {
            let d = lock(&self.devices);
            (d.keys.clone(), d.locks)
        };
        let keys = keys.ok_or_else(|| failed("the desktop's libei keyboard sent no keymap"))?;
        keys.stroke(keysym, locks).cloned().ok_or_else(|| {
            BackendError::InvalidTarget(format!(
                "the desktop's keyboard layout has no key for keysym {keysym:#x}"
            ))
        })
    }

    /// Whether the keyboard's layout has a key for `keysym`.
    pub(crate) fn has_key(&self, keysym: u32) -> bool {
        self.stroke(keysym).is_ok()
    }

    /// Presses or releases `keysym`: on press its modifiers then the key,
    /// on release the key then its modifiers; a modifier another stroke
    /// (or the agent) holds is neither pressed again nor let go. A press
    /// that fails lets go of what it pressed.
    pub(crate) fn keysym(&self, keysym: u32, down: bool) -> Result<(), BackendError> {
        let stroke = self.stroke(keysym)?;
        if !down {
            let mut first = self.release(stroke.code).err();
            for m in stroke.mods.iter().rev() {
                first = first.or(self.release(*m).err());
            }
            return first.map_or(Ok(()), Err);
        }
        let mut pressed = Vec::new();
        for code in stroke.mods.iter().chain([&stroke.code]) {
            if let Err(e) = self.hold(*code) {
                for p in pressed.iter().rev() {
                    let _ = self.release(*p);
                }
                return Err(e);
            }
            pressed.push(*code);
        }
        Ok(())
    }

    /// Holds `code` once more: pressed only if nothing holds it yet.
    fn hold(&self, code: u32) -> Result<(), BackendError> {
        let count = self.held_count(code);
        if count == 0 {
            self.key(code, true)?;
        }
        self.set_held(code, count + 1);
        Ok(())
    }

    /// Holds `code` once less: released when nothing holds it any more
    /// (or when nothing was known to hold it).
    fn release(&self, code: u32) -> Result<(), BackendError> {
        let count = self.held_count(code);
        self.set_held(code, count.saturating_sub(1));
        if count <= 1 {
            self.key(code, false)?;
        }
        Ok(())
    }

    fn held_count(&self, code: u32) -> u32 {
        self.keys_held
            .lock()
            .map_or(0, |h| h.get(&code).copied().unwrap_or(0))
    }

    fn set_held(&self, code: u32, count: u32) {
        if let Ok(mut h) = self.keys_held.lock() {
            if count == 0 {
                h.remove(&code);
            } else {
                h.insert(code, count);
            }
        }
    }

    fn key(&self, code: u32, down: bool) -> Result<(), BackendError> {
        use ei::keyboard::KeyState;
        let state = if down {
            KeyState::Press
        } else {
            KeyState::Released
        };
        self.emit(
            DeviceCapability::Keyboard,
            |_| true,
            || failed("no keyboard device"),
            |d| {
                d.interface::<ei::Keyboard>()?.key(code, state);
                Some(())
            },
        )
    }
}

impl Drop for Eis {
    /// Lets go of every key and button still held, stops emulating, and
    /// ends the connection.
    fn drop(&mut self) {
        let keys: Vec<u32> = self
            .keys_held
            .lock()
            .map(|h| h.keys().copied().collect())
            .unwrap_or_default();
        for code in keys {
            let _ = self.key(code, false);
        }
        let buttons = self
            .buttons_held
            .lock()
            .map(|b| b.clone())
            .unwrap_or_default();
        for code in buttons {
            let _ = self.send_button(code, false);
        }
        let serial = self.connection.serial();
        for h in lock(&self.devices).held.iter().filter(|h| h.emulating) {
            h.device.device().stop_emulating(serial);
        }
        let _ = self.connection.flush();
        let _ = self.end.shutdown(std::net::Shutdown::Both);
    }
}

#[cfg(test)]
mod tests;
