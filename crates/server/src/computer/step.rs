//! The computer adapters' common action: every vendor verb is parsed into
//! a [`Step`] with coordinates in screenshot pixels, and a step becomes engine
//! actions (global desktop pixels) through the session's screenshot.

use std::time::Duration;

use deskhand_engine::action::MAX_WAIT;
use deskhand_engine::keys::{parse_chord, parse_modifier};
use deskhand_engine::shot::ShotPlan;
use deskhand_engine::{Action, Button, EngineError, Key, Point, ScrollDirection};

/// A point in screenshot pixels, as the model sent it.
pub(crate) type Xy = [i64; 2];

/// Longest text one step may type.
const MAX_TEXT_CHARS: usize = 20_000;
/// Most repeats of one key step, and wheel steps of one scroll.
const MAX_REPEAT: u32 = 100;

/// One action of a batch, before mapping.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Step {
    /// A deferred screenshot marker: sends nothing.
    Screenshot,
    /// Wait this long.
    Wait(Duration),
    /// Report where the pointer is, in screenshot pixels.
    CursorPosition,
    /// Return this screenshot region (`[x1, y1, x2, y2]`) at higher detail.
    Zoom([i64; 4]),
    /// Move the pointer.
    Move(Xy),
    /// Click, at the cursor when `at` is absent.
    Click {
        /// Where.
        at: Option<Xy>,
        /// Which button.
        button: Button,
        /// 1..=3.
        count: u8,
        /// Held during the click.
        modifiers: Vec<Key>,
    },
    /// Press (`true`) or release a button, at the cursor when `at` is absent.
    Button {
        /// Where.
        at: Option<Xy>,
        /// Which button.
        button: Button,
        /// Press or release.
        press: bool,
    },
    /// Press at the first point, move through the rest, release.
    Drag {
        /// At least two points.
        path: Vec<Xy>,
        /// Held during the drag.
        modifiers: Vec<Key>,
    },
    /// Turn the wheel, at the cursor when `at` is absent.
    Scroll {
        /// Where.
        at: Option<Xy>,
        /// Which way.
        direction: ScrollDirection,
        /// Wheel steps.
        amount: u32,
        /// Held during the scroll.
        modifiers: Vec<Key>,
    },
    /// Press and release these chords, one after another.
    Keys(Vec<Vec<Key>>),
    /// Hold a chord this long.
    HoldKey {
        /// The chord.
        keys: Vec<Key>,
        /// How long.
        duration: Duration,
    },
    /// Type text.
    Type(String),
}

impl Step {
    /// Its kind, for the person asked to approve it (never its text or
    /// coordinates).
    pub fn name(&self) -> &'static str {
        match self {
            Step::Screenshot => "screenshot",
            Step::Wait(_) => "wait",
            Step::CursorPosition => "cursor_position",
            Step::Zoom(_) => "zoom",
            Step::Move(_) => "move",
            Step::Click { .. } => "click",
            Step::Button { press: true, .. } => "mouse_down",
            Step::Button { press: false, .. } => "mouse_up",
            Step::Drag { .. } => "drag",
            Step::Scroll { .. } => "scroll",
            Step::Keys(_) => "key",
            Step::HoldKey { .. } => "hold_key",
            Step::Type(_) => "type",
        }
    }

    /// Whether the step sends nothing (screenshot, wait, cursor, zoom).
    pub fn is_read(&self) -> bool {
        matches!(
            self,
            Step::Screenshot | Step::Wait(_) | Step::CursorPosition | Step::Zoom(_)
        )
    }

    /// The step's engine actions, its coordinates mapped through `plan`;
    /// the bool says whether any coordinate was mapped.
    pub fn actions(
        &self,
        plan: Option<&ShotPlan>,
        session: &str,
    ) -> Result<(Vec<Action>, bool), EngineError> {
        let map = |p: &Xy| -> Result<Point, EngineError> {
            plan.ok_or_else(|| EngineError::NoShot {
                session: session.to_owned(),
            })?
            .to_global(p[0], p[1])
        };
        let opt = |p: &Option<Xy>| p.as_ref().map(map).transpose();
        let action = match self {
            Step::Screenshot | Step::CursorPosition | Step::Zoom(_) => {
                return Ok((Vec::new(), false));
            }
            Step::Wait(d) => Action::Wait { duration: *d },
            Step::Move(p) => Action::MoveTo(map(p)?),
            Step::Click {
                at,
                button,
                count,
                modifiers,
            } => Action::Click {
                at: opt(at)?,
                button: *button,
                count: *count,
                modifiers: modifiers.clone(),
            },
            Step::Button { at, button, press } => {
                let at = opt(at)?;
                if *press {
                    Action::ButtonDown {
                        at,
                        button: *button,
                    }
                } else {
                    Action::ButtonUp {
                        at,
                        button: *button,
                    }
                }
            }
            Step::Drag { path, modifiers } => Action::Drag {
                path: path.iter().map(map).collect::<Result<_, _>>()?,
                button: Button::Left,
                modifiers: modifiers.clone(),
            },
            Step::Scroll {
                at,
                direction,
                amount,
                modifiers,
            } => Action::Scroll {
                at: opt(at)?,
                direction: *direction,
                amount: *amount,
                modifiers: modifiers.clone(),
            },
            Step::Keys(chords) => {
                let acts = chords
                    .iter()
                    .map(|keys| Action::Key { keys: keys.clone() })
                    .collect();
                return Ok((acts, false));
            }
            Step::HoldKey { keys, duration } => Action::HoldKey {
                keys: keys.clone(),
                duration: *duration,
            },
            Step::Type(text) => Action::Type { text: text.clone() },
        };
        let mapped = !action.points().is_empty();
        Ok((vec![action], mapped))
    }
}

