//! What APP_LAUNCH may start: deskhand drives GUI apps, it does not run
//! commands. A shell, an interpreter or a command runner (under any name:
//! a symlink's target and a script's interpreter count too), and a
//! terminal emulator given anything but its window options, are refused
//! unless the person's consent file names that executable.

use crate::backend::LaunchPlan;
use crate::error::EngineError;

/// Programs that run whatever they are given: shells, interpreters,
/// command runners and openers. Names ending in a version (`python3.11`)
/// match their stem.
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

/// Terminal emulators: they run a command when given one.
const TERMINALS: &[&str] = &[
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

/// The file name of `path`, without a version suffix (`python3.11` →
/// `python`, `perl5.36` → `perl`).
fn stem(path: &str) -> &str {
    let name = path.rsplit('/').next().unwrap_or(path);
    let bare = name.trim_end_matches(|c: char| c.is_ascii_digit() || c == '.');
    if bare.is_empty() { name } else { bare }
}

fn runs_commands(path: &str) -> bool {
    let name = path.rsplit('/').next().unwrap_or(path);
    COMMAND_RUNNERS.contains(&name) || COMMAND_RUNNERS.contains(&stem(path))
}

fn is_terminal(path: &str) -> bool {
    let name = path.rsplit('/').next().unwrap_or(path);
    TERMINALS.contains(&name)
}

/// The first argument a terminal may not take, if any.
fn terminal_command_arg(args: &[String]) -> Option<&str> {
    let mut args = args.iter();
    while let Some(arg) = args.next() {
        let flag = arg.split_once('=').map_or(arg.as_str(), |(f, _)| f);
        if TERMINAL_FLAGS.contains(&arg.as_str()) {
            continue;
        }
        if TERMINAL_OPTIONS_WITH_VALUE.contains(&flag) {
            if !arg.contains('=') && args.next().is_none() {
                return Some(arg);
            }
            continue;
        }
        return Some(arg);
    }
    None
}

fn refused(program: &str, why: &'static str) -> EngineError {
    EngineError::LaunchRefused {
        program: program.to_owned(),
        why,
    }
}

/// Checks `plan` against the policy; `allowed` are the executables the
/// person's consent file allows to run anything.
pub fn check(plan: &LaunchPlan, allowed: &[String]) -> Result<(), EngineError> {
    let names: Vec<&str> = std::iter::once(plan.program.as_str())
        .chain(plan.aliases.iter().map(String::as_str))
        .collect();
    if names.iter().any(|n| allowed.iter().any(|a| a == n)) {
        return Ok(());
    }
    if let Some(name) = names.iter().find(|n| runs_commands(n)) {
        tracing::warn!(program = %plan.program, runs = %name, "refused to launch a command runner");
        return Err(refused(
            &plan.program,
            "it runs commands (a shell, an interpreter or a command runner)",
        ));
    }
    if names.iter().any(|n| is_terminal(n))
        && let Some(arg) = terminal_command_arg(&plan.args)
    {
        tracing::warn!(program = %plan.program, arg = %arg.chars().take(64).collect::<String>(), "refused a terminal given a command");
        return Err(refused(
            &plan.program,
            "a terminal emulator takes only its window options (-T, -geometry, …), never a command",
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::LaunchTarget;

    fn plan(program: &str, args: &[&str], aliases: &[&str]) -> LaunchPlan {
        LaunchPlan {
            target: LaunchTarget::Executable(program.into()),
            program: program.into(),
            args: args.iter().map(|a| (*a).to_owned()).collect(),
            aliases: aliases.iter().map(|a| (*a).to_owned()).collect(),
        }
    }

    #[test]
    fn shells_interpreters_and_runners_are_refused_under_any_name() {
        for p in [
            plan("/bin/sh", &["-c", "touch x"], &[]),
            plan("/usr/bin/python3.11", &[], &[]),
            plan("/usr/bin/env", &["xterm"], &[]),
            plan("/usr/local/bin/innocent", &[], &["/usr/bin/dash"]),
            plan("/opt/tool/run.sh", &[], &["/bin/bash"]),
            plan("/usr/bin/xdg-open", &["/tmp/x.sh"], &[]),
        ] {
            let e = check(&p, &[]).expect_err(&p.program);
            assert!(matches!(e, EngineError::LaunchRefused { .. }), "{e:?}");
        }
        let allowed = ["/usr/bin/python3.11".to_owned()];
        assert!(check(&plan("/usr/bin/python3.11", &["app.py"], &[]), &allowed).is_ok());
    }

    #[test]
    fn terminals_take_window_options_only() {
        let xterm = |args: &[&str]| check(&plan("/usr/bin/xterm", args, &[]), &[]);
        assert!(xterm(&[]).is_ok());
        assert!(xterm(&["-T", "title", "-geometry", "80x24+0+0", "-ls"]).is_ok());
        assert!(xterm(&["--title=x"]).is_ok());
        for bad in [
            &["-e", "sh", "-c", "x"][..],
            &["-hold", "-e", "x"],
            &["--", "sh"],
            &["sh"],
            &["-T"],
            &["--command=sh"],
        ] {
            assert!(xterm(bad).is_err(), "{bad:?}");
        }
        let kitty = plan(
            "/usr/bin/kitty",
            &["sh", "-c", "x"],
            &["/usr/lib/kitty/kitty"],
        );
        assert!(check(&kitty, &[]).is_err());
        assert!(check(&plan("/usr/bin/xclock", &["-digital"], &[]), &[]).is_ok());
    }

    #[test]
    fn version_suffixes_are_stems() {
        assert_eq!(stem("/usr/bin/python3.11"), "python");
        assert_eq!(stem("perl5.36.0"), "perl");
        assert_eq!(stem("/usr/bin/xterm"), "xterm");
        assert!(!runs_commands("/usr/bin/shotwell"));
        assert!(!runs_commands("/usr/bin/nautilus"));
    }
}
