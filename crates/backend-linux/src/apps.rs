//! Apps on Linux: the person's processes from /proc, and launching without
//! a shell: an absolute executable path, or a `.desktop` id resolved from
//! the XDG data directories (`app_entries.rs`: its `Exec` line split as
//! the Desktop Entry spec says, the caller's arguments in its field code's
//! place). Every plan says which installed entries name the file that
//! would run (by device and inode), for the engine's launch policy.
//! Launched apps run in a session of their own on deskhand's display, and
//! are reaped when they exit.

use std::ffi::OsString;
use std::os::unix::fs::MetadataExt;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use deskhand_backend::{
    Apps, BackendError, FileId, LaunchPlan, LaunchTarget, ProcessInfo, RunningProgram,
};

use crate::app_entries::{self, EntryCache, Installed, find_program, is_executable};

/// How long the entries read for telling a window's app are reused (a
/// refusal check runs on every act).
const ENTRIES_MAX_AGE: Duration = Duration::from_secs(2);

/// The person's apps on a Linux desktop.
pub struct LinuxApps {
    /// The variables that name deskhand's desktop to a launched app
    /// (`DISPLAY` on X11, `WAYLAND_DISPLAY` on Wayland).
    desktop_env: Vec<(OsString, OsString)>,
    uid: u32,
    entries: EntryCache,
}

impl LinuxApps {
    /// Apps launched with `desktop_env` naming deskhand's desktop.
    pub fn new(desktop_env: Vec<(OsString, OsString)>) -> Self {
        // SAFETY: getuid has no preconditions.
        let uid = unsafe { libc::getuid() };
        Self {
            desktop_env,
            uid,
            entries: EntryCache::default(),
        }
    }
}

fn invalid(msg: impl Into<String>) -> BackendError {
    BackendError::InvalidTarget(msg.into())
}

/// The other names `program` goes by: where its symlinks lead, and for a
/// script its interpreter (and what `env` in its `#!` line would run).
fn aliases(program: &Path) -> Vec<String> {
    let mut names = Vec::new();
    let mut add = |p: &Path| {
        let name = p.to_string_lossy().into_owned();
        if !names.contains(&name) {
            names.push(name);
        }
    };
    if let Ok(real) = std::fs::canonicalize(program) {
        add(&real);
    }
    for word in shebang(program) {
        let p = PathBuf::from(&word);
        add(&p);
        if let Some(found) = find_program(&word) {
            add(&found);
            if let Ok(real) = std::fs::canonicalize(&found) {
                add(&real);
            }
        }
    }
    names
}

/// The interpreter of a `#!` script and its first word that is not an
/// option (what `#!/usr/bin/env python3` runs); `/bin/sh` for any other
/// file that is not an ELF binary (execvp runs it with `/bin/sh`); empty
/// for a binary.
fn shebang(program: &Path) -> Vec<String> {
    use std::io::Read;
    let mut head = [0u8; 256];
    let n = std::fs::File::open(program)
        .and_then(|mut f| f.read(&mut head))
        .unwrap_or(0);
    if head[..n].starts_with(b"\x7fELF") {
        return Vec::new();
    }
    let Some(line) = head[..n].strip_prefix(b"#!") else {
        return vec!["/bin/sh".to_owned()];
    };
    let line = line.split(|b| *b == b'\n').next().unwrap_or_default();
    let text = String::from_utf8_lossy(line);
    let mut words = text.split_whitespace();
    let mut out: Vec<String> = words.next().map(str::to_owned).into_iter().collect();
    if let Some(run) = words.find(|w| !w.starts_with('-')) {
        out.push(run.to_owned());
    }
    out
}

/// The variables of the desktop session a launched app gets from
/// deskhand's environment (besides those that name deskhand's desktop). Nothing of deskhand's own (`DESKHAND_*`, `RUST_LOG`, tokens,
/// whatever its parent set) reaches the app.
const SESSION_VARS: &[&str] = &[
    "HOME",
    "USER",
    "LOGNAME",
    "PATH",
    "SHELL",
    "LANG",
    "LANGUAGE",
    "TZ",
    "XAUTHORITY",
    "DBUS_SESSION_BUS_ADDRESS",
    "DESKTOP_SESSION",
    "XMODIFIERS",
    "GTK_IM_MODULE",
    "QT_IM_MODULE",
];

/// Prefixes of session variables (locale categories, XDG directories and
/// session facts).
const SESSION_PREFIXES: &[&str] = &["LC_", "XDG_"];

