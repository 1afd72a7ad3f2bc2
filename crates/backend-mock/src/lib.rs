//! An in-memory desktop for unit and contract tests: a framebuffer, a
//! pointer, pressed buttons and keys, a log of every input event and
//! configurable monitors. Deterministic; needs no display.

pub mod accessibility;
mod apps;
mod clipboard;
mod takeover;

use std::sync::{Arc, Mutex, MutexGuard};

use deskhand_backend::{
    AppEntry, Backend, BackendError, Button, Capture, Displays, Input, Key, LaunchTarget, Monitor,
    NativeWindow, Permissions, Point, ProcessInfo, Rect, ScrollDirection, Windows,
};
use deskhand_backend::{Bitmap, CursorImage};
use deskhand_protocol::messages::PermissionStatus;

pub use accessibility::MockAccessibility;
pub use clipboard::MockClipboard;
pub use takeover::{MockIndicator, MockIndicatorState, MockWatcher};

/// One input event the mock received.
#[derive(Debug, Clone, PartialEq)]
pub enum Event {
    /// Pointer moved.
    Move(Point),
    /// Button pressed (`true`) or released.
    Button(Button, bool),
    /// Key pressed (`true`) or released.
    Key(Key, bool),
    /// Text typed.
    Text(String),
    /// Wheel turned.
    Scroll(ScrollDirection, u32),
    /// Ctrl+V pasted the clipboard's text.
    Paste(String),
}

/// The mock desktop's state, shared between the backend and the test.
#[derive(Debug)]
pub struct MockState {
    /// Monitors, as DISPLAY_INFO reports them.
    pub monitors: Vec<Monitor>,
    /// Width of the framebuffer (bounding box of the monitors).
    pub width: u32,
    /// Height of the framebuffer.
    pub height: u32,
    /// BGRX pixels, `width * height * 4`.
    pub pixels: Vec<u8>,
    /// Pointer position.
    pub pointer: Point,
    /// Buttons held down.
    pub buttons: Vec<Button>,
    /// Keys held down.
    pub keys: Vec<Key>,
    /// Every input event, in order.
    pub events: Vec<Event>,
    /// When set, the next input call fails (to test release on error).
    pub fail_next_input: bool,
    /// Top-level windows, bottom of the stack first.
    pub windows: Vec<NativeWindow>,
    /// Running processes.
    pub processes: Vec<ProcessInfo>,
    /// Every launch: target and arguments.
    pub launches: Vec<(LaunchTarget, Vec<String>)>,
    /// Installed applications: the program each entry names, and the
    /// entry (by default a calculator that opens files and an xterm).
    pub entries: Vec<(String, AppEntry)>,
    /// Permission states; names not here are unknown.
    pub permissions: Vec<(&'static str, PermissionStatus)>,
    /// The clipboard.
    pub clipboard: MockClipboard,
    /// The takeover indicator.
    pub indicator: MockIndicatorState,
    /// The person acts once this many characters were typed.
    pub person_after_chars: Option<(usize, deskhand_backend::WatchedInput)>,
}

impl MockState {
    /// Paints a rectangle with an RGB colour.
    pub fn fill(&mut self, rect: Rect, rgb: [u8; 3]) {
        for y in rect.y.max(0)..(rect.bottom() as i32).min(self.height as i32) {
            for x in rect.x.max(0)..(rect.right() as i32).min(self.width as i32) {
                let i = (y as usize * self.width as usize + x as usize) * 4;
                self.pixels[i..i + 4].copy_from_slice(&[rgb[2], rgb[1], rgb[0], 0]);
            }
        }
    }

    /// The text typed so far.
    pub fn typed(&self) -> String {
        self.events
            .iter()
            .filter_map(|e| match e {
                Event::Text(t) => Some(t.as_str()),
                _ => None,
            })
            .collect()
    }
}

/// A handle on the mock desktop: build the backend from it, inspect it
/// from the test.
#[derive(Clone)]
pub struct MockDesktop {
    state: Arc<Mutex<MockState>>,
    hooks: takeover::SharedHooks,
}

impl std::fmt::Debug for MockDesktop {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MockDesktop")
            .field("state", &self.state)
            .finish()
    }
}

