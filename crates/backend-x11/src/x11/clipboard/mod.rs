//! The CLIPBOARD selection (ICCCM) on a connection of its own, served by
//! one long-lived thread so that what deskhand wrote stays pasteable while
//! the daemon runs.
//!
//! Not arboard (DESIGN.md names it): arboard connects only through
//! `$DISPLAY` (deskhand may start its own display after start-up), serves
//! only `UTF8_STRING` while advertising more, and cannot show the owner's
//! TARGETS, which the concealed-marker check needs.
//!
//! Reads list TARGETS first and refuse (without transferring the text)
//! when `x-kde-passwordManagerHint` is among them, then convert to
//! `UTF8_STRING` (or `text/plain;charset=utf-8`, then `STRING`). The change
//! count grows with every XFixes selection-owner notification.

use std::io::{Read, Write};
use std::os::fd::{AsFd, AsRawFd};
use std::os::unix::net::UnixStream;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use deskhand_backend::{BackendError, Clipboard, ClipboardContent, ClipboardRead};
use x11rb::connection::{Connection, RequestConnection};
use x11rb::protocol::Event;
use x11rb::protocol::xfixes::{self, ConnectionExt as _, SelectionEventMask};
use x11rb::protocol::xproto::{
    Atom, AtomEnum, ConnectionExt as _, CreateWindowAux, EventMask, PropMode, SelectionNotifyEvent,
    SelectionRequestEvent, Timestamp, Window, WindowClass,
};
use x11rb::rust_connection::RustConnection;
use x11rb::wrapper::ConnectionExt as _;
use x11rb::{CURRENT_TIME, NONE};

use super::X11ResultExt;

mod transfer;

/// How long another app gets to answer one conversion.
const ANSWER_TIMEOUT: Duration = Duration::from_secs(2);
/// The marker KDE's clipboard (and password managers following it) set on
/// secrets.
const CONCEALED_MARKER: &str = deskhand_backend_linux::CONCEALED_MIME;

x11rb::atom_manager! {
    Atoms: AtomsCookie {
        CLIPBOARD,
        TARGETS,
        TIMESTAMP,
        MULTIPLE,
        INCR,
        UTF8_STRING,
        TEXT,
        TEXT_PLAIN_UTF8: b"text/plain;charset=utf-8",
        PASSWORD_HINT: b"x-kde-passwordManagerHint",
        DESKHAND_SELECTION: b"_DESKHAND_SELECTION",
        DESKHAND_TIMESTAMP: b"_DESKHAND_TIMESTAMP",
    }
}

type Reply<T> = mpsc::SyncSender<Result<T, BackendError>>;

enum Command {
    Read {
        max_bytes: u64,
        foreign: bool,
        reply: Reply<ClipboardRead>,
    },
    Write(String, Reply<u64>),
    WriteIfUnchanged(u64, String, Reply<bool>),
}

/// Longest a caller waits for the owner thread (two conversions and a
/// timestamp at most).
const CALL_TIMEOUT: Duration = Duration::from_secs(10);

/// The handle the engine holds; the owner thread does the work.
pub(crate) struct X11Clipboard {
    commands: Mutex<mpsc::Sender<Command>>,
    wake: UnixStream,
    fetches: Arc<AtomicU64>,
    thread: Mutex<Option<JoinHandle<()>>>,
}

fn input_only_window(
    conn: &RustConnection,
    root: Window,
    mask: EventMask,
) -> Result<Window, BackendError> {
    let window = conn.generate_id().backend()?;
    conn.create_window(
        0,
        window,
        root,
        -1,
        -1,
        1,
        1,
        0,
        WindowClass::INPUT_ONLY,
        0,
        &CreateWindowAux::new().override_redirect(1).event_mask(mask),
    )
    .backend()?;
    Ok(window)
}

