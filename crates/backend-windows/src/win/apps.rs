//! Apps: running processes (a Toolhelp snapshot), and launches with
//! `CreateProcessW` (through `std::process::Command`, never a shell).
//! What makes a program an installed application is its App Paths entry
//! in the registry: one under `HKEY_LOCAL_MACHINE` (written by an
//! installer, as administrator) makes it launchable; one under
//! `HKEY_CURRENT_USER` (the person's account, or anything working in it,
//! could have written it) only names it, as does any entry naming a
//! program in a folder the person's account can write (anywhere but the
//! system's program folders, and there `%ProgramData%`, the person's own
//! folders and the Windows folder's writable ones: see
//! [`crate::launch::in_writable_folder`]). Start Menu shortcuts count the
//! same way (`shortcuts.rs`): the machine's launch, the person's only
//! name. A program's version resource names it too: a renamed copy of
//! `cmd.exe` still goes by `cmd` (`version.rs`).

use std::os::windows::io::AsRawHandle;
use std::os::windows::process::CommandExt;

use deskhand_backend::{
    AppEntry, Apps, BackendError, EntryArgs, FileId, LaunchPlan, LaunchTarget, ProcessInfo,
    RunningProgram,
};
use windows::Win32::Foundation::{CloseHandle, HANDLE};
use windows::Win32::Storage::FileSystem::{BY_HANDLE_FILE_INFORMATION, GetFileInformationByHandle};
use windows::Win32::System::Diagnostics::ToolHelp::{
    CreateToolhelp32Snapshot, PROCESSENTRY32W, Process32FirstW, Process32NextW, TH32CS_SNAPPROCESS,
};
use windows_registry::{CURRENT_USER, Key, LOCAL_MACHINE};

use super::window_list::image_of;
use crate::launch::{
    WRITABLE_UNDER_SYSTEM_ROOT, aliases, app_path, file_name, in_writable_folder, is_absolute,
    program_name,
};

const APP_PATHS: &str = r"Software\Microsoft\Windows\CurrentVersion\App Paths";

/// `CREATE_NEW_PROCESS_GROUP | DETACHED_PROCESS`: the app gets no console
/// and no Ctrl+C of deskhand's.
const DETACHED: u32 = 0x0000_0200 | 0x0000_0008;

pub(crate) struct WinApps;

/// An installed app's entry (App Paths, or a Start Menu shortcut): its id
/// (the key's name without `.exe`, the shortcut's name), the program it
/// names, and whether the person's account could have written it.
pub(super) struct Registered {
    pub(super) id: String,
    pub(super) program: String,
    pub(super) user_writable: bool,
}

fn registered_in(root: &Key, user_writable: bool, out: &mut Vec<Registered>) {
    let Ok(paths) = root.open(APP_PATHS) else {
        return;
    };
    let Ok(names) = paths.keys() else { return };
    for name in names {
        let Ok(key) = paths.open(&name) else { continue };
        let Ok(value) = key.get_string("") else {
            continue;
        };
        let program = app_path(&value, |n| std::env::var(n).ok());
        if !is_absolute(&program) {
            continue;
        }
        out.push(Registered {
            id: program_name(&name),
            program,
            user_writable,
        });
    }
}

fn registered() -> Vec<Registered> {
    let mut out = Vec::new();
    registered_in(LOCAL_MACHINE, false, &mut out);
    registered_in(CURRENT_USER, true, &mut out);
    out.extend(super::shortcuts::registered());
    out
}

/// The system's program folders, from the environment.
fn installed_dirs() -> Vec<String> {
    [
        "ProgramFiles",
        "ProgramFiles(x86)",
        "ProgramW6432",
        "SystemRoot",
    ]
    .iter()
    .filter_map(|v| std::env::var(v).ok())
    .collect()
}

/// The folders inside the system's that the person's account can write:
/// their own (profile, application data, temporary files), the shared
/// ones every account writes (`%ProgramData%`, `%PUBLIC%`), and the
/// Windows folder's writable ones.
fn writable_dirs() -> Vec<String> {
    let mut dirs: Vec<String> = [
        "USERPROFILE",
        "APPDATA",
        "LOCALAPPDATA",
        "TEMP",
        "TMP",
        "ProgramData",
        "ALLUSERSPROFILE",
        "PUBLIC",
    ]
    .iter()
    .filter_map(|v| std::env::var(v).ok())
    .collect();
    if let Ok(root) = std::env::var("SystemRoot") {
        dirs.extend(
            WRITABLE_UNDER_SYSTEM_ROOT
                .iter()
                .map(|d| format!(r"{}\{d}", root.trim_end_matches(['\\', '/']))),
        );
    }
    dirs
}

fn entry_of(r: &Registered) -> AppEntry {
    AppEntry {
        id: r.id.clone(),
        terminal: false,
        categories: Vec::new(),
        args: EntryArgs::Many,
        // An entry the person's account could write, or one naming a
        // program in a folder it can write, launches nothing.
        user_writable: r.user_writable
            || in_writable_folder(&r.program, &installed_dirs(), &writable_dirs()),
    }
}

