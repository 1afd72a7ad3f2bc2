//! Window targets (driver contract §2.3): `window_id`, `pid` (its topmost
//! window) or `app` (a name or title fragment). Only approved apps'
//! visible windows are considered; several matches are
//! `ambiguous_target`, none `window_target_not_found`, no target at all
//! `ambiguous_window_target`, each ambiguity with at most 8 candidates.

use deskhand_engine::{AppScope, Engine, ListedWindow, NativeWindow, WindowFilter};
use deskhand_protocol::ErrorCode;
use deskhand_protocol::mcp::{
    Bounds, Candidate, MAX_APP_CHARS, MAX_CANDIDATES, Target, WindowInfo, app_text,
};

use super::envelope::Fail;
use super::sessions::DriverSession;

/// Whether `w` belongs to an app of `apps`.
pub fn approved(apps: &AppScope, w: &NativeWindow) -> bool {
    apps.allows(&w.class) || apps.allows(&w.instance)
}

/// The app's own name as rows show it: its class, else its instance.
fn app_name(w: &NativeWindow) -> String {
    let name = if w.class.is_empty() {
        &w.instance
    } else {
        &w.class
    };
    app_text(name, MAX_APP_CHARS)
}

/// A window row.
pub fn info(w: &ListedWindow) -> WindowInfo {
    let r = w.window.rect;
    WindowInfo {
        window_id: w.handle.clone(),
        pid: w.window.pid,
        app: app_name(&w.window),
        title: app_text(&w.window.title, 1024),
        frame: Bounds {
            x: r.x,
            y: r.y,
            width: r.width,
            height: r.height,
        },
        focused: w.window.focused,
        minimized: w.window.minimized,
        display: w.monitor,
    }
}

/// The session's approved windows, topmost first.
pub async fn approved_windows(
    engine: &Engine,
    session: &DriverSession,
    include_minimized: bool,
) -> Result<Vec<ListedWindow>, Fail> {
    let filter = WindowFilter {
        include_minimized,
        ..Default::default()
    };
    let all = engine.list_windows(&session.engine, filter).await?;
    Ok(all
        .into_iter()
        .filter(|w| approved(&session.apps, &w.window))
        .collect())
}

/// Whether `w` matches the app fragment `app` (name, class or title,
/// case-insensitively).
pub fn matches_app(w: &NativeWindow, app: &str) -> bool {
    let needle = app.to_lowercase();
    w.belongs_to(app)
        || w.class.to_lowercase().contains(&needle)
        || w.instance.to_lowercase().contains(&needle)
        || w.title.to_lowercase().contains(&needle)
}

fn ambiguous(code: ErrorCode, message: String, windows: &[&ListedWindow]) -> Fail {
    let mut fail = Fail::new(code, message);
    fail.0.candidates = Some(
        windows
            .iter()
            .take(MAX_CANDIDATES)
            .map(|w| Candidate {
                window_id: w.handle.clone(),
                pid: w.window.pid,
                app: app_name(&w.window),
            })
            .collect(),
    );
    if windows.len() > MAX_CANDIDATES {
        fail.0.candidates_truncated = Some(true);
    }
    fail
}

/// The one window `target` names among the session's approved windows;
/// `Ok(None)` when the call names none and `required` is false.
pub async fn resolve(
    engine: &Engine,
    session: &DriverSession,
    target: &Target,
    required: bool,
) -> Result<Option<ListedWindow>, Fail> {
    if !target.is_given() && !required {
        return Ok(None);
    }
    if let Some(id) = &target.window_id
        && (id.is_empty() || id.len() > 40)
    {
        return Err(Fail::invalid(
            "window_id is not a window id of list_windows",
        ));
    }
    let windows = approved_windows(engine, session, false).await?;
    let picked: Vec<&ListedWindow> = windows
        .iter()
        .filter(|w| target.window_id.as_ref().is_none_or(|id| *id == w.handle))
        .filter(|w| target.pid.is_none_or(|p| w.window.pid == Some(p)))
        .filter(|w| {
            target
                .app
                .as_ref()
                .is_none_or(|a| matches_app(&w.window, a))
        })
        .collect();
    if !target.is_given() {
        return Err(ambiguous(
            ErrorCode::AmbiguousWindowTarget,
            "no window named: give app, pid or window_id".into(),
            &picked,
        ));
    }
    match picked.as_slice() {
        [] => Err(Fail::new(
            ErrorCode::WindowTargetNotFound,
            "no visible window of an approved app matches the target",
        )),
        [one] => Ok(Some((*one).clone())),
        // A pid alone means its topmost window (windows come topmost first).
        [first, ..] if target.app.is_none() && target.window_id.is_none() => {
            Ok(Some((*first).clone()))
        }
        several => Err(ambiguous(
            ErrorCode::AmbiguousTarget,
            format!("{} approved windows match the target", several.len()),
            several,
        )),
    }
}
