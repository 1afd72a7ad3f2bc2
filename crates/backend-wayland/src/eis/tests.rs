//! The libei client against an EIS server: reis's own server side, run on
//! a socket pair as a compositor would run it behind the portal's
//! `ConnectToEIS`, offering an absolute pointer (one 1280×800 region) and a
//! keyboard with a real XKB keymap, and writing down every event it gets.

use std::io::Write;
use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::net::UnixStream;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use reis::calloop::{EisRequestSource, EisRequestSourceEvent};
use reis::eis;
use reis::enumflags2::BitFlags;
use reis::request::{Connection as EisConnection, Device as EisDevice, EisRequest};

use super::*;

/// What the test asks the server to do.
enum Command {
    Pause,
    Resume,
    Disconnect,
    /// The keyboard's locked modifiers and group change (Caps Lock, a
    /// layout switch).
    Modifiers {
        locked: u32,
        group: u32,
    },
}

struct ServerState {
    log: Arc<Mutex<Vec<String>>>,
    keymap: std::fs::File,
    keymap_size: u32,
    connection: Option<EisConnection>,
    devices: Vec<EisDevice>,
}

impl ServerState {
    fn write(&self, line: String) {
        self.log.lock().expect("log").push(line);
    }

    fn bind(&mut self, seat: &reis::request::Seat) {
        let pointer = seat.add_device(
            Some("pointer"),
            eis::device::DeviceType::Virtual,
            DeviceCapability::PointerAbsolute | DeviceCapability::Button | DeviceCapability::Scroll,
            |d| d.device().region(0, 0, 1280, 800, 1.0),
        );
        let (file, size) = (&self.keymap, self.keymap_size);
        let keyboard = seat.add_device(
            Some("keyboard"),
            eis::device::DeviceType::Virtual,
            DeviceCapability::Keyboard.into(),
            |d| {
                if let Some(k) = d.interface::<eis::Keyboard>() {
                    k.keymap(eis::keyboard::KeymapType::Xkb, size, file.as_fd());
                }
            },
        );
        for d in [&pointer, &keyboard] {
            d.resumed();
        }
        self.devices = vec![pointer, keyboard];
    }

    fn request(&mut self, request: EisRequest) {
        let name = |d: &EisDevice| d.name().unwrap_or("?").to_owned();
        let line = match request {
            EisRequest::Bind(b) => return self.bind(&b.seat),
            EisRequest::DeviceStartEmulating(e) => format!("{}: start", name(&e.device)),
            EisRequest::DeviceStopEmulating(e) => format!("{}: stop", name(&e.device)),
            EisRequest::Frame(e) => format!("{}: frame", name(&e.device)),
            EisRequest::PointerMotionAbsolute(e) => format!(
                "{}: motion {} {}",
                name(&e.device),
                e.dx_absolute,
                e.dy_absolute
            ),
            EisRequest::Button(e) => {
                format!(
                    "{}: button {} {}",
                    name(&e.device),
                    e.button,
                    e.state as u32
                )
            }
            EisRequest::ScrollDiscrete(e) => format!(
                "{}: scroll {} {}",
                name(&e.device),
                e.discrete_dx,
                e.discrete_dy
            ),
            EisRequest::KeyboardKey(e) => {
                format!("{}: key {} {}", name(&e.device), e.key, e.state as u32)
            }
            other => format!("other: {other:?}"),
        };
        self.write(line);
    }

    fn command(&mut self, command: Command) {
        match command {
            Command::Pause => self.devices.iter().for_each(EisDevice::paused),
            Command::Resume => self.devices.iter().for_each(EisDevice::resumed),
            Command::Modifiers { locked, group } => {
                if let (Some(c), Some(k)) = (
                    &self.connection,
                    self.devices
                        .get(1)
                        .and_then(|d| d.interface::<eis::Keyboard>()),
                ) {
                    c.with_next_serial(|serial| k.modifiers(serial, 0, locked, 0, group));
                }
            }
            Command::Disconnect => {
                if let Some(c) = &self.connection {
                    c.disconnected(
                        eis::connection::DisconnectReason::Disconnected,
                        Some("the person stopped sharing"),
                    );
                }
            }
        }
        if let Some(c) = &self.connection {
            let _ = c.flush();
        }
    }
}

