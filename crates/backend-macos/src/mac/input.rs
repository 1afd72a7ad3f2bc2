//! Input: `CGEvent`s from deskhand's private event source, each tagged
//! with [`TAG`] in `EventSourceUserData` so the event tap tells them from
//! the person's, posted at the HID tap. Pointer positions are turned from
//! desktop pixels into global points through the display layout; clicks
//! carry their click count; text is posted as Unicode strings, whatever
//! the keyboard layout; held modifiers flag every later event.

use std::collections::HashSet;
use std::time::Instant;

use deskhand_backend::{BackendError, Button, Input, Key, Point, ScrollDirection, typed_chars};
use objc2_core_foundation::{CFRetained, CGPoint};
use objc2_core_graphics::{
    CGEvent, CGEventField, CGEventFlags, CGEventSource, CGEventSourceStateID, CGEventTapLocation,
    CGEventType, CGMouseButton, CGPreflightPostEventAccess, CGScrollEventUnit,
};

use super::displays::pointer_points;
use super::{SharedLayout, failed};
use crate::clicks::{Clicks, DEFAULT_INTERVAL};
use crate::events::TAG;
use crate::keys::{Held, MacKey, Typed, typed, virtual_key};

/// deskhand's private event source. CoreFoundation objects may be
/// retained and released on any thread, and the source is only used
/// through `&mut MacInput`, one call at a time.
struct Source(CFRetained<CGEventSource>);

// SAFETY: see `Source`: the object is reference-counted thread-safely by
// CoreFoundation and never used from two threads at once.
unsafe impl Send for Source {}

pub(crate) struct MacInput {
    source: Source,
    layout: SharedLayout,
    held: Held,
    buttons: HashSet<u32>,
    clicks: Clicks,
    /// Where deskhand last moved the pointer (points): a click goes there,
    /// since a posted move may not have reached the pointer yet.
    last: Option<CGPoint>,
}

/// The `CGMouseButton` of `b`: Back and Forward are buttons 3 and 4.
fn mouse_button(b: Button) -> CGMouseButton {
    match b {
        Button::Left => CGMouseButton::Left,
        Button::Right => CGMouseButton::Right,
        Button::Middle => CGMouseButton::Center,
        Button::Back => CGMouseButton(3),
        Button::Forward => CGMouseButton(4),
    }
}

/// The event type of pressing or releasing `b`.
fn button_event(b: Button, press: bool) -> CGEventType {
    match (b, press) {
        (Button::Left, true) => CGEventType::LeftMouseDown,
        (Button::Left, false) => CGEventType::LeftMouseUp,
        (Button::Right, true) => CGEventType::RightMouseDown,
        (Button::Right, false) => CGEventType::RightMouseUp,
        (_, true) => CGEventType::OtherMouseDown,
        (_, false) => CGEventType::OtherMouseUp,
    }
}

impl MacInput {
    pub(crate) fn new(layout: SharedLayout) -> Result<Self, BackendError> {
        let source = CGEventSource::new(CGEventSourceStateID::Private)
            .ok_or_else(|| failed("CGEventSourceCreate", "no source"))?;
        // Every event made from the source carries the tag.
        CGEventSource::set_user_data(Some(&source), TAG);
        // The person's own input right after one of deskhand's events is
        // not held back (the default suppresses it for 0.25 s): hand-back
        // sees it at once.
        CGEventSource::set_local_events_suppression_interval(Some(&source), 0.0);
        Ok(Self {
            source: Source(source),
            layout,
            held: Held::default(),
            buttons: HashSet::new(),
            clicks: Clicks::new(DEFAULT_INTERVAL),
            last: None,
        })
    }