impl X11Clipboard {
    /// Connects to `display` and starts the owner thread.
    pub(crate) fn start(display: &str) -> Result<Self, BackendError> {
        let (conn, screen) = RustConnection::connect(Some(display))
            .map_err(|e| BackendError::DisplayUnavailable(e.to_string()))?;
        let root = conn.setup().roots[screen].root;
        let atoms = Atoms::new(&conn).backend()?.reply().backend()?;
        let window = input_only_window(&conn, root, EventMask::PROPERTY_CHANGE)?;
        let requestor = input_only_window(&conn, root, EventMask::NO_EVENT)?;
        let xfixes = conn
            .extension_information(xfixes::X11_EXTENSION_NAME)
            .backend()?
            .is_some()
            && conn.xfixes_query_version(5, 0).backend()?.reply().is_ok();
        if xfixes {
            conn.xfixes_select_selection_input(
                window,
                atoms.CLIPBOARD,
                SelectionEventMask::SET_SELECTION_OWNER
                    | SelectionEventMask::SELECTION_WINDOW_DESTROY
                    | SelectionEventMask::SELECTION_CLIENT_CLOSE,
            )
            .backend()?;
        }
        conn.flush().backend()?;
        let (wake, wake_rx) =
            UnixStream::pair().map_err(|e| BackendError::Failed(e.to_string()))?;
        wake_rx
            .set_nonblocking(true)
            .map_err(|e| BackendError::Failed(e.to_string()))?;
        let fetches = Arc::new(AtomicU64::new(0));
        let (tx, rx) = mpsc::channel();
        let max_property = conn.maximum_request_bytes().saturating_sub(64);
        let owner = Owner {
            conn,
            root,
            window,
            requestor,
            atoms,
            xfixes,
            text: None,
            owned_since: CURRENT_TIME,
            change_count: 0,
            fetches: fetches.clone(),
            max_property,
        };
        let thread = std::thread::Builder::new()
            .name("deskhand-clipboard".into())
            .spawn(move || owner.run(rx, wake_rx))
            .map_err(|e| BackendError::Failed(e.to_string()))?;
        tracing::debug!(xfixes, "clipboard owner thread started");
        Ok(Self {
            commands: Mutex::new(tx),
            wake,
            fetches,
            thread: Mutex::new(Some(thread)),
        })
    }

    fn call<T>(&self, make: impl FnOnce(Reply<T>) -> Command) -> Result<T, BackendError> {
        let (reply, answer) = mpsc::sync_channel(1);
        let gone = || BackendError::DisplayUnavailable("clipboard thread stopped".into());
        self.commands
            .lock()
            .map_err(|_| gone())?
            .send(make(reply))
            .map_err(|_| gone())?;
        (&self.wake).write_all(&[1]).map_err(|_| gone())?;
        match answer.recv_timeout(CALL_TIMEOUT) {
            Ok(result) => result,
            Err(mpsc::RecvTimeoutError::Timeout) => Err(BackendError::Failed(
                "the clipboard did not answer in time".into(),
            )),
            Err(mpsc::RecvTimeoutError::Disconnected) => Err(gone()),
        }
    }
}

impl Drop for X11Clipboard {
    fn drop(&mut self) {
        // Closing the queue and waking the thread stops it.
        if let Ok(mut tx) = self.commands.lock() {
            *tx = mpsc::channel().0;
        }
        let _ = (&self.wake).write_all(&[0]);
        if let Some(t) = self.thread.lock().ok().and_then(|mut t| t.take()) {
            let _ = t.join();
        }
    }
}

impl Clipboard for X11Clipboard {
    fn read_text(&self, max_bytes: u64, foreign: bool) -> Result<ClipboardRead, BackendError> {
        self.call(|reply| Command::Read {
            max_bytes,
            foreign,
            reply,
        })
    }

    fn write_text(&self, text: &str) -> Result<u64, BackendError> {
        let text = text.to_owned();
        self.call(|r| Command::Write(text, r))
    }

    fn write_if_unchanged(&self, change_count: u64, text: &str) -> Result<bool, BackendError> {
        let text = text.to_owned();
        self.call(|r| Command::WriteIfUnchanged(change_count, text, r))
    }

    fn fetches(&self) -> u64 {
        self.fetches.load(Ordering::SeqCst)
    }
}

