//! The narrow traits a desktop backend implements, one per capability, and
//! the plain types they exchange. Signatures are the same on every OS.

use deskhand_protocol::messages::PermissionStatus;
use thiserror::Error;

use crate::geometry::{Monitor, Point, Rect};
use crate::keys::Key;

/// What went wrong inside a backend.
#[derive(Debug, Error)]
pub enum BackendError {
    /// The display server cannot be reached (connection lost or refused).
    #[error("display unavailable: {0}")]
    DisplayUnavailable(String),
    /// The backend cannot do this on this system.
    #[error("not supported: {0}")]
    Unsupported(String),
    /// A call to the OS failed.
    #[error("{0}")]
    Failed(String),
    /// The desktop is asking the person for a permission this needs (a
    /// portal's dialog); nothing was done, and it may work once they
    /// answer.
    #[error("{0}")]
    Pending(String),
    /// The request names something that does not exist or cannot be used
    /// (an app id with no `.desktop` file, a path that is not executable).
    #[error("{0}")]
    InvalidTarget(String),
    /// The element an act named is gone, or another element sits where it
    /// was (the window's structure changed); nothing was done.
    #[error("{0}")]
    Stale(String),
    /// A character of a text cannot be typed on this keyboard; nothing of
    /// the text was sent.
    #[error("character {index} ({character:?}) of the text cannot be typed: {reason}")]
    Untypable {
        /// Its index in the text, counted in characters from 0.
        index: usize,
        /// The character.
        character: char,
        /// Why, in a few words.
        reason: &'static str,
    },
}

/// The characters a text is typed as, each with its index in the text
/// (counted in characters): a CR right before an LF is left out, since
/// CRLF is one line break.
pub fn typed_chars(text: &str) -> Vec<(usize, char)> {
    let mut out = Vec::with_capacity(text.len());
    let mut chars = text.chars().enumerate().peekable();
    while let Some((i, c)) = chars.next() {
        if c == '\r' && chars.peek().is_some_and(|(_, n)| *n == '\n') {
            continue;
        }
        out.push((i, c));
    }
    out
}

pub use deskhand_encode::{Bitmap, CursorImage, PixelFormat};

/// A mouse button.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Button {
    /// Left button.
    Left,
    /// Middle button (wheel press).
    Middle,
    /// Right button.
    Right,
    /// The browser's Back button (X11 button 8).
    Back,
    /// The browser's Forward button (X11 button 9).
    Forward,
}

/// A wheel direction.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ScrollDirection {
    /// Wheel up.
    Up,
    /// Wheel down.
    Down,
    /// Wheel left (horizontal).
    Left,
    /// Wheel right (horizontal).
    Right,
}

/// Reads the monitor layout and the pointer.
pub trait Displays: Send {
    /// Every monitor, in a stable order; at least one. Read fresh.
    fn monitors(&mut self) -> Result<Vec<Monitor>, BackendError>;
    /// The monitors as recently read, for the bounds check of every input
    /// action; a backend may cache them while it knows they are current.
    fn monitors_for_input(&mut self) -> Result<Vec<Monitor>, BackendError> {
        self.monitors()
    }
    /// Where the pointer is.
    fn cursor_position(&mut self) -> Result<Point, BackendError>;
}