    /// Tags `event` (again: the source's user data should already be
    /// there) and posts it at the HID tap. Without the Accessibility
    /// permission macOS drops posted events silently: refused here instead.
    fn post(&self, event: Option<CFRetained<CGEvent>>, call: &str) -> Result<(), BackendError> {
        if !CGPreflightPostEventAccess() {
            return Err(BackendError::Unsupported(
                "macOS drops deskhand's input without the Accessibility permission: allow deskhand in System Settings > Privacy & Security > Accessibility".into(),
            ));
        }
        let event = event.ok_or_else(|| failed(call, "no event"))?;
        CGEvent::set_integer_value_field(Some(&event), CGEventField::EventSourceUserData, TAG);
        CGEvent::post(CGEventTapLocation::HIDEventTap, Some(&event));
        Ok(())
    }

    fn mouse(
        &self,
        kind: CGEventType,
        at: CGPoint,
        button: CGMouseButton,
    ) -> Option<CFRetained<CGEvent>> {
        let event = CGEvent::new_mouse_event(Some(&self.source.0), kind, at, button)?;
        CGEvent::set_flags(Some(&event), CGEventFlags(self.held.flags()));
        Some(event)
    }

    /// A move, or a drag while a button is down.
    fn move_kind(&self) -> (CGEventType, CGMouseButton) {
        if self.buttons.contains(&CGMouseButton::Left.0) {
            (CGEventType::LeftMouseDragged, CGMouseButton::Left)
        } else if self.buttons.contains(&CGMouseButton::Right.0) {
            (CGEventType::RightMouseDragged, CGMouseButton::Right)
        } else if let Some(other) = self.buttons.iter().next() {
            (CGEventType::OtherMouseDragged, CGMouseButton(*other))
        } else {
            (CGEventType::MouseMoved, CGMouseButton::Left)
        }
    }

    /// A key-down or key-up of `code` with `flags`, carrying `units` as
    /// its characters when given.
    fn key_event(
        &self,
        code: u16,
        down: bool,
        flags: u64,
        units: &[u16],
    ) -> Result<(), BackendError> {
        let event = CGEvent::new_keyboard_event(Some(&self.source.0), code, down);
        if let Some(e) = &event {
            CGEvent::set_flags(Some(e), CGEventFlags(flags));
            if !units.is_empty() {
                // SAFETY: the pointer and length describe `units`, which
                // outlives the call; CoreGraphics copies the string.
                unsafe {
                    CGEvent::keyboard_set_unicode_string(Some(e), units.len() as _, units.as_ptr());
                }
            }
        }
        self.post(event, "CGEventCreateKeyboardEvent")
    }

    /// The key that types `c` on the keyboard layout in use (with Shift
    /// when only that way), found by asking CoreGraphics what each key code
    /// types now: a chord's letter goes by the person's layout, not the US
    /// one (on AZERTY the US position of A is Q, and command-A would quit).
    fn layout_key(&self, c: char) -> Option<MacKey> {
        let shifted = [false, true];
        (0u16..0x80).find_map(|code| {
            shifted
                .iter()
                .find(|&&shift| self.types(code, shift) == Some(c))
                .map(|&shift| MacKey { code, shift })
        })
    }

    /// The one character key `code` types now, with Shift or not.
    fn types(&self, code: u16, shift: bool) -> Option<char> {
        let event = CGEvent::new_keyboard_event(Some(&self.source.0), code, true)?;
        let flags = if shift { crate::keys::flag::SHIFT } else { 0 };
        CGEvent::set_flags(Some(&event), CGEventFlags(flags));
        let mut units = [0u16; 4];
        let mut len = 0;
        // SAFETY: `units` holds the 4 units asked for at most, and `len`
        // receives how many were written.
        unsafe {
            CGEvent::keyboard_get_unicode_string(Some(&event), 4, &mut len, units.as_mut_ptr());
        }
        let mut chars = char::decode_utf16(units.iter().take(len as usize).copied());
        match (chars.next(), chars.next()) {
            (Some(Ok(ch)), None) => Some(ch),
            _ => None,
        }
    }

