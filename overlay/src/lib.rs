//! The takeover indicator's shared parts: what it draws and where
//! ([`paint`]), the window logic driven by the engine's commands ([`app`]),
//! and what each desktop must add ([`desktop::Desktop`]). The binary picks
//! the desktop.

pub mod app;
pub mod desktop;
pub mod paint;

use std::io::{BufRead, Write};

use deskhand_protocol::overlay::{Command, Event};

/// Writes one event line to stdout.
pub fn emit(event: &Event) {
    if let Ok(line) = serde_json::to_string(event) {
        let mut out = std::io::stdout().lock();
        let _ = writeln!(out, "{line}");
        let _ = out.flush();
    }
}

/// Reads command lines from stdin until it closes, handing each to
/// `deliver`, then `None`; stops early when `deliver` answers false. A
/// line that is not a command is answered with an `error` event.
pub fn read_commands(mut deliver: impl FnMut(Option<Command>) -> bool) {
    for line in std::io::stdin().lock().lines() {
        let Ok(line) = line else { break };
        if line.trim().is_empty() {
            continue;
        }
        match serde_json::from_str(&line) {
            Ok(cmd) => {
                if !deliver(Some(cmd)) {
                    return;
                }
            }
            Err(e) => emit(&Event::Error {
                message: format!("bad command: {e}"),
            }),
        }
    }
    deliver(None);
}