/// Parses one chord (`ctrl+s`, `Return`, `CTRL+SHIFT+P`, `é`).
pub(crate) fn chord(field: &'static str, text: &str) -> Result<Vec<Key>, EngineError> {
    parse_chord(text).map_err(|e| EngineError::invalid(field, format!("{e}: {text:?}")))
}

/// Parses modifiers such as `shift` or `ctrl+shift`, each listed once.
pub(crate) fn modifiers(field: &'static str, names: &[&str]) -> Result<Vec<Key>, EngineError> {
    let mut keys = Vec::new();
    for part in names.iter().flat_map(|n| n.split('+')).map(str::trim) {
        if part.is_empty() {
            continue;
        }
        let key = parse_modifier(part).ok_or_else(|| {
            EngineError::invalid(
                field,
                format!("{part:?} is not a modifier (shift, ctrl, alt, super)"),
            )
        })?;
        if keys.contains(&key) {
            return Err(EngineError::invalid(
                field,
                format!("modifier {part:?} is listed twice"),
            ));
        }
        keys.push(key);
    }
    Ok(keys)
}

/// A duration in seconds, at most [`MAX_WAIT`].
pub(crate) fn seconds(field: &'static str, s: f64) -> Result<Duration, EngineError> {
    if !(s.is_finite() && s >= 0.0) {
        return Err(EngineError::invalid(
            field,
            "must be a non-negative number of seconds",
        ));
    }
    let d = Duration::from_secs_f64(s);
    if d > MAX_WAIT {
        return Err(EngineError::invalid(
            field,
            format!("at most {} s; split longer waits", MAX_WAIT.as_secs()),
        ));
    }
    Ok(d)
}

/// Text to type, bounded.
pub(crate) fn text(field: &'static str, t: &str) -> Result<String, EngineError> {
    if t.chars().count() > MAX_TEXT_CHARS {
        return Err(EngineError::invalid(
            field,
            format!("at most {MAX_TEXT_CHARS} characters per action"),
        ));
    }
    Ok(t.to_owned())
}

/// A repeat or wheel-step count, bounded.
pub(crate) fn count(field: &'static str, n: u64) -> Result<u32, EngineError> {
    u32::try_from(n)
        .ok()
        .filter(|n| *n <= MAX_REPEAT)
        .ok_or_else(|| EngineError::invalid(field, format!("at most {MAX_REPEAT}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn modifiers_are_parsed_once_each() {
        assert_eq!(
            modifiers("text", &["ctrl+shift"]).expect("two"),
            vec![Key::Control, Key::Shift]
        );
        assert!(modifiers("text", &["ctrl", "CTRL"]).is_err(), "twice");
        assert!(modifiers("text", &["a"]).is_err(), "not a modifier");
    }

    #[test]
    fn coordinate_steps_need_a_screenshot() {
        let e = Step::Move([1, 1])
            .actions(None, "s1")
            .expect_err("no screenshot");
        assert!(matches!(e, EngineError::NoShot { session } if session == "s1"));
        let (acts, mapped) = Step::Type("hi".into())
            .actions(None, "s1")
            .expect("no screenshot needed");
        assert_eq!(acts.len(), 1);
        assert!(!mapped);
    }

    #[test]
    fn waits_are_bounded() {
        assert!(seconds("duration", 6.0).is_err());
        assert!(seconds("duration", -1.0).is_err());
        assert_eq!(
            seconds("duration", 0.5).expect("ok"),
            Duration::from_millis(500)
        );
    }
}
