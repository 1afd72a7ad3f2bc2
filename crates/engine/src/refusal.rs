//! The refusal policy a person may turn on (the action-batch spec's
//! "Refusal and Sandboxing"): classes of apps no agent may send input to —
//! terminals, system settings, package managers, browser developer tools.
//! Checked on the desktop thread in the job that sends the input, against
//! the window under each point a pointer act touches and the focused window
//! for keys, so nothing changes between the check and the send. An app is
//! known by its window's class and, whatever that says, by the program its
//! process runs: the executable's name and the application entries that
//! name that file (their ids and categories, e.g. `TerminalEmulator`).
//! Which names and categories each class has is the backend's table
//! ([`RefusalTables`]): they differ per OS.

use crate::action::Action;
use crate::backend::{AppNames, NativeWindow, RefusalTables, RunningProgram};
use crate::error::EngineError;
use crate::geometry::Point;

/// A class of apps the policy can refuse.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RefusedClass {
    /// Terminal emulators: a terminal runs any command.
    Terminals,
    /// The desktop's settings: displays, network, users.
    SystemSettings,
    /// Software installers and package managers.
    PackageManagers,
    /// Browser developer tools in windows of their own.
    DeveloperTools,
}

impl RefusedClass {
    /// Every class, as `refuse_apps: true` turns them all on.
    pub const ALL: [RefusedClass; 4] = [
        Self::Terminals,
        Self::SystemSettings,
        Self::PackageManagers,
        Self::DeveloperTools,
    ];

    /// The name a policy file uses.
    pub fn name(self) -> &'static str {
        match self {
            Self::Terminals => "terminals",
            Self::SystemSettings => "system_settings",
            Self::PackageManagers => "package_managers",
            Self::DeveloperTools => "developer_tools",
        }
    }

    /// The class a policy file names.
    pub fn parse(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|c| c.name() == name)
    }

    /// Whether `w`, whose process runs `program` (when known), is an app
    /// of this class as `tables` name them.
    pub fn matches(
        self,
        tables: &RefusalTables,
        w: &NativeWindow,
        program: Option<&RunningProgram>,
    ) -> bool {
        let mut known_as: Vec<&str> = vec![w.class.as_str(), w.instance.as_str()];
        let entries = program.map(|p| p.entries.as_slice()).unwrap_or_default();
        if let Some(p) = program {
            known_as.push(p.exe.rsplit('/').next().unwrap_or(&p.exe));
            known_as.extend(entries.iter().map(|e| e.id.as_str()));
        }
        let of = |apps: &AppNames| {
            let named = known_as
                .iter()
                .any(|n| apps.names.iter().any(|m| n.eq_ignore_ascii_case(m)));
            named
                || entries
                    .iter()
                    .flat_map(|e| &e.categories)
                    .any(|c| apps.categories.contains(&c.as_str()))
        };
        match self {
            Self::Terminals => of(&tables.terminals),
            Self::SystemSettings => of(&tables.system_settings),
            Self::PackageManagers => of(&tables.package_managers),
            Self::DeveloperTools => {
                let title = w.title.trim_start().to_lowercase();
                tables.devtools_titles.iter().any(|t| title.starts_with(t))
            }
        }
    }
}

/// The classes refused; none (the default) turns the policy off.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RefusalPolicy {
    /// The refused classes.
    pub classes: Vec<RefusedClass>,
}

/// A name that is not one of the refused classes.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{name:?} is not one of {}", RefusedClass::ALL.map(|c| c.name()).join(", "))]
pub struct UnknownClass {
    /// The name given.
    pub name: String,
}

/// A file's `refuse_apps`: `true` (every class), `false` (none), or the
/// names of the refused classes.
#[derive(Debug, Clone, serde::Deserialize)]
#[serde(untagged)]
pub enum RefuseApps {
    /// Every class, or none.
    Every(bool),
    /// The classes named.
    Classes(Vec<String>),
}

impl RefuseApps {
    /// The policy this value asks for.
    pub fn policy(&self) -> Result<RefusalPolicy, UnknownClass> {
        match self {
            Self::Every(false) => Ok(RefusalPolicy::default()),
            Self::Every(true) => Ok(RefusalPolicy {
                classes: RefusedClass::ALL.to_vec(),
            }),
            Self::Classes(names) => RefusalPolicy::from_names(names),
        }
    }
}

