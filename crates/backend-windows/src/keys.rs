//! Keys as Windows sends them: deskhand's key names to virtual-key codes
//! (with the extended-key flag the arrows and the editing block need),
//! characters of a text to what `SendInput` sends for them, and the kill
//! switch's chord to `RegisterHotKey`'s modifiers and key.

use deskhand_backend::Key;
use deskhand_backend::keys::Keypad;
use deskhand_backend::kill_switch::{Chord, ChordKey, modifier};

/// A virtual key and whether it is one of the extended keys (sent with
/// `KEYEVENTF_EXTENDEDKEY`: the arrows, the editing block, the right-hand
/// modifiers, the keypad's Enter and Divide).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Vk {
    /// The virtual-key code.
    pub code: u16,
    /// Sent as an extended key.
    pub extended: bool,
}

const fn vk(code: u16) -> Option<Vk> {
    Some(Vk {
        code,
        extended: false,
    })
}

const fn ext(code: u16) -> Option<Vk> {
    Some(Vk {
        code,
        extended: true,
    })
}

/// The virtual key of `key`; `None` for a character no fixed key has (the
/// keyboard layout is asked then: `VkKeyScanW`).
pub fn virtual_key(key: Key) -> Option<Vk> {
    match key {
        Key::Shift => vk(0x10),
        Key::Control => vk(0x11),
        Key::Alt => vk(0x12),
        Key::Super => ext(0x5B),
        Key::Return => vk(0x0D),
        Key::Tab => vk(0x09),
        Key::Escape => vk(0x1B),
        Key::Space => vk(0x20),
        Key::Backspace => vk(0x08),
        Key::Delete => ext(0x2E),
        Key::Insert => ext(0x2D),
        Key::Up => ext(0x26),
        Key::Down => ext(0x28),
        Key::Left => ext(0x25),
        Key::Right => ext(0x27),
        Key::PageUp => ext(0x21),
        Key::PageDown => ext(0x22),
        Key::Home => ext(0x24),
        Key::End => ext(0x23),
        Key::CapsLock => vk(0x14),
        Key::Menu => ext(0x5D),
        Key::PrintScreen => ext(0x2C),
        Key::F(n @ 1..=24) => vk(0x70 + u16::from(n) - 1),
        Key::F(_) => None,
        Key::Kp(pad) => keypad(pad),
        Key::Char(c) => char_key(c),
    }
}

/// The keypad's keys (with Num Lock on for the digits).
fn keypad(pad: Keypad) -> Option<Vk> {
    match pad {
        Keypad::Enter => ext(0x0D),
        Keypad::Digit(d @ 0..=9) => vk(0x60 + u16::from(d)),
        Keypad::Digit(_) => None,
        Keypad::Add => vk(0x6B),
        Keypad::Subtract => vk(0x6D),
        Keypad::Multiply => vk(0x6A),
        Keypad::Divide => ext(0x6F),
        Keypad::Decimal => vk(0x6E),
        Keypad::Separator => vk(0x6C),
        Keypad::Equal => vk(0x92),
        Keypad::Up => vk(0x26),
        Keypad::Down => vk(0x28),
        Keypad::Left => vk(0x25),
        Keypad::Right => vk(0x27),
        Keypad::Home => vk(0x24),
        Keypad::End => vk(0x23),
        Keypad::PageUp => vk(0x21),
        Keypad::PageDown => vk(0x22),
        Keypad::Insert => vk(0x2D),
        Keypad::Delete => vk(0x2E),
        Keypad::Begin => vk(0x0C),
    }
}

/// Letters and digits have the same virtual key in every layout.
fn char_key(c: char) -> Option<Vk> {
    match c {
        'a'..='z' => vk(c.to_ascii_uppercase() as u16),
        'A'..='Z' | '0'..='9' => vk(c as u16),
        ' ' => vk(0x20),
        _ => None,
    }
}

/// What one character of a text is sent as.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Typed {
    /// A key the apps treat as a command, not a character (Enter for a
    /// line break, Tab), pressed and released.
    Key(Vk),
    /// The character's UTF-16 code units, each sent as a
    /// `KEYEVENTF_UNICODE` press and release (two for a character outside
    /// the Basic Multilingual Plane: a surrogate pair).
    Units(Vec<u16>),
}

impl Typed {
    /// How many key presses it takes.
    pub fn presses(&self) -> usize {
        match self {
            Self::Key(_) => 1,
            Self::Units(u) => u.len(),
        }
    }
}

