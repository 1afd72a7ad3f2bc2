//! Key names and chords: `ctrl+s`, `Return`, `shift+Tab`, `f5`, `a`.
//! Accepts the wire-ops vocabulary, xdotool-style names (what Anthropic
//! models send) and the OpenAI upper-case names, case-insensitively.

/// A key the backend can press.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[allow(missing_docs)]
pub enum Key {
    Shift,
    Control,
    Alt,
    Super,
    Return,
    Tab,
    Escape,
    Space,
    Backspace,
    Delete,
    Insert,
    Up,
    Down,
    Left,
    Right,
    PageUp,
    PageDown,
    Home,
    End,
    CapsLock,
    Menu,
    PrintScreen,
    /// F1..=F24.
    F(u8),
    /// A key of the numeric keypad (`kp_enter`, `kp_1`, ...).
    Kp(Keypad),
    /// A character key, typed through the keymap.
    Char(char),
}

/// The keys of the numeric keypad.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[allow(missing_docs)]
pub enum Keypad {
    Enter,
    /// KP_0..=KP_9.
    Digit(u8),
    Add,
    Subtract,
    Multiply,
    Divide,
    Decimal,
    Separator,
    Equal,
    Up,
    Down,
    Left,
    Right,
    Home,
    End,
    PageUp,
    PageDown,
    Insert,
    Delete,
    Begin,
}

/// Keypad names after `kp_`, each with its key (the first name of a key
/// is the one [`Key::name`] writes).
const KEYPAD: &[(&str, Keypad)] = &[
    ("enter", Keypad::Enter),
    ("add", Keypad::Add),
    ("plus", Keypad::Add),
    ("subtract", Keypad::Subtract),
    ("minus", Keypad::Subtract),
    ("multiply", Keypad::Multiply),
    ("divide", Keypad::Divide),
    ("decimal", Keypad::Decimal),
    ("separator", Keypad::Separator),
    ("equal", Keypad::Equal),
    ("up", Keypad::Up),
    ("down", Keypad::Down),
    ("left", Keypad::Left),
    ("right", Keypad::Right),
    ("home", Keypad::Home),
    ("end", Keypad::End),
    ("prior", Keypad::PageUp),
    ("page_up", Keypad::PageUp),
    ("next", Keypad::PageDown),
    ("page_down", Keypad::PageDown),
    ("insert", Keypad::Insert),
    ("delete", Keypad::Delete),
    ("begin", Keypad::Begin),
];

fn parse_keypad(lower: &str) -> Option<Key> {
    let rest = lower.strip_prefix("kp_")?;
    if let Ok(d) = rest.parse::<u8>() {
        return (d <= 9).then_some(Key::Kp(Keypad::Digit(d)));
    }
    KEYPAD
        .iter()
        .find(|(name, _)| *name == rest)
        .map(|(_, k)| Key::Kp(*k))
}

impl Key {
    /// A name [`parse_key`] reads back as this key.
    pub fn name(self) -> String {
        let name = match self {
            Key::Shift => "shift",
            Key::Control => "ctrl",
            Key::Alt => "alt",
            Key::Super => "super",
            Key::Return => "return",
            Key::Tab => "tab",
            Key::Escape => "escape",
            Key::Space => "space",
            Key::Backspace => "backspace",
            Key::Delete => "delete",
            Key::Insert => "insert",
            Key::Up => "up",
            Key::Down => "down",
            Key::Left => "left",
            Key::Right => "right",
            Key::PageUp => "pageup",
            Key::PageDown => "pagedown",
            Key::Home => "home",
            Key::End => "end",
            Key::CapsLock => "capslock",
            Key::Menu => "menu",
            Key::PrintScreen => "print",
            Key::F(n) => return format!("f{n}"),
            Key::Kp(Keypad::Digit(d)) => return format!("kp_{d}"),
            Key::Kp(k) => {
                let name = KEYPAD
                    .iter()
                    .find(|(_, key)| *key == k)
                    .map_or("", |(n, _)| n);
                return format!("kp_{name}");
            }
            Key::Char(c) => return c.to_string(),
        };
        name.to_owned()
    }

    /// Whether this is a modifier key.
    pub fn is_modifier(self) -> bool {
        matches!(self, Key::Shift | Key::Control | Key::Alt | Key::Super)
    }
}

/// Parses one modifier name of the `modifiers` field.
pub fn parse_modifier(name: &str) -> Option<Key> {
    let key = parse_key(name)?;
    key.is_modifier().then_some(key)
}

