//! Keys for keysyms, from the keymap an EIS server sends with its
//! keyboard: libei carries evdev key codes, not keysyms, so each keysym is
//! looked up in the desktop's own layout as it stands (the active group,
//! Caps Lock and Num Lock) together with the modifier keys to hold for it
//! (Shift, AltGr).

use std::collections::HashMap;

use xkbcommon::xkb;

/// An evdev code is the XKB keycode less 8.
const EVDEV_OFFSET: u32 = 8;

/// The keys that send one keysym: `mods` pressed first (released last),
/// then `code`. All are evdev codes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Stroke {
    pub(crate) mods: Vec<u32>,
    pub(crate) code: u32,
}

/// What the keyboard's state is: its active group (layout) and its
/// locked modifiers, as the server says in `ei_keyboard.modifiers`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub(crate) struct Locks {
    pub(crate) group: u32,
    pub(crate) locked: u32,
}

/// Every keysym the keymap can send, with its stroke, for each group and
/// each state of Caps Lock and Num Lock.
#[derive(Debug, Default)]
pub(crate) struct KeyTable {
    tables: HashMap<Locks, HashMap<u32, Stroke>>,
    /// The locks that change what a key sends (Caps Lock, Num Lock).
    lock_mask: u32,
}

/// Modifier keys: the keysyms whose keys are held to reach a level.
const MODIFIER_SYMS: [u32; 3] = [
    0xffe1, // Shift_L
    0xfe03, // ISO_Level3_Shift (AltGr)
    0xff7e, // Mode_switch
];

impl KeyTable {
    /// The table of an XKB keymap in its text form (what `ei_keyboard`'s
    /// keymap event carries).
    pub(crate) fn from_text(text: &str) -> Result<Self, String> {
        let context = xkb::Context::new(xkb::CONTEXT_NO_FLAGS);
        let keymap = xkb::Keymap::new_from_string(
            &context,
            text.trim_end_matches('\0').to_owned(),
            xkb::KEYMAP_FORMAT_TEXT_V1,
            xkb::COMPILE_NO_FLAGS,
        )
        .ok_or("the keyboard's keymap does not compile")?;
        Ok(Self::of(&keymap))
    }

    /// The table of a compiled keymap: what each key sends with each
    /// combination of the modifier keys held, found by xkbcommon itself.
    pub(crate) fn of(keymap: &xkb::Keymap) -> Self {
        let holders = modifier_keys(keymap);
        let bit = |name: &str| match keymap.mod_get_index(name) {
            xkb::MOD_INVALID => 0,
            i => 1u32 << i,
        };
        let (caps, num) = (bit(xkb::MOD_NAME_CAPS), bit(xkb::MOD_NAME_NUM));
        let mut tables = HashMap::new();
        for group in 0..keymap.num_layouts().max(1) {
            for locked in [0, caps, num, caps | num] {
                let locks = Locks { group, locked };
                tables
                    .entry(locks)
                    .or_insert_with(|| table(keymap, &holders, locks));
            }
        }
        Self {
            tables,
            lock_mask: caps | num,
        }
    }

    /// The keys that send `keysym` in the keyboard's state `locks`, if
    /// the layout has it.
    pub(crate) fn stroke(&self, keysym: u32, locks: Locks) -> Option<&Stroke> {
        let locks = Locks {
            group: locks.group,
            locked: locks.locked & self.lock_mask,
        };
        self.tables.get(&locks)?.get(&keysym)
    }
}

/// What each key sends in state `locks` with each set of modifier keys
/// held (fewest first): the first key and set found for each keysym.
fn table(
    keymap: &xkb::Keymap,
    holders: &[(xkb::ModMask, u32)],
    locks: Locks,
) -> HashMap<u32, Stroke> {
    let mut sets: Vec<Vec<(xkb::ModMask, u32)>> = (0..1u32 << holders.len())
        .map(|m| {
            holders
                .iter()
                .enumerate()
                .filter(|(i, _)| m & (1 << i) != 0)
                .map(|(_, h)| *h)
                .collect()
        })
        .collect();
    sets.sort_by_key(Vec::len);
    let mut strokes: HashMap<u32, Stroke> = HashMap::new();
    for set in sets {
        let mut state = xkb::State::new(keymap);
        let depressed = set.iter().fold(0, |m, (mask, _)| m | mask);
        state.update_mask(depressed, 0, locks.locked, 0, 0, locks.group);
        let mods: Vec<u32> = set.iter().map(|(_, code)| *code).collect();
        keymap.key_for_each(|_, key| {
            let sym = state.key_get_one_sym(key).raw();
            if sym != 0 {
                strokes.entry(sym).or_insert_with(|| Stroke {
                    mods: mods.clone(),
                    code: key.raw() - EVDEV_OFFSET,
                });
            }
        });
    }
    strokes
}

/// The keys xkeyboard-config adds for modifiers that no keyboard has
/// (`<LVL3>` beside `<RALT>` for AltGr): a real key is sent where there is one.
const VIRTUAL_KEYS: [&str; 6] = ["LVL3", "MDSW", "ALT", "META", "SUPR", "HYPR"];

