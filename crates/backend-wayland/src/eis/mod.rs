//! Input through libei, where the RemoteDesktop portal offers
//! `ConnectToEIS` (version 2: GNOME 46, KDE Plasma 6.1): the portal hands
//! deskhand a socket to the compositor's EIS server, whose devices take
//! absolute pointer positions in desktop pixels, evdev buttons, wheel
//! steps and evdev keys (looked up in the keyboard's own keymap). A
//! session connected to EIS has its `Notify*` calls refused by the portal,
//! so all of its input goes this way.

mod keys;

use std::os::fd::OwnedFd;
use std::os::unix::fs::FileExt;
use std::os::unix::net::UnixStream;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use deskhand_backend::BackendError;
use futures_util::StreamExt;
use reis::ei;
use reis::enumflags2::BitFlags;
use reis::event::{Connection, Device, DeviceCapability, EiEvent, Keymap, Region};

pub(crate) use keys::{KeyTable, Stroke};

/// How long the server may take to offer its devices after the handshake.
const READY: Duration = Duration::from_secs(3);

/// What deskhand sends, so what it binds on a seat.
const SENT: [DeviceCapability; 4] = [
    DeviceCapability::PointerAbsolute,
    DeviceCapability::Button,
    DeviceCapability::Scroll,
    DeviceCapability::Keyboard,
];

/// One wheel step in `ei_scroll.scroll_discrete` units.
const WHEEL_STEP: i32 = 120;

/// A device the server gave, as it stands.
struct Held {
    device: Device,
    resumed: bool,
    emulating: bool,
}

/// The server's devices and keymap, followed from its events.
#[derive(Default)]
struct Devices {
    held: Vec<Held>,
    keys: Option<Arc<KeyTable>>,
    gone: Option<String>,
}

impl Devices {
    /// Takes in one event of the server.
    fn apply(&mut self, event: EiEvent) {
        match event {
            EiEvent::SeatAdded(e) => {
                e.seat
                    .bind_capabilities(SENT.iter().copied().collect::<BitFlags<_>>());
            }
            EiEvent::DeviceAdded(e) => {
                if let Some(table) = e.device.keymap().and_then(key_table) {
                    self.keys = Some(Arc::new(table));
                }
                self.held.push(Held {
                    device: e.device,
                    resumed: false,
                    emulating: false,
                });
            }
            EiEvent::DeviceResumed(e) => self.resume(&e.device, true),
            EiEvent::DevicePaused(e) => self.resume(&e.device, false),
            EiEvent::DeviceRemoved(e) => self.held.retain(|h| h.device != e.device),
            EiEvent::Disconnected(e) => {
                let why = e.explanation.unwrap_or_else(|| format!("{:?}", e.reason));
                self.gone = Some(format!("the desktop ended deskhand's libei input: {why}"));
            }
            _ => {}
        }
    }

    fn resume(&mut self, device: &Device, resumed: bool) {
        for h in self.held.iter_mut().filter(|h| h.device == *device) {
            h.resumed = resumed;
            // A paused device stops emulating; it starts again when used.
            h.emulating = false;
        }
    }

    /// Whether every capability deskhand sends has a resumed device.
    fn ready(&self) -> bool {
        SENT.iter().all(|&c| {
            self.held
                .iter()
                .any(|h| h.resumed && h.device.has_capability(c))
        })
    }
}

/// The key table of a keyboard's XKB keymap; none for another kind or a
/// keymap that cannot be read.
fn key_table(keymap: &Keymap) -> Option<KeyTable> {
    if keymap.type_ != ei::keyboard::KeymapType::Xkb {
        return None;
    }
    let read = || -> Result<KeyTable, String> {
        let file = std::fs::File::from(keymap.fd.try_clone().map_err(|e| e.to_string())?);
        let mut text = vec![0; keymap.size as usize];
        file.read_exact_at(&mut text, 0)
            .map_err(|e| e.to_string())?;
        KeyTable::from_text(&String::from_utf8_lossy(&text))
    };
    read()
        .map_err(|e| tracing::warn!(error = %e, "the EIS keyboard's keymap was not read"))
        .ok()
}

fn lock(devices: &Mutex<Devices>) -> MutexGuard<'_, Devices> {
    devices
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

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
}

impl Eis {
    /// Speaks libei on `socket` (the portal's `ConnectToEIS`) and waits
    /// until the server has resumed a device for every kind of event
    /// deskhand sends; then follows the server's events on a thread of
    /// its own (reis's event stream cannot move between threads).
    pub(crate) async fn connect(socket: OwnedFd) -> Result<Self, String> {
        let (tx, rx) = tokio::sync::oneshot::channel();
        std::thread::Builder::new()
            .name("deskhand-libei".into())
            .spawn(move || {
                let rt = tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build();
                match rt {
                    Ok(rt) => rt.block_on(run(socket, tx)),
                    Err(e) => drop(tx.send(Err(format!("the libei thread's runtime: {e}")))),
                }
            })
            .map_err(|e| format!("the libei thread: {e}"))?;
        let (connection, devices) = rx
            .await
            .map_err(|_| "the libei thread ended".to_owned())??;
        Ok(Self {
            connection,
            devices,
            sequence: AtomicU32::new(1),
        })
    }