/// Captures pixels of the desktop.
pub trait Capture: Send {
    /// Captures `rect` (inside the desktop) and hands the frame to `sink`
    /// while it is still borrowed from the backend.
    fn capture(
        &mut self,
        rect: Rect,
        sink: &mut dyn FnMut(&Bitmap<'_>),
    ) -> Result<(), BackendError>;
    /// Captures `rect` (inside window `window`'s bounds and the desktop)
    /// from the window's own image, as it would look uncovered, when the
    /// OS keeps one (Windows, macOS); `None`, with nothing done, where it
    /// does not: the engine then captures the desktop where the window is
    /// uncovered.
    fn capture_window(
        &mut self,
        window: u64,
        rect: Rect,
        sink: &mut dyn FnMut(&Bitmap<'_>),
    ) -> Option<Result<(), BackendError>> {
        let _ = (window, rect, sink);
        None
    }
    /// Whether [`Capture::capture_window`] captures windows' own images.
    fn captures_windows(&self) -> bool {
        false
    }
    /// The pointer's current image, when the backend can read it.
    fn cursor_image(&mut self) -> Result<Option<CursorImage>, BackendError>;
    /// Whether [`Capture::cursor_image`] can return an image.
    fn supports_cursor(&self) -> bool;
    /// Gets ready to leave windows out of captures (called before the
    /// takeover indicator is first shown).
    fn prepare_exclusion(&mut self) {}
    /// Leaves these windows (the takeover indicator) out of every capture
    /// from now on: what they cover is filled from the windows beneath.
    /// Empty lists end it.
    fn exclude(&mut self, windows: &[u64], covered: &[Rect]) {
        let _ = (windows, covered);
    }
}

/// Sends synthetic pointer and keyboard input.
pub trait Input: Send {
    /// Whether input can be sent now: [`BackendError::Pending`] while the
    /// desktop asks the person for it (what they do meanwhile is their
    /// answer, not a takeover).
    fn ready(&mut self) -> Result<(), BackendError> {
        Ok(())
    }
    /// Moves the pointer to `to`.
    fn move_pointer(&mut self, to: Point) -> Result<(), BackendError>;
    /// Moves the pointer to `to` only if it is inside `within` at that
    /// moment, as the display server decides in the same step as the move
    /// (nothing the person does can come between a check and the move),
    /// and returns where the pointer is afterwards. `None`, with nothing
    /// sent, from a backend that cannot: the engine then reads the pointer
    /// and moves in two steps.
    fn move_pointer_if_within(
        &mut self,
        within: Rect,
        to: Point,
    ) -> Option<Result<Point, BackendError>> {
        let _ = (within, to);
        None
    }
    /// Presses (`true`) or releases (`false`) a button.
    fn button(&mut self, button: Button, press: bool) -> Result<(), BackendError>;
    /// Presses or releases a key.
    fn key(&mut self, key: Key, press: bool) -> Result<(), BackendError>;
    /// Types text as it is (characters outside the keymap included).
    fn text(&mut self, text: &str) -> Result<(), BackendError>;
    /// Types `text` character by character (see [`typed_chars`]). Before
    /// each character is sent, `gate(index, presses)` is called with its
    /// index in the text and the number of key presses it takes; `Break`
    /// stops the typing there, with nothing more sent. A character that
    /// cannot be typed at all fails the call before anything is sent
    /// ([`BackendError::Untypable`]).
    fn type_text(
        &mut self,
        text: &str,
        gate: &mut dyn FnMut(usize, usize) -> std::ops::ControlFlow<()>,
    ) -> Result<(), BackendError> {
        let mut buf = [0u8; 4];
        for (i, c) in typed_chars(text) {
            if gate(i, 1).is_break() {
                return Ok(());
            }
            self.text(c.encode_utf8(&mut buf))?;
        }
        Ok(())
    }
    /// Turns the wheel `steps` times.
    fn scroll(&mut self, direction: ScrollDirection, steps: u32) -> Result<(), BackendError>;
    /// Releases every key the synthetic keyboard holds, whoever pressed
    /// it (what a `type` cut short may have left down).
    fn release_typing(&mut self) -> Result<(), BackendError> {
        Ok(())
    }
    /// Gives back what typing changed in the person's keyboard setup (keys
    /// remapped for characters no key produces). Called at shutdown, once
    /// everything held is released.
    fn restore_keyboard(&mut self) -> Result<(), BackendError> {
        Ok(())
    }
    /// Whether characters that no key produces can be typed (on X11, a
    /// spare keycode is free).
    fn types_any_character(&self) -> bool {
        true
    }
}

/// A top-level window as the OS reports it.
#[derive(Debug, Clone, PartialEq)]
pub struct NativeWindow {
    /// The OS handle (an X11 window id; a Windows HWND, a macOS window
    /// number).
    pub id: u64,
    /// Owning process, when known (from the OS, not from the window's own
    /// claim).
    pub pid: Option<u32>,
    /// The app's class as the desktop names it: X11's `WM_CLASS` class, a
    /// Wayland app id, a macOS bundle id, a Windows program's name; `""`
    /// when unset.
    pub class: String,
    /// A second name of the app where the desktop has one (X11's
    /// `WM_CLASS` instance); `""` elsewhere.
    pub instance: String,
    /// Title.
    pub title: String,
    /// Content area in global desktop pixels.
    pub rect: Rect,
    /// Has the input focus.
    pub focused: bool,
    /// Minimized (iconic or hidden).
    pub minimized: bool,
    /// Full screen.
    pub fullscreen: bool,
    /// Where the window's own coordinates start, in global desktop pixels,
    /// when its app cannot know where it is (a Wayland client's surface,
    /// its shadows included): its accessibility extents count from there.
    /// `None` where apps see desktop coordinates (X11, Windows, macOS).
    pub surface_origin: Option<Point>,
}

impl NativeWindow {
    /// Whether this window belongs to `app`: its class or instance
    /// (case-insensitive) or its pid written as text.
    pub fn belongs_to(&self, app: &str) -> bool {
        self.class.eq_ignore_ascii_case(app)
            || self.instance.eq_ignore_ascii_case(app)
            || self.pid.is_some_and(|p| p.to_string() == app)
    }
}

/// Lists and focuses top-level windows.
pub trait Windows: Send {
    /// Every top-level window, bottom of the stack first.
    fn list(&mut self) -> Result<Vec<NativeWindow>, BackendError>;
    /// Every top-level window the person's refusal policy judges, bottom
    /// of the stack first: [`Windows::list`] and the windows a platform
    /// leaves out of it that can still take input (Windows' tool windows:
    /// a program could give a refused console that style to leave the
    /// list).
    fn list_for_refusal(&mut self) -> Result<Vec<NativeWindow>, BackendError> {
        self.list()
    }
    /// Gives `id` the input focus, raising it when `raise`.
    fn focus(&mut self, id: u64, raise: bool) -> Result<(), BackendError>;
}

/// A running process of the person's.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProcessInfo {
    /// Process id.
    pub pid: u32,
    /// Short name.
    pub name: String,
    /// Executable, when readable.
    pub exe: Option<String>,
    /// The app's own identifier where the OS gives one (macOS: its bundle
    /// id); else the engine takes its first window's.
    pub app_id: Option<String>,
}

/// What to launch: a program and its arguments, never through a shell.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LaunchTarget {
    /// An absolute path to an executable.
    Executable(String),
    /// An app id (a `.desktop` id on Linux).
    AppId(String),
}

