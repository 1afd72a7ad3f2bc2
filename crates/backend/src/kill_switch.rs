//! The kill-switch hotkey: a chord read from `ctrl+alt+Escape`-style
//! text with no OS code, and the handle a host changes it through while
//! deskhand runs. Each backend's hand-back watcher grabs the chord its own
//! way, the new one before it lets the old one go, so the person is never
//! without a kill switch.

use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

use thiserror::Error;

/// Why a kill switch was not taken.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum ChordError {
    /// The text names no chord.
    #[error("kill switch {text:?}: {why} (e.g. ctrl+alt+Escape)")]
    Invalid {
        /// The text as given.
        text: String,
        /// What is wrong with it.
        why: &'static str,
    },
    /// The backend could not grab it (or did not answer); the old one stays.
    #[error("{0}")]
    NotGrabbed(String),
}

/// The kill switch unless the person picks another.
pub const DEFAULT_KILL_SWITCH: &str = "ctrl+alt+Escape";

/// How long a change waits for the watcher to grab the new chord.
const GRAB_WAIT: Duration = Duration::from_secs(2);

/// The modifiers of a chord, as bits (their order in the text does not
/// matter).
pub mod modifier {
    /// Control.
    pub const CTRL: u8 = 1;
    /// Alt (Option on a Mac).
    pub const ALT: u8 = 2;
    /// Shift.
    pub const SHIFT: u8 = 4;
    /// Super: the Windows key, Command on a Mac.
    pub const SUPER: u8 = 8;
}

/// The one key of a chord.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChordKey {
    /// Escape.
    Escape,
    /// Pause.
    Pause,
    /// F1 to F12.
    F(u8),
    /// A lowercase ASCII letter or a digit.
    Char(char),
}

/// Modifiers and one key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Chord {
    /// The [`modifier`] bits.
    pub modifiers: u8,
    /// The key.
    pub key: ChordKey,
}

impl Chord {
    /// Reads `ctrl+alt+Escape`-style text: any of ctrl, alt, shift, super,
    /// then Escape, Pause, F1–F12, or a letter or digit. A chord needs
    /// ctrl, alt or super (shift alone makes capitals), so that it never
    /// takes a key the person types.
    pub fn parse(text: &str) -> Result<Self, ChordError> {
        let bad = |why: &'static str| ChordError::Invalid {
            text: text.to_owned(),
            why,
        };
        let mut modifiers = 0;
        let mut key = None;
        for part in text.split('+') {
            modifiers |= match part.trim().to_ascii_lowercase().as_str() {
                "ctrl" | "control" => modifier::CTRL,
                "alt" => modifier::ALT,
                "shift" => modifier::SHIFT,
                "super" | "meta" => modifier::SUPER,
                name if key.is_none() => {
                    key = Some(chord_key(name).ok_or_else(|| bad("unknown key"))?);
                    continue;
                }
                _ => return Err(bad("more than one key")),
            };
        }
        let key = key.ok_or_else(|| bad("no key"))?;
        if modifiers & !modifier::SHIFT == 0 {
            return Err(bad("a chord needs ctrl, alt or super"));
        }
        Ok(Self { modifiers, key })
    }
}

/// The key a lowercase name means.
fn chord_key(name: &str) -> Option<ChordKey> {
    match name {
        "escape" | "esc" => return Some(ChordKey::Escape),
        "pause" => return Some(ChordKey::Pause),
        _ => {}
    }
    if let Some(n) = name.strip_prefix('f').and_then(|n| n.parse::<u8>().ok()) {
        return (1..=12).contains(&n).then_some(ChordKey::F(n));
    }
    let mut chars = name.chars();
    match (chars.next(), chars.next()) {
        (Some(c), None) if c.is_ascii_alphanumeric() => Some(ChordKey::Char(c)),
        _ => None,
    }
}

/// The chord in force and a change asked for.
#[derive(Debug)]
struct State {
    /// The chord's text as the person wrote it.
    text: String,
    chord: Chord,
    /// A change not yet answered by the watcher, numbered.
    asked: Option<(u64, String, Chord)>,
    /// The answer to the last change: its number and, when it failed, why.
    answered: Option<(u64, Result<(), String>)>,
    next: u64,
    /// Whether a watcher grabs the chord (else a change just records it).
    watched: bool,
    /// Why the chord does nothing now (the desktop cannot bind it, another
    /// program holds it), as the watcher found.
    unavailable: Option<String>,
}

