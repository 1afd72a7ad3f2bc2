//! The pointer as `SendInput` takes it: absolute moves on the virtual
//! desktop in its 0–65535 units, and each button's and wheel's flags.

use deskhand_backend::{Button, Rect, ScrollDirection};

/// `SendInput`'s absolute units for the pixel `x` of a virtual desktop
/// that starts at `origin` and is `size` pixels wide: pixel 0 is 0 and
/// the last pixel 65535, rounded up so that every pixel maps back to
/// itself whether the system rounds the units down or to the nearest.
pub fn absolute(x: i32, origin: i32, size: u32) -> i32 {
    let span = i64::from(size.max(2)) - 1;
    let offset = i64::from(x) - i64::from(origin);
    let units = (offset * 65535 + span - 1).div_euclid(span);
    units.clamp(0, 65535) as i32
}

/// Where `(x, y)` is in `SendInput`'s units on `desktop` (the virtual
/// desktop's rectangle).
pub fn absolute_point(x: i32, y: i32, desktop: Rect) -> (i32, i32) {
    (
        absolute(x, desktop.x, desktop.width),
        absolute(y, desktop.y, desktop.height),
    )
}

/// `MOUSEEVENTF_*` flags and `mouseData`.
pub mod flags {
    /// A move.
    pub const MOVE: u32 = 0x0001;
    /// Left button down.
    pub const LEFTDOWN: u32 = 0x0002;
    /// Left button up.
    pub const LEFTUP: u32 = 0x0004;
    /// Right button down.
    pub const RIGHTDOWN: u32 = 0x0008;
    /// Right button up.
    pub const RIGHTUP: u32 = 0x0010;
    /// Middle button down.
    pub const MIDDLEDOWN: u32 = 0x0020;
    /// Middle button up.
    pub const MIDDLEUP: u32 = 0x0040;
    /// An X button down.
    pub const XDOWN: u32 = 0x0080;
    /// An X button up.
    pub const XUP: u32 = 0x0100;
    /// The vertical wheel.
    pub const WHEEL: u32 = 0x0800;
    /// The horizontal wheel.
    pub const HWHEEL: u32 = 0x1000;
    /// Coordinates on the whole virtual desktop.
    pub const VIRTUALDESK: u32 = 0x4000;
    /// Absolute coordinates.
    pub const ABSOLUTE: u32 = 0x8000;
    /// `XBUTTON1` (Back).
    pub const XBUTTON1: u32 = 1;
    /// `XBUTTON2` (Forward).
    pub const XBUTTON2: u32 = 2;
    /// One notch of the wheel.
    pub const WHEEL_DELTA: i32 = 120;
}

/// The flags and `mouseData` of pressing or releasing `button`.
pub fn button_event(button: Button, press: bool) -> (u32, u32) {
    use flags::*;
    let pick = |down, up| if press { down } else { up };
    match button {
        Button::Left => (pick(LEFTDOWN, LEFTUP), 0),
        Button::Right => (pick(RIGHTDOWN, RIGHTUP), 0),
        Button::Middle => (pick(MIDDLEDOWN, MIDDLEUP), 0),
        Button::Back => (pick(XDOWN, XUP), XBUTTON1),
        Button::Forward => (pick(XDOWN, XUP), XBUTTON2),
    }
}

/// The flags and signed `mouseData` of one notch of the wheel: up and
/// right are positive.
pub fn wheel_event(direction: ScrollDirection) -> (u32, i32) {
    use flags::*;
    match direction {
        ScrollDirection::Up => (WHEEL, WHEEL_DELTA),
        ScrollDirection::Down => (WHEEL, -WHEEL_DELTA),
        ScrollDirection::Right => (HWHEEL, WHEEL_DELTA),
        ScrollDirection::Left => (HWHEEL, -WHEEL_DELTA),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_pixel_maps_back_to_itself() {
        // The system maps units back to units * (size - 1) / 65535,
        // rounded down or to the nearest: each pixel survives either.
        for size in [800u32, 1080, 1280, 2560, 3841] {
            let span = i64::from(size) - 1;
            for x in 0..size as i32 {
                let units = i64::from(absolute(x, 0, size));
                assert_eq!(units * span / 65535, i64::from(x), "{x} of {size}");
                assert_eq!(
                    (units * span + 65535 / 2) / 65535,
                    i64::from(x),
                    "{x} of {size}"
                );
            }
        }
        assert_eq!(absolute(0, 0, 1280), 0);
        assert_eq!(absolute(1279, 0, 1280), 65535);
    }

    #[test]
    fn a_desktop_left_of_the_primary_is_offset() {
        let desktop = Rect {
            x: -1920,
            y: 0,
            width: 3200,
            height: 1080,
        };
        assert_eq!(absolute_point(-1920, 0, desktop), (0, 0));
        assert_eq!(absolute_point(1279, 1079, desktop), (65535, 65535));
        assert_eq!(absolute(-5000, -1920, 3200), 0, "clamped");
    }

    #[test]
    fn buttons_and_wheels() {
        assert_eq!(button_event(Button::Left, true), (flags::LEFTDOWN, 0));
        assert_eq!(
            button_event(Button::Forward, false),
            (flags::XUP, flags::XBUTTON2)
        );
        assert_eq!(wheel_event(ScrollDirection::Down), (flags::WHEEL, -120));
        assert_eq!(wheel_event(ScrollDirection::Left), (flags::HWHEEL, -120));
    }
}
