//! What `deskhand doctor` needs to know about a display: whether it
//! answers, which extensions it has, its window manager and its spare
//! keycodes. (Whether the accessibility bus answers is the AT-SPI
//! backend's check, not a property of the display.)

use x11rb::connection::{Connection, RequestConnection};
use x11rb::protocol::xinput::ConnectionExt as _;
use x11rb::protocol::xproto::{AtomEnum, ConnectionExt as _};

use crate::X11Error;

/// The extensions deskhand uses, and XInput's version.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Extensions {
    /// XTEST (input injection).
    pub xtest: bool,
    /// XInputExtension version, when present.
    pub xinput: Option<(u16, u16)>,
    /// MIT-SHM (fast capture).
    pub shm: bool,
    /// Composite (overlay-free capture).
    pub composite: bool,
    /// RandR (monitors).
    pub randr: bool,
    /// XFIXES (cursor image).
    pub xfixes: bool,
}

/// What a display looks like.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DisplayProbe {
    /// The display name probed.
    pub display: String,
    /// The server's vendor string.
    pub vendor: String,
    /// Extensions present.
    pub extensions: Extensions,
    /// The window manager's name, when one announces itself.
    pub window_manager: Option<String>,
    /// Keycodes with no symbol and no modifier: what characters no key
    /// produces are typed through. `None` when the keymap did not read.
    pub spare_keycodes: Option<usize>,
}

/// Connects to `display` and looks.
pub fn probe(display: &str) -> Result<DisplayProbe, X11Error> {
    let (conn, screen) = x11rb::connect(Some(display)).map_err(|e| X11Error::Connect {
        display: display.to_owned(),
        message: e.to_string(),
    })?;
    let has = |name: &'static str| conn.extension_information(name).ok().flatten().is_some();
    let xinput = if has(x11rb::protocol::xinput::X11_EXTENSION_NAME) {
        conn.xinput_xi_query_version(2, 4)
            .ok()
            .and_then(|c| c.reply().ok())
            .map(|v| (v.major_version, v.minor_version))
    } else {
        None
    };
    let extensions = Extensions {
        xtest: has(x11rb::protocol::xtest::X11_EXTENSION_NAME),
        xinput,
        shm: has(x11rb::protocol::shm::X11_EXTENSION_NAME),
        composite: has(x11rb::protocol::composite::X11_EXTENSION_NAME),
        randr: has(x11rb::protocol::randr::X11_EXTENSION_NAME),
        xfixes: has(x11rb::protocol::xfixes::X11_EXTENSION_NAME),
    };
    let root = conn.setup().roots[screen].root;
    let atom = |name: &[u8]| {
        conn.intern_atom(false, name)
            .ok()
            .and_then(|c| c.reply().ok())
            .map(|r| r.atom)
    };
    let prop = |w, a: u32, t: u32| {
        conn.get_property(false, w, a, t, 0, 1024)
            .ok()
            .and_then(|c| c.reply().ok())
            .map(|p| p.value)
            .filter(|v| !v.is_empty())
    };
    let any = u32::from(AtomEnum::ANY);
    let window_manager = (|| {
        let check = atom(b"_NET_SUPPORTING_WM_CHECK")?;
        let w = prop(root, check, u32::from(AtomEnum::WINDOW))?;
        let w = u32::from_ne_bytes(w.get(..4)?.try_into().ok()?);
        let name = prop(w, atom(b"_NET_WM_NAME")?, any)?;
        Some(String::from_utf8_lossy(&name).into_owned())
    })();
    let spare_keycodes = spare_keycodes(&conn);
    Ok(DisplayProbe {
        display: display.to_owned(),
        vendor: String::from_utf8_lossy(&conn.setup().vendor).into_owned(),
        extensions,
        window_manager,
        spare_keycodes,
    })
}

/// Counts the keycodes with no symbol that no modifier uses (the core
/// keymap's view, which is XKB's for every keycode with no symbol).
fn spare_keycodes(conn: &impl Connection) -> Option<usize> {
    let (min, max) = (conn.setup().min_keycode, conn.setup().max_keycode);
    let map = conn
        .get_keyboard_mapping(min, max - min + 1)
        .ok()?
        .reply()
        .ok()?;
    let mods = conn.get_modifier_mapping().ok()?.reply().ok()?;
    let per = usize::from(map.keysyms_per_keycode).max(1);
    let spare = map
        .keysyms
        .chunks(per)
        .zip(min..=max)
        .filter(|(syms, code)| syms.iter().all(|s| *s == 0) && !mods.keycodes.contains(code))
        .count();
    Some(spare)
}
