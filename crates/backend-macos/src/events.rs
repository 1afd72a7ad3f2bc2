//! What an event seen by the listen-only event tap means for hand-back
//! and Continue. Every event deskhand posts comes from its private event
//! source with [`TAG`] in `EventSourceUserData` (field 42). An event that
//! carries no tag came from the person or from another program: the HID
//! system's own state (`EventSourceStateID` 1) marks hardware, anything
//! else was posted by some program. Any untagged press hands control
//! back; the engine lets a click on Continue through only when the last
//! button press (any button, never the wheel) was reported as not
//! synthetic. A program can post from a source of the HID state too, so
//! a press counts as the device's only when it also names no posting
//! process (`EventSourceUnixProcessID` 0): where in doubt, hand-back errs
//! towards the person and Continue towards refusing.

use deskhand_backend::WatchedInput;

/// deskhand's mark in `EventSourceUserData` of every event it posts
/// ("DESK").
pub const TAG: i64 = 0x4445_534B;

/// `kCGEventSourceStateHIDSystemState`: the state of the hardware.
pub const HID_SYSTEM_STATE: i64 = 1;

/// The `CGEventType`s the tap listens to.
pub mod kind {
    /// `kCGEventLeftMouseDown`.
    pub const LEFT_MOUSE_DOWN: u32 = 1;
    /// `kCGEventLeftMouseUp`.
    pub const LEFT_MOUSE_UP: u32 = 2;
    /// `kCGEventRightMouseDown`.
    pub const RIGHT_MOUSE_DOWN: u32 = 3;
    /// `kCGEventMouseMoved`.
    pub const MOUSE_MOVED: u32 = 5;
    /// `kCGEventLeftMouseDragged`.
    pub const LEFT_MOUSE_DRAGGED: u32 = 6;
    /// `kCGEventRightMouseDragged`.
    pub const RIGHT_MOUSE_DRAGGED: u32 = 7;
    /// `kCGEventKeyDown`.
    pub const KEY_DOWN: u32 = 10;
    /// `kCGEventKeyUp`.
    pub const KEY_UP: u32 = 11;
    /// `kCGEventFlagsChanged`: a modifier went down or up.
    pub const FLAGS_CHANGED: u32 = 12;
    /// `kCGEventScrollWheel`.
    pub const SCROLL_WHEEL: u32 = 22;
    /// `kCGEventOtherMouseDown`.
    pub const OTHER_MOUSE_DOWN: u32 = 25;
    /// `kCGEventOtherMouseDragged`.
    pub const OTHER_MOUSE_DRAGGED: u32 = 27;
    /// `kCGEventTapDisabledByTimeout`: the system turned the tap off.
    pub const TAP_DISABLED_BY_TIMEOUT: u32 = 0xFFFF_FFFE;
    /// `kCGEventTapDisabledByUserInput`.
    pub const TAP_DISABLED_BY_USER_INPUT: u32 = 0xFFFF_FFFF;
}

/// The event types the tap asks for, as its `CGEventMask`.
pub fn tap_mask() -> u64 {
    use kind::*;
    [
        LEFT_MOUSE_DOWN,
        RIGHT_MOUSE_DOWN,
        OTHER_MOUSE_DOWN,
        MOUSE_MOVED,
        LEFT_MOUSE_DRAGGED,
        RIGHT_MOUSE_DRAGGED,
        OTHER_MOUSE_DRAGGED,
        KEY_DOWN,
        FLAGS_CHANGED,
        SCROLL_WHEEL,
    ]
    .iter()
    .fold(0, |mask, t| mask | (1u64 << t))
}

/// Who sent an event.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    /// deskhand: it carries [`TAG`].
    Deskhand,
    /// The person, on a real device: the HID system's state.
    Hardware,
    /// Another program posted it (its own or the session's state).
    OtherProgram,
}

