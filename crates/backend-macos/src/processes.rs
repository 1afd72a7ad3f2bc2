//! The person's processes as the app list shows them: an app by what
//! `NSRunningApplication` says of it (its localized name, else its bundle
//! id), any other process by its executable's file name from libproc.

use deskhand_backend::ProcessInfo;

/// What `NSRunningApplication` says of a process; all `None` for a
/// process that is not an app (a daemon, a command-line tool).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AppFacts {
    /// `localizedName` ("Visual Studio Code").
    pub localized_name: Option<String>,
    /// `bundleIdentifier` ("com.microsoft.VSCode").
    pub bundle_id: Option<String>,
    /// `executableURL`'s path.
    pub executable: Option<String>,
}

impl AppFacts {
    /// Whether `NSRunningApplication` said nothing, so libproc's path of
    /// the executable is needed.
    pub fn needs_image(&self) -> bool {
        self.executable.is_none()
    }
}

fn non_empty(s: &Option<String>) -> Option<&str> {
    s.as_deref().map(str::trim).filter(|s| !s.is_empty())
}

/// Process `pid` as listed: named by its app's localized name, else its
/// bundle id, else its executable's file name; its executable from the
/// app, else `image` (libproc's `proc_pidpath`). `None` when nothing
/// names it.
pub fn process_info(pid: u32, app: &AppFacts, image: Option<String>) -> Option<ProcessInfo> {
    let exe = non_empty(&app.executable).map(str::to_owned).or(image);
    let file_name = exe.as_deref().and_then(|e| e.rsplit('/').next());
    let name = non_empty(&app.localized_name)
        .or_else(|| non_empty(&app.bundle_id))
        .or(file_name.filter(|n| !n.is_empty()))?
        .to_owned();
    Some(ProcessInfo {
        pid,
        name,
        exe,
        app_id: non_empty(&app.bundle_id).map(str::to_owned),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn facts(name: Option<&str>, id: Option<&str>, exe: Option<&str>) -> AppFacts {
        AppFacts {
            localized_name: name.map(str::to_owned),
            bundle_id: id.map(str::to_owned),
            executable: exe.map(str::to_owned),
        }
    }

    #[test]
    fn an_app_goes_by_its_localized_name_and_its_own_executable() {
        let code = facts(
            Some("Visual Studio Code"),
            Some("com.microsoft.VSCode"),
            Some("/Applications/Visual Studio Code.app/Contents/MacOS/Electron"),
        );
        assert!(!code.needs_image());
        let p = process_info(42, &code, None).expect("named");
        assert_eq!(p.name, "Visual Studio Code");
        assert_eq!(
            p.exe.as_deref(),
            Some("/Applications/Visual Studio Code.app/Contents/MacOS/Electron")
        );
    }

    #[test]
    fn an_app_without_a_name_goes_by_its_bundle_id() {
        let app = facts(Some(" "), Some("com.example.helper"), None);
        assert!(app.needs_image());
        let p = process_info(7, &app, Some("/opt/x/helper".into())).expect("named");
        assert_eq!(p.name, "com.example.helper");
        assert_eq!(p.exe.as_deref(), Some("/opt/x/helper"));
    }

    #[test]
    fn other_processes_go_by_libproc_s_executable() {
        let none = AppFacts::default();
        assert!(none.needs_image());
        let p = process_info(9, &none, Some("/usr/sbin/cfprefsd".into())).expect("named");
        assert_eq!((p.pid, p.name.as_str()), (9, "cfprefsd"));
        assert_eq!(process_info(9, &none, None), None);
        assert_eq!(process_info(9, &none, Some("/".into())), None);
    }
}
