//! The keyboard as XKB describes it (key types, each key's groups and
//! levels, which keys set which modifiers) and how to produce a keysym or
//! a character with it in the active group: which keycode, with which
//! modifier keys held. Pure data, so that the choice is unit-tested.

use std::collections::HashMap;

use deskhand_backend::keys::{Key, Keypad};

/// The Shift modifier bit.
pub const SHIFT: u8 = 0x01;

/// Keysyms of the keys that set a modifier while held (never a latch or
/// a lock: pressing one for a character must leave no state behind).
const SHIFT_L: u32 = 0xffe1;
const SHIFT_R: u32 = 0xffe2;
const ISO_LEVEL3_SHIFT: u32 = 0xfe03;
const ISO_LEVEL5_SHIFT: u32 = 0xfe11;

/// Keysyms typed for control characters of a text.
pub const RETURN: u32 = 0xff0d;
/// Tab.
pub const TAB: u32 = 0xff09;

/// A key type: which modifiers it looks at and the level each
/// combination selects (a combination not listed selects level 0).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeyType {
    /// The modifiers that matter (real modifier bits).
    pub mask: u8,
    /// How many levels it has.
    pub levels: u8,
    /// (modifiers, level) of each active map entry.
    pub entries: Vec<(u8, u8)>,
}

impl KeyType {
    /// The level `mods` selects.
    pub fn level(&self, mods: u8) -> u8 {
        let mods = mods & self.mask;
        self.entries
            .iter()
            .find(|(m, _)| *m == mods)
            .map_or(0, |(_, level)| *level)
    }
}

/// One key's symbols, as XKB keeps them: a type per group, how groups out
/// of range are brought back in (`group_info`), and `width` symbols per
/// group.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct KeySyms {
    /// Key type index of each group.
    pub types: [u8; 4],
    /// Number of groups (low 4 bits) and the out-of-range rule.
    pub group_info: u8,
    /// Symbols per group.
    pub width: u8,
    /// `width` symbols for each group.
    pub syms: Vec<u32>,
}

impl KeySyms {
    /// A key with no symbols.
    pub fn empty() -> Self {
        Self {
            types: [0; 4],
            group_info: 0,
            width: 0,
            syms: Vec::new(),
        }
    }

    /// Whether no level of any group has a symbol.
    pub fn is_empty(&self) -> bool {
        self.syms.iter().all(|s| *s == 0)
    }

    /// The group of this key that `group` (the keyboard's effective group)
    /// selects: wrapped, clamped or redirected as the key says.
    pub fn effective_group(&self, group: u8) -> Option<u8> {
        let groups = self.group_info & 0x0f;
        if groups == 0 {
            return None;
        }
        if group < groups {
            return Some(group);
        }
        Some(match self.group_info & 0xc0 {
            0x40 => groups - 1,
            0x80 => {
                let to = (self.group_info >> 4) & 0x03;
                if to < groups { to } else { 0 }
            }
            _ => group % groups,
        })
    }

    fn sym(&self, group: u8, level: u8) -> u32 {
        if level >= self.width {
            return 0;
        }
        let at = usize::from(group) * usize::from(self.width) + usize::from(level);
        self.syms.get(at).copied().unwrap_or(0)
    }
}

/// The keyboard: its types, every key's symbols, and the core modifier map.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Keymap {
    /// The first keycode of `keys`.
    pub min_keycode: u8,
    /// Key types by index.
    pub types: Vec<KeyType>,
    /// Symbols of each keycode from `min_keycode` on.
    pub keys: Vec<KeySyms>,
    /// For each of the eight real modifiers, the keycodes that set it.
    pub modifiers: [Vec<u8>; 8],
}

/// What the keyboard's state adds to every key press.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct State {
    /// The effective group (0-3).
    pub group: u8,
    /// Locked modifiers (Caps Lock, Num Lock).
    pub locked_mods: u8,
}

/// How to produce a symbol: the key, and the modifier keys held around it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stroke {
    /// The key to press.
    pub keycode: u8,
    /// Modifier keys to hold down (press order).
    pub mods: Vec<u8>,
}

