//! The person's input, for hand-back and Continue: a low-level mouse hook
//! and the keyboard's raw input on a thread of their own that pumps
//! messages, each event judged by [`crate::hooks`]; the kill switch as a
//! registered hotkey on the same thread; the pointer polled every 20 ms
//! while a takeover is armed.
//!
//! Keys are read as raw input, not through a low-level hook: a hook makes
//! every key deskhand types wait for the hook thread's answer (under Wine
//! a dozen server requests and two thread switches per key, 0.4 ms), raw
//! input is only posted. The mouse keeps its hook: only the hook tells a
//! real device's click on Continue from an injected one under Wine.

use std::cell::RefCell;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use deskhand_backend::real_click::RealClicks;
use deskhand_backend::{BackendError, InputWatcher, KillSwitchHotkey, Point, WatchedInput};
use windows::Win32::Foundation::{HWND, LPARAM, LRESULT, WPARAM};
use windows::Win32::System::LibraryLoader::GetModuleHandleW;
use windows::Win32::UI::Input::KeyboardAndMouse::{
    HOT_KEY_MODIFIERS, RegisterHotKey, UnregisterHotKey,
};
use windows::Win32::UI::Input::{
    GetRawInputData, HRAWINPUT, RAWINPUT, RAWINPUTDEVICE, RAWINPUTHEADER, RID_INPUT,
    RIDEV_INPUTSINK, RIM_TYPEKEYBOARD, RegisterRawInputDevices,
};
use windows::Win32::UI::WindowsAndMessaging::{
    CallNextHookEx, DefWindowProcW, DestroyWindow, DispatchMessageW, GetMessageW, HHOOK,
    KBDLLHOOKSTRUCT, MSG, MSLLHOOKSTRUCT, SetTimer, SetWindowsHookExW, UnhookWindowsHookEx,
    WH_KEYBOARD_LL, WH_MOUSE_LL, WM_HOTKEY, WM_INPUT, WM_TIMER,
};
use windows::core::w;

use crate::hooks;
use crate::keys::hotkey_of;

/// How often the pointer is read while armed.
const POLL_MS: u32 = 20;

type Sink = Arc<dyn Fn(WatchedInput) + Send + Sync>;

thread_local! {
    /// Where this thread's hooks report (they are called on the thread
    /// that set them, with no other context).
    static SINK: RefCell<Option<Sink>> = const { RefCell::new(None) };
    /// Where this thread's mouse hook records the person's real left
    /// presses and releases, for the overlay's buttons.
    static CLICKS: RefCell<Option<Arc<RealClicks>>> = const { RefCell::new(None) };
    /// Whether the mouse hook still hears the mouse (see [`hooks::Hearing`]).
    static HEARING: RefCell<hooks::Hearing> = RefCell::new(hooks::Hearing::default());
}

/// How many times deskhand moved the pointer with `SetCursorPos` (under
/// Wine), a move no hook hears: the deafness check passes over those.
pub(crate) static OWN_WARPS: AtomicU64 = AtomicU64::new(0);

thread_local! {
    /// [`OWN_WARPS`] as the deafness check last read it.
    static WARPS_SEEN: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
}

/// How often the pointer is read to tell whether the mouse hook went deaf
/// (armed or not: the person's click on Continue needs the hook too).
const HEARING_MS: u64 = 100;

fn report(event: WatchedInput) {
    SINK.with(|s| {
        if let Some(sink) = s.borrow().as_ref() {
            sink(event);
        }
    });
}

