//! What a deskhand desktop backend is: one narrow trait per capability
//! (displays, capture, input, windows, apps, permissions, clipboard, the
//! takeover indicator, the hand-back watcher, accessibility, the status
//! place where no tray runs) and the plain
//! types they exchange, with no OS code and no engine. The engine drives
//! these traits; each OS's backend crate implements them.

pub mod accessibility;
pub mod capabilities;
pub mod doctor;
pub mod geometry;
pub mod keys;
pub mod kill_switch;
pub mod overlay_process;
pub mod policy;
pub mod real_click;
pub mod status_place;
pub mod vault;

pub use capabilities::*;
pub use doctor::BackendFindings;
pub use geometry::{Monitor, Point, Rect};
pub use keys::{Key, Keypad};
pub use kill_switch::{Chord, ChordError, ChordKey, DEFAULT_KILL_SWITCH, KillSwitchHotkey};
pub use policy::{AppNames, ArgumentStyle, LaunchTables, PolicyTables, RefusalTables};
pub use status_place::{ChoiceSink, MenuChoice, PlaceStatus, StatusPlace};
pub use vault::Vault;