impl RefusalPolicy {
    /// The policy that refuses the classes `names` names (`terminals`,
    /// ...), or which name is not a class.
    pub fn from_names<S: AsRef<str>>(names: &[S]) -> Result<Self, UnknownClass> {
        let mut classes = Vec::new();
        for name in names {
            let name = name.as_ref();
            let class = RefusedClass::parse(name).ok_or_else(|| UnknownClass {
                name: name.to_owned(),
            })?;
            if !classes.contains(&class) {
                classes.push(class);
            }
        }
        Ok(Self { classes })
    }

    /// The names of the refused classes.
    pub fn names(&self) -> Vec<&'static str> {
        self.classes.iter().map(|c| c.name()).collect()
    }

    /// Whether `class` is refused.
    pub fn refuses(&self, class: RefusedClass) -> bool {
        self.classes.contains(&class)
    }

    /// Whether anything is refused.
    pub fn is_on(&self) -> bool {
        !self.classes.is_empty()
    }

    /// The class `w`, whose process runs `program`, is refused as, if any.
    pub fn refused(
        &self,
        tables: &RefusalTables,
        w: &NativeWindow,
        program: Option<&RunningProgram>,
    ) -> Option<RefusedClass> {
        self.classes
            .iter()
            .copied()
            .find(|c| c.matches(tables, w, program))
    }

    /// The class `w` is refused as, with its process's program read by
    /// `program_of` (only when its window class alone does not tell).
    fn refused_window(
        &self,
        tables: &RefusalTables,
        w: &NativeWindow,
        program_of: &mut dyn FnMut(u32) -> Option<RunningProgram>,
    ) -> Option<RefusedClass> {
        self.refused(tables, w, None).or_else(|| {
            let program = w.pid.and_then(&mut *program_of);
            program.and_then(|p| self.refused(tables, w, Some(&p)))
        })
    }

    /// Checks `action` against `windows` (topmost first): every point it
    /// touches (`pointer` when it acts where the pointer is) and, when it
    /// sends keys, the focused window; `program_of` reads what a process
    /// runs.
    pub(crate) fn check(
        &self,
        tables: &RefusalTables,
        windows: &[(String, NativeWindow)],
        action: &Action,
        pointer: Option<Point>,
        program_of: &mut dyn FnMut(u32) -> Option<RunningProgram>,
    ) -> Result<(), EngineError> {
        let mut points = action.points();
        if points.is_empty() && is_pointer_act(action) {
            points.extend(pointer);
        }
        for point in points {
            let hit = windows
                .iter()
                .find(|(_, w)| !w.minimized && w.rect.contains(point));
            if let Some(class) = hit.and_then(|(_, w)| self.refused_window(tables, w, program_of)) {
                return Err(EngineError::Refused {
                    class: class.name(),
                    what: "the point is on its window",
                });
            }
        }
        if crate::scope_check::sends_keys(action) {
            let focused = windows.iter().find(|(_, w)| w.focused);
            if let Some(class) =
                focused.and_then(|(_, w)| self.refused_window(tables, w, program_of))
            {
                return Err(EngineError::Refused {
                    class: class.name(),
                    what: "its window has the keyboard focus",
                });
            }
        }
        Ok(())
    }
}

/// Whether `action` acts where the pointer is when it names no point.
fn is_pointer_act(action: &Action) -> bool {
    matches!(
        action,
        Action::Click { .. }
            | Action::ButtonDown { .. }
            | Action::ButtonUp { .. }
            | Action::Scroll { .. }
    )
}