unsafe extern "system" fn mouse_proc(code: i32, w: WPARAM, l: LPARAM) -> LRESULT {
    if code >= 0 {
        HEARING.with(|h| h.borrow_mut().heard());
        // SAFETY: for WH_MOUSE_LL, lParam points to an MSLLHOOKSTRUCT.
        let info = unsafe { &*(l.0 as *const MSLLHOOKSTRUCT) };
        // Recorded before the event reaches any window: a click the
        // overlay reports finds its press and release already here.
        if let Some(edge) = hooks::real_left(w.0 as u32, info.flags, info.dwExtraInfo) {
            let at = Point::new(info.pt.x, info.pt.y);
            CLICKS.with(|c| match (c.borrow().as_ref(), edge) {
                (Some(clicks), hooks::RealLeft::Press) => clicks.pressed(at),
                (Some(clicks), hooks::RealLeft::Release) => clicks.released(at),
                (None, _) => {}
            });
        }
        if let Some(event) = hooks::mouse(w.0 as u32, info.flags, info.dwExtraInfo) {
            report(event);
        }
    }
    // SAFETY: passes the event on unchanged.
    unsafe { CallNextHookEx(None, code, w, l) }
}

unsafe extern "system" fn key_proc(code: i32, w: WPARAM, l: LPARAM) -> LRESULT {
    if code >= 0 {
        // SAFETY: for WH_KEYBOARD_LL, lParam points to a KBDLLHOOKSTRUCT.
        let info = unsafe { &*(l.0 as *const KBDLLHOOKSTRUCT) };
        if let Some(event) = hooks::key(w.0 as u32, info.flags.0, info.dwExtraInfo) {
            report(event);
        }
    }
    // SAFETY: passes the event on unchanged.
    unsafe { CallNextHookEx(None, code, w, l) }
}

/// The watcher's window: the keyboard's raw input comes here (its
/// WM_HOTKEY is taken from the queue before dispatch); everything as
/// Windows handles it besides.
unsafe extern "system" fn watcher_window_proc(h: HWND, msg: u32, w: WPARAM, l: LPARAM) -> LRESULT {
    if msg == WM_INPUT
        && let Some(event) = raw_key(l)
    {
        report(event);
    }
    // SAFETY: passes the message on unchanged (which frees raw input).
    unsafe { DefWindowProcW(h, msg, w, l) }
}

/// The keyboard event of a WM_INPUT's `lParam`, if it is one.
fn raw_key(l: LPARAM) -> Option<WatchedInput> {
    let mut raw = RAWINPUT::default();
    let mut size = std::mem::size_of::<RAWINPUT>() as u32;
    let header = std::mem::size_of::<RAWINPUTHEADER>() as u32;
    // SAFETY: reads this WM_INPUT's data into a buffer of `size` bytes
    // (a keyboard event fits a RAWINPUT).
    let copied = unsafe {
        GetRawInputData(
            HRAWINPUT(l.0 as _),
            RID_INPUT,
            Some((&raw mut raw).cast()),
            &mut size,
            header,
        )
    };
    if copied == u32::MAX || raw.header.dwType != RIM_TYPEKEYBOARD.0 {
        return None;
    }
    // SAFETY: a keyboard event's data is its RAWKEYBOARD.
    let key = unsafe { raw.data.keyboard };
    hooks::raw_key(
        key.Flags,
        key.ExtraInformation,
        raw.header.hDevice.0.is_null(),
    )
}

/// Asks for the keyboard's raw input at `window`, even while another
/// program has the focus.
fn read_raw_keys(window: HWND) -> windows::core::Result<()> {
    let device = RAWINPUTDEVICE {
        usUsagePage: 0x01, // generic desktop
        usUsage: 0x06,     // keyboard
        dwFlags: RIDEV_INPUTSINK,
        hwndTarget: window,
    };
    // SAFETY: one device, described in full.
    unsafe { RegisterRawInputDevices(&[device], std::mem::size_of::<RAWINPUTDEVICE>() as u32) }
}

pub(crate) struct HookWatcher {
    kill: KillSwitchHotkey,
    clicks: Arc<RealClicks>,
}

impl HookWatcher {
    /// A watcher for `kill` that records the person's real clicks in
    /// `clicks` (the indicator's witness).
    pub(crate) fn new(kill: KillSwitchHotkey, clicks: Arc<RealClicks>) -> Self {
        Self { kill, clicks }
    }
}

/// How often a kill switch another program holds is asked for again.
const RETRY_HOTKEY: std::time::Duration = std::time::Duration::from_secs(2);