/// The identity of a file whatever it is called (on Unix its device and
/// inode): a copy is another file, a hardlink or a symlink the same one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct FileId {
    /// The device the file is on.
    pub device: u64,
    /// The file on that device.
    pub inode: u64,
}

/// The arguments an installed application's entry accepts from whoever
/// starts it (on Linux the field codes of its `Exec` line).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EntryArgs {
    /// None at all (no field code).
    None,
    /// One file or URL (`%f`, `%u`).
    One,
    /// Any number of files or URLs (`%F`, `%U`).
    Many,
}

/// An installed application's entry (a `.desktop` file on Linux) that
/// names a program: what makes the program an app rather than a command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AppEntry {
    /// Its id (`org.gnome.Calculator`, `debian-xterm`).
    pub id: String,
    /// It runs in a terminal (`Terminal=true`): a command-line program.
    pub terminal: bool,
    /// Its categories (`TerminalEmulator`, `Settings`, ...).
    pub categories: Vec<String>,
    /// The arguments it accepts.
    pub args: EntryArgs,
    /// The entry, or the program it runs, is in a place the person's
    /// account can change (their own data directory, a file or directory
    /// they own or others may write): anything working in the person's
    /// apps, an agent too, could have written it. It still tells what an
    /// app is (refusals) but makes nothing launchable.
    pub user_writable: bool,
}

/// A launch as the backend resolved it, before anything runs: what the
/// engine's launch policy checks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LaunchPlan {
    /// What the caller asked for.
    pub target: LaunchTarget,
    /// The program that will run, an absolute path.
    pub program: String,
    /// Its arguments: an app entry's own with the caller's in place of
    /// its field code (by app id), or the caller's (by path).
    pub args: Vec<String>,
    /// Every other name the program goes by: where its symlinks lead, a
    /// script's interpreter (with what `env` would run; `/bin/sh` for a
    /// text file without `#!`), and the programs entries name by it.
    pub aliases: Vec<String>,
    /// The identity of the file that will run.
    pub file: Option<FileId>,
    /// The installed applications' entries that name that file (by app
    /// id: the entry asked for).
    pub entries: Vec<AppEntry>,
}

/// The program a running process runs, for telling what app a window
/// belongs to whatever its window class says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunningProgram {
    /// Its executable, an absolute path.
    pub exe: String,
    /// The installed applications' entries that name that file.
    pub entries: Vec<AppEntry>,
}

/// Lists and launches apps.
pub trait Apps: Send {
    /// The person's running processes.
    fn processes(&mut self) -> Result<Vec<ProcessInfo>, BackendError>;
    /// Resolves `target` with `args` to the program that would run;
    /// starts nothing.
    fn resolve(
        &mut self,
        target: &LaunchTarget,
        args: &[String],
    ) -> Result<LaunchPlan, BackendError>;
    /// Starts `plan` in a session of its own; returns its pid.
    fn launch(&mut self, plan: &LaunchPlan) -> Result<u32, BackendError>;
    /// The identity of the file at `path` (symlinks followed), if any.
    fn file_id(&mut self, path: &str) -> Option<FileId>;
    /// What process `pid` runs, when it can be read.
    fn program_of(&mut self, pid: u32) -> Option<RunningProgram>;
}

