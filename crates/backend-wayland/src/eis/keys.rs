//! Keys for keysyms, from the keymap an EIS server sends with its
//! keyboard: libei carries evdev key codes, not keysyms, so each keysym is
//! looked up in the desktop's own layout (its first group) together with
//! the modifier keys its level needs (Shift, AltGr).

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

/// Every keysym the keymap's first group can send, with its stroke.
#[derive(Debug, Default)]
pub(crate) struct KeyTable {
    strokes: HashMap<u32, Stroke>,
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

    /// The table of a compiled keymap.
    pub(crate) fn of(keymap: &xkb::Keymap) -> Self {
        let holders = modifier_keys(keymap);
        let mut strokes: HashMap<u32, Stroke> = HashMap::new();
        keymap.key_for_each(|keymap, key| {
            for level in 0..keymap.num_levels_for_key(key, 0) {
                let Some(mods) = mods_for_level(keymap, key, level, &holders) else {
                    continue;
                };
                for sym in keymap.key_get_syms_by_level(key, 0, level) {
                    let stroke = Stroke {
                        mods: mods.clone(),
                        code: key.raw() - EVDEV_OFFSET,
                    };
                    // The first key, with the fewest modifiers, is kept.
                    let better = strokes
                        .get(&sym.raw())
                        .is_none_or(|s| s.mods.len() > stroke.mods.len());
                    if sym.raw() != 0 && better {
                        strokes.insert(sym.raw(), stroke);
                    }
                }
            }
        });
        Self { strokes }
    }

    /// The keys that send `keysym`, if the layout has it.
    pub(crate) fn stroke(&self, keysym: u32) -> Option<&Stroke> {
        self.strokes.get(&keysym)
    }
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

/// The modifier keys to hold for `level` of `key`: the first of the
/// level's masks that held modifier keys make exactly (none for a level
/// reached only through Caps Lock or Num Lock).
fn mods_for_level(
    keymap: &xkb::Keymap,
    key: xkb::Keycode,
    level: u32,
    holders: &[(xkb::ModMask, u32)],
) -> Option<Vec<u32>> {
    let mut masks = [0; 8];
    let n = keymap.key_get_mods_for_level(key, 0, level, &mut masks);
    masks[..n.min(masks.len())]
        .iter()
        .find_map(|&mask| held_for(mask, holders))
}

/// The modifier keys whose masks together make exactly `mask`.
fn held_for(mask: xkb::ModMask, holders: &[(xkb::ModMask, u32)]) -> Option<Vec<u32>> {
    let mut left = mask;
    let mut keys = Vec::new();
    for &(m, code) in holders {
        if m & left == m && m != 0 {
            left &= !m;
            keys.push(code);
        }
    }
    (left == 0).then_some(keys)
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

    #[test]
    fn a_us_layout_sends_letters_shifted_letters_and_named_keys() {
        let table = KeyTable::from_text(&layout_text("us")).expect("compiles");
        assert_eq!(table.stroke('a' as u32), Some(&stroke(&[], KEY_A)));
        assert_eq!(
            table.stroke('A' as u32),
            Some(&stroke(&[KEY_LEFTSHIFT], KEY_A))
        );
        assert_eq!(table.stroke(0xff0d), Some(&stroke(&[], KEY_ENTER)));
        assert_eq!(table.stroke(0xffe1), Some(&stroke(&[], KEY_LEFTSHIFT)));
        // Not on a US keyboard.
        assert_eq!(table.stroke(0xf6), None);
        assert_eq!(table.stroke(0x100_65e5), None);
    }

    #[test]
    fn a_german_layout_reaches_altgr_levels_and_its_own_letters() {
        let table = KeyTable::from_text(&layout_text("de")).expect("compiles");
        assert_eq!(
            table.stroke('@' as u32),
            Some(&stroke(&[KEY_RIGHTALT], KEY_Q))
        );
        assert_eq!(table.stroke(0xf6).map(|s| s.mods.len()), Some(0)); // ö
        assert_eq!(table.stroke('y' as u32).map(|s| s.code), Some(44)); // QWERTZ: KEY_Z
    }

    #[test]
    fn a_keymap_that_does_not_compile_is_an_error_not_an_empty_table() {
        assert!(KeyTable::from_text("xkb_keymap { nonsense").is_err());
    }
}
