//! What a low-level hook event (the mouse) or a raw input event (the
//! keyboard) means for hand-back: the person's input or synthetic input.
//! Every event deskhand sends carries [`TAG`] in `dwExtraInfo`; the system
//! marks every synthetic event injected. A press that is neither is the
//! person's, from a real device: it hands control back and may click
//! Continue. Up or down is taken from the message (`wParam`), since Wine
//! leaves `LLKHF_UP` off a Unicode key's release.

use deskhand_backend::WatchedInput;

/// deskhand's mark in `dwExtraInfo` of every event it sends ("DESK").
pub const TAG: usize = 0x4445_534B;

/// `LLMHF_INJECTED` of `MSLLHOOKSTRUCT.flags`.
pub const MOUSE_INJECTED: u32 = 0x1;
/// `LLKHF_INJECTED` of `KBDLLHOOKSTRUCT.flags`.
pub const KEY_INJECTED: u32 = 0x10;

/// The messages a low-level hook receives.
pub mod message {
    /// `WM_KEYDOWN`.
    pub const KEYDOWN: u32 = 0x0100;
    /// `WM_SYSKEYDOWN` (with Alt, or F10).
    pub const SYSKEYDOWN: u32 = 0x0104;
    /// `WM_MOUSEMOVE`.
    pub const MOUSEMOVE: u32 = 0x0200;
    /// `WM_LBUTTONDOWN`.
    pub const LBUTTONDOWN: u32 = 0x0201;
    /// `WM_LBUTTONUP`.
    pub const LBUTTONUP: u32 = 0x0202;
    /// `WM_RBUTTONDOWN`.
    pub const RBUTTONDOWN: u32 = 0x0204;
    /// `WM_MBUTTONDOWN`.
    pub const MBUTTONDOWN: u32 = 0x0207;
    /// `WM_MOUSEWHEEL`.
    pub const MOUSEWHEEL: u32 = 0x020A;
    /// `WM_XBUTTONDOWN`.
    pub const XBUTTONDOWN: u32 = 0x020B;
    /// `WM_MOUSEHWHEEL`.
    pub const MOUSEHWHEEL: u32 = 0x020E;
}

/// Whether an event with these `flags` (of its hook's `injected` bit) and
/// `extra` is synthetic: deskhand's own, or injected by any program.
fn synthetic(flags: u32, injected: u32, extra: usize) -> bool {
    extra == TAG || flags & injected != 0
}

/// What the mouse hook's event `msg` is; `None` for a release.
pub fn mouse(msg: u32, flags: u32, extra: usize) -> Option<WatchedInput> {
    let synthetic = synthetic(flags, MOUSE_INJECTED, extra);
    match msg {
        message::MOUSEMOVE => Some(WatchedInput::Motion { synthetic }),
        message::LBUTTONDOWN
        | message::RBUTTONDOWN
        | message::MBUTTONDOWN
        | message::XBUTTONDOWN => Some(WatchedInput::ButtonPress { synthetic }),
        // A wheel notch, as X11's buttons 4 to 7.
        message::MOUSEWHEEL | message::MOUSEHWHEEL => Some(WatchedInput::WheelTurn { synthetic }),
        _ => None,
    }
}

/// A left-button edge the mouse hook saw from a real device.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RealLeft {
    /// The left button went down.
    Press,
    /// The left button went up.
    Release,
}

/// Whether the mouse hook's event `msg` is a real (neither injected nor
/// deskhand's) left press or release: only those may make a click on the
/// overlay's buttons ([`deskhand_backend::real_click`]).
pub fn real_left(msg: u32, flags: u32, extra: usize) -> Option<RealLeft> {
    if synthetic(flags, MOUSE_INJECTED, extra) {
        return None;
    }
    match msg {
        message::LBUTTONDOWN => Some(RealLeft::Press),
        message::LBUTTONUP => Some(RealLeft::Release),
        _ => None,
    }
}

/// The pointer moved this many times with no mouse event reaching the
/// hook, over at least [`DEAF_AFTER`], before the hook counts as deaf.
pub const DEAF_MOVES: u32 = 3;
/// See [`DEAF_MOVES`].
pub const DEAF_AFTER: std::time::Duration = std::time::Duration::from_millis(500);
/// Reinstalls in a row that did not bring a single mouse event back
/// before the watcher gives up (the takeover then ends: `WatcherLost`).
pub const REINSTALLS_AT_MOST: u32 = 3;