/// An EIS server on its own thread, writing down what it gets.
struct Server {
    log: Arc<Mutex<Vec<String>>>,
    commands: calloop::channel::Sender<Command>,
    stop: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Drop for Server {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

impl Server {
    fn start(socket: UnixStream, layout: &str) -> Self {
        static NEXT: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
        let text = keys::layout_text(layout);
        // A file of this server's own: tests run side by side.
        let path = std::env::temp_dir().join(format!(
            "deskhand-eis-keymap-{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        ));
        std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&path)
            .and_then(|mut f| f.write_all(text.as_bytes()))
            .expect("keymap written");
        let keymap = std::fs::File::open(&path).expect("keymap opened");
        let _ = std::fs::remove_file(&path);
        let log = Arc::new(Mutex::new(Vec::new()));
        let stop = Arc::new(AtomicBool::new(false));
        let (commands, received) = calloop::channel::channel();
        let mut state = ServerState {
            log: log.clone(),
            keymap,
            keymap_size: u32::try_from(text.len()).expect("small"),
            connection: None,
            devices: Vec::new(),
        };
        let halt = stop.clone();
        let thread = std::thread::spawn(move || {
            let mut event_loop = calloop::EventLoop::<ServerState>::try_new().expect("loop");
            let context = eis::Context::new(socket).expect("eis context");
            let handle = event_loop.handle();
            handle
                .insert_source(
                    EisRequestSource::new(context, 1),
                    |event, connection, state| {
                        match event {
                            Ok(EisRequestSourceEvent::Connected) => {
                                let _seat = connection.add_seat(Some("seat0"), BitFlags::all());
                                state.connection = Some(connection.clone());
                            }
                            Ok(EisRequestSourceEvent::Request(r)) => state.request(r),
                            Err(e) => state.write(format!("error: {e}")),
                        }
                        let _ = connection.flush();
                        Ok(calloop::PostAction::Continue)
                    },
                )
                .expect("source");
            handle
                .insert_source(received, |event, (), state| {
                    if let calloop::channel::Event::Msg(c) = event {
                        state.command(c);
                    }
                })
                .expect("channel");
            while !halt.load(Ordering::Relaxed) {
                let _ = event_loop.dispatch(Duration::from_millis(10), &mut state);
            }
        });
        Self {
            log,
            commands,
            stop,
            thread: Some(thread),
        }
    }

    /// Waits until the log holds `n` lines (at most 3 s), and takes them.
    fn take(&self, n: usize) -> Vec<String> {
        let end = Instant::now() + Duration::from_secs(3);
        while self.log.lock().expect("log").len() < n && Instant::now() < end {
            std::thread::sleep(Duration::from_millis(5));
        }
        std::mem::take(&mut *self.log.lock().expect("log"))
    }

    fn send(&self, command: Command) {
        self.commands.send(command).expect("server running");
    }
}

fn connected(layout: &str) -> (tokio::runtime::Runtime, Server, Eis) {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .expect("runtime");
    let (ours, theirs) = UnixStream::pair().expect("socket pair");
    let server = Server::start(theirs, layout);
    let eis = rt
        .block_on(Eis::connect(OwnedFd::from(ours)))
        .expect("the client connects and gets resumed devices");
    (rt, server, eis)
}

/// Waits up to 2 s for `what` to hold.
fn eventually(what: impl Fn() -> bool) -> bool {
    let end = Instant::now() + Duration::from_secs(2);
    while !what() && Instant::now() < end {
        std::thread::sleep(Duration::from_millis(5));
    }
    what()
}

#[test]
fn a_click_the_wheel_and_a_shifted_key_reach_the_server_as_evdev_events_in_frames() {
    let (_rt, server, eis) = connected("us");
    eis.motion(100.0, 200.5).expect("inside the region");
    eis.button(0x110, true).expect("press");
    eis.button(0x110, false).expect("release");
    eis.scroll(true, 3).expect("wheel");
    eis.keysym('A' as u32, true).expect("A down");
    eis.keysym('A' as u32, false).expect("A up");
    let expected = [
        "pointer: start",
        "pointer: motion 100 200.5",
        "pointer: frame",
        "pointer: button 272 1",
        "pointer: frame",
        "pointer: button 272 0",
        "pointer: frame",
        "pointer: scroll 0 360",
        "pointer: frame",
        "keyboard: start",
        "keyboard: key 42 1",
        "keyboard: frame",
        "keyboard: key 30 1",
        "keyboard: frame",
        "keyboard: key 30 0",
        "keyboard: frame",
        "keyboard: key 42 0",
        "keyboard: frame",
    ];
    assert_eq!(server.take(expected.len()), expected);
}

#[test]
fn the_layout_the_server_sends_decides_the_keys() {
    let (_rt, server, eis) = connected("de");
    // Text goes by keys only where the layout has them: ö is a key here.
    assert!(eis.has_key(0xf6) && eis.has_key('@' as u32));
    assert!(!eis.has_key(0x100_65e5));
    // On a German keyboard '@' is AltGr+Q and 'y' is where a US 'z' is.
    eis.keysym('@' as u32, true).expect("@ down");
    eis.keysym('@' as u32, false).expect("@ up");
    eis.keysym('y' as u32, true).expect("y down");
    let expected = [
        "keyboard: start",
        "keyboard: key 100 1",
        "keyboard: frame",
        "keyboard: key 16 1",
        "keyboard: frame",
        "keyboard: key 16 0",
        "keyboard: frame",
        "keyboard: key 100 0",
        "keyboard: frame",
        "keyboard: key 44 1",
        "keyboard: frame",
    ];
    assert_eq!(server.take(expected.len()), expected);
}

#[test]
fn a_point_off_the_desktop_or_a_key_the_layout_lacks_sends_nothing() {
    let (_rt, server, eis) = connected("us");
    assert!(!eis.has_key(0xf6), "no ö on a US keyboard");
    let off = eis.motion(1280.0, 10.0).expect_err("right of the region");
    assert!(matches!(off, BackendError::InvalidTarget(_)), "{off:?}");
    let lacking = eis.keysym(0x100_65e5, true).expect_err("日");
    assert!(
        matches!(lacking, BackendError::InvalidTarget(_)),
        "{lacking:?}"
    );
    eis.motion(1279.0, 799.0).expect("the last pixel");
    // Only the last move arrived: the refused ones sent nothing at all.
    assert_eq!(
        server.take(3),
        [
            "pointer: start",
            "pointer: motion 1279 799",
            "pointer: frame"
        ]
    );
}

#[test]
fn a_paused_device_refuses_input_until_resumed_and_a_disconnect_is_said() {
    let (_rt, server, eis) = connected("us");
    eis.button(0x111, true).expect("press");
    eis.button(0x111, false).expect("release");
    assert_eq!(server.take(5).len(), 5);
    let resumed = |eis: &Eis| lock(&eis.devices).held.iter().any(|h| h.resumed);
    server.send(Command::Pause);
    assert!(eventually(|| !resumed(&eis)), "the pause arrives");
    let paused = eis.button(0x110, true).expect_err("paused");
    assert!(paused.to_string().contains("paused"), "{paused}");
    server.send(Command::Resume);
    assert!(eventually(|| resumed(&eis)), "the resume arrives");
    eis.button(0x110, true).expect("press");
    eis.button(0x110, false).expect("release");
    // A resumed device starts emulating again before its events; nothing
    // was sent while it was paused.
    assert_eq!(
        server.take(5),
        [
            "pointer: start",
            "pointer: button 272 1",
            "pointer: frame",
            "pointer: button 272 0",
            "pointer: frame"
        ]
    );
    server.send(Command::Disconnect);
    assert!(eventually(|| {
        eis.button(0x110, true)
            .is_err_and(|e| e.to_string().contains("the person stopped sharing"))
    }));
}

#[test]
fn a_modifier_two_strokes_share_is_let_go_once_and_only_when_both_are_up() {
    let (_rt, server, eis) = connected("us");
    eis.keysym('A' as u32, true).expect("A down");
    eis.keysym('B' as u32, true)
        .expect("B down, Shift already held");
    eis.keysym('A' as u32, false)
        .expect("A up, Shift still held for B");
    eis.keysym('B' as u32, false).expect("B up, then Shift");
    let expected = [
        "keyboard: start",
        "keyboard: key 42 1",
        "keyboard: frame",
        "keyboard: key 30 1",
        "keyboard: frame",
        "keyboard: key 48 1",
        "keyboard: frame",
        "keyboard: key 30 0",
        "keyboard: frame",
        "keyboard: key 48 0",
        "keyboard: frame",
        "keyboard: key 42 0",
        "keyboard: frame",
    ];
    assert_eq!(server.take(expected.len()), expected);
}

#[test]
fn caps_lock_and_the_active_layout_the_server_says_decide_the_keys() {
    let (_rt, server, eis) = connected("us,de");
    // Caps Lock on (Lock is modifier 1), the German layout active.
    server.send(Command::Modifiers {
        locked: 1 << 1,
        group: 1,
    });
    assert!(eventually(|| lock(&eis.devices).locks.group == 1));
    // A capital is then the plain key, and 'y' is QWERTZ's.
    eis.keysym('A' as u32, true).expect("A down");
    eis.keysym('A' as u32, false).expect("A up");
    eis.keysym('y' as u32, true).expect("y down");
    eis.keysym('y' as u32, false).expect("y up");
    let lines = server.take(9);
    let keys: Vec<&str> = lines
        .iter()
        .map(String::as_str)
        .filter(|l| l.contains(" key "))
        .collect();
    // 'y' with Caps Lock on needs Shift to come out small.
    assert_eq!(
        keys,
        [
            "keyboard: key 30 1",
            "keyboard: key 30 0",
            "keyboard: key 42 1",
            "keyboard: key 44 1",
            "keyboard: key 44 0",
            "keyboard: key 42 0"
        ]
    );
}

#[test]
fn dropping_the_connection_lets_go_of_every_key_and_button_held() {
    let (_rt, server, eis) = connected("us");
    eis.keysym('A' as u32, true).expect("A down");
    eis.button(0x110, true).expect("press");
    assert_eq!(server.take(8).len(), 8);
    drop(eis);
    // Three releases in frames, then each device stops emulating.
    let lines = server.take(8);
    for gone in [
        "keyboard: key 30 0",
        "keyboard: key 42 0",
        "pointer: button 272 0",
        "keyboard: stop",
        "pointer: stop",
    ] {
        assert!(lines.iter().any(|l| l == gone), "{gone} in {lines:?}");
    }
}
