//! The input devices as the X server describes them: which are XTEST's,
//! by the server's own `XTEST Device` property (set when the server makes
//! the XTEST pair of a master, and one no client can change or delete),
//! never by a name any client may choose; and what a device holds down.

use std::collections::HashSet;

use deskhand_backend::BackendError;
use x11rb::connection::Connection;
use x11rb::protocol::xinput::{self, ConnectionExt as _, Device, DeviceType};
use x11rb::protocol::xproto::{AtomEnum, ConnectionExt as _};

use super::X11ResultExt;

/// The server's mark of an XTEST device.
const XTEST_PROPERTY: &[u8] = b"XTEST Device";

/// Every device of the server, sorted into XTEST's and the others.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub(crate) struct Devices {
    /// Every slave that carries the XTEST property, of every master.
    pub xtest: HashSet<u16>,
    /// Every device id the server listed (masters and slaves).
    pub known: HashSet<u16>,
    /// XTEST slaves with the master they belong to and their kind.
    pub xtest_slaves: Vec<Slave>,
}

/// A slave device.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Slave {
    pub id: u16,
    pub master: u16,
    pub keyboard: bool,
}

/// Where a raw event came from, as the watcher judges it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Source {
    /// A device the server does not mark as XTEST.
    Device,
    /// An XTEST device (any master's), or one the server did not list:
    /// nothing unknown counts as the person's hand.
    Synthetic,
}

impl Devices {
    /// How an event whose `sourceid` is `source` counts; `None` when the
    /// device is not known yet (the list is to be read again first).
    pub fn judge(&self, source: u16) -> Option<Source> {
        if self.xtest.contains(&source) {
            Some(Source::Synthetic)
        } else if self.known.contains(&source) {
            Some(Source::Device)
        } else {
            None
        }
    }
}

/// Announces XInput 2.2 on `conn` (needed before any XI2 request).
pub(crate) fn announce_xi2(conn: &impl Connection) -> Result<(u16, u16), BackendError> {
    let v = conn
        .xinput_xi_query_version(2, 2)
        .backend()?
        .reply()
        .backend()?;
    Ok((v.major_version, v.minor_version))
}

/// Reads every device and which of them are XTEST's.
pub(crate) fn read(conn: &impl Connection) -> Result<Devices, BackendError> {
    let atom = conn
        .intern_atom(true, XTEST_PROPERTY)
        .backend()?
        .reply()
        .backend()?
        .atom;
    if atom == x11rb::NONE {
        // Without the server's mark every XTEST event would pass for the
        // person's: no hand-back watcher rather than one that fails open.
        return Err(BackendError::Failed(
            "this X server does not mark its XTEST devices (no \"XTEST Device\" property): \
             synthetic input could not be told from the person's"
                .into(),
        ));
    }
    let infos = conn
        .xinput_xi_query_device(Device::ALL)
        .backend()?
        .reply()
        .backend()?
        .infos;
    let slave = |t: DeviceType| {
        t == DeviceType::SLAVE_POINTER
            || t == DeviceType::SLAVE_KEYBOARD
            || t == DeviceType::FLOATING_SLAVE
    };
    // Every property read is sent before the first answer is awaited.
    let mut asked = Vec::new();
    for d in infos.iter().filter(|d| slave(d.type_)) {
        let cookie = conn
            .xinput_xi_get_property(d.deviceid, false, atom, AtomEnum::ANY.into(), 0, 1)
            .backend()?;
        asked.push((d, cookie));
    }
    let mut devices = Devices {
        known: infos.iter().map(|d| d.deviceid).collect(),
        ..Devices::default()
    };
    for (d, cookie) in asked {
        // A device removed meanwhile answers with an error: not XTEST's,
        // and not known either (its events, if any, count as synthetic).
        match cookie.reply() {
            Ok(r) if r.type_ != x11rb::NONE => {
                devices.xtest.insert(d.deviceid);
                devices.xtest_slaves.push(Slave {
                    id: d.deviceid,
                    master: d.attachment,
                    keyboard: d.type_ == DeviceType::SLAVE_KEYBOARD,
                });
            }
            Ok(_) => {}
            Err(_) => {
                devices.known.remove(&d.deviceid);
            }
        }
    }
    Ok(devices)
}

/// The keycodes (or buttons) set in an XInput 1 state bit mask.
pub(crate) fn down_in(mask: &[u8], count: usize) -> Vec<u8> {
    (0..count.min(mask.len() * 8).min(256))
        .filter(|&i| mask[i / 8] & (1 << (i % 8)) != 0)
        .map(|i| i as u8)
        .collect()
}