/// Whether the low-level mouse hook still hears the mouse: every move of
/// the pointer comes through it (the person's, deskhand's, another
/// program's `SendInput`), so a pointer that keeps moving while the hook
/// hears nothing means the system no longer calls it. Wine calls only the
/// first hook of the chain and skips it for good once its thread is gone
/// or hung (another program's hook that exited); Windows removes a hook
/// that timed out. Then neither a click in place nor the person's click on
/// Continue is seen.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Hearing {
    /// Where the pointer was last seen.
    pointer: Option<(i32, i32)>,
    /// Moves seen since the hook last heard anything, and when the first was.
    unheard: u32,
    since: Option<std::time::Instant>,
    /// Reinstalls since the hook last heard anything.
    reinstalls: u32,
}

/// What the watcher must do about its hook.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Deafness {
    /// It hears.
    Hears,
    /// It went deaf: set it again (it becomes the first of the chain).
    Reinstall,
    /// Set again and again, it still hears nothing: give up.
    Lost,
}

impl Hearing {
    /// The hook heard a mouse event: where the pointer is next seen is
    /// where that event put it.
    pub fn heard(&mut self) {
        self.pointer = None;
        self.unheard = 0;
        self.since = None;
        self.reinstalls = 0;
    }

    /// The pointer is at `p` at `now` (read with `GetCursorPos`).
    pub fn pointer(&mut self, p: (i32, i32), now: std::time::Instant) -> Deafness {
        let moved = self.pointer.is_some_and(|q| q != p);
        self.pointer = Some(p);
        if !moved {
            return Deafness::Hears;
        }
        self.unheard += 1;
        let since = *self.since.get_or_insert(now);
        if self.unheard < DEAF_MOVES || now.duration_since(since) < DEAF_AFTER {
            return Deafness::Hears;
        }
        self.unheard = 0;
        self.since = None;
        self.reinstalls += 1;
        if self.reinstalls > REINSTALLS_AT_MOST {
            Deafness::Lost
        } else {
            Deafness::Reinstall
        }
    }
}

/// What the keyboard hook's event `msg` is; `None` for a release.
pub fn key(msg: u32, flags: u32, extra: usize) -> Option<WatchedInput> {
    let synthetic = synthetic(flags, KEY_INJECTED, extra);
    matches!(msg, message::KEYDOWN | message::SYSKEYDOWN)
        .then_some(WatchedInput::KeyPress { synthetic })
}

/// `RI_KEY_BREAK` of `RAWKEYBOARD.Flags`: the key went up.
pub const RAW_KEY_BREAK: u16 = 0x1;

