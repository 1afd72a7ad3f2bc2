//! Keys as macOS posts them: deskhand's key names to virtual key codes
//! (`kVK_*` of `Events.h`, positions on an ANSI keyboard), the
//! `CGEventFlags` a held modifier sets on every later event, the flags
//! a key carries itself (the arrows are keypad and function keys to
//! AppKit), characters of a text to what is posted for them, and the kill
//! switch's chord to a key code and flags the event tap matches.
//!
//! Key codes are positions, not characters: [`char_key`] gives the US
//! ANSI layout's position of a character. Text is never typed through it
//! but posted as Unicode strings ([`typed`]), whatever the layout.

use deskhand_backend::Key;
use deskhand_backend::keys::Keypad;
use deskhand_backend::kill_switch::{Chord, ChordKey, modifier};

/// `CGEventFlags` bits.
pub mod flag {
    /// `kCGEventFlagMaskShift`.
    pub const SHIFT: u64 = 0x0002_0000;
    /// `kCGEventFlagMaskControl`.
    pub const CONTROL: u64 = 0x0004_0000;
    /// `kCGEventFlagMaskAlternate` (Option).
    pub const OPTION: u64 = 0x0008_0000;
    /// `kCGEventFlagMaskCommand`.
    pub const COMMAND: u64 = 0x0010_0000;
    /// `kCGEventFlagMaskNumericPad`: a keypad key (the arrows too).
    pub const NUMERIC_PAD: u64 = 0x0020_0000;
    /// `kCGEventFlagMaskSecondaryFn`: a function key (the arrows and the
    /// navigation block too).
    pub const SECONDARY_FN: u64 = 0x0080_0000;
}

/// The `kVK_*` codes deskhand names.
pub mod vk {
    #![allow(missing_docs)]
    pub const RETURN: u16 = 0x24;
    pub const TAB: u16 = 0x30;
    pub const SPACE: u16 = 0x31;
    pub const DELETE: u16 = 0x33;
    pub const ESCAPE: u16 = 0x35;
    pub const RIGHT_COMMAND: u16 = 0x36;
    pub const COMMAND: u16 = 0x37;
    pub const SHIFT: u16 = 0x38;
    pub const CAPS_LOCK: u16 = 0x39;
    pub const OPTION: u16 = 0x3A;
    pub const CONTROL: u16 = 0x3B;
    pub const HELP: u16 = 0x72;
    pub const HOME: u16 = 0x73;
    pub const PAGE_UP: u16 = 0x74;
    pub const FORWARD_DELETE: u16 = 0x75;
    pub const END: u16 = 0x77;
    pub const PAGE_DOWN: u16 = 0x79;
    pub const LEFT: u16 = 0x7B;
    pub const RIGHT: u16 = 0x7C;
    pub const DOWN: u16 = 0x7D;
    pub const UP: u16 = 0x7E;
    pub const CONTEXTUAL_MENU: u16 = 0x6E;
    pub const KEYPAD_ENTER: u16 = 0x4C;
    pub const KEYPAD_CLEAR: u16 = 0x47;
}

/// F1 to F20 in order (`kVK_F1` … `kVK_F20`); a Mac has no F21 to F24.
const FUNCTION_KEYS: [u16; 20] = [
    0x7A, 0x78, 0x63, 0x76, 0x60, 0x61, 0x62, 0x64, 0x65, 0x6D, 0x67, 0x6F, 0x69, 0x6B, 0x71, 0x6A,
    0x40, 0x4F, 0x50, 0x5A,
];

/// `kVK_ANSI_Keypad0` … `kVK_ANSI_Keypad9`.
const KEYPAD_DIGITS: [u16; 10] = [0x52, 0x53, 0x54, 0x55, 0x56, 0x57, 0x58, 0x59, 0x5B, 0x5C];