/// The owner thread's state.
struct Owner {
    conn: RustConnection,
    root: Window,
    /// Owns the selection and gets server timestamps.
    window: Window,
    /// Receives conversions; replaced after a refused INCR transfer, so
    /// that the abandoned owner cannot write into the next answer.
    requestor: Window,
    atoms: Atoms,
    xfixes: bool,
    /// What deskhand owns the clipboard with, while it does.
    text: Option<String>,
    owned_since: Timestamp,
    change_count: u64,
    fetches: Arc<AtomicU64>,
    /// Largest property one request can set.
    max_property: usize,
}

impl Owner {
    fn run(mut self, commands: mpsc::Receiver<Command>, mut wake: UnixStream) {
        loop {
            // Flush first: x11rb may queue events while it flushes.
            let _ = self.conn.flush();
            if let Err(e) = self.drain_events() {
                tracing::warn!(error = %e, "clipboard connection lost");
                return;
            }
            match commands.try_recv() {
                Ok(cmd) => {
                    self.execute(cmd);
                    continue;
                }
                Err(mpsc::TryRecvError::Disconnected) => return,
                Err(mpsc::TryRecvError::Empty) => {}
            }
            let mut fds = [
                libc::pollfd {
                    fd: self.conn.stream().as_fd().as_raw_fd(),
                    events: libc::POLLIN,
                    revents: 0,
                },
                libc::pollfd {
                    fd: wake.as_raw_fd(),
                    events: libc::POLLIN,
                    revents: 0,
                },
            ];
            // SAFETY: `fds` is a valid array of two pollfd for the call.
            unsafe { libc::poll(fds.as_mut_ptr(), 2, -1) };
            let mut sink = [0u8; 64];
            while matches!(wake.read(&mut sink), Ok(n) if n > 0) {}
        }
    }

    fn execute(&mut self, cmd: Command) {
        match cmd {
            Command::Read {
                max_bytes,
                foreign,
                reply,
            } => {
                let _ = reply.send(self.read(max_bytes, foreign));
            }
            Command::Write(text, reply) => {
                let _ = reply.send(self.write(text));
            }
            Command::WriteIfUnchanged(expected, text, reply) => {
                let result = self.settled_change_count().and_then(|now| {
                    if now == expected {
                        self.write(text).map(|_| true)
                    } else {
                        Ok(false)
                    }
                });
                let _ = reply.send(result);
            }
        }
    }

    fn drain_events(&mut self) -> Result<(), BackendError> {
        while let Some(event) = self.conn.poll_for_event().backend()? {
            self.handle(event)?;
        }
        Ok(())
    }

    /// The change count once every notification the server has sent so far
    /// is in (a round trip, then the queue).
    fn settled_change_count(&mut self) -> Result<u64, BackendError> {
        self.conn.get_input_focus().backend()?.reply().backend()?;
        self.drain_events()?;
        Ok(self.change_count)
    }

    fn handle(&mut self, event: Event) -> Result<(), BackendError> {
        match event {
            Event::SelectionRequest(req) => self.serve(req),
            Event::SelectionClear(e) if e.selection == self.atoms.CLIPBOARD => {
                self.text = None;
                if !self.xfixes {
                    self.change_count += 1;
                }
                Ok(())
            }
            Event::XfixesSelectionNotify(e) if e.selection == self.atoms.CLIPBOARD => {
                self.change_count += 1;
                Ok(())
            }
            _ => Ok(()),
        }
    }

    /// A timestamp from the server (ICCCM: never CurrentTime for owning
    /// or converting).
    fn server_time(&mut self) -> Result<Timestamp, BackendError> {
        let (window, atom) = (self.window, self.atoms.DESKHAND_TIMESTAMP);
        self.conn
            .change_property8(PropMode::APPEND, window, atom, AtomEnum::STRING, &[])
            .backend()?;
        let event = self.wait_for(
            |e| matches!(e, Event::PropertyNotify(p) if p.window == window && p.atom == atom),
        )?;
        match event {
            Some(Event::PropertyNotify(p)) => Ok(p.time),
            _ => Err(BackendError::Failed(
                "the X server sent no timestamp".into(),
            )),
        }
    }

