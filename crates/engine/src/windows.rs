//! Window handles: deskhand mints `win_<uuid>` ids for the OS windows it
//! lists, never reuses one, forgets them all at every start, and checks at
//! every use that the handle still names the same window (same native id,
//! pid and class): otherwise the caller gets WINDOW_STALE.

use std::collections::HashMap;

use crate::backend::NativeWindow;
use crate::error::EngineError;

/// The length of every handle deskhand mints: `win_` and a UUID.
pub const HANDLE_LEN: usize = "win_".len() + 36;

/// Longest window title, class or instance kept from an app: a title is
/// the app's text, and an app must not be able to flood replies or logs.
pub const MAX_APP_TEXT_CHARS: usize = 1024;

/// Refuses a handle no daemon could have minted (too long, or not
/// `win_…`) before any lookup, so that its text goes nowhere.
pub fn check_handle(handle: &str) -> Result<(), EngineError> {
    if handle.len() > HANDLE_LEN {
        return Err(EngineError::invalid(
            "window_id",
            format!(
                "window_id is {} bytes; deskhand's ids are {HANDLE_LEN}",
                handle.len()
            ),
        ));
    }
    Ok(())
}

/// `w` with its app-given texts cut to [`MAX_APP_TEXT_CHARS`].
pub(crate) fn bounded(mut w: NativeWindow) -> NativeWindow {
    for text in [&mut w.title, &mut w.class, &mut w.instance] {
        if let Some((at, _)) = text.char_indices().nth(MAX_APP_TEXT_CHARS) {
            text.truncate(at);
        }
    }
    w
}

/// What a handle was minted for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Identity {
    /// Native handle.
    pub native: u64,
    /// Owning process.
    pub pid: Option<u32>,
    /// WM class.
    pub class: String,
}

impl Identity {
    fn of(w: &NativeWindow) -> Self {
        Self {
            native: w.id,
            pid: w.pid,
            class: w.class.clone(),
        }
    }
}

/// The handles minted since start.
#[derive(Debug, Default)]
pub struct WindowRegistry {
    by_handle: HashMap<String, Identity>,
    by_native: HashMap<u64, String>,
}

impl WindowRegistry {
    /// The handle of `w`: the one minted for the same identity, or a new one.
    pub fn handle_for(&mut self, w: &NativeWindow) -> String {
        let identity = Identity::of(w);
        if let Some(handle) = self.by_native.get(&w.id)
            && self.by_handle.get(handle) == Some(&identity)
        {
            return handle.clone();
        }
        let handle = format!("win_{}", uuid::Uuid::new_v4());
        self.by_handle.insert(handle.clone(), identity);
        self.by_native.insert(w.id, handle.clone());
        handle
    }

    /// The live window `handle` names in `current`, or `None` when it is
    /// gone, was replaced, or was never minted by this daemon.
    pub fn resolve<'a>(
        &self,
        handle: &str,
        current: &'a [NativeWindow],
    ) -> Option<&'a NativeWindow> {
        let identity = self.by_handle.get(handle)?;
        current
            .iter()
            .find(|w| w.id == identity.native)
            .filter(|w| Identity::of(w) == *identity)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::geometry::Rect;

    fn win(id: u64, pid: u32, class: &str) -> NativeWindow {
        NativeWindow {
            id,
            pid: Some(pid),
            class: class.into(),
            instance: class.to_lowercase(),
            title: "t".into(),
            rect: Rect::new(0, 0, 10, 10),
            focused: false,
            minimized: false,
            fullscreen: false,
            surface_origin: None,
        }
    }

    #[test]
    fn handles_are_stable_never_reused_and_checked() {
        let mut r = WindowRegistry::default();
        let a = r.handle_for(&win(1, 10, "XTerm"));
        assert!(a.starts_with("win_"));
        assert_eq!(
            r.handle_for(&win(1, 10, "XTerm")),
            a,
            "same window, same handle"
        );
        // The native id is reused by another program: a new handle, and the
        // old one is stale.
        let b = r.handle_for(&win(1, 11, "Firefox"));
        assert_ne!(a, b);
        let now = [win(1, 11, "Firefox")];
        assert!(r.resolve(&a, &now).is_none());
        assert_eq!(r.resolve(&b, &now).map(|w| w.id), Some(1));
        assert!(r.resolve("win_never-minted", &now).is_none());
        assert!(r.resolve(&b, &[]).is_none(), "gone");
        assert_eq!(a.len(), HANDLE_LEN);
        assert!(check_handle(&a).is_ok());
    }

    #[test]
    fn overlong_handles_and_titles_are_bounded() {
        let long = format!("win_{}", "0".repeat(2 * 1024 * 1024));
        assert!(matches!(
            check_handle(&long),
            Err(EngineError::InvalidArguments {
                field: "window_id",
                ..
            })
        ));
        let mut w = win(1, 1, "X");
        w.title = "é".repeat(5000);
        assert_eq!(bounded(w).title.chars().count(), MAX_APP_TEXT_CHARS);
    }
}
