//! Window handles: deskhand mints `win_<uuid>` ids for the OS windows it
//! lists, never reuses one, forgets them all at every start, and checks at
//! every use that the handle still names the same window (same native id,
//! pid and class): otherwise the caller gets WINDOW_STALE.

use std::collections::HashMap;

use crate::backend::NativeWindow;

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
    }
}
