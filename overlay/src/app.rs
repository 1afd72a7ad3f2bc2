//! The winit side: one borderless, always-on-top window per monitor,
//! painted with softbuffer, driven by the engine's commands; what the
//! desktop adds (regions, stacking, its watch) through [`Desktop`].

use std::collections::HashSet;
use std::num::NonZeroU32;
use std::rc::Rc;

use winit::application::ApplicationHandler;
use winit::dpi::{PhysicalPosition, PhysicalSize};
use winit::event::{ElementState, MouseButton, WindowEvent};
use winit::event_loop::ActiveEventLoop;
use winit::window::{Window, WindowId, WindowLevel};

use deskhand_protocol::geometry::{Point, Rect};
use deskhand_protocol::overlay::{Command, Event};

use crate::desktop::{Desktop, WindowNews};
use crate::emit;
use crate::paint::{Layout, Press, relative_to};

/// What reaches the event loop from the other threads.
#[derive(Debug)]
pub enum UserEvent {
    /// A command line from stdin.
    Command(Command),
    /// stdin closed: the engine is gone.
    StdinClosed,
    /// News from the desktop's watcher.
    News(WindowNews),
}

struct Overlay {
    window: Rc<Window>,
    surface: softbuffer::Surface<Rc<Window>, Rc<Window>>,
    /// The id the desktop and the engine know the window by.
    id: u32,
    index: usize,
}

#[derive(Debug, PartialEq, Eq)]
enum Phase {
    Hidden,
    Showing(HashSet<u32>),
    Shown,
    Hiding(HashSet<u32>),
}

/// The overlay application.
pub struct App<D> {
    desktop: D,
    layout: Layout,
    windows: Vec<Overlay>,
    phase: Phase,
    cursor: Option<(WindowId, PhysicalPosition<f64>)>,
    armed: Option<Press>,
}

impl<D: Desktop> App<D> {
    /// An app with nothing shown yet.
    pub fn new(desktop: D) -> Self {
        Self {
            desktop,
            layout: Layout {
                monitors: Vec::new(),
                paused: false,
            },
            windows: Vec::new(),
            phase: Phase::Hidden,
            cursor: None,
            armed: None,
        }
    }

    fn create_windows(&mut self, event_loop: &ActiveEventLoop) -> anyhow::Result<()> {
        // Forget the old windows before they are destroyed: their
        // DestroyNotify is ours, not a lost indicator.
        self.windows.clear();
        for (index, m) in self.layout.monitors.iter().enumerate() {
            let attrs = Window::default_attributes()
                .with_title("deskhand takeover")
                .with_decorations(false)
                .with_resizable(false)
                .with_window_level(WindowLevel::AlwaysOnTop)
                // Left out of screen captures where the OS can (not X11,
                // whose backend fills the frame from the windows beneath).
                .with_content_protected(true)
                .with_position(PhysicalPosition::new(m.x, m.y))
                .with_inner_size(PhysicalSize::new(m.width.max(1), m.height.max(1)))
                .with_visible(false);
            let attrs = self.desktop.attributes(attrs);
            let window = Rc::new(event_loop.create_window(attrs)?);
            let context = softbuffer::Context::new(window.clone())
                .map_err(|e| anyhow::anyhow!("softbuffer context: {e}"))?;
            let surface = softbuffer::Surface::new(&context, window.clone())
                .map_err(|e| anyhow::anyhow!("softbuffer surface: {e}"))?;
            let id = self.desktop.adopt(&window)?;
            self.windows.push(Overlay {
                window,
                surface,
                id,
                index,
            });
        }
        Ok(())
    }

    /// Sets every window's visible and input regions from the layout.
    fn reshape(&self) -> anyhow::Result<()> {
        for o in &self.windows {
            let m = self.layout.monitors[o.index];
            let local = |r: Rect| relative_to(&r, m.x, m.y);
            let visible: Vec<Rect> = self
                .layout
                .covered_on(o.index)
                .into_iter()
                .map(local)
                .collect();
            let input: Vec<Rect> = if o.index == 0 {
                self.layout
                    .buttons()
                    .into_iter()
                    .map(|(_, r)| local(r))
                    .collect()
            } else {
                Vec::new()
            };
            self.desktop.shape(&o.window, o.id, &visible, &input)?;
        }
        Ok(())
    }

    fn redraw_all(&self) {
        for o in &self.windows {
            o.window.request_redraw();
        }
    }

    fn show(
        &mut self,
        event_loop: &ActiveEventLoop,
        monitors: Vec<Rect>,
        paused: bool,
    ) -> anyhow::Result<()> {
        let same = self.layout.monitors == monitors && !self.windows.is_empty();
        self.layout = Layout { monitors, paused };
        if !same {
            self.create_windows(event_loop)?;
        }
        self.reshape()?;
        if self.phase == Phase::Shown && same {
            self.redraw_all();
            self.announce_shown();
            return Ok(());
        }
        let pending: HashSet<u32> = self.windows.iter().map(|o| o.id).collect();
        self.phase = Phase::Showing(pending);
        for o in &self.windows {
            o.window.set_visible(true);
        }
        Ok(())
    }

    fn announce_shown(&self) {
        emit(&Event::Shown {
            windows: self.windows.iter().map(|o| o.id).collect(),
            rects: self.layout.covered(),
        });
    }