/// The fields of an event that tell who sent it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EventFields {
    /// `EventSourceUserData` (42).
    pub user_data: i64,
    /// `EventSourceStateID` (45).
    pub source_state: i64,
    /// `EventSourceUnixProcessID` (41): the process that posted it, 0
    /// for the hardware.
    pub source_pid: i64,
}

/// Who sent an event with these fields. The tag decides first: deskhand's
/// events come from a private source, never the HID state.
pub fn source(f: EventFields) -> Source {
    if f.user_data == TAG {
        Source::Deskhand
    } else if f.source_state == HID_SYSTEM_STATE {
        Source::Hardware
    } else {
        Source::OtherProgram
    }
}

/// What the tap should do with an event of type `event`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Seen {
    /// Report it to the watcher.
    Input(WatchedInput),
    /// The system turned the tap off (it was too slow, or secure input
    /// began): turn it on again.
    Reenable,
    /// Nothing the watcher needs (a release).
    Ignore,
}

/// The `CGEventFlags` bits of the modifier keys.
const MODIFIER_BITS: u64 = 0x0001_0000 | 0x0002_0000 | 0x0004_0000 | 0x0008_0000 | 0x0010_0000;

/// Whether a `FlagsChanged` event from `before` to `after` pressed a
/// modifier (a bit came on) rather than released one.
pub fn modifier_pressed(before: u64, after: u64) -> bool {
    (after & !before) & MODIFIER_BITS != 0
}

/// Whether the person's device made the event: the HID system's state,
/// and no posting process (`EventSourceUnixProcessID` 0). Only such
/// events are reported as not synthetic, which is what the engine's
/// Continue rule asks of a click's press.
pub fn from_device(f: EventFields) -> bool {
    source(f) == Source::Hardware && f.source_pid == 0
}

