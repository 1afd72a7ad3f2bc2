//! What a launch on macOS may name and what it runs under, for the launch
//! rules. deskhand launches apps only: by bundle id
//! (`com.apple.TextEdit`) or by the path of an app bundle
//! (`/Applications/Safari.app`), opened with `NSWorkspace`, never through
//! a shell. A script (`.command`, `.sh`, `.scpt`, …), a program inside a
//! bundle or any other file is refused here; Terminal, iTerm, the
//! shells, `osascript`, AppleScript applets and the interpreters are
//! refused by the engine from the names [`aliases`] gives (see
//! [`crate::policy`]).

use deskhand_backend::{AppEntry, EntryArgs, LaunchTarget};

/// File extensions that run commands when opened: shell scripts,
/// AppleScript, Automator workflows, terminal settings, installers.
const SCRIPTS: &[&str] = &[
    "command",
    "sh",
    "bash",
    "zsh",
    "csh",
    "tcsh",
    "ksh",
    "fish",
    "tool",
    "scpt",
    "scptd",
    "applescript",
    "workflow",
    "terminal",
    "itermcolors",
    "py",
    "pl",
    "rb",
    "js",
    "jxa",
    "php",
    "lua",
    "pkg",
    "mpkg",
];

/// A launch target as macOS opens it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MacTarget {
    /// An installed app by its bundle id.
    BundleId(String),
    /// An app bundle by its absolute path (without a trailing `/`).
    AppBundle(String),
}

/// Why a target is not something deskhand launches on macOS.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refusal {
    /// Not a bundle id (reverse-DNS: letters, digits, `-`, dots between).
    NotABundleId,
    /// A relative path, or one with `.` or `..` in it.
    NotAbsolute,
    /// A script or installer: opening it runs commands.
    Script,
    /// A program inside an app bundle: launch the `.app` itself.
    InsideABundle,
    /// Any other file: only `.app` bundles are launched.
    NotAnApp,
}

impl Refusal {
    /// Why, in words for the caller.
    pub fn why(self) -> &'static str {
        match self {
            Refusal::NotABundleId => {
                "not a bundle id (reverse-DNS letters, digits and dashes, e.g. com.apple.TextEdit)"
            }
            Refusal::NotAbsolute => "an app's path must be absolute, without . or ..",
            Refusal::Script => {
                "it is a script or installer (.command, .sh, .scpt, .workflow, .pkg, …): opening it runs commands"
            }
            Refusal::InsideABundle => {
                "it is a program inside an app bundle: launch the .app bundle (or its bundle id)"
            }
            Refusal::NotAnApp => "only an app bundle (.app) or a bundle id is launched on macOS",
        }
    }
}

/// Whether `id` is a bundle id: dot-separated parts of ASCII letters,
/// digits and `-`, at least two.
pub fn is_bundle_id(id: &str) -> bool {
    let parts: Vec<&str> = id.split('.').collect();
    parts.len() >= 2
        && parts
            .iter()
            .all(|p| !p.is_empty() && p.chars().all(|c| c.is_ascii_alphanumeric() || c == '-'))
}

/// The extension of the last part of `path`, lower case.
fn extension(name: &str) -> Option<String> {
    name.rsplit_once('.')
        .filter(|(stem, _)| !stem.is_empty())
        .map(|(_, ext)| ext.to_ascii_lowercase())
}

/// What `target` asks macOS to open, or why it may not.
pub fn classify(target: &LaunchTarget) -> Result<MacTarget, Refusal> {
    match target {
        LaunchTarget::AppId(id) if is_bundle_id(id) => Ok(MacTarget::BundleId(id.clone())),
        LaunchTarget::AppId(_) => Err(Refusal::NotABundleId),
        LaunchTarget::Executable(path) => app_bundle(path).map(MacTarget::AppBundle),
    }
}

fn app_bundle(path: &str) -> Result<String, Refusal> {
    let trimmed = path.trim_end_matches('/');
    let parts: Vec<&str> = trimmed.split('/').skip(1).collect();
    if !path.starts_with('/')
        || parts.is_empty()
        || parts
            .iter()
            .any(|p| p.is_empty() || *p == "." || *p == "..")
    {
        return Err(Refusal::NotAbsolute);
    }
    let name = parts.last().copied().unwrap_or_default();
    let ext = extension(name);
    if ext.as_deref().is_some_and(|e| SCRIPTS.contains(&e)) {
        return Err(Refusal::Script);
    }
    let inside = parts[..parts.len().saturating_sub(1)]
        .iter()
        .any(|p| extension(p).as_deref() == Some("app"));
    match ext.as_deref() {
        _ if inside => Err(Refusal::InsideABundle),
        Some("app") => Ok(trimmed.to_owned()),
        _ => Err(Refusal::NotAnApp),
    }
}