/// Parses one key name.
pub fn parse_key(name: &str) -> Option<Key> {
    let mut chars = name.chars();
    if let (Some(c), None) = (chars.next(), chars.next()) {
        // A single character is that character, case preserved. A control
        // character names no key (there are names for Tab and Return).
        return (!c.is_control()).then_some(Key::Char(c));
    }
    let lower = name.to_ascii_lowercase();
    let key = match lower.as_str() {
        "shift" | "shift_l" | "shift_r" => Key::Shift,
        "ctrl" | "control" | "control_l" | "control_r" | "ctl" => Key::Control,
        "alt" | "alt_l" | "alt_r" | "option" | "opt" | "meta_l" | "meta_r" => Key::Alt,
        "super" | "super_l" | "super_r" | "meta" | "cmd" | "command" | "win" | "windows" => {
            Key::Super
        }
        "enter" | "return" => Key::Return,
        "tab" => Key::Tab,
        "esc" | "escape" => Key::Escape,
        "space" => Key::Space,
        "backspace" => Key::Backspace,
        "delete" | "del" => Key::Delete,
        "insert" | "ins" => Key::Insert,
        "up" | "arrowup" => Key::Up,
        "down" | "arrowdown" => Key::Down,
        "left" | "arrowleft" => Key::Left,
        "right" | "arrowright" => Key::Right,
        "pageup" | "page_up" | "prior" => Key::PageUp,
        "pagedown" | "page_down" | "next" => Key::PageDown,
        "home" => Key::Home,
        "end" => Key::End,
        "capslock" | "caps_lock" => Key::CapsLock,
        "menu" => Key::Menu,
        "print" | "printscreen" | "print_screen" => Key::PrintScreen,
        "minus" => Key::Char('-'),
        "plus" => Key::Char('+'),
        "equal" => Key::Char('='),
        "comma" => Key::Char(','),
        "period" => Key::Char('.'),
        "slash" => Key::Char('/'),
        "backslash" => Key::Char('\\'),
        "semicolon" => Key::Char(';'),
        "apostrophe" => Key::Char('\''),
        "grave" => Key::Char('`'),
        "bracketleft" => Key::Char('['),
        "bracketright" => Key::Char(']'),
        _ => return parse_keypad(&lower).or_else(|| parse_function_key(&lower)),
    };
    Some(key)
}

fn parse_function_key(lower: &str) -> Option<Key> {
    let n: u8 = lower.strip_prefix('f')?.parse().ok()?;
    (1..=24).contains(&n).then_some(Key::F(n))
}

/// Parses a chord such as `ctrl+shift+t` into its keys, in press order.
/// A lone `+` and a trailing `++` mean the plus key.
pub fn parse_chord(chord: &str) -> Result<Vec<Key>, String> {
    let chord = chord.trim();
    if chord.is_empty() {
        return Err("empty key".into());
    }
    if chord == "+" {
        return Ok(vec![Key::Char('+')]);
    }
    let (body, trailing_plus) = match chord.strip_suffix("++") {
        Some(rest) => (rest, true),
        None => (chord, false),
    };
    let mut keys = Vec::new();
    for part in body.split('+') {
        let part = part.trim();
        if part.is_empty() {
            return Err(format!(
                "malformed chord {}",
                deskhand_protocol::echo(chord)
            ));
        }
        keys.push(
            parse_key(part)
                .ok_or_else(|| format!("unknown key {}", deskhand_protocol::echo(part)))?,
        );
    }
    if trailing_plus {
        keys.push(Key::Char('+'));
    }
    if keys.len() > 1 {
        // In a chord a letter names its key: `ctrl+S` is ctrl+s, and shift
        // is pressed only when the chord says so.
        for k in &mut keys {
            if let Key::Char(c) = k {
                *k = Key::Char(c.to_ascii_lowercase());
            }
        }
    }
    Ok(keys)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_read_back() {
        for key in [
            Key::Shift,
            Key::Control,
            Key::Alt,
            Key::Super,
            Key::Return,
            Key::PageDown,
            Key::PrintScreen,
            Key::F(12),
            Key::Kp(Keypad::Enter),
            Key::Kp(Keypad::Digit(7)),
            Key::Kp(Keypad::PageDown),
            Key::Kp(Keypad::Begin),
            Key::Char('a'),
            Key::Char('A'),
            Key::Char('é'),
        ] {
            assert_eq!(parse_key(&key.name()), Some(key), "{key:?}");
        }
    }

    #[test]
    fn chords_and_names() {
        assert_eq!(
            parse_chord("ctrl+s").expect("chord"),
            vec![Key::Control, Key::Char('s')]
        );
        assert_eq!(
            parse_chord("Control_L+Shift+T").expect("chord"),
            vec![Key::Control, Key::Shift, Key::Char('t')]
        );
        assert_eq!(parse_chord("Return").expect("chord"), vec![Key::Return]);
        assert_eq!(parse_chord("ENTER").expect("chord"), vec![Key::Return]);
        assert_eq!(parse_chord("f24").expect("chord"), vec![Key::F(24)]);
        assert_eq!(
            parse_chord("ctrl++").expect("chord"),
            vec![Key::Control, Key::Char('+')]
        );
        assert!(parse_chord("f25").is_err());
        assert!(parse_chord("ctrl+").is_err());
        assert!(parse_chord("nosuchkey").is_err());
        assert!(parse_chord("").is_err());
        for control in [
            "\u{0}",
            "\u{7}",
            "\u{1b}",
            "\u{7f}",
            "\u{85}",
            "ctrl+\u{0}",
            "\t",
        ] {
            assert!(parse_chord(control).is_err(), "{control:?} names no key");
        }
    }

    #[test]
    fn keypad_names_are_keypad_keys() {
        assert_eq!(parse_key("kp_enter"), Some(Key::Kp(Keypad::Enter)));
        assert_eq!(parse_key("KP_Enter"), Some(Key::Kp(Keypad::Enter)));
        assert_eq!(parse_key("KP_Up"), Some(Key::Kp(Keypad::Up)));
        assert_eq!(parse_key("kp_0"), Some(Key::Kp(Keypad::Digit(0))));
        assert_eq!(parse_key("KP_Add"), Some(Key::Kp(Keypad::Add)));
        assert_eq!(parse_key("kp_10"), None);
        assert_eq!(parse_key("kp_nothing"), None);
    }

    #[test]
    fn modifiers_only_accept_modifiers() {
        assert_eq!(parse_modifier("cmd"), Some(Key::Super));
        assert_eq!(parse_modifier("shift"), Some(Key::Shift));
        assert_eq!(parse_modifier("a"), None);
    }
}