/// Every name a launch of `program` runs under: its own and its opener's
/// ([`aliases`]), and the names its version resource gives its file.
fn names_of(program: &str) -> Vec<String> {
    let mut names = aliases(program);
    for original in super::version::original_names(program) {
        let name = program_name(&original);
        if !names.contains(&name) {
            names.push(name);
        }
    }
    names
}

/// The identity of the file at `path`: its volume's serial number and its
/// index on that volume.
pub(crate) fn file_id_of(path: &str) -> Option<FileId> {
    let file = std::fs::File::open(path).ok()?;
    let mut info = BY_HANDLE_FILE_INFORMATION::default();
    let handle = HANDLE(file.as_raw_handle());
    // SAFETY: a valid handle of `file` and an out-parameter.
    unsafe { GetFileInformationByHandle(handle, &mut info) }.ok()?;
    Some(FileId {
        device: u64::from(info.dwVolumeSerialNumber),
        inode: (u64::from(info.nFileIndexHigh) << 32) | u64::from(info.nFileIndexLow),
    })
}

/// The entries that name the file `file`.
fn entries_naming(file: Option<FileId>) -> Vec<AppEntry> {
    let Some(file) = file else { return Vec::new() };
    registered()
        .iter()
        .filter(|r| file_id_of(&r.program) == Some(file))
        .map(entry_of)
        .collect()
}

impl Apps for WinApps {
    fn processes(&mut self) -> Result<Vec<ProcessInfo>, BackendError> {
        // SAFETY: the snapshot is closed before returning; each entry has
        // its size set.
        unsafe {
            let snapshot = CreateToolhelp32Snapshot(TH32CS_SNAPPROCESS, 0)
                .map_err(|e| super::failed("CreateToolhelp32Snapshot", e))?;
            let mut entry = PROCESSENTRY32W {
                dwSize: std::mem::size_of::<PROCESSENTRY32W>() as u32,
                ..Default::default()
            };
            let mut out = Vec::new();
            let mut more = Process32FirstW(snapshot, &mut entry).is_ok();
            while more {
                let len = entry.szExeFile.iter().position(|&c| c == 0).unwrap_or(0);
                let exe_name = String::from_utf16_lossy(&entry.szExeFile[..len]);
                let pid = entry.th32ProcessID;
                if pid != 0 {
                    out.push(ProcessInfo {
                        pid,
                        name: program_name(&exe_name),
                        exe: image_of(pid),
                        app_id: None,
                    });
                }
                more = Process32NextW(snapshot, &mut entry).is_ok();
            }
            let _ = CloseHandle(snapshot);
            Ok(out)
        }
    }

    fn resolve(
        &mut self,
        target: &LaunchTarget,
        args: &[String],
    ) -> Result<LaunchPlan, BackendError> {
        let program = match target {
            LaunchTarget::Executable(path) => {
                if !is_absolute(path) {
                    return Err(BackendError::InvalidTarget(format!(
                        "{path:?} is not an absolute path (C:\\...)"
                    )));
                }
                path.clone()
            }
            LaunchTarget::AppId(id) => {
                let wanted = program_name(id);
                registered()
                    .into_iter()
                    .find(|r| r.id == wanted)
                    .map(|r| r.program)
                    .ok_or_else(|| {
                        BackendError::InvalidTarget(format!(
                            "no installed application {id:?} (App Paths in the registry, or a Start Menu shortcut)"
                        ))
                    })?
            }
        };
        if !std::path::Path::new(&program).is_file() {
            return Err(BackendError::InvalidTarget(format!(
                "{program:?} is not a file"
            )));
        }
        let file = file_id_of(&program);
        Ok(LaunchPlan {
            target: target.clone(),
            aliases: names_of(&program),
            entries: entries_naming(file),
            program,
            args: args.to_vec(),
            file,
        })
    }

    fn launch(&mut self, plan: &LaunchPlan) -> Result<u32, BackendError> {
        let dir = std::path::Path::new(&plan.program).parent();
        let mut command = std::process::Command::new(&plan.program);
        command
            .args(&plan.args)
            .creation_flags(DETACHED)
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null());
        if let Some(dir) = dir {
            command.current_dir(dir);
        }
        let child = command.spawn().map_err(|e| {
            BackendError::Failed(format!("starting {}: {e}", file_name(&plan.program)))
        })?;
        Ok(child.id())
    }

    fn file_id(&mut self, path: &str) -> Option<FileId> {
        file_id_of(path)
    }

    fn program_of(&mut self, pid: u32) -> Option<RunningProgram> {
        let exe = image_of(pid)?;
        let entries = entries_naming(file_id_of(&exe));
        Some(RunningProgram { exe, entries })
    }
}