/// The name of an app bundle's path: its last part without `.app`, lower
/// case (`/Applications/Utilities/Terminal.app` → `terminal`).
pub fn app_name(path: &str) -> String {
    let name = path
        .trim_end_matches('/')
        .rsplit('/')
        .next()
        .unwrap_or(path);
    let bare = match name.rsplit_once('.') {
        Some((stem, ext)) if !stem.is_empty() && ext.eq_ignore_ascii_case("app") => stem,
        _ => name,
    };
    bare.to_lowercase()
}

/// Every name an app runs under, for the launch and refusal rules, lower
/// case: its bundle's name, its bundle id, and its executable's file name
/// (`CFBundleExecutable`) when it has one.
pub fn aliases(
    bundle_path: &str,
    bundle_id: Option<&str>,
    executable: Option<&str>,
) -> Vec<String> {
    let mut names = vec![app_name(bundle_path)];
    names.extend(bundle_id.map(str::to_lowercase));
    names.extend(executable.map(|e| e.rsplit('/').next().unwrap_or(e).to_lowercase()));
    names.dedup();
    names
}

/// Whether an app at `path` is one the person's account could have
/// written: inside their home directory (`~/Applications`, Downloads).
/// Such an app is named, never made launchable, as on the other OSes.
/// (Not "any bundle the account may write": an admin account may write
/// `/Applications` and owns every app it dragged there, so that rule
/// would leave nearly nothing launchable.)
pub fn in_home(path: &str, home: &str) -> bool {
    let home = home.trim_end_matches('/');
    !home.is_empty()
        && path
            .strip_prefix(home)
            .is_some_and(|rest| rest.starts_with('/'))
}

/// The entry that makes an app launchable: its bundle id, files and URLs
/// as its arguments (opened with it, never passed as a command line).
pub fn entry(bundle_id: &str, user_writable: bool) -> AppEntry {
    AppEntry {
        id: bundle_id.to_owned(),
        terminal: false,
        categories: Vec::new(),
        args: EntryArgs::Many,
        user_writable,
    }
}

/// The app bundle an executable is the program of
/// (`/Applications/Safari.app/Contents/MacOS/Safari` →
/// `/Applications/Safari.app`), when it is one.
pub fn bundle_of_executable(exe: &str) -> Option<&str> {
    let (dir, name) = exe.rsplit_once('/')?;
    let bundle = dir.strip_suffix("/Contents/MacOS")?;
    let last = bundle.rsplit('/').next()?;
    let is_app = extension(last).as_deref() == Some("app");
    (is_app && !name.is_empty()).then_some(bundle)
}

/// A document an app is opened with: a file by its path, or a URL.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Document {
    /// An absolute path.
    File(String),
    /// A URL (the engine allows only document schemes).
    Url(String),
}