/// The US ANSI layout: each character with its key and whether Shift
/// makes it.
#[rustfmt::skip]
const ANSI: &[(char, u16, bool)] = &[
    ('a', 0x00, false), ('s', 0x01, false), ('d', 0x02, false), ('f', 0x03, false),
    ('h', 0x04, false), ('g', 0x05, false), ('z', 0x06, false), ('x', 0x07, false),
    ('c', 0x08, false), ('v', 0x09, false), ('b', 0x0B, false), ('q', 0x0C, false),
    ('w', 0x0D, false), ('e', 0x0E, false), ('r', 0x0F, false), ('y', 0x10, false),
    ('t', 0x11, false), ('1', 0x12, false), ('2', 0x13, false), ('3', 0x14, false),
    ('4', 0x15, false), ('6', 0x16, false), ('5', 0x17, false), ('=', 0x18, false),
    ('9', 0x19, false), ('7', 0x1A, false), ('-', 0x1B, false), ('8', 0x1C, false),
    ('0', 0x1D, false), (']', 0x1E, false), ('o', 0x1F, false), ('u', 0x20, false),
    ('[', 0x21, false), ('i', 0x22, false), ('p', 0x23, false), ('l', 0x25, false),
    ('j', 0x26, false), ('\'', 0x27, false), ('k', 0x28, false), (';', 0x29, false),
    ('\\', 0x2A, false), (',', 0x2B, false), ('/', 0x2C, false), ('n', 0x2D, false),
    ('m', 0x2E, false), ('.', 0x2F, false), ('`', 0x32, false), (' ', 0x31, false),
    ('!', 0x12, true), ('@', 0x13, true), ('#', 0x14, true), ('$', 0x15, true),
    ('%', 0x17, true), ('^', 0x16, true), ('&', 0x1A, true), ('*', 0x1C, true),
    ('(', 0x19, true), (')', 0x1D, true), ('_', 0x1B, true), ('+', 0x18, true),
    ('{', 0x21, true), ('}', 0x1E, true), ('|', 0x2A, true), (':', 0x29, true),
    ('"', 0x27, true), ('<', 0x2B, true), ('>', 0x2F, true), ('?', 0x2C, true),
    ('~', 0x32, true),
];

/// A key to post: its code and whether Shift must be held for it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MacKey {
    /// The `kVK_*` code.
    pub code: u16,
    /// Shift makes the character (an upper-case letter, `!`).
    pub shift: bool,
}

const fn key(code: u16) -> Option<MacKey> {
    Some(MacKey { code, shift: false })
}

/// The key of `k`; `None` for one a Mac keyboard does not have (F21 to
/// F24, the keypad's separator and Begin) or a character with no key on
/// the ANSI layout.
pub fn virtual_key(k: Key) -> Option<MacKey> {
    match k {
        Key::Shift => key(vk::SHIFT),
        Key::Control => key(vk::CONTROL),
        Key::Alt => key(vk::OPTION),
        Key::Super => key(vk::COMMAND),
        Key::Return => key(vk::RETURN),
        Key::Tab => key(vk::TAB),
        Key::Escape => key(vk::ESCAPE),
        Key::Space => key(vk::SPACE),
        Key::Backspace => key(vk::DELETE),
        Key::Delete => key(vk::FORWARD_DELETE),
        // A PC keyboard's Insert and Print Screen reach a Mac as Help and
        // F13.
        Key::Insert => key(vk::HELP),
        Key::PrintScreen => key(FUNCTION_KEYS[12]),
        Key::Up => key(vk::UP),
        Key::Down => key(vk::DOWN),
        Key::Left => key(vk::LEFT),
        Key::Right => key(vk::RIGHT),
        Key::PageUp => key(vk::PAGE_UP),
        Key::PageDown => key(vk::PAGE_DOWN),
        Key::Home => key(vk::HOME),
        Key::End => key(vk::END),
        Key::CapsLock => key(vk::CAPS_LOCK),
        Key::Menu => key(vk::CONTEXTUAL_MENU),
        Key::F(n @ 1..=20) => key(FUNCTION_KEYS[usize::from(n) - 1]),
        Key::F(_) => None,
        Key::Kp(pad) => keypad(pad),
        Key::Char(c) => char_key(c),
    }
}

