//! What a program on Windows goes by, for the launch rules: its file name
//! in lower case without the extension, and for a file that
//! `CreateProcessW` does not run itself (a script, a shortcut, a document)
//! the program that would open it, since running it means running that
//! program. The engine's rules then refuse it as what it really is.

/// The extensions `CreateProcessW` runs as programs.
const PROGRAMS: &[&str] = &["exe", "com", "scr"];

/// Files run by a program of their own: the extension and that program.
/// An extension not here and not a program's is opened by the shell
/// (`explorer`), which runs whatever it is associated with.
const OPENED_BY: &[(&str, &str)] = &[
    ("bat", "cmd"),
    ("cmd", "cmd"),
    ("btm", "cmd"),
    ("ps1", "powershell"),
    ("psm1", "powershell"),
    ("psd1", "powershell"),
    ("vbs", "wscript"),
    ("vbe", "wscript"),
    ("js", "wscript"),
    ("jse", "wscript"),
    ("wsf", "wscript"),
    ("wsh", "wscript"),
    ("hta", "mshta"),
    ("msi", "msiexec"),
    ("msp", "msiexec"),
    ("cpl", "control"),
    ("msc", "mmc"),
    ("reg", "reg"),
    ("py", "python"),
    ("pyw", "pythonw"),
    ("pl", "perl"),
    ("rb", "ruby"),
    ("jar", "java"),
    ("sh", "bash"),
    ("lnk", "explorer"),
    ("url", "explorer"),
    ("scf", "explorer"),
    ("pif", "explorer"),
];

/// The file name of a Windows path (either separator).
pub fn file_name(path: &str) -> &str {
    path.rsplit(['\\', '/']).next().unwrap_or(path)
}

/// The name the launch rules know `path` by: its file name in lower case
/// without the extension (`C:\Windows\System32\CMD.EXE` → `cmd`).
pub fn program_name(path: &str) -> String {
    let name = file_name(path);
    let bare = match name.rsplit_once('.') {
        Some((stem, _)) if !stem.is_empty() => stem,
        _ => name,
    };
    bare.to_lowercase()
}

/// Every name a launch of `path` runs under: its own, and when
/// `CreateProcessW` would not run the file itself, the program that opens
/// it (`run.bat` → `cmd`, `notes.txt` → `explorer`).
pub fn aliases(path: &str) -> Vec<String> {
    let mut names = vec![program_name(path)];
    let ext = file_name(path)
        .rsplit_once('.')
        .map(|(_, e)| e.to_lowercase())
        .unwrap_or_default();
    if !PROGRAMS.contains(&ext.as_str()) {
        let opener = OPENED_BY
            .iter()
            .find(|(e, _)| *e == ext)
            .map_or("explorer", |(_, p)| p);
        names.push(opener.to_owned());
    }
    names
}

/// Whether `path` is absolute on Windows: a drive and a separator
/// (`C:\`), or a UNC path (`\\server\share`).
pub fn is_absolute(path: &str) -> bool {
    let b = path.as_bytes();
    let drive =
        b.len() >= 3 && b[0].is_ascii_alphabetic() && b[1] == b':' && matches!(b[2], b'\\' | b'/');
    drive || path.starts_with("\\\\")
}

