//! The app's own windows besides the dialogs: Settings, Doctor, Activity
//! (opened from the tray menu or with `--open`), and the main window that
//! stands in for the tray where no tray host runs.

use tauri::{AppHandle, Manager, Runtime, WebviewUrl, WebviewWindowBuilder};

/// A window of the app.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Panel {
    /// The settings file as a form.
    Settings,
    /// The doctor's checklist.
    Doctor,
    /// Live sessions, their timelines and the latest audit records.
    Activity,
}

impl Panel {
    /// The window's label (the capability file names it).
    fn label(self) -> &'static str {
        match self {
            Self::Settings => "settings",
            Self::Doctor => "doctor",
            Self::Activity => "activity",
        }
    }

    fn page(self) -> &'static str {
        match self {
            Self::Settings => "settings.html",
            Self::Doctor => "doctor.html",
            Self::Activity => "activity.html",
        }
    }

    fn title(self) -> &'static str {
        match self {
            Self::Settings => "deskhand settings",
            Self::Doctor => "deskhand doctor",
            Self::Activity => "deskhand activity",
        }
    }

    fn size(self) -> (f64, f64) {
        match self {
            Self::Settings => (560.0, 720.0),
            Self::Doctor => (640.0, 640.0),
            Self::Activity => (760.0, 640.0),
        }
    }
}

/// Why a window's command did nothing (the page shows the message).
#[derive(Debug, thiserror::Error)]
pub enum PanelError {
    /// The form breaks the settings file's rules, or a value cannot be read.
    #[error("{0}")]
    Invalid(String),
    /// The change allows more and no real mouse click made the save.
    #[error(
        "This change allows more ({0}): only a click of your own mouse on Save can allow it. Nothing changed."
    )]
    NotThePerson(String),
    /// A restart (which would also lift the person's pause) that no real
    /// mouse click asked for.
    #[error(
        "Only a click of your own mouse on Retry the backend can restart deskhand (a restart also lifts a pause). Nothing changed."
    )]
    RestartNotThePerson,
    /// A permission prompt that no real mouse click asked for.
    #[error(
        "Only a click of your own mouse on Ask macOS can make macOS ask for a permission. Nothing was asked."
    )]
    AskNotThePerson,
    /// The OS could not ask for the permission.
    #[error("The permission was not asked for: {0}")]
    Permission(String),
    /// Start at login could not change.
    #[error("Start at login could not change: {0}")]
    Autostart(String),
    /// The token could not be replaced.
    #[error("the token was not replaced: {0}")]
    Token(String),
    /// A background task of the app failed.
    #[error("the app's background task failed: {0}")]
    Task(String),
}

impl serde::Serialize for PanelError {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.to_string())
    }
}

/// Shows `panel`'s window, opening it if it is not open.
pub fn open<R: Runtime>(app: &AppHandle<R>, panel: Panel) -> tauri::Result<()> {
    show_or_build(
        app,
        panel.label(),
        panel.page(),
        panel.title(),
        panel.size(),
    )
}

/// A page's way to open another window (the Doctor's "Open Settings").
#[tauri::command]
pub fn open_panel<R: Runtime>(app: AppHandle<R>, panel: Panel) -> Result<(), PanelError> {
    open(&app, panel).map_err(|e| PanelError::Task(e.to_string()))
}

/// Opens the main window saying `why` (no tray host, or a second start).
pub fn open_main_window<R: Runtime>(app: &AppHandle<R>, why: &str) -> tauri::Result<()> {
    let page = format!("index.html#{}", encode(why));
    show_or_build(app, "main", &page, "deskhand", (520.0, 400.0))
}

fn show_or_build<R: Runtime>(
    app: &AppHandle<R>,
    label: &str,
    page: &str,
    title: &str,
    (width, height): (f64, f64),
) -> tauri::Result<()> {
    if let Some(window) = app.get_webview_window(label) {
        window.show()?;
        return window.set_focus();
    }
    let screen = app
        .primary_monitor()
        .ok()
        .flatten()
        .map(|m| m.size().to_logical::<f64>(m.scale_factor()));
    let (width, height) = fit((width, height), screen.map(|s| (s.width, s.height)));
    WebviewWindowBuilder::new(app, label, WebviewUrl::App(page.into()))
        .title(title)
        .inner_size(width, height)
        .center()
        .build()?;
    Ok(())
}

/// Room left round a window for its title bar and the desktop's panels.
const SCREEN_MARGIN: (f64, f64) = (40.0, 100.0);

/// A window `size` made to fit wholly on a `screen` (logical pixels);
/// the page scrolls what no longer fits.
fn fit((width, height): (f64, f64), screen: Option<(f64, f64)>) -> (f64, f64) {
    match screen {
        Some((w, h)) => (
            width.min(w - SCREEN_MARGIN.0).max(320.0),
            height.min(h - SCREEN_MARGIN.1).max(240.0),
        ),
        None => (width, height),
    }
}

/// `s` as a URL fragment (letters, digits and `-._~` as they are).
fn encode(s: &str) -> String {
    s.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' => {
                char::from(b).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_window_fits_on_a_small_screen_and_keeps_its_size_on_a_large_one() {
        assert_eq!(fit((560.0, 720.0), Some((1024.0, 600.0))), (560.0, 500.0));
        assert_eq!(fit((560.0, 720.0), Some((1920.0, 1080.0))), (560.0, 720.0));
        assert_eq!(fit((760.0, 640.0), None), (760.0, 640.0));
    }

    #[test]
    fn reasons_are_escaped_for_the_fragment() {
        assert_eq!(encode("no tray: ok"), "no%20tray%3A%20ok");
    }
}