impl Stroke {
    /// How many key presses it takes.
    pub fn presses(&self) -> usize {
        1 + self.mods.len()
    }
}

/// Where every symbol and character of a keymap is in the active group,
/// and which keycodes are free to remap.
#[derive(Debug, Default)]
pub struct Index {
    by_sym: HashMap<u32, Rank>,
    by_char: HashMap<char, Rank>,
    spare: Vec<u8>,
}

#[derive(Debug)]
struct Rank {
    stroke: Stroke,
    /// Lower is better: keypad keys and extra modifiers count against.
    cost: usize,
}

impl Keymap {
    /// The keycode of `index` into `keys`.
    fn keycode(&self, index: usize) -> Option<u8> {
        u8::try_from(usize::from(self.min_keycode) + index).ok()
    }

    /// The symbols of `keycode`.
    pub fn key(&self, keycode: u8) -> Option<&KeySyms> {
        let at = usize::from(keycode.checked_sub(self.min_keycode)?);
        self.keys.get(at)
    }

    /// The keys that set a modifier while held, as (modifier bit, keycode),
    /// one per modifier, Shift first.
    fn modifier_keys(&self) -> Vec<(u8, u8)> {
        let mut found = Vec::new();
        for (bit, codes) in self.modifiers.iter().enumerate() {
            let mask = 1u8 << bit;
            let holding = codes.iter().copied().find(|&code| {
                self.key(code).is_some_and(|k| {
                    matches!(
                        k.sym(0, 0),
                        SHIFT_L | SHIFT_R | ISO_LEVEL3_SHIFT | ISO_LEVEL5_SHIFT
                    )
                })
            });
            if let Some(code) = holding {
                found.push((mask, code));
            }
        }
        found
    }

    /// The key types a remapped key can have: entry `n - 1` is the type
    /// for a key holding `n` symbols. One level always (when the keymap
    /// has the type); two with Shift; four with Shift and the level-three
    /// key (AltGr), when the keymap has those keys and types.
    pub fn remap_types(&self) -> Vec<u8> {
        let find = |want: &dyn Fn(&KeyType) -> bool| {
            self.types
                .iter()
                .position(want)
                .and_then(|i| u8::try_from(i).ok())
        };
        let mods = self.modifier_keys();
        let has_shift = mods.iter().any(|(bit, _)| *bit == SHIFT);
        let level3 = mods
            .iter()
            .map(|(bit, code)| (*bit, *code))
            .find(|(_, code)| {
                self.key(*code)
                    .is_some_and(|k| k.sym(0, 0) == ISO_LEVEL3_SHIFT)
            });
        let mut types = Vec::new();
        let Some(one) = find(&|t| t.levels == 1 && t.mask == 0) else {
            return types;
        };
        types.push(one);
        let two = find(&|t| t.levels == 2 && t.mask == SHIFT && t.level(SHIFT) == 1);
        let Some(two) = two.filter(|_| has_shift) else {
            return types;
        };
        types.push(two);
        if let Some((l3, _)) = level3 {
            let four = find(&|t| {
                t.levels == 4
                    && t.mask == SHIFT | l3
                    && t.level(SHIFT) == 1
                    && t.level(l3) == 2
                    && t.level(SHIFT | l3) == 3
            });
            if let Some(four) = four {
                types.extend([four, four]);
            }
        }
        types
    }