/// The kill-switch hotkey of a running backend. Clones share it.
#[derive(Debug, Clone)]
pub struct KillSwitchHotkey(Arc<(Mutex<State>, Condvar)>);

impl KillSwitchHotkey {
    /// The hotkey `text` names.
    pub fn new(text: &str) -> Result<Self, ChordError> {
        let chord = Chord::parse(text)?;
        Ok(Self(Arc::new((
            Mutex::new(State {
                text: text.to_owned(),
                chord,
                asked: None,
                answered: None,
                next: 1,
                watched: false,
                unavailable: None,
            }),
            Condvar::new(),
        ))))
    }

    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        self.0.0.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The chord in force, as text.
    pub fn current(&self) -> String {
        self.state().text.clone()
    }

    /// Makes `text` the kill switch. With a watcher running it waits for
    /// the grab: a chord that cannot be grabbed (another client holds it,
    /// its key is not on this keyboard) is refused and the old one stays.
    pub fn change(&self, text: &str) -> Result<(), ChordError> {
        let chord = Chord::parse(text)?;
        let mut state = self.state();
        if state.chord == chord {
            // The chord in force: a change still asked for is withdrawn.
            state.text = text.to_owned();
            state.asked = None;
            return Ok(());
        }
        if !state.watched {
            state.text = text.to_owned();
            state.chord = chord;
            return Ok(());
        }
        let n = state.next;
        state.next += 1;
        state.asked = Some((n, text.to_owned(), chord));
        let (mut state, _) = self
            .0
            .1
            .wait_timeout_while(
                state,
                GRAB_WAIT,
                |s| !matches!(s.answered, Some((m, _)) if m == n),
            )
            .unwrap_or_else(|e| e.into_inner());
        // Not answered in time: withdrawn, so that the watcher does not
        // make it the kill switch later (it asks before it lets go).
        if state.asked.as_ref().is_some_and(|(m, _, _)| *m == n) {
            state.asked = None;
        }
        match &state.answered {
            Some((m, Ok(()))) if *m == n => Ok(()),
            Some((m, Err(why))) if *m == n => Err(ChordError::NotGrabbed(format!(
                "the kill switch {text:?} could not be grabbed ({why}); {:?} stays",
                state.text
            ))),
            _ => Err(ChordError::NotGrabbed(format!(
                "the hand-back watcher did not answer; the kill switch stays {:?}",
                state.text
            ))),
        }
    }

    /// For the watcher: the chord to grab at its start (from then on
    /// changes wait for its answer).
    pub fn watch(&self) -> Chord {
        let mut state = self.state();
        state.watched = true;
        state.chord.clone()
    }

    /// For the watcher: a change to grab, if one was asked for.
    pub fn asked(&self) -> Option<(u64, Chord)> {
        let state = self.state();
        state
            .asked
            .as_ref()
            .map(|(n, _, chord)| (*n, chord.clone()))
    }

    /// For the watcher: change `n` was grabbed or not. Returns whether it
    /// is in force now: false when it failed, or when it was withdrawn or
    /// replaced meanwhile (then the watcher lets the new grab go and keeps
    /// the old one).
    pub fn answer(&self, n: u64, grabbed: Result<(), String>) -> bool {
        let mut state = self.state();
        let still_asked = state.asked.as_ref().is_some_and(|(m, _, _)| *m == n);
        if !still_asked {
            return false;
        }
        let in_force = grabbed.is_ok();
        if let Some((_, text, chord)) = state.asked.take()
            && in_force
        {
            state.text = text;
            state.chord = chord;
        }
        state.answered = Some((n, grabbed));
        self.0.1.notify_all();
        in_force
    }

    /// For the watcher: why the chord does nothing now, or `None` once it
    /// works.
    pub fn set_unavailable(&self, why: Option<String>) {
        self.state().unavailable = why;
    }