/// Each modifier key of the layout and the modifier mask it sets when
/// held: for each of `MODIFIER_SYMS`, its first real key (by keycode).
fn modifier_keys(keymap: &xkb::Keymap) -> Vec<(xkb::ModMask, u32)> {
    let mut found: Vec<(u32, xkb::Keycode, bool)> = Vec::new();
    keymap.key_for_each(|keymap, key| {
        let syms = keymap.key_get_syms_by_level(key, 0, 0);
        let Some(sym) = syms.iter().find(|s| MODIFIER_SYMS.contains(&s.raw())) else {
            return;
        };
        let real = !keymap
            .key_get_name(key)
            .is_some_and(|n| VIRTUAL_KEYS.contains(&n));
        match found.iter_mut().find(|(s, _, _)| *s == sym.raw()) {
            Some(f) if real && !f.2 => *f = (sym.raw(), key, real),
            Some(_) => {}
            None => found.push((sym.raw(), key, real)),
        }
    });
    found
        .into_iter()
        .filter_map(|(_, key, _)| {
            let mut state = xkb::State::new(keymap);
            state.update_key(key, xkb::KeyDirection::Down);
            let mask = state.serialize_mods(xkb::STATE_MODS_DEPRESSED);
            (mask != 0).then_some((mask, key.raw() - EVDEV_OFFSET))
        })
        .collect()
}

#[cfg(test)]
pub(crate) fn layout_text(layout: &str) -> String {
    let context = xkb::Context::new(xkb::CONTEXT_NO_FLAGS);
    let keymap = xkb::Keymap::new_from_names(
        &context,
        "evdev",
        "pc105",
        layout,
        "",
        None,
        xkb::COMPILE_NO_FLAGS,
    )
    .expect("xkeyboard-config has the layout");
    keymap.get_as_string(xkb::KEYMAP_FORMAT_TEXT_V1)
}

#[cfg(test)]
mod tests {
    use super::*;

    const KEY_A: u32 = 30;
    const KEY_Q: u32 = 16;
    const KEY_ENTER: u32 = 28;
    const KEY_LEFTSHIFT: u32 = 42;
    const KEY_RIGHTALT: u32 = 100;

    fn stroke(mods: &[u32], code: u32) -> Stroke {
        Stroke {
            mods: mods.to_vec(),
            code,
        }
    }

    const PLAIN: Locks = Locks {
        group: 0,
        locked: 0,
    };

    #[test]
    fn a_us_layout_sends_letters_shifted_letters_and_named_keys() {
        let table = KeyTable::from_text(&layout_text("us")).expect("compiles");
        let at = |sym: u32| table.stroke(sym, PLAIN);
        assert_eq!(at('a' as u32), Some(&stroke(&[], KEY_A)));
        assert_eq!(at('A' as u32), Some(&stroke(&[KEY_LEFTSHIFT], KEY_A)));
        assert_eq!(at(0xff0d), Some(&stroke(&[], KEY_ENTER)));
        assert_eq!(at(0xffe1), Some(&stroke(&[], KEY_LEFTSHIFT)));
        // Not on a US keyboard.
        assert_eq!(at(0xf6), None);
        assert_eq!(at(0x100_65e5), None);
    }

    #[test]
    fn with_caps_lock_on_a_capital_is_the_plain_key_and_a_small_letter_shifted() {
        let table = KeyTable::from_text(&layout_text("us")).expect("compiles");
        // Lock is the modifier at index 1 in every XKB keymap.
        let caps = Locks {
            group: 0,
            locked: 1 << 1,
        };
        assert_eq!(table.stroke('A' as u32, caps), Some(&stroke(&[], KEY_A)));
        assert_eq!(
            table.stroke('a' as u32, caps),
            Some(&stroke(&[KEY_LEFTSHIFT], KEY_A))
        );
        // Digits do not change with Caps Lock.
        assert_eq!(
            table.stroke('1' as u32, caps).map(|s| s.mods.len()),
            Some(0)
        );
    }

    #[test]
    fn a_german_layout_reaches_altgr_levels_and_its_own_letters() {
        let table = KeyTable::from_text(&layout_text("de")).expect("compiles");
        assert_eq!(
            table.stroke('@' as u32, PLAIN),
            Some(&stroke(&[KEY_RIGHTALT], KEY_Q))
        );
        assert_eq!(table.stroke(0xf6, PLAIN).map(|s| s.mods.len()), Some(0)); // ö
        assert_eq!(table.stroke('y' as u32, PLAIN).map(|s| s.code), Some(44)); // QWERTZ
    }

    #[test]
    fn the_active_group_decides_the_key() {
        // A person with US and German layouts, German active.
        let table = KeyTable::from_text(&layout_text("us,de")).expect("compiles");
        let german = Locks {
            group: 1,
            locked: 0,
        };
        assert_eq!(table.stroke('y' as u32, PLAIN).map(|s| s.code), Some(21));
        assert_eq!(table.stroke('y' as u32, german).map(|s| s.code), Some(44));
        assert_eq!(table.stroke(0xf6, PLAIN), None);
        assert!(table.stroke(0xf6, german).is_some());
    }

    #[test]
    fn a_keymap_that_does_not_compile_is_an_error_not_an_empty_table() {
        assert!(KeyTable::from_text("xkb_keymap { nonsense").is_err());
    }
}