/// The launch's arguments as documents to open with the app: absolute
/// paths are files, anything else a URL. The engine's rules let through
/// nothing else (never an option).
pub fn documents(args: &[String]) -> Vec<Document> {
    args.iter()
        .map(|a| {
            if a.starts_with('/') {
                Document::File(a.clone())
            } else {
                Document::Url(a.clone())
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::MACOS;

    fn exe(path: &str) -> LaunchTarget {
        LaunchTarget::Executable(path.to_owned())
    }

    fn runs_commands(names: &[String]) -> bool {
        let t = MACOS.launch;
        names
            .iter()
            .any(|n| t.command_runners.contains(&n.as_str()) || t.terminals.contains(&n.as_str()))
    }

    #[test]
    fn bundle_ids_and_app_bundles_are_launched() {
        assert_eq!(
            classify(&LaunchTarget::AppId("com.apple.TextEdit".into())),
            Ok(MacTarget::BundleId("com.apple.TextEdit".into()))
        );
        assert_eq!(
            classify(&exe("/Applications/Safari.app/")),
            Ok(MacTarget::AppBundle("/Applications/Safari.app".into()))
        );
        assert_eq!(
            classify(&exe("/Applications/My App.APP")),
            Ok(MacTarget::AppBundle("/Applications/My App.APP".into()))
        );
    }

    #[test]
    fn scripts_programs_and_other_files_are_refused() {
        for (path, why) in [
            ("/Users/me/run.command", Refusal::Script),
            ("/Users/me/x.sh", Refusal::Script),
            ("/Users/me/x.SCPT", Refusal::Script),
            ("/Users/me/x.scptd/", Refusal::Script),
            ("/Users/me/Do.workflow", Refusal::Script),
            ("/Users/me/Setup.pkg", Refusal::Script),
            ("/bin/zsh", Refusal::NotAnApp),
            ("/usr/bin/osascript", Refusal::NotAnApp),
            ("/Users/me/notes.txt", Refusal::NotAnApp),
            (
                "/Applications/Safari.app/Contents/MacOS/Safari",
                Refusal::InsideABundle,
            ),
            (
                "/Applications/Outer.app/Contents/Inner.app",
                Refusal::InsideABundle,
            ),
            ("Applications/Safari.app", Refusal::NotAbsolute),
            ("/Applications/../Users/me/X.app", Refusal::NotAbsolute),
            ("/", Refusal::NotAbsolute),
        ] {
            assert_eq!(classify(&exe(path)), Err(why), "{path}");
        }
        for id in ["TextEdit", "com..apple", "com.apple.Text Edit", "-c", ""] {
            assert_eq!(
                classify(&LaunchTarget::AppId(id.into())),
                Err(Refusal::NotABundleId),
                "{id}"
            );
        }
    }

    #[test]
    fn terminals_and_script_editors_are_known_by_every_name() {
        let terminal = aliases(
            "/System/Applications/Utilities/Terminal.app",
            Some("com.apple.Terminal"),
            Some("Terminal"),
        );
        assert_eq!(terminal, ["terminal", "com.apple.terminal", "terminal"]);
        assert!(runs_commands(&terminal));
        let iterm = aliases(
            "/Applications/iTerm.app",
            Some("com.googlecode.iterm2"),
            Some("iTerm2"),
        );
        assert!(runs_commands(&iterm));
        let editor = aliases(
            "/System/Applications/Utilities/Script Editor.app",
            Some("com.apple.ScriptEditor2"),
            None,
        );
        assert!(runs_commands(&editor));
        // An app renamed to look harmless is still known by its bundle id.
        let renamed = aliases("/Applications/Notes2.app", Some("com.apple.Terminal"), None);
        assert!(runs_commands(&renamed));
        let textedit = aliases(
            "/System/Applications/TextEdit.app",
            Some("com.apple.TextEdit"),
            None,
        );
        assert!(!runs_commands(&textedit));
    }

    #[test]
    fn an_executable_knows_its_bundle() {
        assert_eq!(
            bundle_of_executable("/Applications/Safari.app/Contents/MacOS/Safari"),
            Some("/Applications/Safari.app")
        );
        assert_eq!(bundle_of_executable("/usr/bin/osascript"), None);
        assert_eq!(bundle_of_executable("/Users/me/x/Contents/MacOS/x"), None);
        assert_eq!(bundle_of_executable("Safari"), None);
    }

    #[test]
    fn arguments_are_documents_to_open() {
        let args = [
            "/Users/me/a.txt".to_owned(),
            "https://example.com".to_owned(),
        ];
        assert_eq!(
            documents(&args),
            [
                Document::File("/Users/me/a.txt".into()),
                Document::Url("https://example.com".into())
            ]
        );
    }

    #[test]
    fn apps_in_the_home_directory_are_the_persons_to_change() {
        assert!(in_home("/Users/me/Applications/X.app", "/Users/me"));
        assert!(in_home("/Users/me/Downloads/X.app", "/Users/me/"));
        assert!(!in_home("/Users/meow/X.app", "/Users/me"));
        assert!(!in_home("/Applications/X.app", "/Users/me"));
        assert!(!in_home("/Applications/X.app", ""));
        let e = entry("com.apple.TextEdit", false);
        assert_eq!((e.args, e.terminal), (EntryArgs::Many, false));
    }

    #[test]
    fn applescript_applets_are_known_as_command_runners() {
        // A saved AppleScript or JXA app runs its script through the
        // `applet` (or `droplet`) executable, whatever the bundle is called.
        for exe in ["applet", "droplet"] {
            let names = aliases(
                "/Users/me/Applications/Tidy Up.app",
                Some("com.apple.ScriptEditor.id.Tidy-Up"),
                Some(&format!(
                    "/Users/me/Applications/Tidy Up.app/Contents/MacOS/{exe}"
                )),
            );
            assert!(names.contains(&exe.to_owned()), "{names:?}");
            assert!(runs_commands(&names), "{exe}");
        }
    }
}