impl MockDesktop {
    /// One 1920×1080 display.
    pub fn new() -> Self {
        Self::with_monitors(vec![monitor(
            0,
            "MOCK0",
            true,
            Rect::new(0, 0, 1920, 1080),
            1.0,
        )])
    }

    /// The given displays; the framebuffer spans their bounding box.
    pub fn with_monitors(monitors: Vec<Monitor>) -> Self {
        let width = monitors.iter().map(|m| m.rect.right()).max().unwrap_or(1) as u32;
        let height = monitors.iter().map(|m| m.rect.bottom()).max().unwrap_or(1) as u32;
        let state = MockState {
            monitors,
            width,
            height,
            pixels: vec![0; width as usize * height as usize * 4],
            pointer: Point::new(0, 0),
            buttons: Vec::new(),
            keys: Vec::new(),
            events: Vec::new(),
            fail_next_input: false,
            windows: Vec::new(),
            processes: Vec::new(),
            launches: Vec::new(),
            entries: apps::installed(),
            permissions: vec![
                ("screen_recording", PermissionStatus::Granted),
                ("accessibility", PermissionStatus::Denied),
            ],
            clipboard: MockClipboard::default(),
            indicator: MockIndicatorState::default(),
            person_after_chars: None,
        };
        Self {
            state: Arc::new(Mutex::new(state)),
            hooks: Default::default(),
        }
    }

    /// Locks the state for inspection or changes.
    pub fn state(&self) -> MutexGuard<'_, MockState> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// A backend over this desktop, with capture and input.
    pub fn backend(&self) -> Backend {
        Backend {
            name: "mock",
            // A Linux desktop's (xterm, `.desktop` entries).
            policy: &deskhand_backend_linux::LINUX,
            displays: Box::new(self.clone()),
            capture: Some(Box::new(self.clone())),
            input: Some(Box::new(self.clone())),
            windows: Some(Box::new(self.clone())),
            apps: Some(Box::new(self.clone())),
            permissions: Some(Box::new(self.clone())),
            clipboard: Some(Arc::new(self.clone())),
            indicator: Some(Box::new(MockIndicator(self.clone()))),
            watcher: Some(Box::new(MockWatcher(self.clone()))),
            accessibility: None,
            status_place: None,
        }
    }

    /// A backend without input (like a capture-only session).
    pub fn backend_without_input(&self) -> Backend {
        Backend {
            input: None,
            ..self.backend()
        }
    }
}

impl Default for MockDesktop {
    fn default() -> Self {
        Self::new()
    }
}

/// Shorthand to build a monitor.
pub fn monitor(index: u32, name: &str, primary: bool, rect: Rect, scale: f64) -> Monitor {
    Monitor {
        index,
        name: name.to_owned(),
        primary,
        rect,
        scale,
    }
}

/// Shorthand to build a window.
pub fn window(id: u64, pid: u32, class: &str, title: &str, rect: Rect) -> NativeWindow {
    NativeWindow {
        id,
        pid: Some(pid),
        class: class.to_owned(),
        instance: class.to_ascii_lowercase(),
        title: title.to_owned(),
        rect,
        focused: false,
        minimized: false,
        fullscreen: false,
        surface_origin: None,
    }
}

impl Windows for MockDesktop {
    fn list(&mut self) -> Result<Vec<NativeWindow>, BackendError> {
        Ok(self.state().windows.clone())
    }

    /// Focuses `id`; raising moves it to the top of the stack.
    fn focus(&mut self, id: u64, raise: bool) -> Result<(), BackendError> {
        let mut s = self.state();
        let Some(pos) = s.windows.iter().position(|w| w.id == id) else {
            return Err(BackendError::Failed(format!("no window {id}")));
        };
        for w in &mut s.windows {
            w.focused = w.id == id;
        }
        if raise {
            let w = s.windows.remove(pos);
            s.windows.push(w);
        }
        Ok(())
    }
}

impl Permissions for MockDesktop {
    fn known(&self) -> Vec<&'static str> {
        self.state().permissions.iter().map(|(n, _)| *n).collect()
    }

    fn check(&mut self, name: &str) -> PermissionStatus {
        self.state()
            .permissions
            .iter()
            .find(|(n, _)| *n == name)
            .map_or(PermissionStatus::Unknown, |(_, s)| *s)
    }
}

