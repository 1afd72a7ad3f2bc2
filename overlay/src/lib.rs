//! The takeover indicator's shared parts: what it draws and where
//! ([`paint`]), the window logic driven by the engine's commands ([`app`]),
//! and what each desktop must add ([`desktop::Desktop`]). The binary picks
//! the desktop.

pub mod app;
pub mod desktop;
pub mod paint;

use std::io::Write;

use deskhand_protocol::overlay::Event;

/// Writes one event line to stdout.
pub fn emit(event: &Event) {
    if let Ok(line) = serde_json::to_string(event) {
        let mut out = std::io::stdout().lock();
        let _ = writeln!(out, "{line}");
        let _ = out.flush();
    }
}
