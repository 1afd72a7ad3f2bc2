//! The freedesktop tables of the engine's rules, for every Linux backend:
//! the window classes, programs and application-entry categories of the
//! apps a person may refuse input to, and the programs the launch rules
//! refuse (shells, interpreters, command runners, terminal emulators).

use deskhand_backend::{AppNames, ArgumentStyle, Key, LaunchTables, PolicyTables, RefusalTables};

/// Every table of a Linux desktop (X11 or Wayland).
pub static LINUX: PolicyTables = PolicyTables {
    refusal: RefusalTables {
        terminals: AppNames {
            names: REFUSED_TERMINALS,
            categories: &["TerminalEmulator"],
        },
        system_settings: AppNames {
            names: SYSTEM_SETTINGS,
            categories: &[
                "DesktopSettings",
                "HardwareSettings",
                "X-GNOME-Settings-Panel",
            ],
        },
        package_managers: AppNames {
            names: PACKAGE_MANAGERS,
            categories: &["PackageManager"],
        },
        devtools_titles: DEVTOOLS_TITLES,
    },
    launch: LaunchTables {
        command_runners: COMMAND_RUNNERS,
        terminals: LAUNCHED_TERMINALS,
        terminal_options_with_value: TERMINAL_OPTIONS_WITH_VALUE,
        terminal_flags: TERMINAL_FLAGS,
        arguments: ArgumentStyle::Unix,
    },
    paste: &[Key::Control, Key::Char('v')],
};

/// Terminal emulators by window class (`WM_CLASS` class or instance, a
/// Wayland app id) or program name.
const REFUSED_TERMINALS: &[&str] = &[
    "xterm",
    "uxterm",
    "gnome-terminal",
    "gnome-terminal-server",
    "konsole",
    "xfce4-terminal",
    "alacritty",
    "kitty",
    "terminator",
    "tilix",
    "urxvt",
    "rxvt",
    "st",
    "st-256color",
    "wezterm",
    "org.wezfurlong.wezterm",
    "foot",
    "lxterminal",
    "mate-terminal",
    "qterminal",
    "terminology",
    "sakura",
    "guake",
    "tilda",
    "yakuake",
    "x-terminal-emulator",
    "kgx",
    "org.gnome.console",
    "org.gnome.ptyxis",
    "ptyxis",
    "blackbox",
    "com.raggesilver.blackbox",
    "cool-retro-term",
    "eterm",
    "aterm",
];

/// The desktop's settings: displays, network, users, disks, firewall.
const SYSTEM_SETTINGS: &[&str] = &[
    "gnome-control-center",
    "org.gnome.settings",
    "systemsettings",
    "systemsettings5",
    "xfce4-settings-manager",
    "unity-control-center",
    "cinnamon-settings",
    "mate-control-center",
    "lxqt-config",
    "nm-connection-editor",
    "gnome-disks",
    "org.gnome.diskutility",
    "arandr",
    "lxrandr",
    "xfce4-display-settings",
    "users-admin",
    "gnome-system-monitor",
    "dconf-editor",
    "ca.desrt.dconf-editor",
    "gufw",
    "firewall-config",
    "system-config-printer",
    "blueman-manager",
];

/// Software installers and package managers.
const PACKAGE_MANAGERS: &[&str] = &[
    "synaptic",
    "gnome-software",
    "org.gnome.software",
    "plasma-discover",
    "discover",
    "pamac-manager",
    "software-properties-gtk",
    "update-manager",
    "mintinstall",
    "mintupdate",
    "gdebi-gtk",
    "muon",
    "octopi",
    "snap-store",
    "io.snapcraft.store",
    "yumex",
    "dnfdragora",
];

/// How browsers' undocked developer tools' titles start (Chromium's
/// `DevTools - <url>`, Firefox's `Developer Tools — …` and its Browser
/// Toolbox).
const DEVTOOLS_TITLES: &[&str] = &["devtools", "developer tools", "browser toolbox"];

