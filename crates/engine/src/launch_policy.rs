//! What APP_LAUNCH may start: deskhand drives installed applications, it
//! does not run programs. An executable is launchable when an installed
//! application's entry (a `.desktop` file on Linux) that does not run in a
//! terminal names that very file (by identity, not by name), and only with
//! the arguments that entry accepts: files and URLs, never options. Even
//! then a shell, an interpreter or a command runner (under any name: a
//! symlink's target, a script's interpreter and the names entries give it
//! count too), and a terminal emulator given a command, are refused.
//! Anything else runs only when the person's consent file names the
//! executable in `launch_allow` (compared by identity too). Which
//! programs are command runners and terminals is the backend's table
//! ([`LaunchTables`]): they differ per OS.

use crate::backend::{AppEntry, ArgumentStyle, EntryArgs, FileId, LaunchPlan, LaunchTables};
use crate::error::EngineError;

/// The file name of `path`, without a version suffix (`python3.11` →
/// `python`, `perl5.36` → `perl`).
fn stem(path: &str) -> &str {
    let name = path.rsplit('/').next().unwrap_or(path);
    let bare = name.trim_end_matches(|c: char| c.is_ascii_digit() || c == '.');
    if bare.is_empty() { name } else { bare }
}

fn runs_commands(tables: &LaunchTables, path: &str) -> bool {
    let name = path.rsplit('/').next().unwrap_or(path);
    tables.command_runners.contains(&name) || tables.command_runners.contains(&stem(path))
}

fn is_terminal(tables: &LaunchTables, path: &str) -> bool {
    let name = path.rsplit('/').next().unwrap_or(path);
    tables.terminals.contains(&name)
}

