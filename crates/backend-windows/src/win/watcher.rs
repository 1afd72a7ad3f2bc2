//! The person's input, for hand-back and Continue: low-level mouse and
//! keyboard hooks on a thread of their own that pumps messages, each
//! event judged by [`crate::hooks`]; the kill switch as a registered
//! hotkey on the same thread; the pointer polled every 20 ms while a
//! takeover is armed.

use std::cell::RefCell;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use deskhand_backend::{BackendError, InputWatcher, KillSwitchHotkey, WatchedInput};
use windows::Win32::Foundation::{HWND, LPARAM, LRESULT, WPARAM};
use windows::Win32::System::LibraryLoader::GetModuleHandleW;
use windows::Win32::UI::Input::KeyboardAndMouse::{
    HOT_KEY_MODIFIERS, RegisterHotKey, UnregisterHotKey,
};
use windows::Win32::UI::WindowsAndMessaging::{
    CallNextHookEx, DefWindowProcW, DispatchMessageW, GetMessageW, KBDLLHOOKSTRUCT, MSG,
    MSLLHOOKSTRUCT, SetTimer, SetWindowsHookExW, UnhookWindowsHookEx, WH_KEYBOARD_LL, WH_MOUSE_LL,
    WM_HOTKEY, WM_TIMER,
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
}

fn report(event: WatchedInput) {
    SINK.with(|s| {
        if let Some(sink) = s.borrow().as_ref() {
            sink(event);
        }
    });
}

unsafe extern "system" fn mouse_proc(code: i32, w: WPARAM, l: LPARAM) -> LRESULT {
    if code >= 0 {
        // SAFETY: for WH_MOUSE_LL, lParam points to an MSLLHOOKSTRUCT.
        let info = unsafe { &*(l.0 as *const MSLLHOOKSTRUCT) };
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

/// The kill switch's window: its WM_HOTKEY is taken from the queue before
/// dispatch; everything else as Windows handles it.
unsafe extern "system" fn hotkey_window_proc(h: HWND, msg: u32, w: WPARAM, l: LPARAM) -> LRESULT {
    // SAFETY: passes the message on unchanged.
    unsafe { DefWindowProcW(h, msg, w, l) }
}

pub(crate) struct HookWatcher {
    kill: KillSwitchHotkey,
}

impl HookWatcher {
    pub(crate) fn new(kill: KillSwitchHotkey) -> Self {
        Self { kill }
    }
}

/// The hotkey ids of the kill switch on this thread: the one in force
/// and the next.
struct Hotkeys {
    /// The message-only window the hotkeys are registered for (a thread
    /// hotkey, without a window, crashes Wine 8's server when pressed).
    window: HWND,
    current: Option<i32>,
    next_id: i32,
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
}

fn run(
    kill: KillSwitchHotkey,
    sink: Sink,
    armed: Arc<AtomicBool>,
    ready: std::sync::mpsc::Sender<Result<(), String>>,
) {
    SINK.with(|s| *s.borrow_mut() = Some(sink.clone()));
    // SAFETY: hooks of this module, set on this thread, which pumps
    // messages below and removes them before it ends.
    let hooks = unsafe {
        let module = GetModuleHandleW(None).ok();
        let instance = module.map(|m| m.into());
        let mouse = SetWindowsHookExW(WH_MOUSE_LL, Some(mouse_proc), instance, 0);
        let keys = SetWindowsHookExW(WH_KEYBOARD_LL, Some(key_proc), instance, 0);
        match (mouse, keys) {
            (Ok(m), Ok(k)) => [m, k],
            (m, k) => {
                for hook in [m, k].into_iter().flatten() {
                    let _ = UnhookWindowsHookEx(hook);
                }
                let _ = ready.send(Err("SetWindowsHookExW failed".into()));
                return;
            }
        }
    };
    let window = match super::message_window(w!("deskhand-hooks"), Some(hotkey_window_proc)) {
        Ok(w) => w,
        Err(e) => {
            tracing::warn!(error = %e, "no window for the kill switch");
            HWND::default()
        }
    };
    let mut hotkeys = Hotkeys {
        window,
        current: None,
        next_id: 1,
    };
    match hotkeys.register(&kill.watch()) {
        Ok(id) => hotkeys.current = Some(id),
        Err(why) => {
            tracing::warn!(why, kill_switch = %kill.current(), "the kill switch could not be registered")
        }
    }
    // SAFETY: a thread timer (no window, no callback).
    unsafe { SetTimer(None, 0, POLL_MS, None) };
    let _ = ready.send(Ok(()));
    tracing::info!("hand-back watcher: low-level hooks");
    pump(&kill, &sink, &armed, &mut hotkeys);
    kill.unwatch();
    // SAFETY: the hooks set above.
    unsafe {
        for hook in hooks {
            let _ = UnhookWindowsHookEx(hook);
        }
    }
    sink(WatchedInput::WatcherLost);
}

/// Pumps this thread's messages (the hooks are called from inside
/// `GetMessageW`) until the queue fails.
fn pump(kill: &KillSwitchHotkey, sink: &Sink, armed: &AtomicBool, hotkeys: &mut Hotkeys) {
    let mut msg = MSG::default();
    loop {
        // SAFETY: an out-parameter; messages of this thread.
        let got = unsafe { GetMessageW(&mut msg, None, 0, 0) };
        if got.0 <= 0 {
            return;
        }
        match msg.message {
            WM_TIMER => {
                if armed.load(Ordering::Relaxed)
                    && let Ok(p) = super::displays::cursor()
                {
                    sink(WatchedInput::Pointer(p));
                }
                hotkeys.follow(kill);
            }
            WM_HOTKEY if Some(msg.wParam.0 as i32) == hotkeys.current => {
                sink(WatchedInput::KillSwitch);
            }
            _ => {
                // SAFETY: a message this thread received.
                unsafe { DispatchMessageW(&msg) };
            }
        }
    }
}

impl InputWatcher for HookWatcher {
    fn start(self: Box<Self>, sink: Sink, armed: Arc<AtomicBool>) -> Result<(), BackendError> {
        let (tx, rx) = std::sync::mpsc::channel();
        let kill = self.kill;
        std::thread::Builder::new()
            .name("deskhand-hooks".into())
            .spawn(move || run(kill, sink, armed, tx))
            .map_err(|e| BackendError::Failed(format!("hook thread: {e}")))?;
        match rx.recv() {
            Ok(Ok(())) => Ok(()),
            Ok(Err(why)) => Err(BackendError::Unsupported(why)),
            Err(_) => Err(BackendError::Failed("the hook thread ended".into())),
        }
    }
}
