//! The red frame on Wayland compositors that offer the wlr layer shell
//! (KDE Plasma, sway and the other wlroots desktops): one layer surface
//! per monitor on the overlay layer, above every window and panel,
//! drawn in shared memory, transparent but for the frame, taking input
//! only over Continue and Stop. The same commands and events as the
//! winit overlay; no window manager can move, cover or close it, and the
//! compositor says when it is gone.

mod place;

use deskhand_overlay::emit;
use deskhand_overlay::paint::{Layout, Press, relative_to};
use deskhand_protocol::geometry::Rect;
use deskhand_protocol::overlay::{Command, Event};
use smithay_client_toolkit::compositor::{CompositorHandler, CompositorState, Region};
use smithay_client_toolkit::output::{OutputHandler, OutputState};
use smithay_client_toolkit::reexports::calloop::channel::{self, Channel};
use smithay_client_toolkit::reexports::calloop::{EventLoop, LoopHandle};
use smithay_client_toolkit::reexports::calloop_wayland_source::WaylandSource;
use smithay_client_toolkit::reexports::client::globals::registry_queue_init;
use smithay_client_toolkit::reexports::client::protocol::{
    wl_output, wl_pointer, wl_seat, wl_shm, wl_surface,
};
use smithay_client_toolkit::reexports::client::{Connection, QueueHandle};
use smithay_client_toolkit::registry::{ProvidesRegistryState, RegistryState};
use smithay_client_toolkit::seat::pointer::{PointerEvent, PointerEventKind, PointerHandler};
use smithay_client_toolkit::seat::{Capability, SeatHandler, SeatState};
use smithay_client_toolkit::shell::WaylandSurface;
use smithay_client_toolkit::shell::wlr_layer::{
    Anchor, KeyboardInteractivity, Layer, LayerShell, LayerShellHandler, LayerSurface,
    LayerSurfaceConfigure,
};
use smithay_client_toolkit::shm::slot::SlotPool;
use smithay_client_toolkit::shm::{Shm, ShmHandler};
use smithay_client_toolkit::{delegate_registry, registry_handlers};

use place::{Fit, OutputPlace, argb, desktop_point, fit, output_for, surface_rect};
use smithay_client_toolkit::reexports::client::delegate_noop;
use smithay_client_toolkit::reexports::protocols::wp::viewporter::client::{
    wp_viewport::WpViewport, wp_viewporter::WpViewporter,
};

/// The left button's evdev code, as `wl_pointer` reports it.
const BTN_LEFT: u32 = 0x110;

/// One monitor's layer surface.
struct Frame {
    layer: LayerSurface,
    /// The monitor it covers (index into the layout's).
    monitor: usize,
    /// The id the engine knows it by.
    id: u32,
    /// How the monitor's pixels fit the surface.
    fit: Fit,
    /// Scales the buffer to the surface at a fractional output scale.
    viewport: Option<WpViewport>,
    /// Drawn at least once since it was made.
    drawn: bool,
}

impl Drop for Frame {
    /// The viewport goes with its surface (else the compositor keeps it).
    fn drop(&mut self) {
        if let Some(v) = self.viewport.take() {
            v.destroy();
        }
    }
}

struct State {
    registry: RegistryState,
    seats: SeatState,
    outputs: OutputState,
    compositor: CompositorState,
    shell: LayerShell,
    shm: Shm,
    /// For fractional output scales (KDE's 125%, 150%).
    viewporter: Option<WpViewporter>,
    pool: SlotPool,
    qh: QueueHandle<State>,
    pointer: Option<wl_pointer::WlPointer>,
    layout: Layout,
    frames: Vec<Frame>,
    /// A `shown` is owed once every frame is drawn.
    showing: bool,
    next_id: u32,
    armed: Option<Press>,
    exit: bool,
}