/// The session's variables among `vars`.
fn session_env(
    vars: impl Iterator<Item = (OsString, OsString)>,
) -> impl Iterator<Item = (OsString, OsString)> {
    vars.filter(|(name, _)| {
        name.to_str().is_some_and(|n| {
            SESSION_VARS.contains(&n) || SESSION_PREFIXES.iter().any(|p| n.starts_with(p))
        })
    })
}

/// Marks every descriptor from `first` up close-on-exec, so that a
/// launched app inherits none of deskhand's (its X connections, the
/// listening socket, the overlay's pipes) whatever flags they were opened
/// with. Runs in the child between fork and exec.
fn close_on_exec_from(first: libc::c_int) {
    const CLOSE_RANGE_CLOEXEC: libc::c_uint = 1 << 2;
    // SAFETY: close_range only changes descriptor flags (Linux 5.11+).
    let done = unsafe {
        libc::syscall(
            libc::SYS_close_range,
            first as libc::c_uint,
            libc::c_uint::MAX,
            CLOSE_RANGE_CLOEXEC,
        )
    } == 0;
    if done {
        return;
    }
    // SAFETY: sysconf has no preconditions.
    let max = unsafe { libc::sysconf(libc::_SC_OPEN_MAX) };
    let max = if max > 0 { max as libc::c_int } else { 65_536 };
    for fd in first..max {
        // SAFETY: F_SETFD on a descriptor that is not open fails with
        // EBADF and changes nothing.
        unsafe {
            libc::fcntl(fd, libc::F_SETFD, libc::FD_CLOEXEC);
        }
    }
}

impl Apps for LinuxApps {
    fn processes(&mut self) -> Result<Vec<ProcessInfo>, BackendError> {
        let dir = std::fs::read_dir("/proc").map_err(|e| BackendError::Failed(e.to_string()))?;
        let mut out = Vec::new();
        for entry in dir.flatten() {
            let Some(pid) = entry
                .file_name()
                .to_str()
                .and_then(|n| n.parse::<u32>().ok())
            else {
                continue;
            };
            let path = entry.path();
            if path.metadata().map(|m| m.uid()).ok() != Some(self.uid) {
                continue;
            }
            let Ok(exe) = std::fs::read_link(path.join("exe")) else {
                continue; // kernel threads and processes gone meanwhile
            };
            let name = std::fs::read_to_string(path.join("comm"))
                .map(|c| c.trim_end().to_owned())
                .unwrap_or_default();
            out.push(ProcessInfo {
                pid,
                name,
                exe: Some(exe.to_string_lossy().into_owned()),
                app_id: None,
            });
        }
        out.sort_by_key(|p| p.pid);
        Ok(out)
    }

    fn resolve(
        &mut self,
        target: &LaunchTarget,
        args: &[String],
    ) -> Result<LaunchPlan, BackendError> {
        let installed = self.entries.entries(Duration::ZERO);
        let (program, argv, named) = match target {
            LaunchTarget::Executable(path) => {
                let p = PathBuf::from(path);
                if !p.is_absolute() || !is_executable(&p) {
                    return Err(invalid(format!(
                        "{path} is not an absolute path to an executable"
                    )));
                }
                let file = app_entries::file_id(&p);
                let named = naming(installed, file);
                (p, args.to_vec(), named)
            }
            LaunchTarget::AppId(id) => {
                let id = id.strip_suffix(".desktop").unwrap_or(id);
                if !app_entries::valid_id(id) {
                    return Err(invalid(format!("{id:?} is not a desktop entry id")));
                }
                let entry = installed
                    .iter()
                    .find(|e| e.entry.id == id && !e.hidden)
                    .ok_or_else(|| {
                        invalid(format!(
                            "no desktop entry {id}.desktop in the XDG data dirs"
                        ))
                    })?;
                let program = entry.program.clone().ok_or_else(|| {
                    invalid(format!(
                        "{} (from {id}.desktop) is not installed",
                        entry.words[0]
                    ))
                })?;
                (program, entry.argv(args), vec![entry])
            }
        };
        let mut names = aliases(&program);
        for e in &named {
            names.push(e.words[0].clone());
            names.extend(e.program.iter().map(|p| p.to_string_lossy().into_owned()));
        }
        names.sort();
        names.dedup();
        Ok(LaunchPlan {
            target: target.clone(),
            aliases: names,
            file: app_entries::file_id(&program),
            entries: named.iter().map(|e| e.entry.clone()).collect(),
            program: program.to_string_lossy().into_owned(),
            args: argv,
        })
    }

