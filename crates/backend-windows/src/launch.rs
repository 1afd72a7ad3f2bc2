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

/// Whether `path` is inside one of `dirs` (the person's own directories:
/// their profile, application data, temporary files), compared as
/// Windows compares paths: either separator, any case. A program there is
/// one anything working in the person's account could have replaced.
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
}