/// Runs the layer-shell overlay until stdin closes, `quit` or the
/// compositor goes away.
pub fn run() -> anyhow::Result<()> {
    let conn = Connection::connect_to_env()
        .map_err(|e| anyhow::anyhow!("no Wayland compositor to draw the frame on: {e}"))?;
    let (globals, mut queue) = registry_queue_init::<State>(&conn)?;
    let qh = queue.handle();
    let shell = LayerShell::bind(&globals, &qh).map_err(|e| {
        anyhow::anyhow!("this compositor has no wlr layer shell for the frame: {e}")
    })?;
    let shm = Shm::bind(&globals, &qh)?;
    let pool = SlotPool::new(4 * 1024 * 1024, &shm)?;
    let mut state = State {
        registry: RegistryState::new(&globals),
        seats: SeatState::new(&globals, &qh),
        outputs: OutputState::new(&globals, &qh),
        compositor: CompositorState::bind(&globals, &qh)?,
        shell,
        shm,
        viewporter: globals.bind(&qh, 1..=1, ()).ok(),
        pool,
        qh,
        pointer: None,
        layout: Layout {
            monitors: Vec::new(),
            paused: false,
        },
        frames: Vec::new(),
        showing: false,
        next_id: 1,
        armed: None,
        exit: false,
    };
    // The outputs' places and scales (and the seat) before any `show`.
    queue.roundtrip(&mut state)?;
    queue.roundtrip(&mut state)?;
    let mut event_loop = EventLoop::<State>::try_new()?;
    let handle = event_loop.handle();
    WaylandSource::new(conn.clone(), queue)
        .insert(handle.clone())
        .map_err(|e| anyhow::anyhow!("the Wayland connection in the event loop: {e}"))?;
    commands(&handle)?;
    emit(&Event::Ready);
    while !state.exit {
        if let Err(e) = event_loop.dispatch(None, &mut state) {
            state.lost("display_closed");
            return Err(anyhow::anyhow!("the Wayland connection failed: {e}"));
        }
        if conn.flush().is_err() {
            state.lost("display_closed");
            break;
        }
    }
    Ok(())
}

/// stdin's commands, read on a thread of their own, into the event loop.
fn commands(handle: &LoopHandle<'static, State>) -> anyhow::Result<()> {
    let (tx, rx): (channel::Sender<Option<Command>>, Channel<Option<Command>>) = channel::channel();
    std::thread::spawn(move || deskhand_overlay::read_commands(|cmd| tx.send(cmd).is_ok()));
    handle
        .insert_source(rx, |event, _, state: &mut State| match event {
            channel::Event::Msg(Some(cmd)) => state.command(cmd),
            channel::Event::Msg(None) | channel::Event::Closed => state.exit = true,
        })
        .map_err(|e| anyhow::anyhow!("stdin in the event loop: {e}"))?;
    Ok(())
}

impl State {
    fn command(&mut self, cmd: Command) {
        let result = match cmd {
            Command::Show { monitors, paused } => self.show(monitors, paused),
            Command::Pause => self.set_paused(true),
            Command::Resume => self.set_paused(false),
            Command::Hide => {
                // Dropping a layer surface destroys it: gone at once.
                self.frames.clear();
                self.showing = false;
                emit(&Event::Hidden);
                Ok(())
            }
            Command::Quit => {
                self.exit = true;
                Ok(())
            }
        };
        if let Err(e) = result {
            emit(&Event::Error {
                message: format!("{e:#}"),
            });
        }
    }

    fn show(&mut self, monitors: Vec<Rect>, paused: bool) -> anyhow::Result<()> {
        let same = self.layout.monitors == monitors && !self.frames.is_empty();
        self.layout = Layout { monitors, paused };
        self.armed = None;
        if same {
            // Surfaces not configured yet draw, and say shown, when they are.
            if !self.showing {
                self.redraw_all()?;
                self.announce_shown();
            }
            return Ok(());
        }
        self.frames.clear();
        self.showing = true;
        for i in 0..self.layout.monitors.len() {
            let frame = self.make_frame(i);
            self.frames.push(frame);
        }
        Ok(())
    }

    /// The output that shows monitor `i`, and how the monitor fits it.
    fn placed(&self, i: usize) -> (Option<wl_output::WlOutput>, Fit) {
        let m = self.layout.monitors[i];
        let outputs: Vec<(wl_output::WlOutput, OutputPlace)> = self
            .outputs
            .outputs()
            .map(|o| {
                let info = self.outputs.info(&o);
                let place = OutputPlace {
                    logical_position: info.as_ref().and_then(|i| i.logical_position),
                    logical_size: info.as_ref().and_then(|i| i.logical_size),
                    scale: info.as_ref().map_or(1, |i| i.scale_factor),
                };
                (o, place)
            })
            .collect();
        let places: Vec<OutputPlace> = outputs.iter().map(|(_, p)| *p).collect();
        let chosen = output_for(&places, &m, i).map(|k| &outputs[k]);
        let viewporter = self.viewporter.is_some();
        let fit = chosen.map_or_else(
            || fit(&m, None, 1, viewporter),
            |(_, p)| fit(&m, p.logical_size, p.scale, viewporter),
        );
        (chosen.map(|(o, _)| o.clone()), fit)
    }

    /// Sizes `layer`'s surface for `fit`: its size in units, its buffer
    /// scale, and a viewport (made or reused in `viewport`) where the scale
    /// is fractional.
    fn size(&self, layer: &LayerSurface, fit: &Fit, viewport: &mut Option<WpViewport>) {
        layer.set_size(fit.size.0, fit.size.1);
        layer.wl_surface().set_buffer_scale(fit.buffer_scale);
        match (fit.viewport, self.viewporter.as_ref(), viewport.as_ref()) {
            (true, _, Some(v)) => v.set_destination(fit.size.0 as i32, fit.size.1 as i32),
            (true, Some(viewporter), None) => {
                let v = viewporter.get_viewport(layer.wl_surface(), &self.qh, ());
                v.set_destination(fit.size.0 as i32, fit.size.1 as i32);
                *viewport = Some(v);
            }
            // Unset: the buffer's own size again.
            (false, _, Some(v)) => v.set_destination(-1, -1),
            _ => {}
        }
    }

