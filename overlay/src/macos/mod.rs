//! The overlay on macOS, what winit does not do there: each window placed
//! on its display in points (the engine speaks pixels, see [`screens`]),
//! at screen-saver level on every Space, left out of captures, drawn
//! only where the frame, label and buttons are (a layer mask), and
//! click-through except while the pointer is over a button. AppKit makes
//! a window take clicks everywhere or nowhere, so the watcher's thread
//! follows the pointer and turns click-through off over Continue and
//! Stop, on again elsewhere; it also notices a window taken off screen or
//! destroyed (polled, as on Windows).

mod appkit;
pub mod screens;

use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use anyhow::Context;
use appkit::Listed;
use deskhand_overlay::desktop::{Desktop, WindowNews};
use deskhand_protocol::geometry::PointRect;
use deskhand_protocol::geometry::{Point, Rect};
use deskhand_protocol::overlay::{DISPLAYS_ENV, DisplayPlacement, parse_displays};
use winit::dpi::{LogicalPosition, LogicalSize, Position, Size};
use winit::platform::macos::WindowAttributesExtMacOS;
use winit::window::{Window, WindowAttributes};

/// How often the windows and the pointer are read.
const POLL: Duration = Duration::from_millis(15);

/// An adopted window as the watcher last saw it.
#[derive(Debug, Clone)]
struct Watched {
    number: u32,
    screen: DisplayPlacement,
    shown: bool,
    gone: bool,
    /// The buttons on it, in global points (none while not paused).
    buttons: Vec<PointRect>,
    /// The pointer was over a button at the last look.
    over: bool,
}

#[derive(Debug, Default)]
struct Shared {
    screens: Vec<DisplayPlacement>,
    /// The display of the window being made (between `attributes` and
    /// `adopt`, which winit's window creation separates).
    pending: Option<DisplayPlacement>,
    watched: Vec<Watched>,
}

/// The overlay's windows as this process watches them.
#[derive(Clone, Default)]
pub struct MacSide {
    shared: Arc<Mutex<Shared>>,
}

impl MacSide {
    /// The displays as the backend described them in
    /// [`DISPLAYS_ENV`]; without them no window can be placed.
    pub fn from_env() -> Self {
        let screens = parse_displays(&std::env::var(DISPLAYS_ENV).unwrap_or_default());
        if screens.is_empty() {
            // stdout carries the protocol: the note goes to stderr.
            eprintln!(
                "deskhand-overlay: no displays in {}: the frame cannot be placed",
                DISPLAYS_ENV
            );
        }
        Self {
            shared: Arc::new(Mutex::new(Shared {
                screens,
                ..Shared::default()
            })),
        }
    }

    fn lock(&self) -> MutexGuard<'_, Shared> {
        self.shared.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn screen_of_window(&self, id: u32) -> anyhow::Result<DisplayPlacement> {
        self.lock()
            .watched
            .iter()
            .find(|w| w.number == id && !w.gone)
            .map(|w| w.screen)
            .context("not an adopted window")
    }
}

/// Exits once deskhand (the parent) is gone, even when its end of stdin
/// is still held open elsewhere: the parent's pid is looked at now and
/// then (macOS reparents an orphan to launchd).
pub fn exit_with_parent() {
    let parent = std::os::unix::process::parent_id();
    let watch = move || {
        while std::os::unix::process::parent_id() == parent {
            std::thread::sleep(Duration::from_millis(250));
        }
        std::process::exit(0);
    };
    if std::thread::Builder::new()
        .name("parent-watch".into())
        .spawn(watch)
        .is_err()
    {
        eprintln!("deskhand-overlay: cannot watch deskhand; relying on stdin");
    }
}

/// The monitor winit was asked for, in the engine's pixels.
fn requested(attrs: &WindowAttributes) -> Option<Rect> {
    match (attrs.position, attrs.inner_size) {
        (Some(Position::Physical(p)), Some(Size::Physical(s))) => {
            Some(Rect::new(p.x, p.y, s.width, s.height))
        }
        _ => None,
    }
}

