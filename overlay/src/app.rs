//! The winit side: one borderless, override-redirect, always-on-top window
//! per monitor, painted with softbuffer, driven by the engine's commands.

use std::collections::HashSet;
use std::num::NonZeroU32;
use std::rc::Rc;

use winit::application::ApplicationHandler;
use winit::dpi::{PhysicalPosition, PhysicalSize};
use winit::event::{ElementState, MouseButton, WindowEvent};
use winit::event_loop::ActiveEventLoop;
use winit::platform::x11::WindowAttributesExtX11;
use winit::raw_window_handle::{HasWindowHandle, RawWindowHandle};
use winit::window::{Window, WindowId, WindowLevel};

use crate::emit;
use deskhand_protocol::geometry::{Point, Rect};
use deskhand_protocol::overlay::{Command, Event};

use crate::paint::{Layout, Press, relative_to};
use crate::x11::{WindowNews, X11Side};

/// What reaches the event loop from the other threads.
#[derive(Debug)]
pub enum UserEvent {
    /// A command line from stdin.
    Command(Command),
    /// stdin closed: the engine is gone.
    StdinClosed,
    /// News from the X watcher.
    News(WindowNews),
}

struct Overlay {
    window: Rc<Window>,
    surface: softbuffer::Surface<Rc<Window>, Rc<Window>>,
    xid: u32,
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
pub struct App {
    x: X11Side,
    layout: Layout,
    windows: Vec<Overlay>,
    phase: Phase,
    cursor: Option<(WindowId, PhysicalPosition<f64>)>,
    armed: Option<Press>,
}

fn xid_of(window: &Window) -> anyhow::Result<u32> {
    match window.window_handle()?.as_raw() {
        RawWindowHandle::Xlib(h) => Ok(h.window as u32),
        RawWindowHandle::Xcb(h) => Ok(h.window.get()),
        other => anyhow::bail!("not an X11 window: {other:?}"),
    }
}

impl App {
    /// An app with nothing shown yet.
    pub fn new(x: X11Side) -> Self {
        Self {
            x,
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
                .with_name("deskhand-overlay", "deskhand-overlay")
                .with_decorations(false)
                .with_resizable(false)
                .with_window_level(WindowLevel::AlwaysOnTop)
                .with_override_redirect(true)
                .with_position(PhysicalPosition::new(m.x, m.y))
                .with_inner_size(PhysicalSize::new(m.width.max(1), m.height.max(1)))
                .with_visible(false);
            let window = Rc::new(event_loop.create_window(attrs)?);
            let context = softbuffer::Context::new(window.clone())
                .map_err(|e| anyhow::anyhow!("softbuffer context: {e}"))?;
            let surface = softbuffer::Surface::new(&context, window.clone())
                .map_err(|e| anyhow::anyhow!("softbuffer surface: {e}"))?;
            let xid = xid_of(&window)?;
            self.x.watch(xid)?;
            self.windows.push(Overlay {
                window,
                surface,
                xid,
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
            self.x.shape(o.xid, &visible, &input)?;
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
        let pending: HashSet<u32> = self.windows.iter().map(|o| o.xid).collect();
        self.phase = Phase::Showing(pending);
        for o in &self.windows {
            o.window.set_visible(true);
        }
        Ok(())
    }

    fn announce_shown(&self) {
        emit(&Event::Shown {
            windows: self.windows.iter().map(|o| o.xid).collect(),
            rects: self.layout.covered(),
        });
    }

    fn hide(&mut self) {
        if matches!(self.phase, Phase::Hidden) || self.windows.is_empty() {
            self.phase = Phase::Hidden;
            emit(&Event::Hidden);
            return;
        }
        self.phase = Phase::Hiding(self.windows.iter().map(|o| o.xid).collect());
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
        let ours = |xid: u32| self.windows.iter().any(|o| o.xid == xid);
        match news {
            WindowNews::Mapped(xid) => {
                if let Phase::Showing(pending) = &mut self.phase {
                    pending.remove(&xid);
                    if pending.is_empty() {
                        self.phase = Phase::Shown;
                        for o in &self.windows {
                            let _ = self.x.raise(o.xid);
                        }
                        self.redraw_all();
                        self.announce_shown();
                    }
                }
            }
            WindowNews::Unmapped(xid) if ours(xid) => match &mut self.phase {
                Phase::Hiding(pending) => {
                    pending.remove(&xid);
                    if pending.is_empty() {
                        self.phase = Phase::Hidden;
                        emit(&Event::Hidden);
                    }
                }
                _ => self.lost("unmapped"),
            },
            WindowNews::Destroyed(xid) if ours(xid) => self.lost("destroyed"),
            WindowNews::Covered(xid) if ours(xid) && self.phase == Phase::Shown => {
                let _ = self.x.raise(xid);
            }
            WindowNews::Restacked(other) if !ours(other) && self.phase == Phase::Shown => {
                for o in &self.windows {
                    let _ = self.x.raise(o.xid);
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
            layout.paint(o.index, &mut buf);
            let _ = buf.present();
        }
    }

    /// A left press and release both on the same button, while paused,
    /// is a click; winit reads XInput 2 device events, so a SendEvent
    /// cannot make one.
    fn mouse(&mut self, id: WindowId, state: ElementState) {
        let on = self.cursor.and_then(|(wid, p)| {
            let o = self
                .windows
                .iter()
                .find(|o| wid == id && o.window.id() == id)?;
            let m = self.layout.monitors[o.index];
            self.layout
                .button_at(Point::new(m.x + p.x as i32, m.y + p.y as i32))
        });
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

impl ApplicationHandler<UserEvent> for App {
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
