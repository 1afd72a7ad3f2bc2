//! What differs per OS in the engine's rules, brought by each backend: the
//! apps of each class a person may refuse input to, the programs that run
//! commands (the launch rules) and the chord that pastes. The engine keeps
//! the rules; these are only their tables.

use crate::Key;

/// One class of apps: the names it goes by (a window's class or instance,
/// a program's file name, an application entry's id; compared in any case)
/// and the application-entry categories that mark it.
#[derive(Debug, Clone, Copy)]
pub struct AppNames {
    /// Window classes, program file names and app ids.
    pub names: &'static [&'static str],
    /// Categories of an application entry (`TerminalEmulator`).
    pub categories: &'static [&'static str],
}

/// The apps of each class the refusal policy names.
#[derive(Debug, Clone, Copy)]
pub struct RefusalTables {
    /// Terminal emulators.
    pub terminals: AppNames,
    /// The desktop's settings.
    pub system_settings: AppNames,
    /// Software installers and package managers.
    pub package_managers: AppNames,
    /// How the titles of browsers' undocked developer tools start (lower
    /// case).
    pub devtools_titles: &'static [&'static str],
}

/// What a file is among the arguments an application entry is given: the
/// launch rules take files and URLs only, never options, and what looks
/// like which differs per OS.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ArgumentStyle {
    /// Unix: a file is an absolute path (`/…`); options start with `-`.
    Unix,
    /// Windows: a file is a drive path (`C:\…`) or a UNC path
    /// (`\\server\share\…`); options start with `-` or `/` (Chromium,
    /// Edge and most Windows programs take `/x` as a switch).
    Windows,
}

/// The programs the launch rules refuse, by file name.
#[derive(Debug, Clone, Copy)]
pub struct LaunchTables {
    /// Shells, interpreters, command runners and openers: they run what
    /// they are given. A name ending in a version (`python3.11`) matches
    /// its stem.
    pub command_runners: &'static [&'static str],
    /// Terminal emulators: they run a command when given one.
    pub terminals: &'static [&'static str],
    /// The only options a terminal is started with that take a value: its
    /// window's look and place.
    pub terminal_options_with_value: &'static [&'static str],
    /// The flags (no value) a terminal may be given.
    pub terminal_flags: &'static [&'static str],
    /// What a file argument looks like on this OS.
    pub arguments: ArgumentStyle,
}

/// Every table a backend brings.
#[derive(Debug, Clone, Copy)]
pub struct PolicyTables {
    /// The refusal policy's classes of apps.
    pub refusal: RefusalTables,
    /// The launch rules' programs.
    pub launch: LaunchTables,
    /// The keys that paste in the desktop's apps (Ctrl+V; Cmd+V on a Mac).
    pub paste: &'static [Key],
}

impl PolicyTables {
    /// Every program name in the tables (for the tables' own checks:
    /// lower case, no file extension).
    pub fn names(&self) -> impl Iterator<Item = &'static str> {
        let (launch, refusal) = (self.launch, self.refusal);
        launch
            .command_runners
            .iter()
            .chain(launch.terminals)
            .chain(refusal.terminals.names)
            .chain(refusal.system_settings.names)
            .chain(refusal.package_managers.names)
            .copied()
    }
}
