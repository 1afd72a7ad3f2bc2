//! The kill switch on Wayland, through the GlobalShortcuts portal where the
//! desktop offers it (GNOME 48 and KDE 5.27 on): deskhand binds one
//! shortcut with its chord as the preferred trigger, and the desktop's own
//! dialog lets the person confirm or change it. Without the portal there is
//! no chord; the tray's "Stop all agents" and the frame's Stop remain.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use ashpd::desktop::global_shortcuts::{GlobalShortcuts, NewShortcut};
use deskhand_backend::kill_switch::{Chord, ChordKey, modifier};
use deskhand_backend::{KillSwitchHotkey, WatchedInput};
use futures_util::StreamExt;

use crate::portal::{Grant, Portals};

/// The shortcut's id in deskhand's portal session.
const ID: &str = "kill-switch";

/// How the kill switch stands, for the doctor.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) enum KillChord {
    /// Not asked for yet (the portals' own dialogs come first).
    #[default]
    Pending,
    /// Bound: the desktop's description of its trigger.
    Bound(String),
    /// Not bound, and why.
    Unavailable(String),
}

/// The chord as the shortcuts specification writes a trigger
/// (`CTRL+ALT+Escape`: modifiers, then the key's XKB name).
pub(crate) fn trigger(chord: &Chord) -> String {
    let mut parts: Vec<String> = [
        (modifier::CTRL, "CTRL"),
        (modifier::ALT, "ALT"),
        (modifier::SHIFT, "SHIFT"),
        (modifier::SUPER, "LOGO"),
    ]
    .into_iter()
    .filter(|(bit, _)| chord.modifiers & bit != 0)
    .map(|(_, name)| name.to_owned())
    .collect();
    parts.push(match chord.key {
        ChordKey::Escape => "Escape".to_owned(),
        ChordKey::Pause => "Pause".to_owned(),
        ChordKey::F(n) => format!("F{n}"),
        ChordKey::Char(c) => c.to_ascii_lowercase().to_string(),
    });
    parts.join("+")
}

/// Binds the kill switch once the portals' dialogs are answered (one
/// dialog at a time), then reports each press to `sink`. Until it is
/// bound, `hotkey` says the chord does nothing.
pub(crate) async fn run(
    hotkey: KillSwitchHotkey,
    portals: Arc<Portals>,
    sink: Arc<dyn Fn(WatchedInput) + Send + Sync>,
) {
    let Ok(chord) = Chord::parse(&hotkey.current()) else {
        return;
    };
    hotkey.set_unavailable(Some(
        "not bound yet: the desktop's dialogs come first".into(),
    ));
    while portals.screencast_grant() == Grant::Pending || portals.remote_grant() == Grant::Pending {
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let wanted = trigger(&chord);
    let slot = Slot {
        kill: &portals.kill,
        hotkey: &hotkey,
    };
    match listen(&wanted, &slot, sink).await {
        Ok(()) => slot.set(KillChord::Unavailable(
            "the desktop ended deskhand's shortcut session".into(),
        )),
        Err(e) => slot.set(KillChord::Unavailable(reason(&e))),
    }
}

/// Where the kill switch's state goes: the doctor's slot and the hotkey.
struct Slot<'a> {
    kill: &'a Mutex<KillChord>,
    hotkey: &'a KillSwitchHotkey,
}

impl Slot<'_> {
    fn set(&self, state: KillChord) {
        tracing::info!(kill_switch = ?state, "global shortcut");
        self.hotkey.set_unavailable(match &state {
            KillChord::Bound(_) => None,
            KillChord::Pending => Some("not bound yet".into()),
            KillChord::Unavailable(why) => Some(why.clone()),
        });
        if let Ok(mut s) = self.kill.lock() {
            *s = state;
        }
    }
}

/// Why the kill switch has no chord, in the person's words.
fn reason(e: &ashpd::Error) -> String {
    match e {
        ashpd::Error::PortalNotFound(_) => {
            "this desktop has no global-shortcuts portal (GNOME 48 and KDE 5.27 on have one)".into()
        }
        ashpd::Error::Response(_) => "the person did not confirm the shortcut".into(),
        e => format!("the global-shortcuts portal failed: {e}"),
    }
}

/// Binds the shortcut and forwards its activations until the portal's
/// signal stream ends.
async fn listen(
    wanted: &str,
    slot: &Slot<'_>,
    sink: Arc<dyn Fn(WatchedInput) + Send + Sync>,
) -> Result<(), ashpd::Error> {
    let portal = GlobalShortcuts::new().await?;
    let session = portal.create_session(Default::default()).await?;
    let shortcut = NewShortcut::new(ID, "Stop every deskhand agent").preferred_trigger(wanted);
    let bound = portal
        .bind_shortcuts(&session, &[shortcut], None, Default::default())
        .await?
        .response()?;
    let Some(ours) = bound.shortcuts().iter().find(|s| s.id() == ID) else {
        return Err(ashpd::Error::Response(
            ashpd::desktop::ResponseError::Cancelled,
        ));
    };
    slot.set(KillChord::Bound(ours.trigger_description().to_owned()));
    let activated = portal.receive_activated().await?;
    futures_util::pin_mut!(activated);
    // The portal signals to the session's owner only: this process, with
    // its one session.
    while let Some(a) = activated.next().await {
        if a.shortcut_id() == ID {
            sink(WatchedInput::KillSwitch);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_chord_is_written_as_the_shortcuts_specification_writes_a_trigger() {
        let t = |text: &str| trigger(&Chord::parse(text).expect("a chord"));
        assert_eq!(t("ctrl+alt+Escape"), "CTRL+ALT+Escape");
        assert_eq!(t("super+shift+F12"), "SHIFT+LOGO+F12");
        assert_eq!(t("ctrl+alt+K"), "CTRL+ALT+k");
        assert_eq!(t("ctrl+Pause"), "CTRL+Pause");
    }
}
