//! Windows' tables of the engine's rules: the apps a person may refuse
//! input to (by program name without `.exe`, or window class), and the
//! programs the launch rules refuse (shells, script hosts, the system's
//! command runners, interpreters, terminals). Names are lower case: the
//! backend gives the engine a program's name in lower case without its
//! extension (see [`crate::launch`]).

use deskhand_backend::{AppNames, ArgumentStyle, Key, LaunchTables, PolicyTables, RefusalTables};

/// Every table of a Windows desktop.
pub static WINDOWS: PolicyTables = PolicyTables {
    refusal: RefusalTables {
        terminals: AppNames {
            names: REFUSED_TERMINALS,
            categories: &[],
        },
        system_settings: AppNames {
            names: SYSTEM_SETTINGS,
            categories: &[],
        },
        package_managers: AppNames {
            names: PACKAGE_MANAGERS,
            categories: &[],
        },
        devtools_titles: &["devtools", "developer tools", "browser toolbox"],
    },
    launch: LaunchTables {
        command_runners: COMMAND_RUNNERS,
        terminals: LAUNCHED_TERMINALS,
        terminal_options_with_value: &[],
        terminal_flags: &[],
        arguments: ArgumentStyle::Windows,
    },
    paste: &[Key::Control, Key::Char('v')],
};

/// Terminals and consoles by program name or window class (a console
/// window's class is `ConsoleWindowClass`, Windows Terminal's
/// `CASCADIA_HOSTING_WINDOW_CLASS`, ConEmu's `VirtualConsoleClass`,
/// PuTTY's `PuTTY`, Tera Term's `VTWin32`).
const REFUSED_TERMINALS: &[&str] = &[
    "cmd",
    "conhost",
    "openconsole",
    "windowsterminal",
    "wt",
    "powershell",
    "powershell_ise",
    "pwsh",
    "wineconsole",
    "mintty",
    "alacritty",
    "wezterm-gui",
    "conemu",
    "conemu64",
    "conemuc",
    "conemuc64",
    "putty",
    "kitty",
    "tabby",
    "hyper",
    "mobaxterm",
    "ttermpro",
    "warp",
    "git-bash",
    "git-cmd",
    "consolewindowclass",
    "cascadia_hosting_window_class",
    "virtualconsoleclass",
    "vtwin32",
];

/// The system's settings: Settings, Control Panel, consoles of the
/// management console, the registry, services, users, the firewall.
const SYSTEM_SETTINGS: &[&str] = &[
    "systemsettings",
    "control",
    "mmc",
    "regedit",
    "regedt32",
    "taskmgr",
    "msconfig",
    "gpedit",
    "secpol",
    "lusrmgr",
    "services",
    "compmgmt",
    "devmgmt",
    "diskmgmt",
    "wf",
    "netplwiz",
    "useraccountcontrolsettings",
    "winecfg",
];

/// Installers and package managers.
const PACKAGE_MANAGERS: &[&str] = &[
    "msiexec",
    "winget",
    "appinstaller",
    "winstore.app",
    "choco",
    "scoop",
    "uninstaller",
];

/// Programs that run whatever they are given: shells, script hosts, the
/// system's command runners and loaders, interpreters and openers.
const COMMAND_RUNNERS: &[&str] = &[
    // shells and consoles
    "cmd",
    "command",
    "powershell",
    "powershell_ise",
    "pwsh",
    "conhost",
    "openconsole",
    "wineconsole",
    "bash",
    "sh",
    "wsl",
    "wslhost",
    "wslg",
    // script hosts and loaders
    "wscript",
    "cscript",
    "mshta",
    "rundll32",
    "regsvr32",
    "msiexec",
    "hh",
    "cmstp",
    "installutil",
    "regasm",
    "regsvcs",
    "msbuild",
    "msxsl",
    "odbcconf",
    "pcalua",
    "forfiles",
    "schtasks",
    "at",
    "wmic",
    "winrm",
    "sc",
    "reg",
    "runas",
    "certutil",
    "bitsadmin",
    "mmc",
    "control",
    // openers: they run whatever a file or URL is associated with
    "explorer",
    "start",
    "winebrowser",
    "wine",
    "winepath",
    // interpreters
    "python",
    "pythonw",
    "py",
    "pyw",
    "perl",
    "ruby",
    "rubyw",
    "node",
    "deno",
    "bun",
    "java",
    "javaw",
    "php",
    "lua",
    "tclsh",
    "wish",
];

/// Terminals: given anything at all, they run it.
const LAUNCHED_TERMINALS: &[&str] = &[
    "wt",
    "windowsterminal",
    "mintty",
    "alacritty",
    "wezterm-gui",
    "conemu",
    "conemu64",
    "putty",
    "kitty",
    "tabby",
    "hyper",
    "mobaxterm",
    "ttermpro",
    "warp",
    "git-bash",
    "git-cmd",
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_name_is_lower_case_without_an_extension() {
        for name in WINDOWS.names() {
            assert_eq!(name, name.to_lowercase(), "{name}");
            assert!(!name.ends_with(".exe"), "{name}");
        }
    }

    #[test]
    fn the_issue_s_programs_are_refused() {
        for name in [
            "cmd",
            "powershell",
            "pwsh",
            "wscript",
            "cscript",
            "mshta",
            "rundll32",
            "regsvr32",
            "msiexec",
            "wsl",
            "bash",
        ] {
            assert!(WINDOWS.launch.command_runners.contains(&name), "{name}");
        }
    }

    #[test]
    fn the_common_windows_terminals_are_refused_and_not_launched() {
        for name in [
            "conemu64",
            "putty",
            "tabby",
            "hyper",
            "mobaxterm",
            "ttermpro",
            "warp",
            "git-bash",
            "git-cmd",
        ] {
            assert!(WINDOWS.refusal.terminals.names.contains(&name), "{name}");
            assert!(WINDOWS.launch.terminals.contains(&name), "{name}");
        }
        // By window class, whatever the program file is called.
        for class in ["virtualconsoleclass", "vtwin32", "consolewindowclass"] {
            assert!(WINDOWS.refusal.terminals.names.contains(&class), "{class}");
        }
    }
}