    fn hide(&mut self) {
        if matches!(self.phase, Phase::Hidden) || self.windows.is_empty() {
            self.phase = Phase::Hidden;
            emit(&Event::Hidden);
            return;
        }
        self.phase = Phase::Hiding(self.windows.iter().map(|o| o.id).collect());
        for o in &self.windows {
            o.window.set_visible(false);
        }
    }

    fn set_paused(&mut self, paused: bool) -> anyhow::Result<()> {
        self.layout.paused = paused;
        self.armed = None;
        self.reshape()?;
        self.redraw_all();
        emit(&Event::Changed {
            paused,
            rects: self.layout.covered(),
        });
        Ok(())
    }

    fn command(&mut self, event_loop: &ActiveEventLoop, cmd: Command) {
        let result = match cmd {
            Command::Show { monitors, paused } => self.show(event_loop, monitors, paused),
            Command::Pause => self.set_paused(true),
            Command::Resume => self.set_paused(false),
            Command::Hide => {
                self.hide();
                Ok(())
            }
            Command::Quit => {
                event_loop.exit();
                Ok(())
            }
        };
        if let Err(e) = result {
            emit(&Event::Error {
                message: format!("{e:#}"),
            });
        }
    }

    fn lost(&mut self, reason: &'static str) {
        if matches!(self.phase, Phase::Shown | Phase::Showing(_)) {
            emit(&Event::Lost {
                reason: reason.into(),
            });
            self.phase = Phase::Hidden;
            for o in &self.windows {
                o.window.set_visible(false);
            }
        }
    }

    fn news(&mut self, event_loop: &ActiveEventLoop, news: WindowNews) {
        let ours = |id: u32| self.windows.iter().any(|o| o.id == id);
        match news {
            WindowNews::Mapped(id) => {
                if let Phase::Showing(pending) = &mut self.phase {
                    pending.remove(&id);
                    if pending.is_empty() {
                        self.phase = Phase::Shown;
                        for o in &self.windows {
                            let _ = self.desktop.raise(o.id);
                        }
                        self.redraw_all();
                        self.announce_shown();
                    }
                }
            }
            WindowNews::Unmapped(id) if ours(id) => match &mut self.phase {
                Phase::Hiding(pending) => {
                    pending.remove(&id);
                    if pending.is_empty() {
                        self.phase = Phase::Hidden;
                        emit(&Event::Hidden);
                    }
                }
                _ => self.lost("unmapped"),
            },
            WindowNews::Destroyed(id) if ours(id) => self.lost("destroyed"),
            WindowNews::Covered(id) if ours(id) && self.phase == Phase::Shown => {
                let _ = self.desktop.raise(id);
            }
            WindowNews::Restacked(other) if !ours(other) && self.phase == Phase::Shown => {
                for o in &self.windows {
                    let _ = self.desktop.raise(o.id);
                }
            }
            WindowNews::Closed => {
                self.lost("display_closed");
                event_loop.exit();
            }
            _ => {}
        }
    }

    fn paint(&mut self, id: WindowId) {
        let layout = &self.layout;
        let Some(o) = self.windows.iter_mut().find(|o| o.window.id() == id) else {
            return;
        };
        let m = layout.monitors[o.index];
        let (Some(w), Some(h)) = (NonZeroU32::new(m.width), NonZeroU32::new(m.height)) else {
            return;
        };
        if o.surface.resize(w, h).is_err() {
            return;
        }
        if let Ok(mut buf) = o.surface.buffer_mut() {
            buf.fill(0);
            crate::paint::paint(layout, o.index, &mut buf);
            let _ = buf.present();
        }
    }

    /// A left press and release both on the same button, while paused,
    /// is a click; it must come from a device (on X11 winit reads XInput 2
    /// device events, which a SendEvent cannot make).
    fn mouse(&mut self, id: WindowId, state: ElementState) {
        let seen = self.cursor.and_then(|(wid, p)| {
            let o = self
                .windows
                .iter()
                .find(|o| wid == id && o.window.id() == id)?;
            let m = self.layout.monitors[o.index];
            Some(Point::new(m.x + p.x as i32, m.y + p.y as i32))
        });
        let on = self
            .desktop
            .pointer()
            .or(seen)
            .and_then(|p| self.layout.button_at(p));
        match state {
            ElementState::Pressed => self.armed = on,
            ElementState::Released => {
                if self.phase == Phase::Shown && on.is_some() && self.armed == on {
                    emit(&match on {
                        Some(Press::Stop) => Event::StopClicked,
                        _ => Event::ContinueClicked,
                    });
                }
                self.armed = None;
            }
        }
    }
}

impl<D: Desktop> ApplicationHandler<UserEvent> for App<D> {
    fn resumed(&mut self, _event_loop: &ActiveEventLoop) {}

    fn user_event(&mut self, event_loop: &ActiveEventLoop, event: UserEvent) {
        match event {
            UserEvent::Command(cmd) => self.command(event_loop, cmd),
            UserEvent::StdinClosed => event_loop.exit(),
            UserEvent::News(news) => self.news(event_loop, news),
        }
    }

    fn window_event(&mut self, _event_loop: &ActiveEventLoop, id: WindowId, event: WindowEvent) {
        match event {
            WindowEvent::RedrawRequested => self.paint(id),
            WindowEvent::CursorMoved { position, .. } => self.cursor = Some((id, position)),
            WindowEvent::CursorLeft { .. } => self.cursor = None,
            WindowEvent::MouseInput {
                state,
                button: MouseButton::Left,
                ..
            } => self.mouse(id, state),
            _ => {}
        }
    }
}