    /// Builds the index of everything reachable in `state`.
    pub fn index(&self, state: State) -> Index {
        let pressable = self.modifier_keys();
        // Every combination of the modifier keys, fewest keys first.
        let mut combos: Vec<(u8, Vec<u8>)> = (0u32..1 << pressable.len())
            .map(|set| {
                let chosen = pressable
                    .iter()
                    .enumerate()
                    .filter(|(i, _)| set & (1 << i) != 0);
                let mask = chosen.clone().fold(0, |m, (_, (bit, _))| m | bit);
                (mask, chosen.map(|(_, (_, code))| *code).collect())
            })
            .collect();
        combos.sort_by_key(|(_, codes)| codes.len());
        let modmapped: Vec<u8> = self.modifiers.iter().flatten().copied().collect();
        let mut index = Index::default();
        for (i, key) in self.keys.iter().enumerate() {
            let Some(keycode) = self.keycode(i) else {
                break;
            };
            if keycode < 8 {
                continue;
            }
            if key.is_empty() {
                if !modmapped.contains(&keycode) {
                    index.spare.push(keycode);
                }
                continue;
            }
            let Some(group) = key.effective_group(state.group) else {
                continue;
            };
            let Some(ty) = self.types.get(usize::from(key.types[usize::from(group)])) else {
                continue;
            };
            for level in 0..key.width.min(ty.levels.max(1)) {
                let sym = key.sym(group, level);
                if sym == 0 {
                    continue;
                }
                let combo = combos
                    .iter()
                    .find(|(mask, _)| ty.level(mask | state.locked_mods) == level);
                if let Some((_, mods)) = combo {
                    index.add(sym, keycode, mods);
                }
            }
        }
        index
    }
}

fn is_keypad(sym: u32) -> bool {
    (0xff80..=0xffbd).contains(&sym)
}

impl Index {
    fn add(&mut self, sym: u32, keycode: u8, mods: &[u8]) {
        let cost = mods.len() * 2 + usize::from(is_keypad(sym)) * 8;
        let rank = || Rank {
            stroke: Stroke {
                keycode,
                mods: mods.to_vec(),
            },
            cost,
        };
        let better = |old: &Rank| cost < old.cost;
        if self.by_sym.get(&sym).is_none_or(better) {
            self.by_sym.insert(sym, rank());
        }
        let typed = xkeysym::Keysym::new(sym)
            .key_char()
            .filter(|c| !c.is_control());
        if let Some(c) = typed
            && self.by_char.get(&c).is_none_or(better)
        {
            self.by_char.insert(c, rank());
        }
    }

    /// How to produce the keysym `sym`, if a key has it.
    pub fn sym(&self, sym: u32) -> Option<&Stroke> {
        self.by_sym.get(&sym).map(|r| &r.stroke)
    }

    /// How to type `c`, if a key produces it.
    pub fn char(&self, c: char) -> Option<&Stroke> {
        match c {
            '\n' | '\r' => self.sym(RETURN),
            '\t' => self.sym(TAB),
            c => self.by_char.get(&c).map(|r| &r.stroke),
        }
    }

    /// Keycodes with no symbol and no modifier: free to remap.
    pub fn spare(&self) -> &[u8] {
        &self.spare
    }
}

/// The keysym of a named key (`None` for a character key: see
/// [`keysym_for`]).
pub fn named_keysym(key: Key) -> Option<u32> {
    Some(match key {
        Key::Shift => 0xffe1,
        Key::Control => 0xffe3,
        Key::Alt => 0xffe9,
        Key::Super => 0xffeb,
        Key::Return => RETURN,
        Key::Tab => TAB,
        Key::Escape => 0xff1b,
        Key::Space => 0x20,
        Key::Backspace => 0xff08,
        Key::Delete => 0xffff,
        Key::Insert => 0xff63,
        Key::Up => 0xff52,
        Key::Down => 0xff54,
        Key::Left => 0xff51,
        Key::Right => 0xff53,
        Key::PageUp => 0xff55,
        Key::PageDown => 0xff56,
        Key::Home => 0xff50,
        Key::End => 0xff57,
        Key::CapsLock => 0xffe5,
        Key::Menu => 0xff67,
        Key::PrintScreen => 0xff61,
        Key::F(n) => 0xffbd + u32::from(n.clamp(1, 24)),
        Key::Kp(k) => keypad_keysym(k),
        Key::Char(_) => return None,
    })
}