/// What a raw keyboard event is; `None` for a release. Raw input carries
/// the sender's `dwExtraInfo` (`ExtraInformation`), and Windows gives
/// injected input no device (`no_device`); Wine gives every event one.
pub fn raw_key(flags: u16, extra: u32, no_device: bool) -> Option<WatchedInput> {
    let synthetic = usize::try_from(extra).is_ok_and(|e| e == TAG) || no_device;
    (flags & RAW_KEY_BREAK == 0).then_some(WatchedInput::KeyPress { synthetic })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_press_neither_tagged_nor_injected_is_the_persons() {
        assert_eq!(
            mouse(message::LBUTTONDOWN, 0, 0),
            Some(WatchedInput::ButtonPress { synthetic: false })
        );
        // A wheel notch hands back but never vouches for Continue.
        assert_eq!(
            mouse(message::MOUSEWHEEL, 0, 0),
            Some(WatchedInput::WheelTurn { synthetic: false })
        );
        assert_eq!(
            key(message::KEYDOWN, 0, 0),
            Some(WatchedInput::KeyPress { synthetic: false })
        );
    }

    #[test]
    fn deskhands_own_and_other_programs_injected_input_is_synthetic() {
        assert_eq!(
            mouse(message::LBUTTONDOWN, MOUSE_INJECTED, TAG),
            Some(WatchedInput::ButtonPress { synthetic: true })
        );
        // Another program's SendInput: never a click on Continue.
        assert_eq!(
            mouse(message::LBUTTONDOWN, MOUSE_INJECTED, 0),
            Some(WatchedInput::ButtonPress { synthetic: true })
        );
        assert_eq!(
            key(message::SYSKEYDOWN, KEY_INJECTED, 7),
            Some(WatchedInput::KeyPress { synthetic: true })
        );
        // The tag alone marks it, whatever the flags say.
        assert_eq!(
            key(message::KEYDOWN, 0, TAG),
            Some(WatchedInput::KeyPress { synthetic: true })
        );
    }

    #[test]
    fn only_a_devices_left_press_and_release_may_click_a_button() {
        assert_eq!(real_left(message::LBUTTONDOWN, 0, 0), Some(RealLeft::Press));
        assert_eq!(real_left(message::LBUTTONUP, 0, 0), Some(RealLeft::Release));
        // Another program's SendInput, and deskhand's own.
        assert_eq!(real_left(message::LBUTTONDOWN, MOUSE_INJECTED, 0), None);
        assert_eq!(real_left(message::LBUTTONUP, MOUSE_INJECTED, 0), None);
        assert_eq!(real_left(message::LBUTTONUP, 0, TAG), None);
        // Other buttons and moves are not left clicks.
        assert_eq!(real_left(message::RBUTTONDOWN, 0, 0), None);
        assert_eq!(real_left(message::MOUSEMOVE, 0, 0), None);
    }

    #[test]
    fn a_pointer_that_keeps_moving_unheard_makes_the_hook_deaf() {
        use std::time::{Duration, Instant};
        let t = Instant::now();
        let at = |ms: u64| t + Duration::from_millis(ms);
        let mut h = Hearing::default();
        assert_eq!(h.pointer((0, 0), at(0)), Deafness::Hears);
        // Moves the hook hears: never deaf.
        for i in 1..20 {
            h.heard();
            assert_eq!(h.pointer((i, i), at(i as u64 * 100)), Deafness::Hears);
        }
        // A pointer standing still proves nothing.
        for i in 0..20 {
            assert_eq!(h.pointer((19, 19), at(2000 + i * 100)), Deafness::Hears);
        }
        // Three moves over half a second, none heard: set the hook again.
        assert_eq!(h.pointer((30, 30), at(5000)), Deafness::Hears);
        assert_eq!(h.pointer((40, 40), at(5100)), Deafness::Hears);
        assert_eq!(h.pointer((50, 50), at(5200)), Deafness::Hears, "too soon");
        assert_eq!(h.pointer((60, 60), at(5600)), Deafness::Reinstall);
    }

    #[test]
    fn a_hook_set_again_that_never_hears_is_given_up_and_one_event_resets_it() {
        use std::time::{Duration, Instant};
        let t = Instant::now();
        let mut h = Hearing::default();
        let mut x = 0;
        // The pointer moving unheard until the hook is judged.
        let mut deaf = |h: &mut Hearing| {
            for _ in 0..10 {
                x += 1;
                match h.pointer((x, 0), t + Duration::from_millis(300 * x as u64)) {
                    Deafness::Hears => {}
                    judged => return judged,
                }
            }
            Deafness::Hears
        };
        let _ = h.pointer((0, 0), t);
        for _ in 0..REINSTALLS_AT_MOST {
            assert_eq!(deaf(&mut h), Deafness::Reinstall);
        }
        let mut again = h.clone();
        assert_eq!(deaf(&mut again), Deafness::Lost);
        // One event heard after a reinstall: it works again.
        h.heard();
        let _ = h.pointer((0, 0), t);
        assert_eq!(deaf(&mut h), Deafness::Reinstall);
    }

    #[test]
    fn a_raw_key_is_deskhands_by_its_tag_and_injected_without_a_device() {
        let tag = TAG as u32;
        assert_eq!(
            raw_key(0, 0, false),
            Some(WatchedInput::KeyPress { synthetic: false })
        );
        assert_eq!(
            raw_key(0, tag, false),
            Some(WatchedInput::KeyPress { synthetic: true })
        );
        assert_eq!(
            raw_key(0, 0, true),
            Some(WatchedInput::KeyPress { synthetic: true })
        );
        assert_eq!(raw_key(RAW_KEY_BREAK, 0, false), None, "a release");
    }

    #[test]
    fn releases_are_not_reported_and_wheels_are_presses() {
        assert_eq!(mouse(0x0202, 0, 0), None, "WM_LBUTTONUP");
        assert_eq!(key(0x0101, 0, 0), None, "WM_KEYUP");
        assert_eq!(
            mouse(message::MOUSEHWHEEL, 0, 0),
            Some(WatchedInput::WheelTurn { synthetic: false })
        );
        assert_eq!(
            mouse(message::MOUSEMOVE, MOUSE_INJECTED, 0),
            Some(WatchedInput::Motion { synthetic: true })
        );
    }
}
