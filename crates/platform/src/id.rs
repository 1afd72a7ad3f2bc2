//! Which desktop an engine drives, as one name per desktop.

use std::fmt;

/// A desktop of this machine: its name as shown (an X display such as
/// `:0`) and the key that names it in files (`_0`), the same for every
/// spelling of one desktop (`:0.0`, `unix:0` and `:0` are one X display).
/// Two ids are equal when they name one desktop, however spelt.
#[derive(Debug, Clone)]
pub struct DesktopId {
    name: String,
    key: String,
}

impl PartialEq for DesktopId {
    fn eq(&self, other: &Self) -> bool {
        self.key == other.key
    }
}

impl Eq for DesktopId {}

impl std::hash::Hash for DesktopId {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.key.hash(state);
    }
}

impl DesktopId {
    /// An X display: without its screen number, and `unix:0`,
    /// `localhost:0` and `127.0.0.1:0` as `:0` (the same local server).
    pub fn x11(display: &str) -> Self {
        Self {
            name: display.to_owned(),
            key: canonical_x(display).to_owned(),
        }
    }

    /// A desktop with one name (the session's own, on an OS with one
    /// desktop per session).
    pub fn named(name: &str) -> Self {
        Self {
            name: name.to_owned(),
            key: name.to_owned(),
        }
    }

    /// The name as given (`$DISPLAY`, `--display`).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// A file-name part, one per desktop: letters and digits kept, the
    /// rest `_` (`:0` → `_0`).
    pub fn tag(&self) -> String {
        self.key
            .chars()
            .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
            .collect()
    }
}

impl fmt::Display for DesktopId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.name)
    }
}

/// The display without its screen (`:0.0` and `:0` are one display).
fn without_screen(display: &str) -> &str {
    match display.rsplit_once('.') {
        Some((d, screen))
            if d.contains(':')
                && !screen.is_empty()
                && screen.bytes().all(|b| b.is_ascii_digit()) =>
        {
            d
        }
        _ => display,
    }
}

/// One name for each X display of this machine.
fn canonical_x(display: &str) -> &str {
    let display = without_screen(display);
    match display.rsplit_once(':') {
        Some((host, _)) if matches!(host, "unix" | "localhost" | "127.0.0.1") => {
            &display[host.len()..]
        }
        _ => display,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_spelling_of_one_x_display_has_one_tag() {
        let zero = DesktopId::x11(":0");
        assert_eq!(zero.tag(), "_0");
        for same in [":0.0", "unix:0", "localhost:0.0", "127.0.0.1:0"] {
            let id = DesktopId::x11(same);
            assert_eq!(id.tag(), "_0", "{same}");
            assert_eq!(id.tag(), zero.tag());
            assert_eq!(id, zero, "one desktop");
            assert_eq!(id.name(), same, "shown as given");
        }
        assert_eq!(
            DesktopId::x11("host:10.1").tag(),
            DesktopId::x11("host:10").tag()
        );
        assert_ne!(DesktopId::x11(":1").tag(), DesktopId::x11(":10").tag());
        assert_ne!(DesktopId::x11(":1"), DesktopId::x11(":10"));
        assert_ne!(DesktopId::x11("otherhost:0").tag(), "_0");
        assert_eq!(without_screen("a.b:3"), "a.b:3");
        assert_eq!(DesktopId::x11(":99").tag(), "_99");
    }
}