/// What the XTEST slaves of the master pair `core` (pointer, keyboard)
/// hold down: the keycodes and the buttons.
pub(crate) fn held_by_xtest(
    conn: &impl Connection,
    devices: &Devices,
    core: (u16, u16),
) -> Result<(Vec<u8>, Vec<u8>), BackendError> {
    let (mut keys, mut buttons) = (Vec::new(), Vec::new());
    for s in &devices.xtest_slaves {
        if s.master != core.0 && s.master != core.1 {
            continue;
        }
        let Ok(id) = u8::try_from(s.id) else { continue };
        let state = conn.xinput_query_device_state(id).backend()?.reply();
        let Ok(state) = state else { continue };
        for class in state.classes {
            match class.data {
                xinput::InputStateData::Key(k) if s.keyboard => {
                    keys.extend(down_in(&k.keys, usize::from(k.num_keys)));
                }
                xinput::InputStateData::Button(b) if !s.keyboard => {
                    // Bit 0 is no button.
                    let down = down_in(&b.buttons, usize::from(b.num_buttons) + 1);
                    buttons.extend(down.into_iter().filter(|&b| b != 0));
                }
                _ => {}
            }
        }
    }
    keys.sort_unstable();
    keys.dedup();
    buttons.sort_unstable();
    buttons.dedup();
    Ok((keys, buttons))
}

/// The master pointer and keyboard this connection's core input goes to
/// (its client pointer and the keyboard paired with it).
pub(crate) fn core_masters(conn: &impl Connection) -> Result<(u16, u16), BackendError> {
    let pointer = conn
        .xinput_xi_get_client_pointer(x11rb::NONE)
        .backend()?
        .reply()
        .backend()?
        .deviceid;
    let infos = conn
        .xinput_xi_query_device(pointer)
        .backend()?
        .reply()
        .backend()?
        .infos;
    let keyboard = infos.first().map_or(3, |d| d.attachment);
    Ok((pointer, keyboard))
}

/// Releases every key (and, `with_buttons`, every button) the XTEST
/// slaves of this connection's masters hold: what deskhand's input device
/// holds, whoever pressed it (a run killed mid-act leaves keys down that
/// no ledger listed). The person's own keyboard and mouse are other
/// devices: their keys stay down. Returns the keycodes and buttons
/// released.
pub(crate) fn release_xtest_held(
    conn: &impl Connection,
    with_buttons: bool,
) -> Result<(Vec<u8>, Vec<u8>), BackendError> {
    use x11rb::protocol::xtest::ConnectionExt as _;
    announce_xi2(conn)?;
    let devices = read(conn)?;
    let (keys, mut buttons) = held_by_xtest(conn, &devices, core_masters(conn)?)?;
    if !with_buttons {
        buttons.clear();
    }
    let release = x11rb::protocol::xproto::KEY_RELEASE_EVENT;
    for &k in &keys {
        conn.xtest_fake_input(release, k, 0, x11rb::NONE, 0, 0, 0)
            .backend()?;
    }
    let release = x11rb::protocol::xproto::BUTTON_RELEASE_EVENT;
    for &b in &buttons {
        conn.xtest_fake_input(release, b, 0, x11rb::NONE, 0, 0, 0)
            .backend()?;
    }
    conn.get_input_focus().backend()?.reply().backend()?;
    Ok((keys, buttons))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn devices(xtest: &[u16], known: &[u16]) -> Devices {
        Devices {
            xtest: xtest.iter().copied().collect(),
            known: known.iter().copied().collect(),
            xtest_slaves: Vec::new(),
        }
    }

    #[test]
    fn an_xtest_device_of_any_master_is_synthetic() {
        // 4 and 5: the core pair's XTEST slaves; 14: a new master's.
        let d = devices(&[4, 5, 14], &[2, 3, 4, 5, 6, 12, 13, 14]);
        assert_eq!(d.judge(4), Some(Source::Synthetic));
        assert_eq!(d.judge(14), Some(Source::Synthetic));
        assert_eq!(d.judge(6), Some(Source::Device));
    }

    #[test]
    fn an_unlisted_device_is_not_judged() {
        let d = devices(&[4], &[2, 3, 4, 6]);
        assert_eq!(d.judge(20), None, "read the list again first");
    }

    #[test]
    fn bits_become_keycodes() {
        let mut mask = [0u8; 32];
        mask[6] = 0b0000_0100; // keycode 50 (Shift_L)
        mask[13] = 0b0000_0001; // keycode 104
        mask[31] = 0b1000_0000; // keycode 255
        assert_eq!(down_in(&mask, 256), vec![50, 104, 255]);
        assert_eq!(
            down_in(&mask, 100),
            vec![50],
            "past num_keys nothing counts"
        );
        assert!(down_in(&[0u8; 32], 256).is_empty());
    }
}