    /// Sends on a resumed device with `capability`: `check` first (nothing
    /// is sent if it fails), then `send`, in one frame.
    fn emit(
        &self,
        capability: DeviceCapability,
        check: impl FnOnce(&Device) -> Result<(), BackendError>,
        send: impl FnOnce(&Device) -> Option<()>,
    ) -> Result<(), BackendError> {
        let mut devices = lock(&self.devices);
        if let Some(gone) = &devices.gone {
            return Err(failed(gone));
        }
        let held = devices
            .held
            .iter_mut()
            .find(|h| h.resumed && h.device.has_capability(capability))
            .ok_or_else(|| failed("the desktop paused deskhand's libei input device"))?;
        check(&held.device)?;
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

    /// The pointer to desktop pixel (`x`, `y`).
    pub(crate) fn motion(&self, x: f64, y: f64) -> Result<(), BackendError> {
        let check = |d: &Device| {
            if inside(d.regions(), x, y) {
                Ok(())
            } else {
                Err(BackendError::InvalidTarget(format!(
                    "({x}, {y}) is outside every region of the desktop's libei pointer"
                )))
            }
        };
        self.emit(DeviceCapability::PointerAbsolute, check, |d| {
            d.interface::<ei::PointerAbsolute>()?
                .motion_absolute(x as f32, y as f32);
            Some(())
        })
    }

    /// A button by its evdev code.
    pub(crate) fn button(&self, code: u32, down: bool) -> Result<(), BackendError> {
        use ei::button::ButtonState;
        let state = if down {
            ButtonState::Press
        } else {
            ButtonState::Released
        };
        self.emit(
            DeviceCapability::Button,
            |_| Ok(()),
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
            |_| Ok(()),
            |d| {
                d.interface::<ei::Scroll>()?.scroll_discrete(x, y);
                Some(())
            },
        )
    }

    /// Whether the keyboard's layout has a key for `keysym`.
    pub(crate) fn has_key(&self, keysym: u32) -> bool {
        lock(&self.devices)
            .keys
            .as_ref()
            .is_some_and(|k| k.stroke(keysym).is_some())
    }

    /// The keys of `keysym` in the keyboard's layout: on press its
    /// modifiers then the key, on release the key then its modifiers.
    pub(crate) fn keysym(&self, keysym: u32, down: bool) -> Result<(), BackendError> {
        let keys = lock(&self.devices).keys.clone();
        let stroke = keys
            .as_ref()
            .and_then(|k| k.stroke(keysym).cloned())
            .ok_or_else(|| {
                BackendError::InvalidTarget(format!(
                    "the desktop's keyboard layout has no key for keysym {keysym:#x}"
                ))
            })?;
        for code in order(&stroke, down) {
            self.key(code, down)?;
        }
        Ok(())
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
            |_| Ok(()),
            |d| {
                d.interface::<ei::Keyboard>()?.key(code, state);
                Some(())
            },
        )
    }
}

/// The evdev codes of `stroke` in the order they are pressed or released.
fn order(stroke: &Stroke, down: bool) -> Vec<u32> {
    let mut codes = stroke.mods.clone();
    codes.push(stroke.code);
    if !down {
        codes.reverse();
    }
    codes
}

type Connected = Result<(Connection, Arc<Mutex<Devices>>), String>;

/// The libei thread: the handshake, the wait for devices (said on
/// `ready`), then the server's events until the connection ends.
async fn run(socket: OwnedFd, ready: tokio::sync::oneshot::Sender<Connected>) {
    let started = async {
        let context = ei::Context::new(UnixStream::from(socket))
            .map_err(|e| format!("the EIS socket: {e}"))?;
        context
            .handshake_tokio("deskhand", ei::handshake::ContextType::Sender)
            .await
            .map_err(|e| format!("the libei handshake: {e}"))
    };
    let (connection, mut events) = match started.await {
        Ok(started) => started,
        Err(e) => return drop(ready.send(Err(e))),
    };
    let devices = Arc::new(Mutex::new(Devices::default()));
    let waited =
        tokio::time::timeout(READY, next_until(&mut events, &devices, &connection, true)).await;
    let waited = waited.unwrap_or_else(|_| {
        Err(format!(
            "the EIS server offered no input devices in {READY:?}"
        ))
    });
    if let Err(e) = waited {
        return drop(ready.send(Err(e)));
    }
    if ready
        .send(Ok((connection.clone(), devices.clone())))
        .is_err()
    {
        return;
    }
    let why = next_until(&mut events, &devices, &connection, false)
        .await
        .err()
        .unwrap_or_default();
    tracing::warn!(reason = %why, "libei input ended");
    lock(&devices).gone.get_or_insert(why);
}

/// Takes in the server's events until the devices are ready (`ready`),
/// or else until the connection ends; the error says why it ended.
async fn next_until(
    events: &mut reis::tokio::EiConvertEventStream,
    devices: &Mutex<Devices>,
    connection: &Connection,
    ready: bool,
) -> Result<(), String> {
    while let Some(event) = events.next().await {
        let event = event.map_err(|e| format!("the EIS server: {e}"))?;
        let mut d = lock(devices);
        d.apply(event);
        let _ = connection.flush();
        if let Some(gone) = &d.gone {
            return Err(gone.clone());
        }
        if ready && d.ready() {
            return Ok(());
        }
    }
    Err("the EIS server closed deskhand's libei input".to_owned())
}

#[cfg(test)]
mod tests;