    /// A layer surface over monitor `i`, on its output, committed without
    /// a buffer: the compositor's configure says when to draw.
    fn make_frame(&mut self, i: usize) -> Frame {
        let (output, fit) = self.placed(i);
        let surface = self.compositor.create_surface(&self.qh);
        let layer = self.shell.create_layer_surface(
            &self.qh,
            surface,
            Layer::Overlay,
            Some("deskhand-frame"),
            output.as_ref(),
        );
        layer.set_anchor(Anchor::TOP | Anchor::LEFT);
        layer.set_exclusive_zone(-1);
        layer.set_keyboard_interactivity(KeyboardInteractivity::None);
        let mut viewport = None;
        self.size(&layer, &fit, &mut viewport);
        let id = self.next_id;
        self.next_id += 1;
        let frame = Frame {
            layer,
            monitor: i,
            id,
            fit,
            viewport,
            drawn: false,
        };
        self.set_input(&frame);
        frame.layer.commit();
        frame
    }

    /// Only Continue and Stop take input (on the first monitor, where
    /// they are); the rest of the surface lets every click through.
    fn set_input(&self, frame: &Frame) {
        let Ok(region) = Region::new(&self.compositor) else {
            return;
        };
        let m = self.layout.monitors[frame.monitor];
        if frame.monitor == 0 {
            for (_, r) in self.layout.buttons() {
                let r = surface_rect(&relative_to(&r, m.x, m.y), frame.fit.factor);
                region.add(r.x, r.y, r.width as i32, r.height as i32);
            }
        }
        frame
            .layer
            .wl_surface()
            .set_input_region(Some(region.wl_region()));
    }

    fn draw(&mut self, k: usize) -> anyhow::Result<()> {
        let frame = &self.frames[k];
        self.set_input(frame);
        let m = self.layout.monitors[frame.monitor];
        let (w, h) = (m.width as i32, m.height as i32);
        let (buffer, canvas) = self
            .pool
            .create_buffer(w, h, w * 4, wl_shm::Format::Argb8888)?;
        argb(&self.layout, frame.monitor, canvas);
        let surface = frame.layer.wl_surface();
        surface.damage_buffer(0, 0, w, h);
        buffer.attach_to(surface)?;
        frame.layer.commit();
        self.frames[k].drawn = true;
        Ok(())
    }

    /// Draws every frame again; one the compositor has not configured yet
    /// may not get a buffer: its configure draws it.
    fn redraw_all(&mut self) -> anyhow::Result<()> {
        for k in 0..self.frames.len() {
            if self.frames[k].drawn {
                self.draw(k)?;
            }
        }
        Ok(())
    }

    fn announce_shown(&self) {
        emit(&Event::Shown {
            windows: self.frames.iter().map(|f| f.id).collect(),
            rects: self.layout.covered(),
        });
    }

    fn set_paused(&mut self, paused: bool) -> anyhow::Result<()> {
        self.layout.paused = paused;
        self.armed = None;
        self.redraw_all()?;
        emit(&Event::Changed {
            paused,
            rects: self.layout.covered(),
        });
        Ok(())
    }

    /// The frame went away without being told to.
    fn lost(&mut self, reason: &str) {
        if !self.frames.is_empty() {
            emit(&Event::Lost {
                reason: reason.into(),
            });
            self.frames.clear();
            self.showing = false;
        }
    }

    /// A left press and release on the same button is a click on it.
    fn button(&mut self, surface: &wl_surface::WlSurface, position: (f64, f64), pressed: bool) {
        let Some(frame) = self.frames.iter().find(|f| f.layer.wl_surface() == surface) else {
            return;
        };
        let m = self.layout.monitors[frame.monitor];
        let on = self
            .layout
            .button_at(desktop_point(&m, frame.fit.factor, position));
        if pressed {
            self.armed = on;
            return;
        }
        if on.is_some() && self.armed == on && !self.showing {
            emit(&match on {
                Some(Press::Stop) => Event::StopClicked,
                _ => Event::ContinueClicked,
            });
        }
        self.armed = None;
    }
}

impl LayerShellHandler for State {
    fn closed(&mut self, _: &Connection, _: &QueueHandle<Self>, _: &LayerSurface) {
        self.lost("destroyed");
    }