/// How `c` is typed.
pub fn typed(c: char) -> Typed {
    match c {
        '\n' | '\r' => Typed::Key(Vk {
            code: 0x0D,
            extended: false,
        }),
        '\t' => Typed::Key(Vk {
            code: 0x09,
            extended: false,
        }),
        _ => Typed::Units(c.encode_utf16(&mut [0; 2]).to_vec()),
    }
}

/// `RegisterHotKey`'s modifier flags.
pub mod hotkey {
    /// `MOD_ALT`.
    pub const ALT: u32 = 0x1;
    /// `MOD_CONTROL`.
    pub const CONTROL: u32 = 0x2;
    /// `MOD_SHIFT`.
    pub const SHIFT: u32 = 0x4;
    /// `MOD_WIN`.
    pub const WIN: u32 = 0x8;
    /// `MOD_NOREPEAT`: a held chord is one press.
    pub const NOREPEAT: u32 = 0x4000;
}

/// The modifiers and virtual key `RegisterHotKey` takes for `chord`.
pub fn hotkey_of(chord: &Chord) -> (u32, u32) {
    let bits = [
        (modifier::CTRL, hotkey::CONTROL),
        (modifier::ALT, hotkey::ALT),
        (modifier::SHIFT, hotkey::SHIFT),
        (modifier::SUPER, hotkey::WIN),
    ];
    let mods = bits
        .iter()
        .filter(|(ours, _)| chord.modifiers & ours != 0)
        .fold(hotkey::NOREPEAT, |m, (_, theirs)| m | theirs);
    let key = match chord.key {
        ChordKey::Escape => 0x1B,
        ChordKey::Pause => 0x13,
        ChordKey::F(n) => 0x70 + u32::from(n.clamp(1, 24)) - 1,
        ChordKey::Char(c) => u32::from(c.to_ascii_uppercase()),
    };
    (mods, key)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn named_keys_have_their_virtual_keys() {
        assert_eq!(virtual_key(Key::Return), vk(0x0D));
        assert_eq!(virtual_key(Key::F(12)), vk(0x7B));
        assert_eq!(virtual_key(Key::F(24)), vk(0x87));
        assert_eq!(virtual_key(Key::F(25)), None);
        assert_eq!(virtual_key(Key::Char('a')), vk(0x41));
        assert_eq!(virtual_key(Key::Char('7')), vk(0x37));
        assert_eq!(virtual_key(Key::Char('é')), None, "the layout decides");
        assert_eq!(virtual_key(Key::Kp(Keypad::Digit(3))), vk(0x63));
    }

    #[test]
    fn the_arrows_and_editing_block_are_extended_keys_but_not_on_the_keypad() {
        for key in [Key::Up, Key::Delete, Key::Home, Key::PageDown, Key::Insert] {
            assert!(virtual_key(key).is_some_and(|v| v.extended), "{key:?}");
        }
        assert_eq!(virtual_key(Key::Kp(Keypad::Up)), vk(0x26));
        assert_eq!(virtual_key(Key::Kp(Keypad::Enter)), ext(0x0D));
    }

    #[test]
    fn text_is_utf16_units_and_line_breaks_are_enter() {
        assert_eq!(typed('ö'), Typed::Units(vec![0xF6]));
        assert_eq!(typed('🎉'), Typed::Units(vec![0xD83C, 0xDF89]));
        assert_eq!(typed('🎉').presses(), 2);
        assert_eq!(
            typed('\n'),
            Typed::Key(Vk {
                code: 0x0D,
                extended: false
            })
        );
        assert_eq!(typed('\t').presses(), 1);
    }

    #[test]
    fn chords_become_hotkeys() {
        let chord = Chord::parse("ctrl+alt+Escape").expect("chord");
        assert_eq!(
            hotkey_of(&chord),
            (hotkey::CONTROL | hotkey::ALT | hotkey::NOREPEAT, 0x1B)
        );
        let chord = Chord::parse("super+shift+k").expect("chord");
        assert_eq!(
            hotkey_of(&chord),
            (
                hotkey::WIN | hotkey::SHIFT | hotkey::NOREPEAT,
                u32::from(b'K')
            )
        );
        let chord = Chord::parse("ctrl+F9").expect("chord");
        assert_eq!(hotkey_of(&chord).1, 0x78);
    }
}
