//! The mock's apps: its processes, installed applications' entries (a
//! calculator that opens files, an xterm that takes nothing) and launches
//! that start nothing but a listed process.

use std::hash::{Hash, Hasher};

use deskhand_backend::{
    AppEntry, Apps, BackendError, EntryArgs, FileId, LaunchPlan, LaunchTarget, ProcessInfo,
    RunningProgram,
};

use crate::MockDesktop;

/// Launched mock processes get pids from here up.
const FIRST_LAUNCHED_PID: u32 = 50_000;

/// The entries a new mock desktop has installed: `org.example.Calc`
/// (`/usr/bin/calc`, files) and `debian-xterm` (`/usr/bin/xterm`, a
/// terminal emulator that takes no arguments).
pub(crate) fn installed() -> Vec<(String, AppEntry)> {
    vec![
        (
            "/usr/bin/calc".into(),
            AppEntry {
                id: "org.example.Calc".into(),
                terminal: false,
                categories: vec!["Utility".into()],
                args: EntryArgs::Many,
                user_writable: false,
            },
        ),
        (
            "/usr/bin/xterm".into(),
            AppEntry {
                id: "debian-xterm".into(),
                terminal: false,
                categories: vec!["System".into(), "TerminalEmulator".into()],
                args: EntryArgs::None,
                user_writable: false,
            },
        ),
    ]
}

/// A path's identity: none for one containing `missing`; one containing
/// `link-to-NAME` is `/usr/bin/NAME` (a symlink or hardlink); any other is
/// itself.
fn identity(path: &str) -> Option<FileId> {
    if path.contains("missing") {
        return None;
    }
    let file = match path.split_once("link-to-") {
        Some((_, to)) => format!("/usr/bin/{to}"),
        None => path.to_owned(),
    };
    let mut h = std::collections::hash_map::DefaultHasher::new();
    file.hash(&mut h);
    Some(FileId {
        device: 1,
        inode: h.finish(),
    })
}

impl MockDesktop {
    /// The installed entries that name `file`, and the programs they name.
    fn naming(&self, file: Option<FileId>) -> (Vec<String>, Vec<AppEntry>) {
        self.state()
            .entries
            .iter()
            .filter(|(program, _)| file.is_some() && identity(program) == file)
            .map(|(program, entry)| (program.clone(), entry.clone()))
            .unzip()
    }
}

impl Apps for MockDesktop {
    fn processes(&mut self) -> Result<Vec<ProcessInfo>, BackendError> {
        Ok(self.state().processes.clone())
    }

    /// An app id names an installed entry; a path is the program itself
    /// (one containing `missing` does not exist, one containing `link-to-`
    /// goes by the name after it too).
    fn resolve(
        &mut self,
        target: &LaunchTarget,
        args: &[String],
    ) -> Result<LaunchPlan, BackendError> {
        let (program, entries) = match target {
            LaunchTarget::AppId(id) => {
                let found = self
                    .state()
                    .entries
                    .iter()
                    .find(|(_, e)| e.id == *id)
                    .cloned();
                let (program, entry) = found
                    .ok_or_else(|| BackendError::InvalidTarget(format!("no such app {id}")))?;
                (program, vec![entry])
            }
            LaunchTarget::Executable(path) => {
                if path.contains("missing") {
                    return Err(BackendError::InvalidTarget(format!("no such app {path}")));
                }
                (path.clone(), self.naming(identity(path)).1)
            }
        };
        let file = identity(&program);
        let mut aliases: Vec<String> = program
            .split_once("link-to-")
            .map(|(_, to)| vec![format!("/bin/{to}")])
            .unwrap_or_default();
        aliases.extend(self.naming(file).0.into_iter().filter(|p| *p != program));
        Ok(LaunchPlan {
            target: target.clone(),
            program,
            args: args.to_vec(),
            aliases,
            file,
            entries,
        })
    }

    /// Records the launch and starts a process.
    fn launch(&mut self, plan: &LaunchPlan) -> Result<u32, BackendError> {
        let mut s = self.state();
        let pid = FIRST_LAUNCHED_PID + s.launches.len() as u32;
        s.launches.push((plan.target.clone(), plan.args.clone()));
        s.processes.push(ProcessInfo {
            pid,
            name: plan
                .program
                .rsplit('/')
                .next()
                .unwrap_or_default()
                .to_owned(),
            exe: Some(plan.program.clone()),
            app_id: None,
        });
        Ok(pid)
    }

    fn file_id(&mut self, path: &str) -> Option<FileId> {
        identity(path)
    }

    /// A process's executable (its name when it has none) and the entries
    /// that name it.
    fn program_of(&mut self, pid: u32) -> Option<RunningProgram> {
        let process = self
            .state()
            .processes
            .iter()
            .find(|p| p.pid == pid)
            .cloned()?;
        let exe = process.exe.unwrap_or(process.name);
        let entries = self.naming(identity(&exe)).1;
        Some(RunningProgram { exe, entries })
    }
}