/// `value` with each `%NAME%` replaced by `lookup(NAME)` (an unknown
/// name is kept as it is), as Windows expands a registry path.
pub fn expand(value: &str, lookup: impl Fn(&str) -> Option<String>) -> String {
    let mut out = String::with_capacity(value.len());
    let mut rest = value;
    while let Some(start) = rest.find('%') {
        out.push_str(&rest[..start]);
        let after = &rest[start + 1..];
        match after.find('%') {
            Some(end) if end > 0 => {
                let name = &after[..end];
                match lookup(name) {
                    Some(v) => out.push_str(&v),
                    None => out.push_str(&rest[start..start + end + 2]),
                }
                rest = &after[end + 1..];
            }
            _ => {
                out.push('%');
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

/// An App Paths value as a path: expanded, without surrounding quotes.
pub fn app_path(value: &str, lookup: impl Fn(&str) -> Option<String>) -> String {
    let expanded = expand(value.trim(), lookup);
    expanded.trim_matches('"').to_owned()
}

/// Whether `path` is inside one of `dirs`, compared as Windows compares
/// paths: either separator, any case.
pub fn inside_any(path: &str, dirs: &[String]) -> bool {
    let norm = |p: &str| p.replace('/', "\\").trim_end_matches('\\').to_lowercase();
    let path = norm(path);
    dirs.iter()
        .map(|d| norm(d))
        .filter(|d| !d.is_empty())
        .any(|d| {
            path.strip_prefix(&d)
                .is_some_and(|rest| rest.starts_with('\\'))
        })
}

/// The version resource's values that name a program's own file.
pub const VERSION_NAMES: &[&str] = &["OriginalFilename", "InternalName"];

/// The version resource's string blocks to read, from its
/// `\VarFileInfo\Translation` value (pairs of a language and a code page,
/// 16 bits each, little-endian): `\StringFileInfo\040904b0` for each, then
/// US English in Unicode and in Windows-1252, which most programs use.
pub fn version_string_blocks(translations: &[u8]) -> Vec<String> {
    let mut out: Vec<String> = translations
        .chunks_exact(4)
        .map(|t| {
            let lang = u16::from_le_bytes([t[0], t[1]]);
            let page = u16::from_le_bytes([t[2], t[3]]);
            format!(r"\StringFileInfo\{lang:04x}{page:04x}")
        })
        .collect();
    for fallback in [r"\StringFileInfo\040904b0", r"\StringFileInfo\040904e4"] {
        if !out.iter().any(|b| b == fallback) {
            out.push(fallback.to_owned());
        }
    }
    out
}

/// The folders under the Windows folder that any account may write to
/// (scheduled tasks, temporary files, traces, the printer spool, COM
/// dumps): a program there is not the system's.
pub const WRITABLE_UNDER_SYSTEM_ROOT: &[&str] = &[
    "Temp",
    "Tasks",
    "Tracing",
    "debug",
    r"Registration\CRMLog",
    r"System32\Tasks",
    r"System32\Tasks_Migrated",
    r"System32\spool",
    r"System32\Com\dmp",
    r"System32\FxsTmp",
    r"System32\Microsoft\Crypto\RSA\MachineKeys",
    r"SysWOW64\Tasks",
    r"SysWOW64\Com\dmp",
    r"SysWOW64\FxsTmp",
];

/// Whether a program at `path` lies in a folder the person's account can
/// write, so that anything working in their account could have put or
/// replaced it there. Only the system's program folders are not
/// (`installed`: `%ProgramFiles%`, `%ProgramFiles(x86)%`, `%SystemRoot%`):
/// a folder made anywhere else (`C:\Tools`, `D:\Apps`) lets every account
/// change its files by default, and `%ProgramData%` too lets every
/// account make folders and files. Inside them, `writable` (the person's
/// own folders, `%ProgramData%`, `%PUBLIC%`, the folders of
/// [`WRITABLE_UNDER_SYSTEM_ROOT`]) still are. With no `installed` folder
/// known, every program is; so is a path with a `.` or `..` part (`C:\Program
/// Files\..\Tools\x.exe` is not in Program Files).
pub fn in_writable_folder(path: &str, installed: &[String], writable: &[String]) -> bool {
    let dotted = path
        .split(['\\', '/'])
        .any(|part| matches!(part.trim_end(), "." | ".."));
    dotted || !inside_any(path, installed) || inside_any(path, writable)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::WINDOWS;

    fn runs_commands(path: &str) -> bool {
        aliases(path)
            .iter()
            .any(|n| WINDOWS.launch.command_runners.contains(&n.as_str()))
    }

    #[test]
    fn a_program_goes_by_its_lower_case_name() {
        assert_eq!(program_name(r"C:\Windows\System32\CMD.EXE"), "cmd");
        assert_eq!(program_name("C:/tools/notepad++.exe"), "notepad++");
        assert_eq!(aliases(r"C:\Windows\notepad.exe"), ["notepad"]);
    }

    #[test]
    fn scripts_shortcuts_and_documents_run_as_what_opens_them() {
        for path in [
            r"C:\Users\me\run.bat",
            r"C:\Users\me\RUN.CMD",
            r"C:\Users\me\x.ps1",
            r"C:\Users\me\x.vbs",
            r"C:\Users\me\x.js",
            r"C:\Users\me\x.wsf",
            r"C:\Users\me\Desktop\Shell.lnk",
            r"C:\Users\me\notes.txt",
            r"C:\Users\me\noextension",
            r"C:\Windows\System32\cmd.exe",
            r"C:\Windows\System32\WindowsPowerShell\v1.0\powershell.exe",
        ] {
            assert!(runs_commands(path), "{path}");
        }
        assert!(!runs_commands(r"C:\Windows\notepad.exe"));
        assert_eq!(aliases(r"C:\x\run.bat"), ["run", "cmd"]);
    }

    #[test]
    fn registry_paths_are_expanded_and_unquoted() {
        let lookup = |n: &str| {
            (n.eq_ignore_ascii_case("ProgramFiles")).then(|| r"C:\Program Files".to_owned())
        };
        assert_eq!(
            app_path(r#""%ProgramFiles%\App\app.exe""#, lookup),
            r"C:\Program Files\App\app.exe"
        );
        assert_eq!(expand("%NOPE%\\x 100%", lookup), "%NOPE%\\x 100%");
        assert_eq!(expand("%%", lookup), "%%");
    }

    #[test]
    fn programs_in_the_persons_own_directories_are_theirs_to_change() {
        let dirs = vec![
            r"C:\Users\me".to_owned(),
            r"C:\Users\me\AppData\Local\Temp\".to_owned(),
        ];
        assert!(inside_any(
            r"C:\Users\me\AppData\Local\Programs\app\app.exe",
            &dirs
        ));
        assert!(inside_any("c:/users/ME/tools/x.exe", &dirs));
        assert!(
            !inside_any(r"C:\Users\meow\x.exe", &dirs),
            "a sibling, not inside"
        );
        assert!(!inside_any(r"C:\Program Files\App\app.exe", &dirs));
        assert!(!inside_any(r"C:\Users\me", &dirs), "the directory itself");
        assert!(!inside_any(r"C:\x.exe", &[String::new()]));
    }

    #[test]
    fn absolute_paths() {
        assert!(is_absolute(r"C:\x"));
        assert!(is_absolute("c:/x"));
        assert!(is_absolute(r"\\server\share\x"));
        assert!(!is_absolute("notepad.exe"));
        assert!(!is_absolute(r"C:x"));
        assert!(!is_absolute(r"\x"));
    }

    #[test]
    fn only_the_systems_program_folders_are_not_the_persons_to_write() {
        let installed = vec![
            r"C:\Program Files".to_owned(),
            r"C:\Program Files (x86)".to_owned(),
            r"C:\Windows".to_owned(),
        ];
        let writable = vec![
            r"C:\Users\me".to_owned(),
            r"C:\ProgramData".to_owned(),
            r"C:\Users\Public".to_owned(),
            r"C:\Windows\Temp".to_owned(),
            r"C:\Windows\System32\Tasks".to_owned(),
        ];
        let writes = |p: &str| in_writable_folder(p, &installed, &writable);
        for theirs in [
            r"C:\ProgramData\Tools\viewer.exe",
            r"c:/programdata/x.exe",
            r"C:\Tools\notes.exe",
            r"D:\Apps\app.exe",
            r"\\server\share\app.exe",
            r"C:\Users\me\AppData\Local\Programs\app\app.exe",
            r"C:\Users\Public\x.exe",
            r"C:\Windows\Temp\x.exe",
            r"C:\Windows\System32\Tasks\x.exe",
            r"C:\Program Files Evil\x.exe",
            r"C:\Program Files\..\Tools\x.exe",
            r"C:\Windows\System32\.\..\..\ProgramData\x.exe",
            r"C:/Program Files/.. /Tools/x.exe",
        ] {
            assert!(writes(theirs), "{theirs}");
        }
        for system in [
            r"C:\Program Files\Microsoft\Edge\msedge.exe",
            r"C:\Program Files (x86)\App\app.exe",
            r"C:\Windows\System32\notepad.exe",
            r"c:/windows/notepad.exe",
        ] {
            assert!(!writes(system), "{system}");
        }
        assert!(
            in_writable_folder(r"C:\Windows\notepad.exe", &[], &[]),
            "no system folder known: every program is"
        );
        let under: Vec<String> = WRITABLE_UNDER_SYSTEM_ROOT
            .iter()
            .map(|d| format!(r"C:\Windows\{d}"))
            .collect();
        assert!(inside_any(
            r"C:\Windows\System32\spool\drivers\color\x.exe",
            &under
        ));
        assert!(!inside_any(r"C:\Windows\System32\cmd.exe", &under));
    }

    #[test]
    fn the_version_resource_is_read_in_its_own_languages_first() {
        // German, Unicode; then the US English fallbacks.
        assert_eq!(
            version_string_blocks(&[0x07, 0x04, 0xb0, 0x04]),
            [
                r"\StringFileInfo\040704b0",
                r"\StringFileInfo\040904b0",
                r"\StringFileInfo\040904e4"
            ]
        );
        assert_eq!(version_string_blocks(&[0x09, 0x04, 0xb0, 0x04, 1]).len(), 2);
        assert_eq!(version_string_blocks(&[]).len(), 2);
    }
}