/// What an event of type `event` with `fields` means; `modifier_down`
/// says, for `FlagsChanged`, whether a modifier went down (see
/// [`modifier_pressed`]). Every untagged press hands back, synthetic or
/// not; `synthetic` says whether it could click Continue.
pub fn classify(event: u32, fields: EventFields, modifier_down: bool) -> Seen {
    use kind::*;
    let synthetic = !from_device(fields);
    match event {
        TAP_DISABLED_BY_TIMEOUT | TAP_DISABLED_BY_USER_INPUT => Seen::Reenable,
        MOUSE_MOVED | LEFT_MOUSE_DRAGGED | RIGHT_MOUSE_DRAGGED | OTHER_MOUSE_DRAGGED => {
            Seen::Input(WatchedInput::Motion { synthetic })
        }
        LEFT_MOUSE_DOWN | RIGHT_MOUSE_DOWN | OTHER_MOUSE_DOWN => {
            Seen::Input(WatchedInput::ButtonPress { synthetic })
        }
        // A wheel turn, as X11's buttons 4 to 7: it hands back but never
        // vouches for a click on Continue.
        SCROLL_WHEEL => Seen::Input(WatchedInput::WheelTurn { synthetic }),
        KEY_DOWN => Seen::Input(WatchedInput::KeyPress { synthetic }),
        FLAGS_CHANGED if modifier_down => Seen::Input(WatchedInput::KeyPress { synthetic }),
        _ => Seen::Ignore,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const PERSON: EventFields = EventFields {
        user_data: 0,
        source_state: HID_SYSTEM_STATE,
        source_pid: 0,
    };
    const OURS: EventFields = EventFields {
        user_data: TAG,
        source_state: 0x7f01,
        source_pid: 4242,
    };
    /// Another program's `CGEventPost` from the combined session state.
    const OTHER: EventFields = EventFields {
        user_data: 0,
        source_state: 0,
        source_pid: 777,
    };

    #[test]
    fn the_tag_hardware_and_other_programs_are_told_apart() {
        assert_eq!(source(PERSON), Source::Hardware);
        assert_eq!(source(OURS), Source::Deskhand);
        assert_eq!(source(OTHER), Source::OtherProgram);
        // A private source of another program has a state id of its own.
        let private = EventFields {
            user_data: 7,
            source_state: 0x1234,
            source_pid: 777,
        };
        assert_eq!(source(private), Source::OtherProgram);
        // The tag wins, whatever state it claims.
        let tagged_hid = EventFields {
            user_data: TAG,
            source_state: HID_SYSTEM_STATE,
            source_pid: 4242,
        };
        assert_eq!(source(tagged_hid), Source::Deskhand);
    }

    #[test]
    fn presses_hand_back_and_say_whether_they_are_synthetic() {
        assert_eq!(
            classify(kind::LEFT_MOUSE_DOWN, PERSON, false),
            Seen::Input(WatchedInput::ButtonPress { synthetic: false })
        );
        assert_eq!(
            classify(kind::KEY_DOWN, OURS, false),
            Seen::Input(WatchedInput::KeyPress { synthetic: true })
        );
        assert_eq!(
            classify(kind::SCROLL_WHEEL, OTHER, false),
            Seen::Input(WatchedInput::WheelTurn { synthetic: true })
        );
        assert_eq!(
            classify(kind::LEFT_MOUSE_DRAGGED, PERSON, false),
            Seen::Input(WatchedInput::Motion { synthetic: false })
        );
    }

    #[test]
    fn releases_are_ignored_and_a_disabled_tap_is_turned_back_on() {
        assert_eq!(classify(kind::KEY_UP, PERSON, false), Seen::Ignore);
        assert_eq!(classify(kind::LEFT_MOUSE_UP, PERSON, false), Seen::Ignore);
        assert_eq!(classify(kind::FLAGS_CHANGED, PERSON, false), Seen::Ignore);
        assert_eq!(
            classify(kind::TAP_DISABLED_BY_TIMEOUT, OTHER, false),
            Seen::Reenable
        );
    }

    #[test]
    fn a_modifier_counts_when_it_goes_down() {
        let shift = 0x0002_0000;
        let command = 0x0010_0000;
        assert!(modifier_pressed(0, shift));
        assert!(modifier_pressed(shift, shift | command));
        assert!(!modifier_pressed(shift | command, shift), "a release");
        assert!(!modifier_pressed(0, 0x0080_0000), "the fn bit alone");
        assert_eq!(
            classify(kind::FLAGS_CHANGED, PERSON, true),
            Seen::Input(WatchedInput::KeyPress { synthetic: false })
        );
    }

    #[test]
    fn only_a_device_s_press_is_reported_as_not_synthetic() {
        assert!(from_device(PERSON));
        assert!(!from_device(OURS) && !from_device(OTHER));
        assert_eq!(
            classify(kind::RIGHT_MOUSE_DOWN, PERSON, false),
            Seen::Input(WatchedInput::ButtonPress { synthetic: false })
        );
        // The person's scroll hands back but vouches for no click on
        // Continue.
        assert_eq!(
            classify(kind::SCROLL_WHEEL, PERSON, false),
            Seen::Input(WatchedInput::WheelTurn { synthetic: false })
        );
        // A program posting from a source of the HID state: its press
        // hands back (as synthetic, not in deskhand's log), but it cannot
        // click Continue, which takes only a press the engine saw as not
        // synthetic.
        let posing = EventFields {
            source_pid: 777,
            ..PERSON
        };
        assert_eq!(
            classify(kind::LEFT_MOUSE_DOWN, posing, false),
            Seen::Input(WatchedInput::ButtonPress { synthetic: true })
        );
        assert!(!from_device(posing));
    }

    #[test]
    fn the_mask_holds_the_listened_types() {
        let mask = tap_mask();
        assert_ne!(mask & (1 << kind::KEY_DOWN), 0);
        assert_ne!(mask & (1 << kind::OTHER_MOUSE_DRAGGED), 0);
        assert_eq!(mask & (1 << kind::KEY_UP), 0);
    }
}