fn keypad_keysym(k: Keypad) -> u32 {
    match k {
        Keypad::Enter => 0xff8d,
        Keypad::Digit(d) => 0xffb0 + u32::from(d.min(9)),
        Keypad::Add => 0xffab,
        Keypad::Subtract => 0xffad,
        Keypad::Multiply => 0xffaa,
        Keypad::Divide => 0xffaf,
        Keypad::Decimal => 0xffae,
        Keypad::Separator => 0xffac,
        Keypad::Equal => 0xffbd,
        Keypad::Home => 0xff95,
        Keypad::Left => 0xff96,
        Keypad::Up => 0xff97,
        Keypad::Right => 0xff98,
        Keypad::Down => 0xff99,
        Keypad::PageUp => 0xff9a,
        Keypad::PageDown => 0xff9b,
        Keypad::End => 0xff9c,
        Keypad::Begin => 0xff9d,
        Keypad::Insert => 0xff9e,
        Keypad::Delete => 0xff9f,
    }
}

/// The keysym a character is remapped to: its legacy keysym where it has
/// one, else its Unicode keysym. `None` for characters no key should send
/// (control characters other than line breaks and tabs).
pub fn keysym_for(c: char) -> Option<u32> {
    match c {
        '\n' | '\r' => return Some(RETURN),
        '\t' => return Some(TAB),
        c if c.is_control() => return None,
        _ => {}
    }
    let sym = xkeysym::Keysym::from_char(c).raw();
    (sym != 0).then_some(sym)
}

#[cfg(test)]
mod tests {
    use super::*;

    const LOCK: u8 = 0x02;
    const MOD2: u8 = 0x10;
    const MOD5: u8 = 0x80;

    /// ONE_LEVEL, TWO_LEVEL, ALPHABETIC, KEYPAD, FOUR_LEVEL as xkeyboard-config
    /// defines them (Mod5 is LevelThree, Mod2 NumLock).
    fn types() -> Vec<KeyType> {
        vec![
            KeyType {
                mask: 0,
                levels: 1,
                entries: vec![],
            },
            KeyType {
                mask: SHIFT,
                levels: 2,
                entries: vec![(SHIFT, 1)],
            },
            KeyType {
                mask: SHIFT | LOCK,
                levels: 2,
                entries: vec![(SHIFT, 1), (LOCK, 1)],
            },
            KeyType {
                mask: SHIFT | MOD2,
                levels: 2,
                entries: vec![(MOD2, 1), (SHIFT, 1)],
            },
            KeyType {
                mask: SHIFT | MOD5,
                levels: 4,
                entries: vec![(SHIFT, 1), (MOD5, 2), (SHIFT | MOD5, 3)],
            },
        ]
    }

    fn key(types: [u8; 4], groups: u8, width: u8, syms: &[u32]) -> KeySyms {
        KeySyms {
            types,
            group_info: groups,
            width,
            syms: syms.to_vec(),
        }
    }

    /// Keycodes 8..: 8 empty, 9 Shift_L, 10 ISO_Level3_Shift, 11 y/Y (us)
    /// and z/Z (de, group 2), 12 q/Q/@ (de's AltGr+q in group 2 only),
    /// 13 KP_End/KP_1, 14 "1 !", 15 empty but a modifier, 16 empty.
    fn keymap() -> Keymap {
        let mut modifiers: [Vec<u8>; 8] = Default::default();
        modifiers[0] = vec![9];
        modifiers[4] = vec![15];
        modifiers[7] = vec![10];
        Keymap {
            min_keycode: 8,
            types: types(),
            keys: vec![
                KeySyms::empty(),
                key([0; 4], 1, 1, &[SHIFT_L]),
                key([0; 4], 1, 1, &[ISO_LEVEL3_SHIFT]),
                key([2, 2, 0, 0], 2, 2, &[0x79, 0x59, 0x7a, 0x5a]),
                key([2, 4, 0, 0], 2, 4, &[0x71, 0x51, 0, 0, 0x71, 0x51, 0x40, 0]),
                key([3; 4], 1, 2, &[0xff9c, 0xffb1]),
                key([1; 4], 1, 2, &[0x31, 0x21]),
                KeySyms::empty(),
                key([0; 4], 0, 0, &[]),
            ],
            modifiers,
        }
    }

