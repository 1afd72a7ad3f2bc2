//! The held-input ledger: every key and button deskhand holds down, and who
//! holds it, so that everything can be released on error, disconnect and
//! shutdown, and, from the copy kept in a file, at the next start after a
//! crash.

use std::path::{Path, PathBuf};

use crate::backend::Button;
use crate::keys::{Key, parse_key};

/// Something deskhand holds down.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Held {
    /// A mouse button.
    Button(Button),
    /// A key.
    Key(Key),
    /// The keys a `type` under way presses for each character (Shift,
    /// AltGr, a remapped keycode; pressed and released together): which
    /// ones only the backend knows, so their release is everything the
    /// synthetic keyboard holds.
    Typing,
}

impl Held {
    /// The form kept in the ledger file, e.g. `button:left`, `key:ctrl`.
    pub fn token(self) -> String {
        match self {
            Held::Button(Button::Left) => "button:left".into(),
            Held::Button(Button::Middle) => "button:middle".into(),
            Held::Button(Button::Right) => "button:right".into(),
            Held::Button(Button::Back) => "button:back".into(),
            Held::Button(Button::Forward) => "button:forward".into(),
            Held::Key(k) => format!("key:{}", k.name()),
            Held::Typing => "typing:keys".into(),
        }
    }

    /// Reads [`Held::token`] back.
    pub fn from_token(token: &str) -> Option<Self> {
        match token.split_once(':')? {
            ("button", "left") => Some(Held::Button(Button::Left)),
            ("button", "middle") => Some(Held::Button(Button::Middle)),
            ("button", "right") => Some(Held::Button(Button::Right)),
            ("button", "back") => Some(Held::Button(Button::Back)),
            ("button", "forward") => Some(Held::Button(Button::Forward)),
            ("key", name) => parse_key(name).map(Held::Key),
            ("typing", "keys") => Some(Held::Typing),
            _ => None,
        }
    }
}

/// What is held, in press order, with the owning session.
#[derive(Debug, Default)]
pub struct Ledger {
    entries: Vec<(String, Held)>,
    /// Where a copy is kept for the next start (rewritten on every change).
    file: Option<PathBuf>,
}

/// Reads what a previous run left in the ledger file, press order.
pub fn read_file(path: &Path) -> Vec<Held> {
    let Ok(text) = std::fs::read_to_string(path) else {
        return Vec::new();
    };
    serde_json::from_str::<Vec<String>>(&text)
        .unwrap_or_default()
        .iter()
        .filter_map(|t| Held::from_token(t))
        .collect()
}

impl Ledger {
    /// Keeps a copy in `path` from now on.
    pub fn keep_in(&mut self, path: PathBuf) {
        self.file = Some(path);
        self.save();
    }

    fn save(&self) {
        let Some(path) = &self.file else { return };
        let tokens: Vec<String> = self.entries.iter().map(|(_, h)| h.token()).collect();
        let body = serde_json::to_string(&tokens).unwrap_or_else(|_| "[]".into());
        // A process killed at any point leaves the old or the new list.
        if let Err(e) = deskhand_files::write_atomic_unsynced(path, body.as_bytes()) {
            tracing::warn!(path = %path.display(), error = %e, "cannot keep the held-input ledger");
        }
    }

    /// Records a press by `session`.
    pub fn pressed(&mut self, session: &str, held: Held) {
        if !self.is_held(held) {
            self.entries.push((session.to_owned(), held));
            self.save();
        }
    }

    /// Records a release, whoever pressed it.
    pub fn released(&mut self, held: Held) {
        let before = self.entries.len();
        self.entries.retain(|(_, h)| *h != held);
        if self.entries.len() != before {
            self.save();
        }
    }

    /// Whether `held` is down.
    pub fn is_held(&self, held: Held) -> bool {
        self.entries.iter().any(|(_, h)| *h == held)
    }

    /// Removes and returns what `session` holds, last pressed first.
    pub fn take_session(&mut self, session: &str) -> Vec<Held> {
        let mut taken = Vec::new();
        self.entries.retain(|(s, h)| {
            if s == session {
                taken.push(*h);
                false
            } else {
                true
            }
        });
        taken.reverse();
        if !taken.is_empty() {
            self.save();
        }
        taken
    }

    /// Removes and returns everything, last pressed first.
    pub fn take_all(&mut self) -> Vec<Held> {
        let mut taken: Vec<Held> = self.entries.drain(..).map(|(_, h)| h).collect();
        taken.reverse();
        if !taken.is_empty() {
            self.save();
        }
        taken
    }

    /// Whether nothing is held.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn release_order_is_reverse_press_order_per_session() {
        let mut l = Ledger::default();
        l.pressed("a", Held::Key(Key::Control));
        l.pressed("b", Held::Button(Button::Left));
        l.pressed("a", Held::Key(Key::Shift));
        assert_eq!(
            l.take_session("a"),
            vec![Held::Key(Key::Shift), Held::Key(Key::Control)]
        );
        assert!(l.is_held(Held::Button(Button::Left)));
        l.released(Held::Button(Button::Left));
        assert!(l.is_empty());
    }

    #[test]
    fn the_file_copy_follows_every_change_and_reads_back() {
        let dir = std::env::temp_dir().join(format!("dh-ledger-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("dir");
        let path = dir.join("held-input.json");
        let mut l = Ledger::default();
        l.keep_in(path.clone());
        assert!(read_file(&path).is_empty());
        l.pressed("a", Held::Key(Key::Shift));
        l.pressed("a", Held::Button(Button::Right));
        l.pressed("a", Held::Key(Key::F(5)));
        l.pressed("a", Held::Typing);
        assert_eq!(
            read_file(&path),
            vec![
                Held::Key(Key::Shift),
                Held::Button(Button::Right),
                Held::Key(Key::F(5)),
                Held::Typing
            ]
        );
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt as _;
            let mode = std::fs::metadata(&path).expect("meta").permissions().mode();
            assert_eq!(mode & 0o777, 0o600, "the ledger is private");
        }
        l.released(Held::Key(Key::Shift));
        l.take_session("a");
        assert!(read_file(&path).is_empty());
        let _ = std::fs::remove_dir_all(&dir);
    }
}