    fn type_char(&self, c: char) -> Result<(), BackendError> {
        match typed(c) {
            Typed::Key(code) => {
                self.key_event(code, true, 0, &[])?;
                self.key_event(code, false, 0, &[])
            }
            Typed::Unicode(units) => {
                self.key_event(0, true, 0, &units)?;
                self.key_event(0, false, 0, &units)
            }
        }
    }
}

impl Input for MacInput {
    fn move_pointer(&mut self, to: Point) -> Result<(), BackendError> {
        let (_, x, y) = self
            .layout
            .current()?
            .to_points(to)
            .ok_or_else(|| BackendError::InvalidTarget(format!("{to:?} is on no display")))?;
        let (kind, button) = self.move_kind();
        let event = self.mouse(kind, CGPoint { x, y }, button);
        self.post(event, "CGEventCreateMouseEvent")?;
        self.last = Some(CGPoint { x, y });
        Ok(())
    }

    fn button(&mut self, button: Button, press: bool) -> Result<(), BackendError> {
        let (x, y) = match self.last {
            Some(p) => (p.x, p.y),
            None => pointer_points()?,
        };
        let at = self
            .layout
            .current()?
            .to_pixels(x, y)
            .unwrap_or(Point::new(0, 0));
        let count = if press {
            self.clicks.press(button, at, Instant::now())
        } else {
            self.clicks.release(button)
        };
        let cg = mouse_button(button);
        let event = self.mouse(button_event(button, press), CGPoint { x, y }, cg);
        if let Some(e) = &event {
            CGEvent::set_integer_value_field(Some(e), CGEventField::MouseEventClickState, count);
        }
        self.post(event, "CGEventCreateMouseEvent")?;
        if press {
            self.buttons.insert(cg.0);
        } else {
            self.buttons.remove(&cg.0);
        }
        Ok(())
    }

    fn key(&mut self, key: Key, press: bool) -> Result<(), BackendError> {
        let found = match key {
            Key::Char(c) => self.layout_key(c).or_else(|| virtual_key(key)),
            _ => virtual_key(key),
        };
        let Some(k) = found else {
            return match key {
                // A character with no key of its own: its string, on a
                // key event of no particular key.
                Key::Char(c) => {
                    let units = c.encode_utf16(&mut [0; 2]).to_vec();
                    self.key_event(0, press, self.held.flags(), &units)
                }
                other => Err(BackendError::Unsupported(format!(
                    "a Mac keyboard has no {} key",
                    other.name()
                ))),
            };
        };
        // The flags after the change, as a keyboard sends them: a
        // modifier's press carries its flag, its release no longer.
        self.held.record(k.code, press);
        let flags = self.held.event_flags(k.code, k.shift);
        self.key_event(k.code, press, flags, &[])
    }

    fn text(&mut self, text: &str) -> Result<(), BackendError> {
        typed_chars(text)
            .into_iter()
            .try_for_each(|(_, c)| self.type_char(c))
    }

    fn scroll(&mut self, direction: ScrollDirection, steps: u32) -> Result<(), BackendError> {
        // Lines: positive is up on the first wheel, left on the second.
        let (vertical, horizontal) = match direction {
            ScrollDirection::Up => (1, 0),
            ScrollDirection::Down => (-1, 0),
            ScrollDirection::Left => (0, 1),
            ScrollDirection::Right => (0, -1),
        };
        for _ in 0..steps {
            let event = CGEvent::new_scroll_wheel_event2(
                Some(&self.source.0),
                CGScrollEventUnit::Line,
                2,
                vertical,
                horizontal,
                0,
            );
            // Held modifiers apply (shift-scroll, command-scroll).
            if let Some(e) = &event {
                CGEvent::set_flags(Some(e), CGEventFlags(self.held.flags()));
            }
            self.post(event, "CGEventCreateScrollWheelEvent2")?;
        }
        Ok(())
    }

    fn release_typing(&mut self) -> Result<(), BackendError> {
        let codes = self.held.held_codes();
        self.held = Held::default();
        codes
            .into_iter()
            .try_for_each(|code| self.key_event(code, false, 0, &[]))
    }
}
