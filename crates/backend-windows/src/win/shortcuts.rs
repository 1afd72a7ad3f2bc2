//! Start Menu shortcuts as installed applications: most apps an installer
//! puts on Windows have one, few have an App Paths entry. A shortcut in the
//! machine's Start Menu (`%ProgramData%`, written as administrator) makes
//! its program launchable by the shortcut's name; one in the person's own
//! Start Menu (`%APPDATA%`) only names it, as an `HKEY_CURRENT_USER` App
//! Paths entry does. Only shortcuts to programs (`.exe`) count, and their
//! arguments are never used: the launch rules judge the program.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::SystemTime;

use windows::Win32::System::Com::{
    CLSCTX_INPROC_SERVER, COINIT_APARTMENTTHREADED, CoCreateInstance, CoInitializeEx, IPersistFile,
    STGM_READ,
};
use windows::Win32::UI::Shell::{IShellLinkW, SLGP_RAWPATH, ShellLink};
use windows::core::{HSTRING, Interface};

use super::apps::Registered;
use crate::launch::{app_path, is_absolute, program_name};

/// The Start Menu's programs folder under `base` (a profile's
/// `%APPDATA%` or `%ProgramData%`).
fn programs_under(base: &str) -> PathBuf {
    Path::new(base).join(r"Microsoft\Windows\Start Menu\Programs")
}

/// The shortcuts of the machine's and the person's Start Menu, each
/// naming its program.
pub(super) fn registered() -> Vec<Registered> {
    // A thread that is already in an apartment keeps it; a shortcut
    // object works in either.
    // SAFETY: plain COM initialisation of this thread.
    let _ = unsafe { CoInitializeEx(None, COINIT_APARTMENTTHREADED) };
    let mut out = Vec::new();
    for (var, user_writable) in [("ProgramData", false), ("APPDATA", true)] {
        let Ok(base) = std::env::var(var) else {
            continue;
        };
        let mut files = Vec::new();
        links_in(&programs_under(&base), 4, &mut files);
        out.extend(files.iter().filter_map(|link| {
            let program = cached_target_of(link)?;
            let name = link.file_stem()?.to_string_lossy();
            Some(Registered {
                id: program_name(&name),
                program,
                user_writable,
            })
        }));
    }
    out
}

/// The `.lnk` files in `dir` and its folders, `depth` levels down.
fn links_in(dir: &Path, depth: u32, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        let Ok(kind) = entry.file_type() else {
            continue;
        };
        if kind.is_dir() && depth > 0 {
            links_in(&path, depth - 1, out);
        } else if kind.is_file()
            && path
                .extension()
                .is_some_and(|e| e.eq_ignore_ascii_case("lnk"))
        {
            out.push(path);
        }
    }
}

/// The targets of the shortcuts read so far, with the modification time
/// they were read at: the launch rules ask for them before every act, and
/// loading a shortcut is a COM call.
static TARGETS: Mutex<Option<Targets>> = Mutex::new(None);

/// Each shortcut read: its modification time then, and its target.
type Targets = HashMap<PathBuf, (SystemTime, Option<String>)>;

/// [`target_of`], read again only when the shortcut changed.
fn cached_target_of(link: &Path) -> Option<String> {
    let modified = std::fs::metadata(link).and_then(|m| m.modified()).ok()?;
    let mut cache = TARGETS.lock().unwrap_or_else(|p| p.into_inner());
    let cache = cache.get_or_insert_with(HashMap::new);
    if let Some((at, target)) = cache.get(link)
        && *at == modified
    {
        return target.clone();
    }
    let target = target_of(link);
    cache.insert(link.to_owned(), (modified, target.clone()));
    target
}

/// The program a shortcut starts, when it is an absolute path to an
/// `.exe` (environment variables expanded).
fn target_of(link: &Path) -> Option<String> {
    // SAFETY: COM objects of this thread, released when dropped; the
    // buffer is passed with its length.
    let raw = unsafe {
        let shell: IShellLinkW = CoCreateInstance(&ShellLink, None, CLSCTX_INPROC_SERVER).ok()?;
        shell
            .cast::<IPersistFile>()
            .ok()?
            .Load(&HSTRING::from(link.as_os_str()), STGM_READ)
            .ok()?;
        let mut buf = [0u16; 1024];
        shell
            .GetPath(&mut buf, std::ptr::null_mut(), SLGP_RAWPATH.0 as u32)
            .ok()?;
        let len = buf.iter().position(|&c| c == 0).unwrap_or(buf.len());
        String::from_utf16_lossy(&buf[..len])
    };
    let program = app_path(&raw, |n| std::env::var(n).ok());
    let exe = program.to_ascii_lowercase().ends_with(".exe");
    (exe && is_absolute(&program)).then_some(program)
}