impl crate::Engine {
    /// The refusal policy in force.
    pub(crate) fn refusal_policy(&self) -> RefusalPolicy {
        self.refusal
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// Refuses input to `policy`'s classes from the next request on.
    pub fn set_refusal_policy(&self, policy: RefusalPolicy) {
        *self.refusal.lock().unwrap_or_else(|e| e.into_inner()) = policy;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::Button;
    use crate::geometry::Rect;

    /// A desktop's tables, as a backend brings them.
    const TABLES: RefusalTables = RefusalTables {
        terminals: AppNames {
            names: &["xterm", "gnome-terminal"],
            categories: &["TerminalEmulator"],
        },
        system_settings: AppNames {
            names: &["gnome-control-center"],
            categories: &["DesktopSettings"],
        },
        package_managers: AppNames {
            names: &["synaptic"],
            categories: &["PackageManager"],
        },
        devtools_titles: &["devtools", "developer tools"],
    };

    fn window(class: &str, title: &str, rect: Rect, focused: bool) -> (String, NativeWindow) {
        let w = NativeWindow {
            id: 1,
            pid: None,
            class: class.into(),
            instance: class.to_lowercase(),
            title: title.into(),
            rect,
            focused,
            minimized: false,
            fullscreen: false,
            surface_origin: None,
        };
        ("0x1".into(), w)
    }

    fn click(at: Option<Point>) -> Action {
        Action::Click {
            at,
            button: Button::Left,
            count: 1,
            modifiers: Vec::new(),
        }
    }

    #[test]
    fn terminals_under_the_pointer_or_focused_are_refused() {
        let policy = RefusalPolicy {
            classes: vec![RefusedClass::Terminals],
        };
        let windows = [
            window("XTerm", "bash", Rect::new(0, 0, 400, 300), true),
            window("Gedit", "notes", Rect::new(500, 0, 400, 300), false),
        ];
        let on_term = click(Some(Point::new(10, 10)));
        assert!(matches!(
            policy.check(&TABLES, &windows, &on_term, None, &mut |_| None),
            Err(EngineError::Refused {
                class: "terminals",
                ..
            })
        ));
        assert!(
            policy
                .check(
                    &TABLES,
                    &windows,
                    &click(Some(Point::new(600, 10))),
                    None,
                    &mut |_| None
                )
                .is_ok()
        );
        // At the pointer: the pointer's window counts.
        assert!(
            policy
                .check(
                    &TABLES,
                    &windows,
                    &click(None),
                    Some(Point::new(5, 5)),
                    &mut |_| { None }
                )
                .is_err()
        );
        // Keys go to the focused terminal.
        let keys = Action::Type { text: "ls".into() };
        assert!(
            policy
                .check(&TABLES, &windows, &keys, None, &mut |_| None)
                .is_err()
        );
        // Off: nothing refused.
        assert!(
            RefusalPolicy::default()
                .check(&TABLES, &windows, &on_term, None, &mut |_| None)
                .is_ok()
        );
    }

    #[test]
    fn a_terminal_under_another_class_is_known_by_its_program() {
        let policy = RefusalPolicy {
            classes: vec![RefusedClass::Terminals],
        };
        let (id, mut w) = window("Notes", "notes", Rect::new(0, 0, 400, 300), true);
        w.pid = Some(42);
        let windows = [(id, w)];
        let keys = Action::Type { text: "id".into() };
        let program = |exe: &str, categories: &[&str]| RunningProgram {
            exe: exe.into(),
            entries: vec![crate::backend::AppEntry {
                id: "my-term".into(),
                terminal: false,
                categories: categories.iter().map(|c| (*c).to_owned()).collect(),
                args: crate::backend::EntryArgs::None,
                user_writable: false,
            }],
        };
        assert!(
            policy
                .check(&TABLES, &windows, &keys, None, &mut |_| None)
                .is_ok()
        );
        // Its executable's own name.
        let by_name = policy.check(&TABLES, &windows, &keys, None, &mut |pid| {
            (pid == 42).then(|| program("/usr/bin/xterm", &[]))
        });
        assert!(matches!(
            by_name,
            Err(EngineError::Refused {
                class: "terminals",
                ..
            })
        ));
        // The category of the entry that names its file, whatever its name.
        let by_entry = policy.check(
            &TABLES,
            &windows,
            &click(Some(Point::new(9, 9))),
            None,
            &mut |_| Some(program("/opt/t/notes", &["System", "TerminalEmulator"])),
        );
        assert!(by_entry.is_err());
        let editor = policy.check(&TABLES, &windows, &keys, None, &mut |_| {
            Some(program("/usr/bin/notes", &["Utility", "TextEditor"]))
        });
        assert!(editor.is_ok());
    }

    #[test]
    fn devtools_are_known_by_their_title_and_names_parse() {
        let (_, w) = window(
            "Google-chrome",
            "DevTools - example.com/",
            Rect::new(0, 0, 1, 1),
            false,
        );
        assert!(RefusedClass::DeveloperTools.matches(&TABLES, &w, None));
        let (_, w) = window("firefox", "Mozilla Firefox", Rect::new(0, 0, 1, 1), false);
        assert!(!RefusedClass::DeveloperTools.matches(&TABLES, &w, None));
        for c in RefusedClass::ALL {
            assert_eq!(RefusedClass::parse(c.name()), Some(c));
        }
        assert_eq!(RefusedClass::parse("shells"), None);
    }
}