/// Reads the state of OS permissions without prompting the person.
pub trait Permissions: Send {
    /// Every permission name this platform reports on.
    fn known(&self) -> Vec<&'static str>;
    /// The state of `name`; [`PermissionStatus::Unknown`] rather than a
    /// guess.
    fn check(&mut self, name: &str) -> PermissionStatus;
}

/// What the clipboard held when it was read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ClipboardContent {
    /// Text (possibly empty).
    Text(String),
    /// Nothing, or nothing that converts to text.
    NoText,
    /// The owner marked the contents secret (a password manager's copy);
    /// the text was not transferred.
    Concealed {
        /// The marker found, e.g. `x-kde-passwordManagerHint`.
        marker: &'static str,
    },
    /// More than the limit asked for; the text was not kept.
    TooLarge {
        /// The size, when the owner said it.
        bytes: Option<u64>,
    },
    /// Another app owns the clipboard and foreign content was not asked
    /// for: nothing was transferred.
    Foreign,
    /// The owner would not list its formats, so a concealed marker cannot
    /// be ruled out: nothing was transferred.
    Unverifiable,
}

/// One read of the clipboard and the change count it was read at.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClipboardRead {
    /// What it held.
    pub content: ClipboardContent,
    /// The clipboard's change count when it was read.
    pub change_count: u64,
}

/// The system clipboard (text). Implementations keep what deskhand wrote
/// pasteable for as long as the daemon runs, and may block the caller for a
/// few seconds when another app is slow to answer, so the engine never
/// calls them on the desktop thread.
pub trait Clipboard: Send + Sync {
    /// Reads the clipboard as text, refusing more than `max_bytes`. What
    /// another app owns is transferred only when `foreign`, and then only
    /// after its formats showed no concealed marker.
    fn read_text(&self, max_bytes: u64, foreign: bool) -> Result<ClipboardRead, BackendError>;
    /// Puts `text` on the clipboard; returns the change count after it (a
    /// number that grows with every change of the clipboard's contents).
    fn write_text(&self, text: &str) -> Result<u64, BackendError>;
    /// Puts `text` on the clipboard only if the change count is still
    /// `change_count` (checked and written in one step); returns whether it
    /// wrote.
    fn write_if_unchanged(&self, change_count: u64, text: &str) -> Result<bool, BackendError>;
    /// How many times another app has fetched what deskhand wrote (to know
    /// when a paste has been taken).
    fn fetches(&self) -> u64;
}

/// What the input watcher saw: the raw input of every device, as it
/// happens, and the pointer position while the engine asked for it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WatchedInput {
    /// Where the pointer is (polled at least every 20 ms while armed).
    Pointer(Point),
    /// A device moved the pointer; `synthetic` when it was XTEST (or the
    /// platform's equivalent), else real hardware.
    Motion {
        /// Sent through the synthetic-input device.
        synthetic: bool,
    },
    /// A key went down.
    KeyPress {
        /// Sent through the synthetic-input device.
        synthetic: bool,
    },
    /// A button went down.
    ButtonPress {
        /// Sent through the synthetic-input device.
        synthetic: bool,
    },
    /// A wheel notch (X11's buttons 4 to 7): it hands control back as a
    /// press does, and never counts as the press of a click on Continue
    /// (a person scrolling, a steady stream of device events, must not
    /// vouch for a program's click).
    WheelTurn {
        /// Sent through the synthetic-input device.
        synthetic: bool,
    },
    /// The person pressed the kill-switch hotkey.
    KillSwitch,
    /// The person has answered the desktop's own question for input (a
    /// portal's dialog), with the pointer now at this place: what they did
    /// meanwhile was the answer, so hand-back starts again from here.
    Answered(Point),
    /// The watcher stopped (its display connection failed): no hand-back
    /// from now on, so no takeover either.
    WatcherLost,
}

/// Watches the person's input for hand-back. It runs on a thread of its
/// own and calls the sink for everything it sees; it polls the pointer
/// only while `armed` is set.
pub trait InputWatcher: Send {
    /// Starts watching.
    fn start(
        self: Box<Self>,
        sink: std::sync::Arc<dyn Fn(WatchedInput) + Send + Sync>,
        armed: std::sync::Arc<std::sync::atomic::AtomicBool>,
    ) -> Result<(), BackendError>;
}