    /// Why the chord does nothing now, if the watcher found so.
    pub fn unavailable(&self) -> Option<String> {
        self.state().unavailable.clone()
    }

    /// The chord as text while pressing it stops agents; `None` while it
    /// does nothing (what tells the person how to stop names only ways
    /// that work).
    pub fn in_force(&self) -> Option<String> {
        let state = self.state();
        state.unavailable.is_none().then(|| state.text.clone())
    }

    /// For the watcher when it stops: changes no longer wait.
    pub fn unwatch(&self) {
        self.state().watched = false;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chords() {
        let default = Chord::parse("ctrl+alt+Escape").expect("the default");
        assert_eq!(default.key, ChordKey::Escape);
        assert_eq!(default.modifiers, modifier::CTRL | modifier::ALT);
        assert_eq!(Chord::parse("Alt+Ctrl+escape").ok(), Some(default));
        assert_eq!(Chord::parse("super+F12").expect("f12").key, ChordKey::F(12));
        assert_eq!(
            Chord::parse("ctrl+shift+K").map(|k| k.key).ok(),
            Some(ChordKey::Char('k'))
        );
        for bad in [
            "ctrl+banana",
            "ctrl+alt",
            "Escape",
            "shift+a",
            "ctrl+a+b",
            "ctrl+F13",
            "",
        ] {
            assert!(Chord::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn without_a_watcher_a_change_is_recorded_and_a_bad_one_refused() {
        let hotkey = KillSwitchHotkey::new("ctrl+alt+Escape").expect("valid");
        hotkey.change("super+F12").expect("recorded");
        assert_eq!(hotkey.current(), "super+F12");
        assert!(hotkey.change("super").is_err());
        assert_eq!(hotkey.current(), "super+F12");
    }

    #[test]
    fn a_watched_change_waits_for_the_grab_and_a_failed_grab_keeps_the_old_chord() {
        let hotkey = KillSwitchHotkey::new("ctrl+alt+Escape").expect("valid");
        let _ = hotkey.watch();
        let watcher = hotkey.clone();
        let answers = std::thread::spawn(move || {
            for ok in [false, true] {
                let n = loop {
                    if let Some((n, _)) = watcher.asked() {
                        break n;
                    }
                    std::thread::sleep(Duration::from_millis(5));
                };
                let in_force = watcher.answer(n, if ok { Ok(()) } else { Err("held".into()) });
                assert_eq!(in_force, ok);
            }
        });
        let refused = hotkey.change("ctrl+alt+k").expect_err("the grab failed");
        assert!(refused.to_string().contains("held"), "{refused}");
        assert_eq!(hotkey.current(), "ctrl+alt+Escape");
        hotkey.change("ctrl+alt+j").expect("grabbed");
        assert_eq!(hotkey.current(), "ctrl+alt+j");
        answers.join().expect("the watcher thread");
    }

    #[test]
    fn a_change_not_answered_in_time_is_withdrawn() {
        let hotkey = KillSwitchHotkey::new("ctrl+alt+Escape").expect("valid");
        let _ = hotkey.watch();
        let refused = hotkey.change("ctrl+alt+k").expect_err("no answer");
        assert!(refused.to_string().contains("did not answer"), "{refused}");
        assert!(hotkey.asked().is_none(), "withdrawn");
        assert!(!hotkey.answer(1, Ok(())), "a late grab is not put in force");
        assert_eq!(hotkey.current(), "ctrl+alt+Escape");
    }

    #[test]
    fn a_chord_the_desktop_cannot_bind_is_not_in_force() {
        let hotkey = KillSwitchHotkey::new("ctrl+alt+Escape").expect("chord");
        assert_eq!(hotkey.in_force().as_deref(), Some("ctrl+alt+Escape"));
        hotkey.set_unavailable(Some("no global-shortcuts portal".into()));
        assert_eq!(hotkey.in_force(), None);
        assert_eq!(
            hotkey.current(),
            "ctrl+alt+Escape",
            "still the chord asked for"
        );
        assert_eq!(
            hotkey.unavailable().as_deref(),
            Some("no global-shortcuts portal")
        );
        hotkey.set_unavailable(None);
        assert!(hotkey.in_force().is_some());
    }
}