/// The hotkey ids of the kill switch on this thread: the one in force
/// and the next.
struct Hotkeys {
    /// The message-only window the hotkeys are registered for (a thread
    /// hotkey, without a window, crashes Wine 8's server when pressed).
    window: HWND,
    current: Option<i32>,
    next_id: i32,
    /// When the chord was last asked for while another program held it.
    tried: std::time::Instant,
}

/// Why the chord `text` does nothing: `RegisterHotKey` said `why`
/// (another program registered it first).
fn held_elsewhere(text: &str, why: &str) -> String {
    format!("another program holds {text} (RegisterHotKey: {why})")
}

impl Hotkeys {
    /// Registers `chord` under a fresh id; the id, or why not.
    fn register(&mut self, chord: &deskhand_backend::Chord) -> Result<i32, String> {
        let (mods, vk) = hotkey_of(chord);
        let id = self.next_id;
        self.next_id += 1;
        // SAFETY: a hotkey of this thread's own window.
        unsafe { RegisterHotKey(Some(self.window), id, HOT_KEY_MODIFIERS(mods), vk) }
            .map(|()| id)
            .map_err(|e| e.message())
    }

    /// Makes the change the host asked for, if any.
    fn follow(&mut self, kill: &KillSwitchHotkey) {
        let Some((n, chord)) = kill.asked() else {
            return;
        };
        match self.register(&chord) {
            Ok(id) => {
                if kill.answer(n, Ok(())) {
                    kill.set_unavailable(None);
                    if let Some(old) = self.current.replace(id) {
                        // SAFETY: a hotkey of this thread's window.
                        let _ = unsafe { UnregisterHotKey(Some(self.window), old) };
                    }
                } else {
                    // SAFETY: the hotkey just registered.
                    let _ = unsafe { UnregisterHotKey(Some(self.window), id) };
                }
            }
            Err(why) => {
                kill.answer(n, Err(why));
            }
        }
    }

    /// While another program holds the chord in force, asks for it again
    /// every [`RETRY_HOTKEY`]: once that program lets it go, it stops
    /// agents again.
    fn retry(&mut self, kill: &KillSwitchHotkey) {
        if self.current.is_some() || self.tried.elapsed() < RETRY_HOTKEY {
            return;
        }
        self.tried = std::time::Instant::now();
        let Ok(chord) = deskhand_backend::Chord::parse(&kill.current()) else {
            return;
        };
        if let Ok(id) = self.register(&chord) {
            self.current = Some(id);
            kill.set_unavailable(None);
            tracing::info!(kill_switch = %kill.current(), "the kill switch is registered now");
        }
    }
}

/// The window procedure of the doctor's window: nothing of its own.
unsafe extern "system" fn plain_proc(h: HWND, msg: u32, w: WPARAM, l: LPARAM) -> LRESULT {
    // SAFETY: the arguments Windows passed, handed on.
    unsafe { DefWindowProcW(h, msg, w, l) }
}

/// Whether `chord` can be registered now, for the doctor while no
/// deskhand holds it: `Err` says why not (another program holds it).
/// The hotkey is let go at once.
pub(crate) fn chord_is_free(chord: &deskhand_backend::Chord) -> Result<(), String> {
    let window = super::message_window(w!("deskhand-doctor-hotkey"), Some(plain_proc))
        .map_err(|e| e.to_string())?;
    let (mods, vk) = hotkey_of(chord);
    // SAFETY: a hotkey of this thread's own window, let go at once; the
    // window is destroyed after.
    unsafe {
        let taken = RegisterHotKey(Some(window), 1, HOT_KEY_MODIFIERS(mods), vk);
        if taken.is_ok() {
            let _ = UnregisterHotKey(Some(window), 1);
        }
        let _ = DestroyWindow(window);
        taken.map_err(|e| e.message())
    }
}

