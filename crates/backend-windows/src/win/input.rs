//! Synthetic input with `SendInput`, every event tagged with
//! [`TAG`](crate::hooks::TAG) so that the hooks tell it from the
//! person's: keys by virtual key and scan code, text as UTF-16 units
//! (`KEYEVENTF_UNICODE`, surrogate pairs too), the pointer in absolute
//! virtual-desktop units, buttons, both wheels.

use std::ops::ControlFlow;

use deskhand_backend::{BackendError, Button, Input, Key, Point, ScrollDirection, typed_chars};
use windows::Win32::UI::Input::KeyboardAndMouse::{
    INPUT, INPUT_0, INPUT_KEYBOARD, INPUT_MOUSE, KEYBD_EVENT_FLAGS, KEYBDINPUT,
    KEYEVENTF_EXTENDEDKEY, KEYEVENTF_KEYUP, KEYEVENTF_UNICODE, MAPVK_VK_TO_VSC, MOUSE_EVENT_FLAGS,
    MOUSEINPUT, MapVirtualKeyW, SendInput, VIRTUAL_KEY, VkKeyScanW,
};

use windows::Win32::UI::WindowsAndMessaging::SetCursorPos;

use crate::hooks::TAG;
use crate::keys::{Typed, Vk, typed, virtual_key};
use crate::pointer::{absolute_point, button_event, flags, wheel_event};

use super::displays::virtual_desktop;
use super::integrity::Uipi;

/// `SendInput`, with the check of where the input would go.
#[derive(Default)]
pub(crate) struct WinInput {
    uipi: Uipi,
}

/// A keyboard event tagged as deskhand's: `vk` with its scan code, or
/// with `vk` 0 the UTF-16 unit in `scan` (`KEYEVENTF_UNICODE` in `flags`).
fn keyboard_input(vk: u16, scan: u16, mut flags: KEYBD_EVENT_FLAGS, press: bool) -> INPUT {
    if !press {
        flags |= KEYEVENTF_KEYUP;
    }
    INPUT {
        r#type: INPUT_KEYBOARD,
        Anonymous: INPUT_0 {
            ki: KEYBDINPUT {
                wVk: VIRTUAL_KEY(vk),
                wScan: scan,
                dwFlags: flags,
                time: 0,
                dwExtraInfo: TAG,
            },
        },
    }
}

/// The press or release of the key `vk`.
fn key_input(vk: Vk, press: bool) -> INPUT {
    // SAFETY: a plain call.
    let scan = unsafe { MapVirtualKeyW(u32::from(vk.code), MAPVK_VK_TO_VSC) } as u16;
    let flags = match vk.extended {
        true => KEYEVENTF_EXTENDEDKEY,
        false => KEYBD_EVENT_FLAGS(0),
    };
    keyboard_input(vk.code, scan, flags, press)
}

/// The press or release of a UTF-16 unit of text.
fn unit_input(unit: u16, press: bool) -> INPUT {
    keyboard_input(0, unit, KEYEVENTF_UNICODE, press)
}

fn mouse_input(dx: i32, dy: i32, data: i32, flags: u32) -> INPUT {
    INPUT {
        r#type: INPUT_MOUSE,
        Anonymous: INPUT_0 {
            mi: MOUSEINPUT {
                dx,
                dy,
                mouseData: data as u32,
                dwFlags: MOUSE_EVENT_FLAGS(flags),
                time: 0,
                dwExtraInfo: TAG,
            },
        },
    }
}

/// Sends `inputs` as one uninterrupted sequence.
fn send(inputs: &[INPUT]) -> Result<(), BackendError> {
    if inputs.is_empty() {
        return Ok(());
    }
    // SAFETY: a slice of initialized INPUTs and their size.
    let sent = unsafe { SendInput(inputs, std::mem::size_of::<INPUT>() as i32) };
    if sent as usize == inputs.len() {
        return Ok(());
    }
    Err(BackendError::Failed(format!(
        "SendInput sent {sent} of {} events ({}): a window of a higher integrity level than deskhand's, or the secure desktop, may have the input",
        inputs.len(),
        windows::core::Error::from_thread()
    )))
}