/// The keypad's keys; its navigation names are the navigation keys (a Mac
/// keypad has no Num Lock).
fn keypad(pad: Keypad) -> Option<MacKey> {
    match pad {
        Keypad::Enter => key(vk::KEYPAD_ENTER),
        Keypad::Digit(d @ 0..=9) => key(KEYPAD_DIGITS[usize::from(d)]),
        Keypad::Digit(_) | Keypad::Separator | Keypad::Begin => None,
        Keypad::Add => key(0x45),
        Keypad::Subtract => key(0x4E),
        Keypad::Multiply => key(0x43),
        Keypad::Divide => key(0x4B),
        Keypad::Decimal => key(0x41),
        Keypad::Equal => key(0x51),
        Keypad::Up => key(vk::UP),
        Keypad::Down => key(vk::DOWN),
        Keypad::Left => key(vk::LEFT),
        Keypad::Right => key(vk::RIGHT),
        Keypad::Home => key(vk::HOME),
        Keypad::End => key(vk::END),
        Keypad::PageUp => key(vk::PAGE_UP),
        Keypad::PageDown => key(vk::PAGE_DOWN),
        Keypad::Insert => key(vk::HELP),
        Keypad::Delete => key(vk::FORWARD_DELETE),
    }
}

/// The ANSI position of `c`: lower case as it is, upper case with Shift.
pub fn char_key(c: char) -> Option<MacKey> {
    let (lower, upper) = if c.is_ascii_uppercase() {
        (c.to_ascii_lowercase(), true)
    } else {
        (c, false)
    };
    ANSI.iter()
        .find(|(ch, _, _)| *ch == lower)
        .map(|&(_, code, shift)| MacKey {
            code,
            shift: shift || upper,
        })
}

/// The flag a held modifier key sets on every event posted while it is
/// down; `None` for other keys.
pub fn modifier_flag(code: u16) -> Option<u64> {
    match code {
        vk::SHIFT | 0x3C => Some(flag::SHIFT),
        vk::CONTROL | 0x3E => Some(flag::CONTROL),
        vk::OPTION | 0x3D => Some(flag::OPTION),
        vk::COMMAND | vk::RIGHT_COMMAND => Some(flag::COMMAND),
        _ => None,
    }
}

/// The flags key `code` carries itself, as a Mac keyboard sends them: the
/// arrows are keypad and function keys, the navigation block and the F
/// keys function keys, the keypad's keys keypad keys.
pub fn own_flags(code: u16) -> u64 {
    match code {
        vk::LEFT | vk::RIGHT | vk::DOWN | vk::UP => flag::NUMERIC_PAD | flag::SECONDARY_FN,
        vk::HOME | vk::END | vk::PAGE_UP | vk::PAGE_DOWN | vk::FORWARD_DELETE | vk::HELP => {
            flag::SECONDARY_FN
        }
        c if FUNCTION_KEYS.contains(&c) => flag::SECONDARY_FN,
        c if KEYPAD_DIGITS.contains(&c) => flag::NUMERIC_PAD,
        0x41 | 0x43 | 0x45 | 0x4B | 0x4C | 0x4E | 0x51 | vk::KEYPAD_CLEAR => flag::NUMERIC_PAD,
        _ => 0,
    }
}

/// The modifiers held down by deskhand's input, each counted, so that
/// every event it posts carries their flags.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Held {
    /// How many times each of Shift, Control, Option and Command is down.
    counts: [u32; 4],
}

impl Held {
    fn slot(flag: u64) -> usize {
        match flag {
            flag::SHIFT => 0,
            flag::CONTROL => 1,
            flag::OPTION => 2,
            _ => 3,
        }
    }