    fn stroke(keycode: u8, mods: &[u8]) -> Stroke {
        Stroke {
            keycode,
            mods: mods.to_vec(),
        }
    }

    #[test]
    fn a_character_is_found_at_its_level_in_the_active_group() {
        let map = keymap();
        let us = map.index(State::default());
        assert_eq!(us.char('y'), Some(&stroke(11, &[])));
        assert_eq!(us.char('Y'), Some(&stroke(11, &[9])));
        assert_eq!(us.char('z'), None, "z is in group 2 only");
        assert_eq!(us.char('@'), None, "@ is in group 2 only");
        let de = map.index(State {
            group: 1,
            locked_mods: 0,
        });
        assert_eq!(de.char('z'), Some(&stroke(11, &[])));
        assert_eq!(de.char('Z'), Some(&stroke(11, &[9])));
        assert_eq!(de.char('@'), Some(&stroke(12, &[10])), "AltGr level 3");
        assert_eq!(de.char('y'), None);
    }

    #[test]
    fn locked_modifiers_change_the_modifiers_needed() {
        let map = keymap();
        let caps = map.index(State {
            group: 0,
            locked_mods: LOCK,
        });
        assert_eq!(
            caps.char('y'),
            Some(&stroke(11, &[9])),
            "Shift undoes Caps Lock"
        );
        assert_eq!(caps.char('Y'), Some(&stroke(11, &[])));
        // TWO_LEVEL ignores Lock.
        assert_eq!(caps.char('!'), Some(&stroke(14, &[9])));
    }

    #[test]
    fn the_main_keys_win_over_the_keypad_and_groups_wrap() {
        let map = keymap();
        let index = map.index(State::default());
        assert_eq!(index.char('1'), Some(&stroke(14, &[])));
        assert_eq!(
            index.sym(0xffb1),
            Some(&stroke(13, &[9])),
            "KP_1 is Shift+KP_End"
        );
        // Group 3 on a one-group key wraps to its group 1.
        let third = map.index(State {
            group: 2,
            locked_mods: 0,
        });
        assert_eq!(third.char('!'), Some(&stroke(14, &[9])));
    }

    #[test]
    fn spare_keycodes_are_empty_and_not_modifiers() {
        let map = keymap();
        let index = map.index(State::default());
        assert_eq!(index.spare(), &[8, 16]);
        // One, two (Shift) and four levels (Shift, AltGr) for remapped keys.
        assert_eq!(map.remap_types(), vec![0, 1, 4, 4]);
        let mut no_altgr = map.clone();
        no_altgr.modifiers[7].clear();
        assert_eq!(no_altgr.remap_types(), vec![0, 1]);
        let mut no_shift = map.clone();
        no_shift.modifiers[0].clear();
        assert_eq!(no_shift.remap_types(), vec![0]);
    }

    #[test]
    fn characters_map_to_keysyms() {
        assert_eq!(keysym_for('a'), Some(0x61));
        assert_eq!(keysym_for('é'), Some(0xe9));
        assert_eq!(keysym_for('\n'), Some(RETURN));
        assert_eq!(keysym_for('\t'), Some(TAB));
        assert_eq!(keysym_for('\u{1}'), None);
        assert_eq!(keysym_for('日'), Some(0x0100_65e5));
        assert_eq!(keysym_for('😀'), Some(0x0101_f600));
        // Legacy keysyms where they exist: Cyrillic_a.
        assert_eq!(keysym_for('а'), Some(0x6c1));
    }

    #[test]
    fn out_of_range_groups_follow_the_key() {
        let mut k = key([0; 4], 2, 1, &[1, 2]);
        assert_eq!(k.effective_group(3), Some(1), "wrap");
        k.group_info = 0x42;
        assert_eq!(k.effective_group(3), Some(1), "clamp");
        k.group_info = 0x82;
        assert_eq!(k.effective_group(3), Some(0), "redirect to group 1");
        assert_eq!(KeySyms::empty().effective_group(0), None);
    }
}