/// The first argument a terminal may not take, if any.
fn terminal_command_arg<'a>(tables: &LaunchTables, args: &'a [String]) -> Option<&'a str> {
    let mut args = args.iter();
    while let Some(arg) = args.next() {
        let flag = arg.split_once('=').map_or(arg.as_str(), |(f, _)| f);
        if tables.terminal_flags.contains(&arg.as_str()) {
            continue;
        }
        if tables.terminal_options_with_value.contains(&flag) {
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

/// The URL schemes an entry's `%u`/`%U` may be given: documents, pages and
/// mail, never a scheme an app runs (`macro:`, `javascript:`, `vnd.…`).
const URL_SCHEMES: &[&str] = &["http", "https", "file", "ftp", "sftp", "smb", "mailto"];

/// The URL schemes a Windows app may be given: pages, local files and mail
/// (a Windows app hands other schemes to the shell, which runs their
/// handlers).
const WINDOWS_URL_SCHEMES: &[&str] = &["http", "https", "file", "mailto"];

fn url_of(arg: &str, schemes: &[&str]) -> bool {
    arg.split_once(':').is_some_and(|(scheme, rest)| {
        !rest.is_empty() && schemes.contains(&scheme.to_ascii_lowercase().as_str())
    })
}

/// Whether `arg` is a file or URL as a field code takes it: an absolute
/// path, or a URL of a document scheme. Anything else may be read by the
/// app as a command or an option (`-e`, vim's `+!cmd`, a bare name).
fn file_or_url(style: ArgumentStyle, arg: &str) -> bool {
    if arg.contains('\0') {
        return false;
    }
    match style {
        ArgumentStyle::Unix => arg.starts_with('/') || url_of(arg, URL_SCHEMES),
        ArgumentStyle::Windows => windows_file_or_url(arg),
    }
}

/// Windows: a drive path (`C:\x\y.txt`, `C:/x`) or a UNC path
/// (`\\server\share\x`), or an http(s), file or mailto URL. Never a
/// switch (`-x`, `--x`, `/x`: Chromium and Edge read `/gpu-launcher=…` as
/// one), a relative name, a device path (`\\.\`, `\\?\`), nor anything
/// with a control character, a quote or whitespace in a URL, which a
/// program parsing its own command line could split into a switch.
fn windows_file_or_url(arg: &str) -> bool {
    if arg.chars().any(|c| c.is_control() || c == '"') {
        return false;
    }
    let b = arg.as_bytes();
    let drive = b.len() >= 4
        && b[0].is_ascii_alphabetic()
        && b[1] == b':'
        && matches!(b[2], b'\\' | b'/')
        && !matches!(b[3], b'\\' | b'/');
    let unc =
        arg.len() > 2 && arg.starts_with("\\\\") && !matches!(b[2], b'\\' | b'/' | b'.' | b'?');
    if drive || unc {
        // `<>|*?` are no file's name; a second colon is a stream.
        return !arg[2..].contains(['<', '>', '|', '*', '?', ':']);
    }
    !arg.contains(char::is_whitespace) && url_of(arg, WINDOWS_URL_SCHEMES)
}

/// Whether `entry` accepts `args` from the caller: as many as its field
/// code takes, each an absolute path or a document URL.
fn accepts(style: ArgumentStyle, entry: &AppEntry, args: &[String]) -> bool {
    let fits = match entry.args {
        EntryArgs::None => args.is_empty(),
        EntryArgs::One => args.len() <= 1,
        EntryArgs::Many => true,
    };
    fits && args.iter().all(|a| file_or_url(style, a))
}

/// Checks `plan`, started with the caller's `args`, against the policy
/// with the backend's `tables`; `allowed` are the identities of the
/// executables the person's consent file allows to run anything.
pub fn check(
    tables: &LaunchTables,
    plan: &LaunchPlan,
    args: &[String],
    allowed: &[FileId],
) -> Result<(), EngineError> {
    if plan.file.is_some_and(|f| allowed.contains(&f)) {
        return Ok(());
    }
    let names: Vec<&str> = std::iter::once(plan.program.as_str())
        .chain(plan.aliases.iter().map(String::as_str))
        .collect();
    if let Some(name) = names.iter().find(|n| runs_commands(tables, n)) {
        tracing::warn!(program = %plan.program, runs = %name, "refused to launch a command runner");
        return Err(refused(
            &plan.program,
            "it runs commands (a shell, an interpreter or a command runner)",
        ));
    }
    if names.iter().any(|n| is_terminal(tables, n))
        && let Some(arg) = terminal_command_arg(tables, &plan.args)
    {
        tracing::warn!(program = %plan.program, arg = %arg.chars().take(64).collect::<String>(), "refused a terminal given a command");
        return Err(refused(
            &plan.program,
            "a terminal emulator takes only its window options (-T, -geometry, …), never a command",
        ));
    }
    let apps: Vec<&AppEntry> = plan.entries.iter().filter(|e| !e.terminal).collect();
    let installed: Vec<&AppEntry> = apps.iter().copied().filter(|e| !e.user_writable).collect();
    let why = if plan.entries.is_empty() {
        "it is not an installed application (no application entry names this file)"
    } else if apps.is_empty() {
        "its application entry runs it in a terminal (Terminal=true): it is a command-line program"
    } else if installed.is_empty() {
        "its application entry, or the program it runs, is in a place your account can change (your own data directory, or a file you own), so anything working in your apps could have written it: only the system's application entries make a program launchable"
    } else if !installed.iter().any(|e| accepts(tables.arguments, e, args)) {
        match tables.arguments {
            ArgumentStyle::Unix => {
                "its application entry accepts only files and URLs (one for %f or %u, any for %F or %U): absolute paths or http(s), file, ftp, sftp, smb and mailto URLs, never options, and no arguments when its Exec line has no field code"
            }
            ArgumentStyle::Windows => {
                "an installed app accepts only files and URLs: drive paths (C:\\...) or UNC paths (\\\\server\\share\\...) and http(s), file and mailto URLs, never options (-x, --x or /x)"
            }
        }
    } else {
        return Ok(());
    };
    tracing::warn!(program = %plan.program, why, "refused a launch");
    Err(refused(&plan.program, why))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::LaunchTarget;

    const DASH: FileId = FileId {
        device: 1,
        inode: 10,
    };
    const XCLOCK: FileId = FileId {
        device: 1,
        inode: 20,
    };

    /// A desktop's tables, as a backend brings them.
    const TABLES: LaunchTables = LaunchTables {
        command_runners: &["sh", "bash", "dash", "python", "env", "xdg-open"],
        terminals: &["xterm"],
        terminal_options_with_value: &["-T", "-geometry"],
        terminal_flags: &["-ls"],
        arguments: ArgumentStyle::Unix,
    };

    fn strs(v: &[&str]) -> Vec<String> {
        v.iter().map(|a| (*a).to_owned()).collect()
    }

    fn entry(id: &str, args: EntryArgs, terminal: bool) -> AppEntry {
        AppEntry {
            id: id.into(),
            terminal,
            categories: Vec::new(),
            args,
            user_writable: false,
        }
    }

    /// A plan by path: `program` is `file`, named by `entries`.
    fn plan(program: &str, args: &[&str], file: FileId, entries: Vec<AppEntry>) -> LaunchPlan {
        LaunchPlan {
            target: LaunchTarget::Executable(program.into()),
            program: program.into(),
            args: strs(args),
            aliases: Vec::new(),
            file: Some(file),
            entries,
        }
    }

    fn check_plan(p: &LaunchPlan, allowed: &[FileId]) -> Result<(), EngineError> {
        check(&TABLES, p, &p.args.clone(), allowed)
    }

    fn refused_because(p: &LaunchPlan, allowed: &[FileId], part: &str) {
        match check_plan(p, allowed) {
            Err(EngineError::LaunchRefused { why, .. }) => assert!(why.contains(part), "{why}"),
            other => panic!("{} {:?}: {other:?}", p.program, p.args),
        }
    }

    #[test]
    fn a_program_no_entry_names_is_not_an_app() {
        let loader = plan(
            "/lib64/ld-linux-x86-64.so.2",
            &["/bin/sh", "-c", "touch x"],
            FileId {
                device: 1,
                inode: 3,
            },
            Vec::new(),
        );
        refused_because(&loader, &[], "not an installed application");
        for tool in ["/usr/bin/tar", "/usr/bin/setpriv", "/usr/bin/tmux"] {
            refused_because(
                &plan(tool, &[], XCLOCK, Vec::new()),
                &[],
                "not an installed",
            );
        }
    }

    #[test]
    fn a_copy_of_dash_is_another_file_and_a_hardlink_is_dash() {
        // A copy under an innocent name: no entry names that file.
        let copy = plan(
            "/home/p/notes",
            &["-c", "id"],
            FileId {
                device: 2,
                inode: 99,
            },
            Vec::new(),
        );
        refused_because(&copy, &[], "not an installed application");
        // A hardlink of dash that an entry `Exec=sh -c …` names: the
        // entry's name for it counts.
        let mut link = plan(
            "/home/p/innocent",
            &[],
            DASH,
            vec![entry("runner", EntryArgs::None, false)],
        );
        link.aliases = strs(&["/usr/bin/sh"]);
        refused_because(&link, &[], "runs commands");
        // The person allowed dash: the hardlink is dash, the copy is not.
        assert!(check_plan(&link, &[DASH]).is_ok());
        refused_because(&copy, &[DASH], "not an installed application");
    }

    #[test]
    fn a_text_file_without_a_hash_bang_runs_in_sh() {
        let mut script = plan(
            "/home/p/.local/bin/viewer",
            &[],
            FileId {
                device: 2,
                inode: 5,
            },
            vec![entry("viewer", EntryArgs::Many, false)],
        );
        script.aliases = strs(&["/bin/sh"]);
        refused_because(&script, &[], "runs commands");
    }

    #[test]
    fn an_entry_takes_files_and_urls_never_options() {
        let many = || vec![entry("org.example.Viewer", EntryArgs::Many, false)];
        let viewer = |args: &[&str]| plan("/usr/bin/viewer", args, XCLOCK, many());
        assert!(check_plan(&viewer(&[]), &[]).is_ok());
        assert!(check_plan(&viewer(&["/tmp/a.png", "https://x.org/b.png"]), &[]).is_ok());
        for bad in [
            &["-es", "-c", "!id"][..],
            &["/tmp/a", "--x"],
            &[""],
            // vim runs `+cmd`; LibreOffice runs `macro:`; a bare name is
            // anything the app makes of it.
            &["+!touch /tmp/x"],
            &["macro:///Standard.Module1.Run"],
            &["javascript:alert(1)"],
            &["notes.txt"],
            &["https:"],
        ] {
            refused_because(&viewer(bad), &[], "never options");
        }
        assert!(check_plan(&viewer(&["FILE:///tmp/a", "mailto:p@x.org"]), &[]).is_ok());
        let one = plan(
            "/usr/bin/viewer",
            &["/a", "/b"],
            XCLOCK,
            vec![entry("v", EntryArgs::One, false)],
        );
        refused_because(&one, &[], "only files");
        let none = plan(
            "/usr/bin/xclock",
            &["/a"],
            XCLOCK,
            vec![entry("xclock", EntryArgs::None, false)],
        );
        refused_because(&none, &[], "no field code");
        // Another entry that accepts them is enough.
        let two = plan(
            "/usr/bin/xclock",
            &["/a"],
            XCLOCK,
            vec![
                entry("xclock", EntryArgs::None, false),
                entry("xclock-open", EntryArgs::One, false),
            ],
        );
        assert!(check_plan(&two, &[]).is_ok());
    }

    #[test]
    fn windows_arguments_are_drive_or_unc_paths_and_urls_never_switches() {
        let windows = LaunchTables {
            arguments: ArgumentStyle::Windows,
            ..TABLES
        };
        let edge = |args: &[&str]| {
            plan(
                r"C:\Program Files\Microsoft\Edge\msedge.exe",
                args,
                XCLOCK,
                vec![entry("msedge", EntryArgs::Many, false)],
            )
        };
        for good in [
            &[r"C:\Users\me\Documents\report.txt"][..],
            &["c:/users/me/a.png", r"\\server\share\b.pdf"],
            &[r"C:\My Files\Report - Final.docx"],
            &[
                "https://example.org/a?b=c",
                "HTTP://x.org",
                "file:///C:/a.txt",
            ],
            &["mailto:p@example.org"],
        ] {
            let p = edge(good);
            assert!(check(&windows, &p, &p.args, &[]).is_ok(), "{good:?}");
        }
        for bad in [
            &[r"/gpu-launcher=C:\Windows\System32\cmd.exe /c calc"][..],
            &[r"/browser-subprocess-path=C:\x\y.exe"],
            &["--gpu-launcher=cmd"],
            &["-new-window"],
            &["/tmp/a.txt"],
            &[r"\x\y.txt"],
            &[r"C:x.txt"],
            &[r"C:\"],
            &["report.txt"],
            &[r"\\.\pipe\x"],
            &[r"\\?\C:\x.txt"],
            &[r"C:\x.txt:stream"],
            &[r"C:\x*.txt"],
            &["C:\\a\"b"],
            &["C:\\a\nb"],
            &["https://x.org/ --gpu-launcher=cmd"],
            &["ms-settings:privacy"],
            &["javascript:alert(1)"],
            &["ftp://x.org/a"],
            &[""],
        ] {
            let p = edge(bad);
            match check(&windows, &p, &p.args, &[]) {
                Err(EngineError::LaunchRefused { why, .. }) => {
                    assert!(why.contains("never options (-x, --x or /x)"), "{why}")
                }
                other => panic!("{bad:?}: {other:?}"),
            }
        }
        // The Unix rule is unchanged: `/…` is a file there, `C:\…` is not.
        let p = edge(&["/tmp/a.txt"]);
        assert!(check_plan(&p, &[]).is_ok());
        refused_because(&edge(&[r"C:\a.txt"]), &[], "never options");
    }

    #[test]
    fn an_entry_that_runs_in_a_terminal_is_refused() {
        let vim = plan(
            "/usr/bin/vim.basic",
            &["/tmp/notes.txt"],
            XCLOCK,
            vec![entry("vim", EntryArgs::Many, true)],
        );
        refused_because(&vim, &[], "Terminal=true");
        assert!(
            check_plan(&vim, &[XCLOCK]).is_ok(),
            "unless the person allows it"
        );
    }

    #[test]
    fn an_entry_the_persons_account_can_change_launches_nothing() {
        let mut written = entry("notes", EntryArgs::Many, false);
        written.user_writable = true;
        let tar = plan(
            "/usr/bin/tar",
            &["--checkpoint-action=exec=touch x", "/tmp/a"],
            XCLOCK,
            vec![written.clone()],
        );
        refused_because(&tar, &[], "a place your account can change");
        assert!(
            check_plan(&tar, &[XCLOCK]).is_ok(),
            "unless the person allows it"
        );
        // A system entry naming the same file still makes it an app.
        let both = plan(
            "/usr/bin/xclock",
            &[],
            XCLOCK,
            vec![written, entry("xclock", EntryArgs::None, false)],
        );
        assert!(check_plan(&both, &[]).is_ok());
    }

    #[test]
    fn launch_allow_is_the_file_not_the_name() {
        let sh = plan("/bin/sh", &["-c", "touch x"], DASH, Vec::new());
        refused_because(&sh, &[], "runs commands");
        refused_because(&sh, &[XCLOCK], "runs commands");
        assert!(check_plan(&sh, &[DASH]).is_ok());
        let mut unknown = sh.clone();
        unknown.file = None;
        refused_because(&unknown, &[DASH], "runs commands");
    }

    #[test]
    fn shells_interpreters_and_runners_are_refused_under_any_name() {
        let xterm_entry = || vec![entry("debian-xterm", EntryArgs::Many, false)];
        for (program, aliases) in [
            ("/bin/sh", &[][..]),
            ("/usr/bin/python3.11", &[]),
            ("/usr/bin/env", &[]),
            ("/usr/local/bin/innocent", &["/usr/bin/dash"]),
            ("/opt/tool/run.sh", &["/bin/bash"]),
            ("/usr/bin/xdg-open", &[]),
        ] {
            let mut p = plan(program, &[], XCLOCK, xterm_entry());
            p.aliases = strs(aliases);
            refused_because(&p, &[], "runs commands");
        }
    }

    #[test]
    fn terminals_take_no_command_even_from_their_entry() {
        let entries = || vec![entry("debian-xterm", EntryArgs::None, false)];
        let mut by_id = plan("/usr/bin/xterm", &["-e", "sh"], XCLOCK, entries());
        by_id.target = LaunchTarget::AppId("debian-xterm".into());
        assert!(
            check(&TABLES, &by_id, &[], &[]).is_err(),
            "an Exec line with -e"
        );
        assert!(check_plan(&plan("/usr/bin/xterm", &[], XCLOCK, entries()), &[]).is_ok());
        for bad in [
            &["-e", "sh", "-c", "x"][..],
            &["-hold", "-e", "x"],
            &["--", "sh"],
            &["sh"],
            &["-T"],
            &["--command=sh"],
        ] {
            assert!(
                terminal_command_arg(&TABLES, &strs(bad)).is_some(),
                "{bad:?}"
            );
        }
        assert!(
            terminal_command_arg(&TABLES, &strs(&["-T", "t", "-geometry", "80x24", "-ls"]))
                .is_none()
        );
    }

    #[test]
    fn version_suffixes_are_stems() {
        assert_eq!(stem("/usr/bin/python3.11"), "python");
        assert_eq!(stem("perl5.36.0"), "perl");
        assert_eq!(stem("/usr/bin/xterm"), "xterm");
        assert!(!runs_commands(&TABLES, "/usr/bin/shotwell"));
        assert!(!runs_commands(&TABLES, "/usr/bin/nautilus"));
    }
}