    /// Records key `code` going down or up.
    pub fn record(&mut self, code: u16, press: bool) {
        if let Some(f) = modifier_flag(code) {
            let n = &mut self.counts[Self::slot(f)];
            *n = if press { *n + 1 } else { n.saturating_sub(1) };
        }
    }

    /// The (left-hand) key codes of the modifiers held now, to release
    /// them.
    pub fn held_codes(&self) -> Vec<u16> {
        [vk::SHIFT, vk::CONTROL, vk::OPTION, vk::COMMAND]
            .into_iter()
            .filter(|code| modifier_flag(*code).is_some_and(|f| self.flags() & f != 0))
            .collect()
    }

    /// The flags of the modifiers held now.
    pub fn flags(&self) -> u64 {
        [flag::SHIFT, flag::CONTROL, flag::OPTION, flag::COMMAND]
            .into_iter()
            .filter(|f| self.counts[Self::slot(*f)] > 0)
            .fold(0, |all, f| all | f)
    }

    /// The flags of an event of key `code` posted now (`shift`: the key's
    /// character needs Shift).
    pub fn event_flags(&self, code: u16, shift: bool) -> u64 {
        let extra = if shift { flag::SHIFT } else { 0 };
        self.flags() | own_flags(code) | extra
    }
}

/// What one character of a text is posted as.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Typed {
    /// A key the apps treat as a command (Return for a line break, Tab),
    /// pressed and released.
    Key(u16),
    /// The character's UTF-16 code units, set on a key-down and key-up
    /// pair with `CGEventKeyboardSetUnicodeString` (any layout, any
    /// character: no key is needed).
    Unicode(Vec<u16>),
}

impl Typed {
    /// How many key presses it takes.
    pub fn presses(&self) -> usize {
        1
    }
}

/// How `c` is typed.
pub fn typed(c: char) -> Typed {
    match c {
        '\n' | '\r' => Typed::Key(vk::RETURN),
        '\t' => Typed::Key(vk::TAB),
        _ => Typed::Unicode(c.encode_utf16(&mut [0; 2]).to_vec()),
    }
}

/// The key code and modifier flags of the kill-switch chord, as the event
/// tap sees its key-down; a letter or digit by its ANSI position.
pub fn chord_of(chord: &Chord) -> Option<(u16, u64)> {
    let bits = [
        (modifier::CTRL, flag::CONTROL),
        (modifier::ALT, flag::OPTION),
        (modifier::SHIFT, flag::SHIFT),
        (modifier::SUPER, flag::COMMAND),
    ];
    let flags = bits
        .iter()
        .filter(|(ours, _)| chord.modifiers & ours != 0)
        .fold(0, |m, (_, theirs)| m | theirs);
    let code = match chord.key {
        ChordKey::Escape => vk::ESCAPE,
        // A Mac has no Pause key; F15 sits where it is on a PC keyboard.
        ChordKey::Pause => FUNCTION_KEYS[14],
        ChordKey::F(n @ 1..=20) => FUNCTION_KEYS[usize::from(n) - 1],
        ChordKey::F(_) => return None,
        ChordKey::Char(c) => char_key(c)?.code,
    };
    Some((code, flags))
}