impl Displays for MockDesktop {
    fn monitors(&mut self) -> Result<Vec<Monitor>, BackendError> {
        Ok(self.state().monitors.clone())
    }

    fn cursor_position(&mut self) -> Result<Point, BackendError> {
        Ok(self.state().pointer)
    }
}

impl Capture for MockDesktop {
    fn capture(
        &mut self,
        rect: Rect,
        sink: &mut dyn FnMut(&Bitmap<'_>),
    ) -> Result<(), BackendError> {
        let s = self.state();
        if rect.x < 0
            || rect.y < 0
            || rect.right() > i64::from(s.width)
            || rect.bottom() > i64::from(s.height)
        {
            return Err(BackendError::Failed(
                "capture outside the framebuffer".into(),
            ));
        }
        let mut out = Vec::with_capacity(rect.width as usize * rect.height as usize * 4);
        for y in rect.y..rect.bottom() as i32 {
            let start = (y as usize * s.width as usize + rect.x as usize) * 4;
            out.extend_from_slice(&s.pixels[start..start + rect.width as usize * 4]);
        }
        drop(s);
        sink(&Bitmap::bgrx(rect.width, rect.height, &out));
        Ok(())
    }

    fn cursor_image(&mut self) -> Result<Option<CursorImage>, BackendError> {
        let p = self.state().pointer;
        // A 3×3 opaque white square centred on the pointer.
        Ok(Some(CursorImage {
            origin: Point::new(p.x - 1, p.y - 1),
            width: 3,
            height: 3,
            argb: vec![0xffff_ffff; 9],
        }))
    }

    fn supports_cursor(&self) -> bool {
        true
    }
}

impl MockDesktop {
    fn input_event(&self, event: Event) -> Result<(), BackendError> {
        let mut s = self.state();
        if s.fail_next_input {
            s.fail_next_input = false;
            return Err(BackendError::Failed("injected failure".into()));
        }
        match &event {
            Event::Move(p) => s.pointer = *p,
            Event::Button(b, true) if !s.buttons.contains(b) => s.buttons.push(*b),
            Event::Button(b, false) => s.buttons.retain(|x| x != b),
            Event::Key(k, true) if !s.keys.contains(k) => s.keys.push(*k),
            Event::Key(k, false) => s.keys.retain(|x| x != k),
            _ => {}
        }
        s.events.push(event.clone());
        if event == Event::Key(Key::Char('v'), true)
            && s.keys.contains(&Key::Control)
            && let Some(text) = s.clipboard.text.clone()
        {
            s.clipboard.fetches += 1;
            s.events.push(Event::Paste(text));
        }
        Ok(())
    }
}

impl Input for MockDesktop {
    fn move_pointer(&mut self, to: Point) -> Result<(), BackendError> {
        self.input_event(Event::Move(to))
    }

    fn move_pointer_if_within(
        &mut self,
        within: Rect,
        to: Point,
    ) -> Option<Result<Point, BackendError>> {
        let pointer = self.state().pointer;
        if !within.contains(pointer) {
            return Some(Ok(pointer));
        }
        Some(self.input_event(Event::Move(to)).map(|()| to))
    }

    fn button(&mut self, button: Button, press: bool) -> Result<(), BackendError> {
        self.input_event(Event::Button(button, press))
    }

    fn key(&mut self, key: Key, press: bool) -> Result<(), BackendError> {
        self.input_event(Event::Key(key, press))
    }

    fn text(&mut self, text: &str) -> Result<(), BackendError> {
        self.input_event(Event::Text(text.to_owned()))?;
        let person = {
            let mut s = self.state();
            let typed = s
                .events
                .iter()
                .filter(|e| matches!(e, Event::Text(_)))
                .count();
            match s.person_after_chars {
                Some((n, input)) if typed >= n => {
                    s.person_after_chars = None;
                    Some(input)
                }
                _ => None,
            }
        };
        if let Some(input) = person {
            self.person(input);
        }
        Ok(())
    }

    fn scroll(&mut self, direction: ScrollDirection, steps: u32) -> Result<(), BackendError> {
        self.input_event(Event::Scroll(direction, steps))
    }
}
