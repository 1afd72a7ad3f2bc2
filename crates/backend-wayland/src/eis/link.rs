//! The libei connection's own thread: the handshake, the server's seats
//! and devices followed from its events (reis's event stream cannot move
//! between threads), until the connection ends.

use std::os::fd::OwnedFd;
use std::os::unix::fs::FileExt;
use std::os::unix::net::UnixStream;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use futures_util::StreamExt;
use reis::ei;
use reis::enumflags2::BitFlags;
use reis::event::{Connection, Device, DeviceCapability, EiEvent, Keymap};

use super::keys::{KeyTable, Locks};

/// How long the handshake and the server's devices may take.
const READY: Duration = Duration::from_secs(3);

/// What deskhand sends, so what it binds on a seat.
pub(super) const SENT: [DeviceCapability; 4] = [
    DeviceCapability::PointerAbsolute,
    DeviceCapability::Button,
    DeviceCapability::Scroll,
    DeviceCapability::Keyboard,
];

/// A device the server gave, as it stands.
pub(super) struct Held {
    pub(super) device: Device,
    pub(super) resumed: bool,
    pub(super) emulating: bool,
}

/// The server's devices, keymap and keyboard state, followed from its
/// events.
#[derive(Default)]
pub(super) struct Devices {
    pub(super) held: Vec<Held>,
    pub(super) keys: Option<Arc<KeyTable>>,
    pub(super) locks: Locks,
    pub(super) gone: Option<String>,
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
            EiEvent::KeyboardModifiers(e) => {
                self.locks = Locks {
                    group: e.group,
                    locked: e.locked,
                };
            }
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

pub(super) fn lock(devices: &Mutex<Devices>) -> MutexGuard<'_, Devices> {
    devices
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

pub(super) type Connected = Result<(Connection, Arc<Mutex<Devices>>), String>;

/// Starts the thread on `socket`; `ready` says when the server has resumed
/// a device for every kind of event deskhand sends (or why not).
pub(super) fn start(
    socket: UnixStream,
    ready: tokio::sync::oneshot::Sender<Connected>,
) -> Result<(), String> {
    std::thread::Builder::new()
        .name("deskhand-libei".into())
        .spawn(move || {
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build();
            match rt {
                Ok(rt) => rt.block_on(run(socket, ready)),
                Err(e) => drop(ready.send(Err(format!("the libei thread's runtime: {e}")))),
            }
        })
        .map(drop)
        .map_err(|e| format!("the libei thread: {e}"))
}

async fn run(socket: UnixStream, ready: tokio::sync::oneshot::Sender<Connected>) {
    let devices = Arc::new(Mutex::new(Devices::default()));
    let started = tokio::time::timeout(READY, async {
        let context = ei::Context::new(socket).map_err(|e| format!("the EIS socket: {e}"))?;
        let (connection, mut events) = context
            .handshake_tokio("deskhand", ei::handshake::ContextType::Sender)
            .await
            .map_err(|e| format!("the libei handshake: {e}"))?;
        next_until(&mut events, &devices, &connection, true).await?;
        Ok((connection, events))
    })
    .await
    .unwrap_or_else(|_| {
        Err(format!(
            "the EIS server did not give deskhand its input devices in {READY:?}"
        ))
    });
    let (connection, mut events) = match started {
        Ok(started) => started,
        Err(e) => return drop(ready.send(Err(e))),
    };
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

/// The socket as a stream, and a second handle that can end it.
pub(super) fn split(socket: OwnedFd) -> Result<(UnixStream, UnixStream), String> {
    let stream = UnixStream::from(socket);
    let end = stream
        .try_clone()
        .map_err(|e| format!("the EIS socket: {e}"))?;
    Ok((stream, end))
}