/// One poll of window `w`: its news, if any, after turning click-through
/// off while the pointer (`pointer`, global points) is over a button.
fn look(w: &mut Watched, pointer: Option<(f64, f64)>) -> Option<WindowNews> {
    let over = screens::over(&w.buttons, pointer);
    if over != w.over {
        w.over = over;
        appkit::set_click_through_later(w.number, !over);
    }
    match appkit::listed(w.number)? {
        Listed::Gone => {
            w.gone = true;
            Some(WindowNews::Destroyed(w.number))
        }
        Listed::OnScreen(shown) if shown != w.shown => {
            w.shown = shown;
            Some(if shown {
                WindowNews::Mapped(w.number)
            } else {
                // Hidden after a click on Stop, the overlay may still be
                // the active app.
                appkit::give_back_focus_later();
                WindowNews::Unmapped(w.number)
            })
        }
        Listed::OnScreen(_) => None,
    }
}

impl Desktop for MacSide {
    fn attributes(&self, attrs: WindowAttributes) -> WindowAttributes {
        // Transparent (the mask decides what shows), no shadow, shown
        // without taking the keyboard from the person's app.
        let attrs = attrs
            .with_transparent(true)
            .with_has_shadow(false)
            .with_active(false);
        let mut shared = self.lock();
        let screen = requested(&attrs).and_then(|r| screens::screen_of(&shared.screens, r));
        shared.pending = screen;
        match screen {
            Some(s) => attrs
                .with_position(LogicalPosition::new(s.points.x, s.points.y))
                .with_inner_size(LogicalSize::new(s.points.width, s.points.height)),
            None => attrs,
        }
    }

    fn adopt(&self, window: &Window) -> anyhow::Result<u32> {
        let screen = self.lock().pending.take().with_context(|| {
            format!(
                "the monitor is not one of the displays in {} (the display layout changed?)",
                DISPLAYS_ENV
            )
        })?;
        let number = appkit::adopt(window)?;
        let mut shared = self.lock();
        shared.watched.retain(|w| !w.gone);
        shared.watched.push(Watched {
            number,
            screen,
            shown: false,
            gone: false,
            buttons: Vec::new(),
            over: false,
        });
        Ok(number)
    }

    fn shape(
        &self,
        window: &Window,
        id: u32,
        visible: &[Rect],
        input: &[Rect],
    ) -> anyhow::Result<()> {
        let screen = self.screen_of_window(id)?;
        let drawn: Vec<PointRect> = visible
            .iter()
            .chain(input)
            .map(|r| screen.local_points(*r))
            .collect();
        appkit::mask(window, &drawn)?;
        // Click-through until the watcher sees the pointer on a button.
        appkit::set_click_through(id, true);
        if let Some(w) = self.lock().watched.iter_mut().find(|w| w.number == id) {
            w.buttons = input.iter().map(|r| screen.global_points(*r)).collect();
            w.over = false;
        }
        if input.is_empty() {
            appkit::give_back_focus();
        }
        Ok(())
    }

    fn raise(&self, id: u32) -> anyhow::Result<()> {
        appkit::raise(id);
        Ok(())
    }

    fn next(&self) -> WindowNews {
        loop {
            std::thread::sleep(POLL);
            let mut shared = self.lock();
            let buttons = shared.watched.iter().any(|w| !w.buttons.is_empty());
            let pointer = if buttons {
                appkit::pointer_points()
            } else {
                None
            };
            for w in shared.watched.iter_mut().filter(|w| !w.gone) {
                if let Some(news) = look(w, pointer) {
                    return news;
                }
            }
        }
    }

    fn pointer(&self) -> Option<Point> {
        let (x, y) = appkit::pointer_points()?;
        screens::to_pixels(&self.lock().screens, x, y)
    }
}