fn run(
    watcher: HookWatcher,
    sink: Sink,
    armed: Arc<AtomicBool>,
    ready: std::sync::mpsc::Sender<Result<(), String>>,
) {
    let HookWatcher { kill, clicks } = watcher;
    SINK.with(|s| *s.borrow_mut() = Some(sink.clone()));
    CLICKS.with(|c| *c.borrow_mut() = Some(clicks));
    let window = match super::message_window(w!("deskhand-hooks"), Some(watcher_window_proc)) {
        Ok(w) => w,
        Err(e) => {
            tracing::warn!(error = %e, "no window for the kill switch and the keyboard");
            HWND::default()
        }
    };
    let hooks = match set_hooks(window) {
        Ok(hooks) => hooks,
        Err(why) => {
            let _ = ready.send(Err(why));
            return;
        }
    };
    let mut hotkeys = Hotkeys {
        window,
        current: None,
        next_id: 1,
        tried: std::time::Instant::now(),
    };
    match hotkeys.register(&kill.watch()) {
        Ok(id) => {
            hotkeys.current = Some(id);
            kill.set_unavailable(None);
        }
        Err(why) => {
            // Said where the person looks (the doctor, the consent dialog
            // names only the ways that work); asked for again meanwhile.
            tracing::warn!(why, kill_switch = %kill.current(), "the kill switch could not be registered: another program holds it");
            kill.set_unavailable(Some(held_elsewhere(&kill.current(), &why)));
        }
    }
    // SAFETY: a thread timer (no window, no callback).
    unsafe { SetTimer(None, 0, POLL_MS, None) };
    let _ = ready.send(Ok(()));
    tracing::info!(
        keyboard = if hooks.len() == 1 {
            "raw input"
        } else {
            "low-level hook"
        },
        "hand-back watcher: a low-level mouse hook"
    );
    let mut hooks = hooks;
    pump(&kill, &sink, &armed, &mut hotkeys, &mut hooks);
    kill.unwatch();
    // SAFETY: the hooks set above.
    unsafe {
        for hook in hooks {
            let _ = UnhookWindowsHookEx(hook);
        }
    }
    sink(WatchedInput::WatcherLost);
}

/// Sets the low-level mouse hook on this thread.
fn set_mouse_hook() -> Result<HHOOK, String> {
    // SAFETY: a hook of this module, set on this thread, which pumps
    // messages and removes it before it ends.
    unsafe {
        let instance = GetModuleHandleW(None).ok().map(|m| m.into());
        SetWindowsHookExW(WH_MOUSE_LL, Some(mouse_proc), instance, 0)
            .map_err(|e| format!("SetWindowsHookExW(WH_MOUSE_LL): {}", e.message()))
    }
}

/// The mouse hook went deaf: it is set again (the newest hook comes first
/// in the chain) and the old one removed; false when it could not be set.
fn reinstall_mouse_hook(hooks: &mut [HHOOK]) -> bool {
    let Some(old) = hooks.first_mut() else {
        return false;
    };
    match set_mouse_hook() {
        Ok(new) => {
            // SAFETY: the hook this thread set before.
            let _ = unsafe { UnhookWindowsHookEx(*old) };
            *old = new;
            true
        }
        Err(why) => {
            tracing::error!(why, "the mouse hook could not be set again");
            false
        }
    }
}

/// The mouse hook, and the keyboard's: raw input at `window` where the
/// system gives it, else a low-level hook.
fn set_hooks(window: HWND) -> Result<Vec<HHOOK>, String> {
    let mouse = set_mouse_hook()?;
    // SAFETY: a hook of this module, set on this thread, which pumps
    // messages and removes it before it ends.
    unsafe {
        let instance = GetModuleHandleW(None).ok().map(|m| m.into());
        let raw = match window.is_invalid() {
            true => Err("no window".to_owned()),
            false => read_raw_keys(window).map_err(|e| e.message()),
        };
        let Err(why) = raw else {
            return Ok(vec![mouse]);
        };
        tracing::warn!(why, "no raw keyboard input: the keyboard is hooked");
        match SetWindowsHookExW(WH_KEYBOARD_LL, Some(key_proc), instance, 0) {
            Ok(keys) => Ok(vec![mouse, keys]),
            Err(e) => {
                let _ = UnhookWindowsHookEx(mouse);
                Err(format!(
                    "SetWindowsHookExW(WH_KEYBOARD_LL): {}",
                    e.message()
                ))
            }
        }
    }
}

