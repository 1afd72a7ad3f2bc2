//! The kill-switch hotkey: a chord read from `ctrl+alt+Escape`-style
//! text, and the handle a host changes it through while deskhand runs
//! (the hand-back watcher grabs the new chord before it lets the old one
//! go, so the person is never without a kill switch).

use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

use crate::X11Error;

/// The kill switch unless the person picks another.
pub const DEFAULT_KILL_SWITCH: &str = "ctrl+alt+Escape";

/// How long a change waits for the watcher to grab the new chord.
const GRAB_WAIT: Duration = Duration::from_secs(2);

/// The modifiers of a chord, as bits (their order in the text does not
/// matter).
pub(crate) mod modifier {
    pub const CTRL: u8 = 1;
    pub const ALT: u8 = 2;
    pub const SHIFT: u8 = 4;
    pub const SUPER: u8 = 8;
}

/// Modifiers and one key (an X keysym).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Chord {
    pub(crate) modifiers: u8,
    pub(crate) keysym: u32,
}

impl Chord {
    /// Reads `ctrl+alt+Escape`-style text: any of ctrl, alt, shift, super,
    /// then Escape, Pause, F1–F12, or a letter or digit. A chord needs
    /// ctrl, alt or super (shift alone makes capitals), so that it never
    /// takes a key the person types.
    pub fn parse(text: &str) -> Result<Self, X11Error> {
        let bad = |why: &str| {
            X11Error::Option(format!(
                "kill switch {text:?}: {why} (e.g. ctrl+alt+Escape)"
            ))
        };
        let mut modifiers = 0;
        let mut keysym = None;
        for part in text.split('+') {
            modifiers |= match part.trim().to_ascii_lowercase().as_str() {
                "ctrl" | "control" => modifier::CTRL,
                "alt" => modifier::ALT,
                "shift" => modifier::SHIFT,
                "super" | "meta" => modifier::SUPER,
                key if keysym.is_none() => {
                    keysym = Some(key_keysym(key).ok_or_else(|| bad("unknown key"))?);
                    continue;
                }
                _ => return Err(bad("more than one key")),
            };
        }
        let keysym = keysym.ok_or_else(|| bad("no key"))?;
        if modifiers & !modifier::SHIFT == 0 {
            return Err(bad("a chord needs ctrl, alt or super"));
        }
        Ok(Self { modifiers, keysym })
    }
}

fn key_keysym(key: &str) -> Option<u32> {
    match key {
        "escape" | "esc" => return Some(0xff1b),
        "pause" => return Some(0xff13),
        _ => {}
    }
    if let Some(n) = key.strip_prefix('f').and_then(|n| n.parse::<u32>().ok()) {
        // XK_F1 = 0xffbe.
        return (1..=12).contains(&n).then_some(0xffbd + n);
    }
    let mut chars = key.chars();
    match (chars.next(), chars.next()) {
        (Some(c), None) if c.is_ascii_alphanumeric() => Some(u32::from(c)),
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
}

/// The kill-switch hotkey of a running backend. Clones share it.
#[derive(Debug, Clone)]
pub struct KillSwitchHotkey(Arc<(Mutex<State>, Condvar)>);

impl KillSwitchHotkey {
    /// The hotkey `text` names.
    pub fn new(text: &str) -> Result<Self, X11Error> {
        let chord = Chord::parse(text)?;
        Ok(Self(Arc::new((
            Mutex::new(State {
                text: text.to_owned(),
                chord,
                asked: None,
                answered: None,
                next: 1,
                watched: false,
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
    pub fn change(&self, text: &str) -> Result<(), X11Error> {
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
            Some((m, Err(why))) if *m == n => Err(X11Error::Request(format!(
                "the kill switch {text:?} could not be grabbed ({why}); {:?} stays",
                state.text
            ))),
            _ => Err(X11Error::Request(format!(
                "the hand-back watcher did not answer; the kill switch stays {:?}",
                state.text
            ))),
        }
    }

    /// For the watcher: the chord to grab at its start (from then on
    /// changes wait for its answer).
    #[cfg(target_os = "linux")]
    pub(crate) fn watch(&self) -> Chord {
        let mut state = self.state();
        state.watched = true;
        state.chord.clone()
    }

    /// For the watcher: a change to grab, if one was asked for.
    #[cfg(target_os = "linux")]
    pub(crate) fn asked(&self) -> Option<(u64, Chord)> {
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
    #[cfg(target_os = "linux")]
    pub(crate) fn answer(&self, n: u64, grabbed: Result<(), String>) -> bool {
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

    /// For the watcher when it stops: changes no longer wait.
    #[cfg(target_os = "linux")]
    pub(crate) fn unwatch(&self) {
        self.state().watched = false;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chords() {
        let default = Chord::parse("ctrl+alt+Escape").expect("the default");
        assert_eq!(default.keysym, 0xff1b);
        assert_eq!(default.modifiers, modifier::CTRL | modifier::ALT);
        assert_eq!(Chord::parse("Alt+Ctrl+escape").ok(), Some(default));
        assert_eq!(Chord::parse("super+F12").expect("f12").keysym, 0xffc9);
        assert_eq!(
            Chord::parse("ctrl+shift+k").map(|k| k.keysym).ok(),
            Some(u32::from('k'))
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
}