    fn launch(&mut self, plan: &LaunchPlan) -> Result<u32, BackendError> {
        let (program, argv) = (PathBuf::from(&plan.program), &plan.args);
        let mut cmd = Command::new(&program);
        cmd.args(argv)
            .env_clear()
            .envs(session_env(std::env::vars_os()))
            .envs(self.desktop_env.iter().cloned())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        // SAFETY: setsid, syscall(close_range), sysconf and fcntl are
        // async-signal-safe, and the closure allocates nothing.
        unsafe {
            cmd.pre_exec(|| {
                libc::setsid();
                close_on_exec_from(3);
                Ok(())
            });
        }
        let mut child = cmd.spawn().map_err(|e| {
            BackendError::Failed(format!("cannot start {}: {e}", program.display()))
        })?;
        let pid = child.id();
        tracing::info!(pid, program = %program.display(), "launched an app");
        // Reap it when it exits, so that no zombie is left behind.
        let _ = std::thread::Builder::new()
            .name("deskhand-reaper".into())
            .spawn(move || {
                let _ = child.wait();
            });
        Ok(pid)
    }

    fn file_id(&mut self, path: &str) -> Option<FileId> {
        app_entries::file_id(Path::new(path))
    }

    /// What `/proc/<pid>/exe` is: its path, and the entries that name
    /// that very file (or, when it was replaced since it started, that
    /// path).
    fn program_of(&mut self, pid: u32) -> Option<RunningProgram> {
        let link = PathBuf::from(format!("/proc/{pid}/exe"));
        let exe = std::fs::read_link(&link).ok()?;
        let exe = exe.to_string_lossy();
        let exe = exe.strip_suffix(" (deleted)").unwrap_or(&exe).to_owned();
        let file = app_entries::file_id(&link);
        let installed = self.entries.entries(ENTRIES_MAX_AGE);
        let mut named = naming(installed, file);
        named.extend(installed.iter().filter(|e| {
            !e.hidden && e.file != file && e.program.as_deref() == Some(Path::new(&exe))
        }));
        Some(RunningProgram {
            exe,
            entries: named.into_iter().map(|e| e.entry.clone()).collect(),
        })
    }
}

/// The installed entries (not deleted) that name `file`.
fn naming(installed: &[Installed], file: Option<FileId>) -> Vec<&Installed> {
    installed
        .iter()
        .filter(|e| !e.hidden && file.is_some() && e.file == file)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::{aliases, session_env, shebang};

    #[test]
    fn a_scripts_interpreter_and_a_symlinks_target_are_aliases() {
        let dir = std::env::temp_dir().join(format!("dh-apps-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("dir");
        let script = dir.join("tool");
        std::fs::write(&script, "#!/usr/bin/env -S python3 -u\nprint(1)\n").expect("write");
        assert_eq!(shebang(&script), ["/usr/bin/env", "python3"]);
        let names = aliases(&script);
        assert!(names.iter().any(|n| n == "/usr/bin/env"), "{names:?}");
        assert!(names.iter().any(|n| n == "python3"), "{names:?}");
        let link = dir.join("link");
        let _ = std::fs::remove_file(&link);
        std::os::unix::fs::symlink("/bin/sh", &link).expect("symlink");
        let real = std::fs::canonicalize("/bin/sh").expect("sh");
        assert!(aliases(&link).contains(&real.to_string_lossy().into_owned()));
        // A text file without `#!`: execvp hands it to /bin/sh.
        let plain = dir.join("plain");
        std::fs::write(&plain, "touch /tmp/x\n").expect("write");
        assert_eq!(shebang(&plain), ["/bin/sh"]);
        assert!(aliases(&plain).iter().any(|n| n == "/bin/sh"));
        assert!(shebang(&real).is_empty(), "a binary runs itself");
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn apps_get_the_session_variables_and_none_of_deskhands() {
        let vars = [
            ("HOME", "/home/p"),
            ("PATH", "/usr/bin"),
            ("LANG", "en_US.UTF-8"),
            ("LC_TIME", "C"),
            ("XDG_RUNTIME_DIR", "/run/user/1000"),
            ("DBUS_SESSION_BUS_ADDRESS", "unix:path=/run/user/1000/bus"),
            ("DESKHAND_OVERLAY", "/opt/overlay"),
            ("DESKHAND_LOG", "debug"),
            ("RUST_LOG", "trace"),
            ("API_TOKEN", "s3cret"),
            ("DISPLAY", ":0"),
        ]
        .map(|(k, v)| (k.into(), v.into()));
        let kept: Vec<String> = session_env(vars.into_iter())
            .map(|(k, _)| k.to_string_lossy().into_owned())
            .collect();
        assert_eq!(
            kept,
            [
                "HOME",
                "PATH",
                "LANG",
                "LC_TIME",
                "XDG_RUNTIME_DIR",
                "DBUS_SESSION_BUS_ADDRESS"
            ]
        );
    }
}