/// Whether a key-down of `code` with `flags` is the chord `(key, mods)`:
/// the same key, and exactly the chord's modifiers among Shift, Control,
/// Option and Command.
pub fn is_chord(chord: (u16, u64), code: u16, flags: u64) -> bool {
    let mods = flag::SHIFT | flag::CONTROL | flag::OPTION | flag::COMMAND;
    code == chord.0 && flags & mods == chord.1
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn named_keys_have_their_key_codes() {
        assert_eq!(virtual_key(Key::Return), key(0x24));
        assert_eq!(virtual_key(Key::Backspace), key(0x33));
        assert_eq!(virtual_key(Key::Delete), key(0x75));
        assert_eq!(virtual_key(Key::F(1)), key(0x7A));
        assert_eq!(virtual_key(Key::F(12)), key(0x6F));
        assert_eq!(virtual_key(Key::F(20)), key(0x5A));
        assert_eq!(virtual_key(Key::F(21)), None);
        assert_eq!(virtual_key(Key::Super), key(vk::COMMAND));
        assert_eq!(virtual_key(Key::Alt), key(vk::OPTION));
        assert_eq!(virtual_key(Key::Kp(Keypad::Digit(8))), key(0x5B));
        assert_eq!(virtual_key(Key::Kp(Keypad::Separator)), None);
    }

    #[test]
    fn function_keys_are_distinct() {
        let mut codes = FUNCTION_KEYS.to_vec();
        codes.sort_unstable();
        codes.dedup();
        assert_eq!(codes.len(), 20);
    }

    #[test]
    fn characters_have_ansi_positions_and_shift() {
        assert_eq!(
            char_key('a'),
            Some(MacKey {
                code: 0,
                shift: false
            })
        );
        assert_eq!(
            char_key('A'),
            Some(MacKey {
                code: 0,
                shift: true
            })
        );
        assert_eq!(
            char_key('?'),
            Some(MacKey {
                code: 0x2C,
                shift: true
            })
        );
        assert_eq!(virtual_key(Key::Char('v')), key(0x09));
        assert_eq!(char_key('é'), None, "no key: typed as Unicode");
    }

    #[test]
    fn held_modifiers_flag_every_event_and_arrows_carry_their_own() {
        let mut held = Held::default();
        held.record(vk::COMMAND, true);
        held.record(vk::SHIFT, true);
        assert_eq!(held.flags(), flag::COMMAND | flag::SHIFT);
        assert_eq!(
            held.event_flags(0x09, false),
            flag::COMMAND | flag::SHIFT,
            "cmd+shift+v"
        );
        held.record(vk::SHIFT, false);
        held.record(vk::SHIFT, false);
        assert_eq!(held.flags(), flag::COMMAND, "a release never goes below 0");
        assert_eq!(held.held_codes(), [vk::COMMAND]);
        assert_eq!(
            Held::default().event_flags(vk::LEFT, false),
            flag::NUMERIC_PAD | flag::SECONDARY_FN
        );
        assert_eq!(Held::default().event_flags(0x7A, false), flag::SECONDARY_FN);
        assert_eq!(Held::default().event_flags(0x00, true), flag::SHIFT);
    }

    #[test]
    fn text_is_unicode_and_line_breaks_are_return() {
        assert_eq!(typed('ö'), Typed::Unicode(vec![0xF6]));
        assert_eq!(typed('🎉'), Typed::Unicode(vec![0xD83C, 0xDF89]));
        assert_eq!(typed('🎉').presses(), 1);
        assert_eq!(typed('\n'), Typed::Key(vk::RETURN));
        assert_eq!(typed('\t'), Typed::Key(vk::TAB));
    }

    #[test]
    fn the_kill_switch_chord_is_matched_by_key_and_exact_modifiers() {
        let chord = chord_of(&Chord::parse("ctrl+alt+Escape").expect("chord")).expect("mac key");
        assert_eq!(chord, (vk::ESCAPE, flag::CONTROL | flag::OPTION));
        let flags = flag::CONTROL | flag::OPTION | flag::NUMERIC_PAD;
        assert!(is_chord(chord, vk::ESCAPE, flags));
        assert!(!is_chord(chord, vk::ESCAPE, flags | flag::SHIFT));
        assert!(!is_chord(chord, vk::TAB, flags));
        let chord = chord_of(&Chord::parse("super+shift+k").expect("chord")).expect("mac key");
        assert_eq!(chord, (0x28, flag::COMMAND | flag::SHIFT));
    }
}