    fn write(&mut self, text: String) -> Result<u64, BackendError> {
        if text.len() > self.max_property {
            return Err(BackendError::Failed(format!(
                "{} bytes do not fit in one X request ({} bytes)",
                text.len(),
                self.max_property
            )));
        }
        let time = self.server_time()?;
        self.conn
            .set_selection_owner(self.window, self.atoms.CLIPBOARD, time)
            .backend()?;
        let owner = self
            .conn
            .get_selection_owner(self.atoms.CLIPBOARD)
            .backend()?
            .reply()
            .backend()?
            .owner;
        if owner != self.window {
            return Err(BackendError::Failed(
                "another client kept the clipboard".into(),
            ));
        }
        self.text = Some(text);
        self.owned_since = time;
        if !self.xfixes {
            self.change_count += 1;
        }
        self.drain_events()?;
        Ok(self.change_count)
    }

    fn read(&mut self, max_bytes: u64, foreign: bool) -> Result<ClipboardRead, BackendError> {
        let change_count = self.settled_change_count()?;
        let content = self.read_content(max_bytes, foreign)?;
        Ok(ClipboardRead {
            content,
            change_count,
        })
    }

    fn read_content(
        &mut self,
        max_bytes: u64,
        foreign: bool,
    ) -> Result<ClipboardContent, BackendError> {
        let a = self.atoms;
        let owner = self
            .conn
            .get_selection_owner(a.CLIPBOARD)
            .backend()?
            .reply()
            .backend()?
            .owner;
        if owner == NONE {
            return Ok(ClipboardContent::NoText);
        }
        if owner == self.window {
            return Ok(match &self.text {
                Some(t) if t.len() as u64 > max_bytes => ClipboardContent::TooLarge {
                    bytes: Some(t.len() as u64),
                },
                Some(t) => ClipboardContent::Text(t.clone()),
                None => ClipboardContent::NoText,
            });
        }
        if !foreign {
            // Nothing of another app's is transferred unless asked for.
            return Ok(ClipboardContent::Foreign);
        }
        let targets = match self.convert(a.TARGETS, 64 * 1024)? {
            Converted::Data(ty, bytes) if ty == u32::from(AtomEnum::ATOM) || ty == a.TARGETS => {
                bytes
                    .chunks_exact(4)
                    .map(|c| u32::from_ne_bytes([c[0], c[1], c[2], c[3]]))
                    .collect::<Vec<Atom>>()
            }
            // Without the owner's list a password manager's marker cannot
            // be ruled out: refuse rather than guess.
            _ => return Ok(ClipboardContent::Unverifiable),
        };
        if targets.contains(&a.PASSWORD_HINT) {
            return Ok(ClipboardContent::Concealed {
                marker: CONCEALED_MARKER,
            });
        }
        let Some(target) = [a.UTF8_STRING, a.TEXT_PLAIN_UTF8, a.STRING_ATOM()]
            .into_iter()
            .find(|t| targets.contains(t))
        else {
            return Ok(ClipboardContent::NoText);
        };
        Ok(match self.convert(target, max_bytes)? {
            Converted::Data(ty, bytes) => ClipboardContent::Text(if ty == a.STRING_ATOM() {
                bytes.iter().map(|&b| char::from(b)).collect()
            } else {
                String::from_utf8_lossy(&bytes).into_owned()
            }),
            Converted::TooLarge(bytes) => ClipboardContent::TooLarge { bytes },
            Converted::Refused => ClipboardContent::NoText,
        })
    }
}

impl Atoms {
    #[allow(non_snake_case)]
    fn STRING_ATOM(&self) -> Atom {
        AtomEnum::STRING.into()
    }
}

/// The outcome of one conversion request.
enum Converted {
    /// The property's type and bytes.
    Data(Atom, Vec<u8>),
    /// More than the limit (the size when known).
    TooLarge(Option<u64>),
    /// The owner refused or did not answer.
    Refused,
}

fn notify_refused(req: &SelectionRequestEvent) -> SelectionNotifyEvent {
    SelectionNotifyEvent {
        response_type: x11rb::protocol::xproto::SELECTION_NOTIFY_EVENT,
        sequence: 0,
        time: req.time,
        requestor: req.requestor,
        selection: req.selection,
        target: req.target,
        property: NONE,
    }
}

fn past(deadline: Instant) -> bool {
    Instant::now() >= deadline
}
