//! Whether the kill-switch chord stops agents, for the doctor, where
//! another program can take the chord first (Windows: `RegisterHotKey`
//! fails, and pressing the chord reaches that program, not deskhand).
//! Read from the hotkey of this process's daemon (the tray app's Doctor,
//! MCP's `health_report`); for `deskhand doctor`, from the state file the
//! running deskhand keeps current, else by asking Windows whether the
//! chord is free.

use std::path::PathBuf;
use std::sync::Mutex;
use std::time::Duration;

use deskhand_platform::{DesktopId, KillSwitchHotkey};
use deskhand_protocol::doctor::Probe;
use serde_json::json;

use crate::files;

/// The hotkey of the daemon of this process, once it serves.
static SERVING: Mutex<Option<KillSwitchHotkey>> = Mutex::new(None);

/// Notes the hotkey of the daemon of this process.
pub fn note_serving(hotkey: &KillSwitchHotkey) {
    *SERVING.lock().unwrap_or_else(|p| p.into_inner()) = Some(hotkey.clone());
}

/// Where the running deskhand of desktop `id` says how its chord stands.
fn state_path(id: &DesktopId) -> PathBuf {
    deskhand_platform::state_file(&files::state_dir(), "kill-switch", id)
}

/// Keeps the state file of desktop `id` current while its daemon serves
/// (the chord and why it does nothing, read every second, written when
/// they change). Ends with the task; the daemon removes the file.
pub async fn keep(hotkey: KillSwitchHotkey, id: DesktopId) {
    let path = state_path(&id);
    let mut last = None;
    loop {
        let now = (hotkey.current(), hotkey.unavailable());
        if last.as_ref() != Some(&now) {
            let line = json!({"chord": now.0, "unavailable": now.1, "pid": std::process::id()});
            if let Err(e) = files::write_private_atomic(&path, format!("{line}\n").as_bytes()) {
                tracing::warn!(error = %e, "the kill switch's state file could not be written");
            }
            last = Some(now);
        }
        tokio::time::sleep(Duration::from_secs(1)).await;
    }
}

/// Removes the state file of desktop `id` (the daemon stops).
pub fn forget(id: &DesktopId) {
    let _ = std::fs::remove_file(state_path(id));
}

/// What the doctor says of `chord`, which does nothing when `unavailable`
/// says why.
#[cfg(any(windows, test))]
fn words(chord: &str, unavailable: Option<&str>) -> (bool, String) {
    match unavailable {
        None => (true, format!("{chord} stops every agent")),
        Some(why) => (
            false,
            format!(
                "{chord} does nothing: {why}. Agents still stop when you move the mouse or press a \
                 key (they pause; Stop on the red frame ends them) and with Stop all agents; close \
                 that program or pick another chord (--kill-switch, or kill_switch in the settings)"
            ),
        ),
    }
}

/// The kill switch the settings file names, else the default.
#[cfg(windows)]
fn settings_chord() -> String {
    std::fs::read_to_string(crate::settings::default_path())
        .ok()
        .and_then(|text| text.parse::<toml::Table>().ok())
        .and_then(|t| t.get("kill_switch")?.as_str().map(str::to_owned))
        .unwrap_or_else(|| deskhand_platform::DEFAULT_KILL_SWITCH.to_owned())
}

/// The doctor's `kill switch` probe on Windows; `None` elsewhere (X11 and
/// Wayland say it in their hand-back findings).
pub fn probe() -> Option<Probe> {
    #[cfg(windows)]
    {
        let serving = SERVING.lock().unwrap_or_else(|p| p.into_inner()).clone();
        let (ok, message) = match serving {
            Some(hotkey) => words(&hotkey.current(), hotkey.unavailable().as_deref()),
            None => from_elsewhere()?,
        };
        Some(Probe::new("kill switch", ok, message))
    }
    #[cfg(not(windows))]
    {
        None
    }
}

/// What the running deskhand of this session says of its chord, else
/// whether Windows would give deskhand the settings' chord now.
#[cfg(windows)]
fn from_elsewhere() -> Option<(bool, String)> {
    let id = deskhand_platform::session_desktop(None)?;
    if let Some(holder) = crate::display_claim::holder(&id) {
        let state = std::fs::read_to_string(state_path(&id))
            .ok()
            .and_then(|text| serde_json::from_str::<serde_json::Value>(&text).ok())
            .filter(|v| holder.pid.is_some_and(|pid| v["pid"] == pid));
        return Some(match state {
            Some(v) => {
                let (ok, said) = words(v["chord"].as_str()?, v["unavailable"].as_str());
                (ok, format!("{said} (the running deskhand says)"))
            }
            None => (
                true,
                "a deskhand serves this desktop and has not said how its kill switch stands".into(),
            ),
        });
    }
    let text = settings_chord();
    let chord = deskhand_platform::Chord::parse(&text).ok()?;
    Some(match deskhand_platform::kill_switch_free(&chord)? {
        Ok(()) => (
            true,
            format!("{text} is free: deskhand registers it when it serves"),
        ),
        Err(why) => words(
            &text,
            Some(&format!("another program holds it (RegisterHotKey: {why})")),
        ),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_chord_that_does_nothing_says_why_and_the_ways_that_work() {
        assert_eq!(
            words("ctrl+alt+Escape", None),
            (true, "ctrl+alt+Escape stops every agent".to_owned())
        );
        let (ok, said) = words("ctrl+alt+Escape", Some("another program holds it"));
        assert!(!ok);
        assert!(said.starts_with("ctrl+alt+Escape does nothing: another program holds it."));
        assert!(said.contains("move the mouse") && said.contains("Stop all agents"));
    }
}