/// Pumps this thread's messages (the hooks are called from inside
/// `GetMessageW`) until the queue fails, or the mouse hook stays deaf. The
/// pointer is read every [`POLL_MS`] while armed, timed here: a thread
/// timer fires only when the queue is empty, which it is not while
/// deskhand types (each key brings its raw input message); and every
/// [`HEARING_MS`] to tell whether the mouse hook still hears.
fn pump(
    kill: &KillSwitchHotkey,
    sink: &Sink,
    armed: &AtomicBool,
    hotkeys: &mut Hotkeys,
    hooks: &mut [HHOOK],
) {
    let mut msg = MSG::default();
    let every = std::time::Duration::from_millis(u64::from(POLL_MS));
    let hearing_every = std::time::Duration::from_millis(HEARING_MS);
    let mut polled = std::time::Instant::now();
    let mut listened = polled;
    loop {
        // SAFETY: an out-parameter; messages of this thread.
        let got = unsafe { GetMessageW(&mut msg, None, 0, 0) };
        if got.0 <= 0 {
            return;
        }
        match msg.message {
            WM_TIMER => {
                hotkeys.follow(kill);
                hotkeys.retry(kill);
            }
            WM_HOTKEY if Some(msg.wParam.0 as i32) == hotkeys.current => {
                sink(WatchedInput::KillSwitch);
            }
            _ => {
                // SAFETY: a message this thread received.
                unsafe { DispatchMessageW(&msg) };
            }
        }
        if polled.elapsed() >= every {
            polled = std::time::Instant::now();
            if armed.load(Ordering::Relaxed)
                && let Ok(p) = super::displays::cursor()
            {
                sink(WatchedInput::Pointer(p));
            }
        }
        if listened.elapsed() >= hearing_every {
            listened = std::time::Instant::now();
            if !still_hears(hooks) {
                return;
            }
        }
    }
}

/// Reads the pointer for [`hooks::Hearing`]; a deaf mouse hook is set
/// again. False when it stays deaf (or cannot be set): the watcher is lost.
fn still_hears(hooks: &mut [HHOOK]) -> bool {
    let Ok(p) = super::displays::cursor() else {
        return true;
    };
    let now = std::time::Instant::now();
    let warps = OWN_WARPS.load(Ordering::SeqCst);
    if WARPS_SEEN.with(|w| w.replace(warps)) != warps {
        // deskhand moved the pointer itself since: where it is now is
        // explained.
        HEARING.with(|h| h.borrow_mut().heard());
    }
    match HEARING.with(|h| h.borrow_mut().pointer((p.x, p.y), now)) {
        hooks::Deafness::Hears => true,
        hooks::Deafness::Reinstall => {
            tracing::warn!(
                "the mouse hook heard nothing while the pointer moved (another program's hook exited or hung, or Windows removed it): set again"
            );
            reinstall_mouse_hook(hooks)
        }
        hooks::Deafness::Lost => {
            tracing::error!(
                "the mouse hook stays deaf however often it is set: the person's clicks cannot be seen, the takeover ends"
            );
            false
        }
    }
}

impl InputWatcher for HookWatcher {
    fn start(self: Box<Self>, sink: Sink, armed: Arc<AtomicBool>) -> Result<(), BackendError> {
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::Builder::new()
            .name("deskhand-hooks".into())
            .spawn(move || run(*self, sink, armed, tx))
            .map_err(|e| BackendError::Failed(format!("hook thread: {e}")))?;
        match rx.recv() {
            Ok(Ok(())) => Ok(()),
            Ok(Err(why)) => Err(BackendError::Unsupported(why)),
            Err(_) => Err(BackendError::Failed("the hook thread ended".into())),
        }
    }
}
