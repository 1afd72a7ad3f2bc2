//! The held-input ledger: every key and button deskhand holds down, and who
//! holds it, so that everything can be released on error, disconnect and
//! shutdown.

use crate::backend::Button;
use crate::keys::Key;

/// Something deskhand holds down.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Held {
    /// A mouse button.
    Button(Button),
    /// A key.
    Key(Key),
}

/// What is held, in press order, with the owning session.
#[derive(Debug, Default)]
pub struct Ledger {
    entries: Vec<(String, Held)>,
}

impl Ledger {
    /// Records a press by `session`.
    pub fn pressed(&mut self, session: &str, held: Held) {
        if !self.is_held(held) {
            self.entries.push((session.to_owned(), held));
        }
    }

    /// Records a release, whoever pressed it.
    pub fn released(&mut self, held: Held) {
        self.entries.retain(|(_, h)| *h != held);
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
        taken
    }

    /// Removes and returns everything, last pressed first.
    pub fn take_all(&mut self) -> Vec<Held> {
        let mut taken: Vec<Held> = self.entries.drain(..).map(|(_, h)| h).collect();
        taken.reverse();
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
}