/// The virtual key of `key`, asking the keyboard layout for a character
/// no fixed key has.
fn resolve(key: Key) -> Result<Vk, BackendError> {
    if let Some(vk) = virtual_key(key) {
        return Ok(vk);
    }
    let Key::Char(c) = key else {
        return Err(BackendError::InvalidTarget(format!(
            "no key {}",
            key.name()
        )));
    };
    let unit = c.encode_utf16(&mut [0; 2])[0];
    // SAFETY: a plain call.
    let scanned = unsafe { VkKeyScanW(unit) };
    if scanned == -1 || c.len_utf16() != 1 {
        return Err(BackendError::InvalidTarget(format!(
            "no key of this keyboard layout types {c:?}"
        )));
    }
    Ok(Vk {
        code: (scanned as u16) & 0xFF,
        extended: false,
    })
}

/// The events of one character of a text.
fn char_inputs(c: char, out: &mut Vec<INPUT>) {
    match typed(c) {
        Typed::Key(vk) => {
            out.push(key_input(vk, true));
            out.push(key_input(vk, false));
        }
        Typed::Units(units) => {
            for unit in units {
                out.push(unit_input(unit, true));
                out.push(unit_input(unit, false));
            }
        }
    }
}

impl Input for WinInput {
    fn move_pointer(&mut self, to: Point) -> Result<(), BackendError> {
        if super::under_wine() {
            // Wine (8.0) puts the cursor back after an injected move that
            // a low-level mouse hook (deskhand's own, for hand-back) has
            // seen: there the cursor is moved as `SetCursorPos` moves it
            // (not at all when it is there already).
            if super::displays::cursor()? == to {
                return Ok(());
            }
            // No hook hears this move: the watcher must not take it for a
            // sign that its hook went deaf.
            super::watcher::OWN_WARPS.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            // SAFETY: a plain call.
            return unsafe { SetCursorPos(to.x, to.y) }
                .map_err(|e| super::failed("SetCursorPos", e));
        }
        let (x, y) = absolute_point(to.x, to.y, virtual_desktop());
        let f = flags::MOVE | flags::ABSOLUTE | flags::VIRTUALDESK;
        send(&[mouse_input(x, y, 0, f)])
    }

    fn button(&mut self, button: Button, press: bool) -> Result<(), BackendError> {
        // A release is always sent: nothing may stay held.
        if press {
            self.uipi.check()?;
        }
        let (f, data) = button_event(button, press);
        send(&[mouse_input(0, 0, data as i32, f)])
    }

    fn key(&mut self, key: Key, press: bool) -> Result<(), BackendError> {
        if press {
            self.uipi.check()?;
        }
        send(&[key_input(resolve(key)?, press)])
    }

    fn text(&mut self, text: &str) -> Result<(), BackendError> {
        self.uipi.check()?;
        let mut inputs = Vec::with_capacity(text.len() * 2);
        for (_, c) in typed_chars(text) {
            char_inputs(c, &mut inputs);
        }
        send(&inputs)
    }

    fn type_text(
        &mut self,
        text: &str,
        gate: &mut dyn FnMut(usize, usize) -> ControlFlow<()>,
    ) -> Result<(), BackendError> {
        self.uipi.check()?;
        let mut inputs = Vec::with_capacity(4);
        for (i, c) in typed_chars(text) {
            if gate(i, typed(c).presses()).is_break() {
                return Ok(());
            }
            inputs.clear();
            char_inputs(c, &mut inputs);
            send(&inputs)?;
        }
        Ok(())
    }

    fn scroll(&mut self, direction: ScrollDirection, steps: u32) -> Result<(), BackendError> {
        self.uipi.check()?;
        let (f, data) = wheel_event(direction);
        let inputs: Vec<INPUT> = (0..steps).map(|_| mouse_input(0, 0, data, f)).collect();
        send(&inputs)
    }
}
