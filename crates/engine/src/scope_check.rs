//! The driver contract's target checks, made on the desktop thread in the
//! same job as the input they guard (so nothing changes between check and
//! send): a pointer act's points lie on an approved app's window that is
//! not covered by another, and keys go to a focused approved window.

use crate::action::Action;
use crate::backend::NativeWindow;
use crate::consent::AppScope;
use crate::desk::Desk;
use crate::error::EngineError;

/// What an act may touch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScopeCheck {
    /// The apps the session was granted.
    pub apps: AppScope,
    /// The window the act is aimed at, when the caller named one.
    pub window: Option<String>,
}

impl ScopeCheck {
    /// Whether `w` belongs to a granted app.
    pub fn allows(&self, w: &NativeWindow) -> bool {
        self.apps.allows(&w.class) || self.apps.allows(&w.instance)
    }

    /// Checks `action` against the live window stack. The whole desktop
    /// granted and no window named leaves nothing to check (every window
    /// is a granted app's).
    pub(crate) fn check(&self, desk: &mut Desk, action: &Action) -> Result<(), EngineError> {
        if self.apps == AppScope::All && self.window.is_none() {
            return Ok(());
        }
        let windows = desk.list_windows()?;
        for point in action.points() {
            let hit = windows
                .iter()
                .find(|(_, w)| !w.minimized && w.rect.contains(point));
            match (hit, &self.window) {
                (Some((handle, _)), Some(target)) if handle != target => {
                    let inside = windows
                        .iter()
                        .any(|(h, t)| h == target && t.rect.contains(point));
                    return Err(if inside {
                        EngineError::WindowNotVisible {
                            window_id: target.clone(),
                            reason: "covered",
                        }
                    } else {
                        EngineError::invalid("x", "the point is outside the target window")
                    });
                }
                (Some((_, w)), _) if !self.allows(w) => {
                    return Err(EngineError::OutOfScope {
                        what: "the point is on a window of an app this session was not granted",
                    });
                }
                (None, _) if self.apps != AppScope::All => {
                    return Err(EngineError::OutOfScope {
                        what: "the point is on no window of a granted app",
                    });
                }
                _ => {}
            }
        }
        if sends_keys(action) {
            let focused = windows.iter().find(|(_, w)| w.focused);
            match (focused, &self.window) {
                (Some((_, w)), _) if !self.allows(w) => {
                    return Err(EngineError::OutOfScope {
                        what: "the focused window belongs to an app this session was not granted",
                    });
                }
                (Some((handle, _)), Some(target)) if handle != target => {
                    return Err(EngineError::WindowNotVisible {
                        window_id: target.clone(),
                        reason: "not_focused",
                    });
                }
                (None, _) if self.apps != AppScope::All => {
                    return Err(EngineError::OutOfScope {
                        what: "no window of a granted app has the focus",
                    });
                }
                _ => {}
            }
        }
        Ok(())
    }
}

/// Whether `action` sends keys (to the focused window).
pub(crate) fn sends_keys(action: &Action) -> bool {
    match action {
        Action::Key { .. } | Action::HoldKey { .. } | Action::Type { .. } => true,
        Action::Paste { .. } => true,
        Action::Click { modifiers, .. }
        | Action::Drag { modifiers, .. }
        | Action::Scroll { modifiers, .. } => !modifiers.is_empty(),
        _ => false,
    }
}