/// What the takeover indicator reports on its own.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum IndicatorEvent {
    /// A real left click on Continue, when it was seen.
    ContinueClicked(std::time::Instant),
    /// A click on the indicator's "Stop agents": every takeover ends, as
    /// with the kill switch (stopping needs no proof of a person: it only
    /// takes power away).
    StopClicked,
    /// The indicator went away without being told (`unmapped`,
    /// `destroyed`, `display_closed`, `exited`).
    Lost(String),
}

/// The indicator as shown: its windows (left out of captures) and the
/// rectangles it covers.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct IndicatorShown {
    /// Native window ids.
    pub windows: Vec<u64>,
    /// Covered rectangles, global desktop pixels.
    pub covered: Vec<Rect>,
}

/// The visible takeover indicator: a frame round the screens and a label,
/// and while paused a Continue button. Calls return once the change is on
/// screen.
pub trait Indicator: Send {
    /// Where to report clicks on Continue and a lost indicator; set once,
    /// before the first [`Indicator::show`].
    fn set_events(&mut self, sink: std::sync::Arc<dyn Fn(IndicatorEvent) + Send + Sync>);
    /// Shows it round `monitors`, in the paused look when `paused`.
    fn show(&mut self, monitors: &[Rect], paused: bool) -> Result<IndicatorShown, BackendError>;
    /// Switches between the active and the paused look.
    fn set_paused(&mut self, paused: bool) -> Result<IndicatorShown, BackendError>;
    /// Takes it down.
    fn hide(&mut self) -> Result<(), BackendError>;
    /// Checks, right before an act, that the frame is where it was put,
    /// as large, mapped and above every other window; puts back what
    /// another program changed and says what it was.
    fn verify(&mut self) -> Result<FrameCheck, BackendError> {
        Ok(FrameCheck::Intact)
    }
}

/// What [`Indicator::verify`] found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FrameCheck {
    /// The frame is as shown.
    Intact,
    /// Another program had moved, resized or hidden it in place
    /// (`moved`, `resized`, `reshaped`, `faded`); it is back now. (A window stacked over it is only sent below again;
    /// an unmapped frame is a backend error.)
    Restored(&'static str),
}

/// A backend: what the factory of an OS hands to the engine.
pub struct Backend {
    /// Short name for logs, e.g. `x11` or `mock`.
    pub name: &'static str,
    /// The OS's tables for the engine's rules (refused apps, launch rules,
    /// the paste chord).
    pub policy: &'static crate::policy::PolicyTables,
    /// Layout and pointer reads.
    pub displays: Box<dyn Displays>,
    /// Capture, when available.
    pub capture: Option<Box<dyn Capture>>,
    /// Input, when available.
    pub input: Option<Box<dyn Input>>,
    /// Window listing and focus, when available.
    pub windows: Option<Box<dyn Windows>>,
    /// App listing and launching, when available.
    pub apps: Option<Box<dyn Apps>>,
    /// Permission probes, when available.
    pub permissions: Option<Box<dyn Permissions>>,
    /// The clipboard, when available (used only when the person enabled it).
    pub clipboard: Option<std::sync::Arc<dyn Clipboard>>,
    /// The takeover indicator, when one can be shown.
    pub indicator: Option<Box<dyn Indicator>>,
    /// The hand-back input watcher, when the platform has one.
    pub watcher: Option<Box<dyn InputWatcher>>,
    /// Accessibility trees and element acts, when available (a backend of
    /// its own, called off the desktop thread).
    pub accessibility: Option<std::sync::Arc<dyn crate::accessibility::Accessibility>>,
    /// The status place in the desktop's own chrome, where it has one
    /// (GNOME's top bar through deskhand's extension).
    pub status_place: Option<std::sync::Arc<dyn crate::status_place::StatusPlace>>,
}

impl std::fmt::Debug for Backend {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Backend")
            .field("name", &self.name)
            .field("capture", &self.capture.is_some())
            .field("input", &self.input.is_some())
            .field("windows", &self.windows.is_some())
            .field("apps", &self.apps.is_some())
            .field("permissions", &self.permissions.is_some())
            .field("clipboard", &self.clipboard.is_some())
            .field("indicator", &self.indicator.is_some())
            .field("watcher", &self.watcher.is_some())
            .field("accessibility", &self.accessibility.is_some())
            .field("status_place", &self.status_place.is_some())
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::typed_chars;

    #[test]
    fn crlf_is_one_line_break_and_indices_count_characters() {
        assert_eq!(
            typed_chars("é\r\nx\ry"),
            vec![(0, 'é'), (2, '\n'), (3, 'x'), (4, '\r'), (5, 'y')]
        );
        assert!(typed_chars("").is_empty());
    }
}