/// Programs that run whatever they are given: shells, interpreters,
/// command runners and openers.
const COMMAND_RUNNERS: &[&str] = &[
    // shells
    "sh",
    "bash",
    "dash",
    "zsh",
    "fish",
    "ksh",
    "mksh",
    "csh",
    "tcsh",
    "ash",
    "busybox",
    "rbash",
    "elvish",
    "nu",
    "xonsh",
    "pwsh",
    "powershell",
    "cmd",
    "osascript",
    // interpreters
    "python",
    "pypy",
    "perl",
    "ruby",
    "node",
    "nodejs",
    "deno",
    "bun",
    "lua",
    "luajit",
    "php",
    "tclsh",
    "wish",
    "expect",
    "awk",
    "gawk",
    "mawk",
    "nawk",
    "guile",
    "racket",
    "java",
    "jshell",
    "R",
    "Rscript",
    "julia",
    "ghci",
    "irb",
    "gdb",
    "sed",
    // command runners
    "env",
    "xargs",
    "nohup",
    "setsid",
    "timeout",
    "nice",
    "ionice",
    "taskset",
    "chrt",
    "stdbuf",
    "time",
    "watch",
    "script",
    "sudo",
    "doas",
    "pkexec",
    "su",
    "runuser",
    "systemd-run",
    "flatpak-spawn",
    "dbus-launch",
    "dbus-run-session",
    "xinit",
    "startx",
    "chroot",
    "unshare",
    "nsenter",
    "ssh",
    "strace",
    "ltrace",
    "valgrind",
    "find",
    "make",
    "run-parts",
    "at",
    "batch",
    "crontab",
    "parallel",
    "sg",
    "newgrp",
    "flock",
    "wine",
    "wine64",
    "exec",
    "eval",
    "xdg-open",
    "gio",
    "exo-open",
    "kde-open",
    "kde-open5",
    "gnome-open",
    "gvfs-open",
    "mimeopen",
    "see",
    "open",
    "x-www-browser-exec",
];

/// Terminal emulators' program names: they run a command when given one.
const LAUNCHED_TERMINALS: &[&str] = &[
    "xterm",
    "uxterm",
    "lxterm",
    "koi8rxterm",
    "x-terminal-emulator",
    "gnome-terminal",
    "gnome-terminal.wrapper",
    "konsole",
    "xfce4-terminal",
    "lxterminal",
    "mate-terminal",
    "qterminal",
    "terminator",
    "tilix",
    "alacritty",
    "kitty",
    "urxvt",
    "rxvt",
    "rxvt-unicode",
    "st",
    "stterm",
    "foot",
    "footclient",
    "wezterm",
    "wezterm-gui",
    "sakura",
    "terminology",
    "eterm",
    "guake",
    "tilda",
    "cool-retro-term",
    "hyper",
    "kgx",
    "ptyxis",
    "blackbox",
    "deepin-terminal",
    "contour",
    "ghostty",
    "warp-terminal",
    "tabby",
    "xiterm",
    "mlterm",
];

/// The only options a terminal emulator is started with: its window's
/// look and place, each with one value. Anything else (`-e`, `-x`,
/// `--command`, `--`, a bare word) could be a command.
const TERMINAL_OPTIONS_WITH_VALUE: &[&str] = &[
    "-T",
    "-title",
    "--title",
    "-geometry",
    "--geometry",
    "-g",
    "-name",
    "--name",
    "-class",
    "--class",
    "-fa",
    "-fs",
    "-fn",
    "-bg",
    "-fg",
    "-cr",
    "-bd",
    "-bw",
    "-xrm",
    "--role",
    "--working-directory",
    "--workdir",
    "-cd",
    "-w",
    "-sl",
];

/// Flags a terminal emulator may be given (no value, no command).
const TERMINAL_FLAGS: &[&str] = &["-ls", "+ls", "-rv", "+rv", "-sb", "+sb", "-maximized"];

#[cfg(test)]
mod tests {
    use super::*;

    fn no_repeats(table: &[&str]) {
        let mut seen = std::collections::HashSet::new();
        for name in table {
            assert!(seen.insert(name.to_lowercase()), "{name} is listed twice");
        }
    }

    #[test]
    fn every_table_names_each_app_once() {
        let r = &LINUX.refusal;
        for table in [
            r.terminals.names,
            r.system_settings.names,
            r.package_managers.names,
            r.devtools_titles,
            LINUX.launch.command_runners,
            LINUX.launch.terminals,
            LINUX.launch.terminal_options_with_value,
            LINUX.launch.terminal_flags,
        ] {
            no_repeats(table);
        }
        // Titles are compared with the lower-cased title.
        assert!(r.devtools_titles.iter().all(|t| *t == t.to_lowercase()));
    }
}