    fn configure(
        &mut self,
        _: &Connection,
        _: &QueueHandle<Self>,
        layer: &LayerSurface,
        _: LayerSurfaceConfigure,
        _: u32,
    ) {
        let Some(k) = self.frames.iter().position(|f| &f.layer == layer) else {
            return;
        };
        if let Err(e) = self.draw(k) {
            emit(&Event::Error {
                message: format!("drawing the frame: {e:#}"),
            });
            return;
        }
        if self.showing && self.frames.iter().all(|f| f.drawn) {
            self.showing = false;
            self.announce_shown();
        }
    }
}

impl PointerHandler for State {
    fn pointer_frame(
        &mut self,
        _: &Connection,
        _: &QueueHandle<Self>,
        _: &wl_pointer::WlPointer,
        events: &[PointerEvent],
    ) {
        for event in events {
            match event.kind {
                PointerEventKind::Press { button, .. } if button == BTN_LEFT => {
                    self.button(&event.surface, event.position, true);
                }
                PointerEventKind::Release { button, .. } if button == BTN_LEFT => {
                    self.button(&event.surface, event.position, false);
                }
                PointerEventKind::Leave { .. } => self.armed = None,
                _ => {}
            }
        }
    }
}

impl SeatHandler for State {
    fn seat_state(&mut self) -> &mut SeatState {
        &mut self.seats
    }

    fn new_seat(&mut self, _: &Connection, _: &QueueHandle<Self>, _: wl_seat::WlSeat) {}

    fn new_capability(
        &mut self,
        _: &Connection,
        qh: &QueueHandle<Self>,
        seat: wl_seat::WlSeat,
        capability: Capability,
    ) {
        if capability == Capability::Pointer && self.pointer.is_none() {
            self.pointer = self.seats.get_pointer(qh, &seat).ok();
        }
    }

    fn remove_capability(
        &mut self,
        _: &Connection,
        _: &QueueHandle<Self>,
        _: wl_seat::WlSeat,
        capability: Capability,
    ) {
        if capability == Capability::Pointer
            && let Some(p) = self.pointer.take()
        {
            p.release();
        }
    }

    fn remove_seat(&mut self, _: &Connection, _: &QueueHandle<Self>, _: wl_seat::WlSeat) {}
}

impl CompositorHandler for State {
    fn scale_factor_changed(
        &mut self,
        _: &Connection,
        _: &QueueHandle<Self>,
        _: &wl_surface::WlSurface,
        _: i32,
    ) {
    }

    fn transform_changed(
        &mut self,
        _: &Connection,
        _: &QueueHandle<Self>,
        _: &wl_surface::WlSurface,
        _: wl_output::Transform,
    ) {
    }

    fn frame(&mut self, _: &Connection, _: &QueueHandle<Self>, _: &wl_surface::WlSurface, _: u32) {}

    fn surface_enter(
        &mut self,
        _: &Connection,
        _: &QueueHandle<Self>,
        _: &wl_surface::WlSurface,
        _: &wl_output::WlOutput,
    ) {
    }

    fn surface_leave(
        &mut self,
        _: &Connection,
        _: &QueueHandle<Self>,
        _: &wl_surface::WlSurface,
        _: &wl_output::WlOutput,
    ) {
    }
}

impl OutputHandler for State {
    fn output_state(&mut self) -> &mut OutputState {
        &mut self.outputs
    }

    fn new_output(&mut self, _: &Connection, _: &QueueHandle<Self>, _: wl_output::WlOutput) {}

    /// An output's scale, size or place changed: each frame fits its
    /// output again; the compositor's configure draws it anew.
    fn update_output(&mut self, _: &Connection, _: &QueueHandle<Self>, _: wl_output::WlOutput) {
        for k in 0..self.frames.len() {
            let (_, fit) = self.placed(self.frames[k].monitor);
            if fit == self.frames[k].fit {
                continue;
            }
            let mut viewport = self.frames[k].viewport.take();
            self.size(&self.frames[k].layer, &fit, &mut viewport);
            let frame = &mut self.frames[k];
            frame.viewport = viewport;
            frame.fit = fit;
            self.set_input(&self.frames[k]);
            self.frames[k].layer.commit();
        }
    }

    fn output_destroyed(&mut self, _: &Connection, _: &QueueHandle<Self>, _: wl_output::WlOutput) {}
}

impl ShmHandler for State {
    fn shm_state(&mut self) -> &mut Shm {
        &mut self.shm
    }
}

delegate_registry!(State);
smithay_client_toolkit::delegate_dispatch2!(State);

impl ProvidesRegistryState for State {
    fn registry(&mut self) -> &mut RegistryState {
        &mut self.registry
    }
    registry_handlers![OutputState, SeatState];
}

delegate_noop!(State: ignore WpViewporter);
delegate_noop!(State: ignore WpViewport);
