//! macOS's tables of the engine's rules: the apps a person may refuse
//! input to and the programs the launch rules refuse. An app goes by its
//! bundle id and by its name (the `.app` without its extension, and its
//! executable's name), all in lower case: the backend gives the engine
//! those names in lower case (see [`crate::launch::aliases`]).

use deskhand_backend::{AppNames, ArgumentStyle, Key, LaunchTables, PolicyTables, RefusalTables};

/// Every table of a Mac desktop.
pub static MACOS: PolicyTables = PolicyTables {
    refusal: RefusalTables {
        terminals: AppNames {
            names: TERMINALS,
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
        devtools_titles: &[
            "web inspector",
            "developer tools",
            "devtools",
            "browser toolbox",
        ],
    },
    launch: LaunchTables {
        command_runners: COMMAND_RUNNERS,
        terminals: TERMINALS,
        // A terminal is started with nothing at all: any argument, a
        // file included (a `.command` file is run), may be a command.
        terminal_options_with_value: &[],
        terminal_flags: &[],
        arguments: ArgumentStyle::Unix,
    },
    paste: &[Key::Super, Key::Char('v')],
};

/// Terminal emulators, by name and bundle id.
const TERMINALS: &[&str] = &[
    "terminal",
    "com.apple.terminal",
    "iterm",
    "iterm2",
    "com.googlecode.iterm2",
    "alacritty",
    "org.alacritty",
    "kitty",
    "net.kovidgoyal.kitty",
    "wezterm",
    "wezterm-gui",
    "com.github.wez.wezterm",
    "warp",
    "dev.warp.warp-stable",
    "hyper",
    "co.zeit.hyper",
    "ghostty",
    "com.mitchellh.ghostty",
    "tabby",
    "org.tabby",
];

/// The system's settings and the tools that change the system: users,
/// passwords, disks, processes, directory services.
const SYSTEM_SETTINGS: &[&str] = &[
    "system settings",
    "system preferences",
    "com.apple.systempreferences",
    "com.apple.settings",
    "keychain access",
    "com.apple.keychainaccess",
    "passwords",
    "com.apple.passwords",
    "disk utility",
    "com.apple.diskutility",
    "activity monitor",
    "com.apple.activitymonitor",
    "directory utility",
    "com.apple.directoryutility",
    "migration assistant",
    "com.apple.migrateassistant",
    "securityagent",
    "com.apple.securityagent",
];

/// Installers and package managers.
const PACKAGE_MANAGERS: &[&str] = &[
    "app store",
    "com.apple.appstore",
    "installer",
    "com.apple.installer",
    "software update",
    "com.apple.softwareupdate",
    "brew",
    "port",
];

/// Programs that run whatever they are given: shells, AppleScript and
/// automation, interpreters, openers and command wrappers.
const COMMAND_RUNNERS: &[&str] = &[
    // shells
    "sh",
    "bash",
    "zsh",
    "dash",
    "csh",
    "tcsh",
    "ksh",
    "fish",
    "nu",
    "pwsh",
    "login",
    "su",
    "sudo",
    "screen",
    "tmux",
    "ssh",
    // AppleScript, JavaScript for Automation, automation apps
    "osascript",
    "osacompile",
    "script editor",
    "com.apple.scripteditor2",
    "automator",
    "com.apple.automator",
    "automator application stub",
    // the executable of every AppleScript/JXA app Script Editor saves
    // (an applet, or a droplet that takes dropped files): it runs the
    // bundle's script, whatever the bundle is called
    "applet",
    "droplet",
    "shortcuts",
    "com.apple.shortcuts",
    // command wrappers and openers
    "env",
    "open",
    "xargs",
    "nohup",
    "caffeinate",
    "script",
    "expect",
    "launchctl",
    "xcrun",
    "arch",
    // interpreters
    "python",
    "pythonw",
    "perl",
    "ruby",
    "node",
    "deno",
    "bun",
    "php",
    "lua",
    "tclsh",
    "wish",
    "swift",
    "java",
    "jshell",
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_name_is_lower_case() {
        for name in MACOS.names() {
            assert_eq!(name, name.to_lowercase(), "{name}");
            assert!(!name.ends_with(".app"), "{name}");
        }
    }

    #[test]
    fn the_issue_s_programs_are_refused() {
        for name in [
            "osascript",
            "sh",
            "bash",
            "zsh",
            "python",
            "perl",
            "open",
            "applet",
            "droplet",
        ] {
            assert!(MACOS.launch.command_runners.contains(&name), "{name}");
        }
        for name in [
            "terminal",
            "com.apple.terminal",
            "iterm2",
            "com.googlecode.iterm2",
        ] {
            assert!(MACOS.launch.terminals.contains(&name), "{name}");
        }
        assert_eq!(MACOS.paste, [Key::Super, Key::Char('v')]);
    }
}
